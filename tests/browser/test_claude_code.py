"""A Claude Code projects folder followed by the server: a tab on one of its sessions shows what
Claude Code writes as it writes it, and "Continue in pi format" forks it into the reader's workspace."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect
from support import exports as X

PROJECTS: dict[str, Path] = {}


@pytest.fixture(scope="module")
def server(serve: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    projects = tmp_path_factory.mktemp("claude") / "projects"
    projects.mkdir()
    PROJECTS["root"] = projects
    return serve({"PITREE_CLAUDE_PROJECTS": str(projects)})


def test_a_tab_follows_a_claude_code_session_and_continues_it_in_pi_format(page: Any, server: Any, record: Any) -> None:
    session_file = PROJECTS["root"] / "-home-alice-app" / f"{X.SESSION}.jsonl"
    records = X.cc_session()
    X.write_jsonl(session_file, records[:7])
    page.goto("/")
    expect(page.get_by_role("link", name=re.compile("Fix the login bug")).first).to_be_visible(timeout=20_000)
    page.get_by_role("link", name=re.compile("Fix the login bug")).first.click()
    expect(page.locator("#entries")).to_contain_text("It always returns False. Fixed.")
    expect(page.locator(".composer--readonly")).to_contain_text("A Claude Code session, followed live")
    page.wait_for_function("() => document.getElementById('live').dataset.live === 'live'")
    with session_file.open("a") as out:  # Claude Code goes on
        out.writelines(json.dumps(line) + "\n" for line in [records[8], records[11]])
    expect(page.locator("#entries")).to_contain_text("Added two tests.", timeout=20_000)
    # The viewer's fork button names the entry the page was loaded at (it follows no move yet): reload.
    page.reload()
    page.get_by_role("button", name="Continue in pi format").click()
    page.wait_for_url(re.compile(r"/s/[^/]+/$"))
    expect(page.locator("p.lineage")).to_contain_text("Forked from")
    expect(page.locator("#composer textarea[name=text]")).to_be_visible()  # the fork is the reader's to write
    forks = [path for path in server.root.rglob("*.jsonl") if "--claude-code--" not in str(path)]
    assert len(forks) == 1 and forks[0].read_text().count('"Added two tests."') == 1
    assert record.errors == []
