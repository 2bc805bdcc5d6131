"""Titles as a chat app gives them: a new chat is named by a few words once its first answer is stored,
in its heading and the sidebar of every tab open on it; a fork is named as a branch of its source."""

from __future__ import annotations

import json
import re
from typing import Any

from playwright.sync_api import expect

FIRST = "How do I parse ISO dates in Python? I tried strptime and it fails on the Z suffix."
TITLE = "How do I parse ISO dates in Python"


def _live(ui: Any, page: Any, path: str) -> None:
    ui.open(page, path)
    page.wait_for_function("() => document.getElementById('live').dataset.live === 'live'")


def test_a_new_chat_gets_a_short_title_after_its_first_answer_in_every_tab(
    new_page: Any, ui: Any, sessions: Any, record: Any
) -> None:
    asking = new_page()
    ui.open(asking, "/")
    asking.get_by_role("button", name="New chat").click()
    asking.wait_for_url("**/s/*/")
    chat_url = asking.url
    _live(ui, asking, chat_url)
    watching = new_page()
    _live(ui, watching, chat_url)
    expect(watching.locator("#session-title")).to_have_text("New session")

    asking.locator("#composer-text").fill(FIRST)
    asking.locator("#composer-text").press("Enter")
    for page in (asking, watching):
        expect(page.locator("#session-title")).to_have_text(TITLE)
        expect(page.locator("#sidebar .sidebar__sessions a[aria-current=page] .sidebar__title")).to_have_text(TITLE)
    assert watching.title() == f"{TITLE} · pitree"
    (path,) = sessions.all_files()
    lines = [json.loads(raw) for raw in path.read_bytes().splitlines()]
    assert [line["type"] for line in lines[1:]] == ["message", "message", "session_info"]
    assert lines[-1]["name"] == TITLE
    # The next message goes on under the title, in the tab that saw it come.
    watching.locator("#composer-text").fill("And with a time zone?")
    watching.locator("#composer-text").press("Enter")
    expect(watching.locator("#entries article").last).to_contain_text("time zone", timeout=15_000)
    ui.wait_position_change(watching, lines[-1]["id"])
    names = [json.loads(raw).get("name") for raw in path.read_bytes().splitlines()[1:]]
    assert [name for name in names if name is not None] == [TITLE]
    assert not record.errors


def test_a_fork_is_named_as_a_branch_of_its_source(page: Any, ui: Any, sessions: Any, server: Any) -> None:
    parent = sessions.seed("01-linear")
    last = [entry for entry in parent.entries() if entry["type"] == "message"][-1]["id"]
    ui.open(page, parent.entry_url(last))
    ui.open_panel(page, last, "fork").get_by_role("button", name="Fork into a new session").click()
    page.wait_for_url(re.compile(rf"{re.escape(server.url)}/s/(?!{parent.id})[A-Za-z0-9._-]+/$"))
    expect(page.locator("#session-title")).to_have_text("Branch · Todo API endpoints review")
    # The sidebar nests it under its source, named as a branch of it.
    expect(page.locator("#sidebar .sidebar__sessions a[aria-current=page] .sidebar__title")).to_have_text(
        re.compile(r"^↳ Branch · Todo API endpoints\s+review$")
    )
