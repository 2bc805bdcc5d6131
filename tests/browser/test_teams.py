"""Sharing in two browsers: the owner shares a link; a teammate opens it in a browser of their own, sees
the owner's next message arrive live, forks, and continues in their own workspace, while the owner's
session stays as the owner left it."""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

from playwright.sync_api import expect

LEAF = "db26dc72"  # 01-linear's leaf


def _share_link(ui: Any, owner: Any, seeded: Any, role: str) -> str:
    """The owner makes a live link for ``role`` on the session's share page; its URL."""
    ui.open(owner, seeded.url)
    owner.get_by_role("link", name="Share…").click()
    owner.locator("select[name=audience]").select_option("link")
    owner.locator("select[name=role]").select_option(role)
    owner.locator("select[name=mode]").select_option("live")
    owner.get_by_role("button", name="Share").click()
    return str(owner.locator("#share-link-url").input_value())


def test_a_teammate_follows_a_shared_link_live_then_forks(
    chromium: Any, context: Any, server: Any, sessions: Any, ui: Any, record: Any, add_account: Any
) -> None:
    seeded = sessions.seed("01-linear")
    owner = context.new_page()
    link = _share_link(ui, owner, seeded, "viewer")
    assert re.fullmatch(rf"{re.escape(server.url)}/l/[A-Za-z0-9_-]{{43}}/", link), link

    # The teammate, in a browser of their own: signs in once, then opens the link.
    teammate_name = f"teammate-{uuid.uuid4().hex[:6]}"
    mate = chromium.new_context(base_url=server.url)
    try:
        friend = mate.new_page()
        friend.goto(add_account(teammate_name))
        ui.open(friend, link.removeprefix(server.url))
        expect(friend).to_have_url(re.compile(rf"/s/{seeded.id}/$"))
        expect(friend.locator(".composer--readonly")).to_contain_text("You can read this session and follow it live")
        friend.wait_for_function("() => document.getElementById('live').dataset.live === 'live'")

        # The owner writes; the teammate's page shows it as it arrives.
        ui.open(owner, seeded.url)
        owner.locator("#composer textarea[name=text]").fill("Here is something for the team")
        owner.locator("#composer button[type=submit]").click()
        reply_id = ui.wait_position_change(owner, LEAF)
        expect(friend.locator("#entries")).to_contain_text("Here is something for the team")
        expect(friend.locator(f"#entry-{reply_id}")).to_be_visible()
        owners_file = seeded.path.read_bytes()

        # The teammate forks from there and continues in their own workspace.
        friend.get_by_role("button", name="Fork from here into my workspace").click()
        friend.wait_for_url(re.compile(rf"/s/(?!{seeded.id})[^/]+/$"))
        ui.open(friend, friend.url.removeprefix(server.url))
        expect(friend.locator("p.lineage")).to_contain_text("Forked from")
        friend.locator("#composer textarea[name=text]").fill("Continuing on my own")
        friend.locator("#composer button[type=submit]").click()
        fork_leaf = ui.wait_position_change(friend, reply_id)
        fork_id = friend.url.split("/s/", 1)[1].split("/", 1)[0]
        (fork_path,) = [p for p in server.root.rglob("*.jsonl") if fork_id in p.name]
        lines = [json.loads(line) for line in fork_path.read_bytes().splitlines()]
        assert lines[0]["parentSession"] == str(seeded.path.absolute())
        assert fork_path.parent != seeded.path.parent and teammate_name in lines[0]["cwd"]
        assert lines[-1]["id"] == fork_leaf and lines[-2]["message"]["content"] == "Continuing on my own"
        assert seeded.path.read_bytes() == owners_file  # the owner's session is unchanged

        # The owner sees that it was forked, and by whom; the fork itself is not theirs to open.
        ui.open(owner, seeded.url)
        expect(owner.locator(".provenance")).to_contain_text(f"by {teammate_name}")
    finally:
        mate.close()
    assert not record.errors, record.errors


def test_a_revoked_teammate_s_tab_says_its_access_ended_and_a_send_says_why_it_failed(
    chromium: Any, context: Any, server: Any, sessions: Any, ui: Any, add_account: Any
) -> None:
    """Not "the file is gone" (it is not), and not a press that seems to do nothing."""
    seeded = sessions.seed("01-linear")
    owner = context.new_page()
    link = _share_link(ui, owner, seeded, "collaborator")

    mate = chromium.new_context(base_url=server.url)
    try:
        friend = mate.new_page()
        friend.goto(add_account(f"teammate-{uuid.uuid4().hex[:6]}"))
        ui.open(friend, link.removeprefix(server.url))
        friend.wait_for_function("() => document.getElementById('live').dataset.live === 'live'")
        before = seeded.path.read_bytes()

        owner.get_by_role("button", name="Revoke").first.click()
        friend.wait_for_function("() => document.getElementById('live').dataset.live === 'stopped'")
        expect(friend.locator("#flash")).to_contain_text("not available to you any more")
        expect(friend.locator("#flash")).not_to_contain_text("file is gone")

        friend.locator("#composer textarea[name=text]").fill("Still here?")
        friend.locator("#composer textarea[name=text]").press("Control+Enter")
        expect(friend.locator("#flash")).to_contain_text("Nothing was written")
        assert seeded.path.read_bytes() == before
    finally:
        mate.close()
