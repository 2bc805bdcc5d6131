"""The Import page in a browser: import.js sends a ChatGPT export of several megabytes in pieces, shows
how much has gone, starts the import and goes to its status page, which follows the progress until
it lists the sessions written; one of them opens where the user had left the conversation."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from playwright.sync_api import expect
from support import exports as X


def test_an_export_sent_in_pieces_then_followed_to_its_sessions(
    page: Any, server: Any, sessions: Any, tmp_path: Path, record: Any
) -> None:
    export = X.write_big_chatgpt(tmp_path / "conversations.json", 150)
    assert export.stat().st_size > 4 * 2**20  # more than two pieces of 2 MiB
    page.goto("/import/")
    page.locator("input[type=file]").set_input_files(str(export))
    page.get_by_role("button", name="Import").click()
    expect(page.locator("#import-sending")).to_be_visible()
    page.wait_for_url(re.compile(r"/import/[A-Za-z0-9_-]{22}/$"))
    expect(page.locator("#import-status")).to_contain_text("Imported from ChatGPT: 150 conversations.", timeout=60_000)
    pieces = [url for url in record.requests if "/piece/?offset=" in url]
    assert [int(url.rsplit("=", 1)[1]) for url in pieces] == [0, 2 << 20, 4 << 20]
    assert page.locator("#import-status progress").count() == 0  # done: no more polling
    page.get_by_role("link", name="Conversation 7", exact=True).click()
    expect(page.locator("#entries")).to_contain_text("19 lorem")  # the last turn: where the user left it
    assert record.errors == [] and record.console_errors == []


def test_a_malformed_export_says_why_and_writes_nothing(page: Any, server: Any, sessions: Any, tmp_path: Path) -> None:
    bad = tmp_path / "conversations.json"
    bad.write_text('[{"title": "a", "mapping": {}}, {"title": ')
    page.goto("/import/")
    page.locator("input[type=file]").set_input_files(str(bad))
    page.get_by_role("button", name="Import").click()
    expect(page.get_by_role("alert")).to_contain_text("Not imported: conversations.json: not valid JSON near byte")
    assert not list(server.root.rglob("*.jsonl"))
