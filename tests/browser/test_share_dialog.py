"""The share dialog in a real browser: opened from an entry's actions with that entry picked, another
entry picked from the branch's list by keyboard and by its words, a branch link made; its reader (a
browser of their own) lands on the branch's latest entry and is offered nothing they cannot do; once
revoked, their page no longer offers to follow it live."""

from __future__ import annotations

import re
from typing import Any

from playwright.sync_api import expect

QUESTION = "97690895"  # sample 02, branch A: "Make it reject titles longer than 80 chars"
ITS_ANSWER = "c2ecb522"
PICKED = "8aabce23"  # "Actually use pydantic instead", further down the same branch
BRANCH_END = "750a4556"  # branch A's latest entry (the file's leaf)


def test_a_share_pointed_at_an_entry_opens_there_for_its_reader_until_revoked(
    chromium: Any, context: Any, server: Any, sessions: Any, ui: Any, record: Any
) -> None:
    seeded = sessions.seed("02-tree-branches")
    owner = context.new_page()
    ui.open(owner, seeded.url)
    ui.tool(owner, QUESTION, "Share…").click()
    dialog = owner.locator("#share-dialog")
    expect(dialog).to_be_visible()
    expect(dialog.get_by_role("heading", name="Share this session")).to_be_visible()
    question = dialog.locator(f"input[name=entry][value='{QUESTION}']")
    expect(question).to_be_checked()
    expect(question).to_be_focused()  # the picked entry, in view in its list
    expect(dialog.locator("input[name=mode][value=branch]")).to_be_checked()
    expect(dialog).to_contain_text("One branch: the path to the entry and what grows below it, live")
    # The branch's list, each row its role and its words; the other branch is not in it.
    expect(dialog.get_by_role("radio", name="User Make it reject titles longer than 80 chars")).to_be_checked()
    expect(dialog.locator("input[name=entry][value='de4f0d3a']")).to_have_count(0)

    # Another entry: by keyboard (the list is a radio group), then by its words.
    owner.keyboard.press("ArrowDown")
    expect(dialog.locator(f"input[name=entry][value='{ITS_ANSWER}']")).to_be_checked()
    dialog.get_by_role("radio", name="User Actually use pydantic instead").check()
    expect(dialog.locator(f"input[name=entry][value='{PICKED}']")).to_be_checked()
    dialog.locator("select[name=audience]").select_option("link")
    dialog.get_by_role("button", name="Share", exact=True).click()
    expect(dialog.locator(".share-link")).to_contain_text("can read the branch")
    link = str(dialog.locator("#share-link-url").input_value())
    assert re.fullmatch(rf"{re.escape(server.url)}/l/[A-Za-z0-9_-]{{43}}/", link), link
    expect(dialog.locator("table.shares")).to_contain_text(f"branch through {PICKED}")

    reading = chromium.new_context(base_url=server.url)
    try:
        reader = reading.new_page()
        reader.on("pageerror", lambda error: record.errors.append(str(error)))
        ui.open(reader, link.removeprefix(server.url))
        # At the branch's latest entry, not at the entry shared (whose answer is below it).
        expect(reader).to_have_url(re.compile(rf"/s/{seeded.id}/$"))
        assert ui.position(reader) == BRANCH_END
        reader.wait_for_function("() => document.getElementById('live').dataset.live === 'live'")
        expect(reader.locator("#composer")).to_have_count(0)
        expect(reader.locator("#share-dialog")).to_have_count(0)
        expect(reader.locator(".composer--readonly")).to_contain_text(
            "You can read this branch of the session and follow it live"
        )
        expect(reader.locator(f"#entry-{PICKED} > .entry__tools")).not_to_contain_text("Share…")
        # At an earlier point, the note says where the tab is, and nothing about sending.
        ui.open(reader, seeded.entry_url(PICKED))
        reader.wait_for_function("() => document.getElementById('live').dataset.live === 'live'")
        expect(reader.locator("#position-note")).to_be_visible()
        expect(reader.locator("#position-note")).to_contain_text("This tab shows an earlier point or another branch.")
        expect(reader.locator("#position-note")).not_to_contain_text("what you send")

        # The owner revokes it in the dialog; the reader's page stops offering to follow it live.
        dialog.get_by_role("button", name="Revoke").click()
        expect(dialog.locator("table.shares")).to_contain_text("revoked")
        expect(dialog.get_by_role("button", name="Revoke")).to_have_count(0)
        reader.wait_for_function("() => document.getElementById('live').dataset.live === 'stopped'")
        expect(reader.locator("#dock-composer")).to_contain_text("not available to you any more")
        expect(reader.locator(".dock")).not_to_contain_text("follow it live")
        expect(reader.get_by_role("button", name=re.compile("Fork"))).to_have_count(0)
        assert reader.goto(link).status == 404  # type: ignore[union-attr]
    finally:
        reading.close()
    assert not record.errors, record.errors


def test_the_share_page_works_without_javascript(chromium: Any, server: Any, sessions: Any) -> None:
    """The same links open the share page; the list and the form work as plain HTML."""
    seeded = sessions.seed("02-tree-branches")
    plain = chromium.new_context(base_url=server.url, java_script_enabled=False)
    name, _, value = server.daphne.cookie.partition("=")
    plain.add_cookies([{"name": name, "value": value, "url": server.url}])
    try:
        page = plain.new_page()
        page.goto(seeded.url)
        page.locator(f"#entry-{QUESTION} > .entry__tools").get_by_role("link", name="Share…").click()
        expect(page).to_have_url(re.compile(rf"/s/{seeded.id}/share/\?at={QUESTION}$"))
        expect(page.locator(f"input[name=entry][value='{QUESTION}']")).to_be_checked()
        page.get_by_role("radio", name="User Actually use pydantic instead").check()
        page.locator("select[name=audience]").select_option("link")
        page.get_by_role("button", name="Share", exact=True).click()
        expect(page.get_by_role("heading", name="Share this session", level=1)).to_be_visible()
        expect(page.locator(".share-link")).to_contain_text("can read the branch")
        expect(page.locator(f"input[name=entry][value='{PICKED}']")).to_be_checked()
    finally:
        plain.close()
