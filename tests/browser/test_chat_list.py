"""The session list and the sidebar as a chat app's, in a real browser: newest first in day groups, a
workspace filter the sidebar keeps from page to page, "New chat" from any page, and titles of at most two
lines."""

from __future__ import annotations

import json
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from playwright.sync_api import expect

DAY_MS = 24 * 3600 * 1000


def _chat(root: Path, cwd: str, text: str, days_ago: float) -> str:
    """A session in pi's folder for ``cwd`` whose one message was written ``days_ago``."""
    session_id = str(uuid.uuid4())
    at_ms = int(time.time() * 1000 - days_ago * DAY_MS)
    at = datetime.fromtimestamp(at_ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    header = {"type": "session", "version": 3, "id": session_id, "timestamp": at, "cwd": cwd}
    entry = {
        "type": "message",
        "id": "a1b2c3d4",
        "parentId": None,
        "timestamp": at,
        "message": {"role": "user", "content": text, "timestamp": at_ms},
    }
    folder = root / ("--" + cwd.strip("/").replace("/", "-") + "--")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{at.replace(':', '-').replace('.', '-')}_{session_id}.jsonl").write_text(
        "".join(json.dumps(line) + "\n" for line in (header, entry))
    )
    return session_id


def test_newest_first_by_day_and_a_workspace_the_sidebar_keeps(page: Any, ui: Any, sessions: Any) -> None:
    root = sessions.root
    old = _chat(root, "/home/me/zeta", "chat from last week", 3)
    _chat(root, "/home/me/alpha", "chat from yesterday", 1)
    now = _chat(root, "/home/me/zeta", "chat from now", 0)
    ui.open(page, "/")
    expect(page.locator(".workspace__name")).to_have_text(["Today", "Yesterday", "Previous 7 days"])
    expect(page.locator(".session-item__title")).to_have_text(
        ["chat from now", "chat from yesterday", "chat from last week"]
    )

    ui.open(page, f"/s/{old}/")
    sidebar = page.locator("#sidebar")
    expect(sidebar.locator(".sidebar__when")).to_have_text(["Today", "Yesterday", "Previous 7 days"])
    sidebar.locator("#sidebar-workspace").select_option(label="me/zeta")
    expect(sidebar.locator(".sidebar__title")).to_have_text(["chat from now", "chat from last week"])
    # Another page's sidebar keeps the workspace chosen.
    ui.open(page, f"/s/{now}/")
    expect(sidebar.locator(".sidebar__title")).to_have_text(["chat from now", "chat from last week"])
    expect(sidebar.locator("#sidebar-workspace option:checked")).to_have_text("me/zeta")
    sidebar.locator("#sidebar-workspace").select_option(label="All workspaces")
    expect(sidebar.locator(".sidebar__title")).to_have_count(3)


def test_new_chat_from_any_page_asks_nothing(page: Any, ui: Any, sessions: Any) -> None:
    first = _chat(sessions.root, "/home/me/zeta", "chat from last week", 3)
    ui.open(page, f"/s/{first}/")
    page.get_by_role("button", name="New chat").click()
    expect(page).not_to_have_url(f"/s/{first}/")
    page.wait_for_url("**/s/*/")
    expect(page.locator("#composer-text")).to_be_focused()
    # It is the newest chat: first in the sidebar, under Today.
    expect(page.locator("#sidebar .sidebar__when").first).to_have_text("Today")
    expect(page.locator("#sidebar .sidebar__sessions a").first).to_have_attribute("aria-current", "page")
    assert len(sessions.all_files()) == 2


def test_long_titles_take_two_lines_at_most(page: Any, ui: Any, sessions: Any) -> None:
    words = " ".join(f"word{n}" for n in range(120))
    chat = _chat(sessions.root, "/home/me/zeta", words, 0)
    ui.open(page, f"/s/{chat}/")
    for selector in ("#session-title", "#sidebar .sidebar__title"):
        # Measured once it is there: the sidebar's list loads after the page.
        lines = page.wait_for_function(
            """(selector) => {
                const element = document.querySelector(selector);
                if (!element) return null;
                const probe = element.cloneNode(false);  // one line of the same style
                probe.textContent = "x";
                element.after(probe);
                const line = probe.getBoundingClientRect().height;
                probe.remove();
                return element.getBoundingClientRect().height / line;
            }""",
            arg=selector,
        ).json_value()
        assert 1 < lines <= 2.05, (selector, lines)
