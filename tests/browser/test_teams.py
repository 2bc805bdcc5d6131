"""Sharing in two browsers: the owner shares a link; a teammate opens it in a browser of their own, sees
the owner's next message arrive live, forks, and continues in their own workspace, while the owner's
session stays as the owner left it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

from playwright.sync_api import expect

LEAF = "db26dc72"  # 01-linear's leaf
REPO = Path(__file__).resolve().parents[2]


def _share_link(ui: Any, owner: Any, seeded: Any, role: str) -> str:
    """The owner makes a live link for ``role`` in the session's share dialog; its URL."""
    ui.open(owner, seeded.url)
    owner.locator(".share-bar").get_by_role("link", name="Share…").click()
    dialog = owner.locator("#share-dialog")
    dialog.locator("select[name=audience]").select_option("link")
    dialog.locator(f"input[name=role][value={role}]").check()
    dialog.locator("input[name=mode][value=live]").check()
    dialog.get_by_role("button", name="Share", exact=True).click()
    return str(dialog.locator("#share-link-url").input_value())


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


def test_a_revoked_teammate_s_tab_says_its_access_ended_and_offers_no_send(
    chromium: Any, context: Any, server: Any, sessions: Any, ui: Any, add_account: Any
) -> None:
    """Not "the file is gone" (it is not), and no composer left whose press would do nothing."""
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

        owner.locator("#share-dialog").get_by_role("button", name="Revoke").first.click()
        friend.wait_for_function("() => document.getElementById('live').dataset.live === 'stopped'")
        expect(friend.locator("#flash")).to_contain_text("not available to you any more")
        expect(friend.locator("#flash")).not_to_contain_text("file is gone")
        expect(friend.locator("#composer")).to_have_count(0)
        expect(friend.locator("#dock-composer")).to_contain_text("not available to you any more")
        assert seeded.path.read_bytes() == before
    finally:
        mate.close()


def test_a_branch_share_s_tab_follows_its_branch_and_nothing_else(
    chromium: Any, context: Any, server: Any, sessions: Any, ui: Any, record: Any, add_account: Any
) -> None:
    """The tab of a link to one branch is pushed what grows on that branch, rendered as its own page
    would show it; what is written elsewhere (another branch, a sibling above the shared entry, which
    would make "‹ 1/2 ›" of an entry it shows) does not exist for it, not even as a count."""
    seeded = sessions.seed("02-tree-branches")  # leaf 750a4556, on the branch through 97690895
    owner = context.new_page()
    ui.open(owner, seeded.url)
    owner.locator(".share-bar").get_by_role("link", name="Share…").click()  # from the tab's position
    dialog = owner.locator("#share-dialog")
    expect(dialog.locator("input[name=entry][value='750a4556']")).to_be_checked()
    dialog.locator("select[name=audience]").select_option("link")
    dialog.locator("input[name=mode][value=branch]").check()
    dialog.get_by_role("button", name="Share", exact=True).click()
    link = str(dialog.locator("#share-link-url").input_value())
    ui.open(owner, seeded.url)
    owner.wait_for_function("() => document.getElementById('live').dataset.live === 'live'")

    mate = chromium.new_context(base_url=server.url)
    try:
        friend = mate.new_page()
        friend.goto(add_account(f"teammate-{uuid.uuid4().hex[:6]}"))
        friend.on("console", lambda msg: record.console_errors.append(msg.text) if msg.type == "error" else None)
        ui.open(friend, link.removeprefix(server.url))
        friend.wait_for_function("() => document.getElementById('live').dataset.live === 'live'")
        expect(friend.locator("#entry-97690895 .navigator")).to_have_count(0)
        env = {**os.environ, "PITREE_SESSIONS_DIR": str(server.root), "PITREE_FSYNC": "0"}

        def append(text: str, parent: str) -> str:
            args = ["append", str(seeded.path), "--role", "user", "--text", text, "--parent", parent]
            return subprocess.run(
                [sys.executable, "manage.py", "pitree", *args],
                cwd=REPO,
                env=env,
                capture_output=True,
                text=True,
                check=True,
            ).stdout.strip()

        elsewhere = append("Written on the other branch", "de4f0d3a")
        above = append("A sibling above the shared entry", "2f760a8d")
        mine = append("Written on the shared branch", "750a4556")
        ui.wait_position(friend, mine)
        expect(friend.locator(f"#entry-{mine}")).to_contain_text("Written on the shared branch")
        ui.wait_position(owner, mine)  # the owner's tab, at the whole file, sees all three
        expect(owner.locator("#entry-97690895 .navigator__count")).to_have_text("1/3")
        # The friend's tab: the other branch and the sibling above do not exist there.
        expect(friend.locator("#entry-97690895 .navigator")).to_have_count(0)
        expect(friend.locator("#entries")).not_to_contain_text("Written on the other branch")
        expect(friend.locator("#entries")).not_to_contain_text("A sibling above the shared entry")
        assert elsewhere not in friend.content() and above not in friend.content()
    finally:
        mate.close()
    assert not record.errors, record.errors
    assert not [e for e in record.console_errors if "htmx" in e or "oob" in e.lower()], record.console_errors
