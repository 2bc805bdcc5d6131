"""Full-text search in the browser: results as one types, the matching snippet, a result's permalink
landing on its entry with the words found marked and their fold opened (a tool's output too), an
entry appended by the command line found by the next search, and the count read out as one types."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from playwright.sync_api import expect

REPO = Path(__file__).resolve().parents[2]
TOOL_RESULT = "d0871b4c"  # 01-linear: the output of a `read` tool call, the only place "list_todos" is


def _append(server: Any, path: Path, text: str) -> str:
    """``manage.py pitree append`` in a process of its own (as pi or a script would write); the new id."""
    env = {**os.environ, "PITREE_SESSIONS_DIR": str(server.root), "PITREE_FSYNC": "0"}
    done = subprocess.run(
        [sys.executable, "manage.py", "pitree", "append", str(path), "--role", "user", "--text", text],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def test_a_result_leads_to_its_entry_with_the_match_shown(page, ui, sessions, server, record) -> None:
    linear = sessions.seed("01-linear")
    sessions.seed("02-tree-branches")
    ui.open(page, "/search/")
    page.get_by_role("searchbox", name="Search every session").fill("list_todos")
    hit = page.locator("#search-results li.search-hit")
    expect(hit).to_have_count(1)
    expect(hit).to_contain_text("Tool result")
    expect(hit.locator(".search-hit__snippet mark")).to_have_text("list_todos")
    assert "q=list_todos" in page.url  # the results have an address of their own

    hit.get_by_role("link").first.click()
    page.wait_for_url(f"**/s/{linear.id}/e/{TOOL_RESULT}/?resume=1&hl=list_todos#entry-{TOOL_RESULT}")
    page.wait_for_function("() => window.pitree !== undefined")
    entry = page.locator(f"#entry-{TOOL_RESULT}")
    expect(entry).to_have_class(re.compile(r"\bis-hit\b"))
    expect(entry.locator("details.fold")).to_have_attribute("open", "")  # the collapsed output, opened
    mark = entry.locator("mark.hit")
    expect(mark).to_have_text("list_todos")
    expect(mark).to_be_in_viewport()
    # The hit's branch where it was left, the hit in it: not cut off at the hit (the answer after it shows).
    assert ui.position(page) == "db26dc72"
    assert ui.path_ids(page).index(TOOL_RESULT) < len(ui.path_ids(page)) - 1
    assert not record.errors


def test_an_entry_appended_elsewhere_is_found_by_the_next_search(page, ui, sessions, server) -> None:
    seeded = sessions.seed("01-linear")
    ui.open(page, "/search/?q=zebracorn")
    expect(page.get_by_role("status")).to_have_text("No entry matches “zebracorn”.")
    new_id = _append(server, seeded.path, "Could the zebracorn endpoint return **JSON**?")
    box = page.get_by_role("searchbox", name="Search every session")
    box.fill("zebracor")  # the last word may be the start of one
    hit = page.locator("#search-results li.search-hit")
    expect(hit).to_have_count(1)
    expect(hit.locator("mark")).to_have_text("zebracorn")
    expect(hit.locator(".search-hit__snippet")).to_contain_text("Could the zebracorn endpoint return")
    hit.get_by_role("link").first.click()
    page.wait_for_url(f"**/s/{seeded.id}/e/{new_id}/**")
    expect(page.locator(f"#entry-{new_id} mark.hit")).to_have_text("zebracorn")


def test_the_count_is_read_out_from_a_live_region_that_stays_as_one_types(page, ui, sessions, record) -> None:
    """A screen reader reads out a live region's new text; one inserted along with its text is often
    missed, so the region stays the same element while the results are swapped under it."""
    sessions.seed("01-linear")
    sessions.seed("02-tree-branches")
    ui.open(page, "/search/")
    status = page.locator("#search-status")
    expect(status).to_have_attribute("role", "status")
    expect(status).to_contain_text("Type words to find")
    status.evaluate("(region) => { region.keptNode = true; }")  # gone if the element were replaced
    box = page.get_by_role("searchbox", name="Search every session")
    box.fill("list_todos")
    expect(page.locator("#search-results li.search-hit")).to_have_count(1)
    expect(status).to_have_text("1 entry matches “list_todos”.")
    box.fill("zebracorn")
    expect(status).to_have_text("No entry matches “zebracorn”.")
    box.fill("endpoint")
    expect(page.locator("#search-results li.search-hit")).to_have_count(3)
    expect(status).to_have_text("3 entries match “endpoint”.")
    box.fill("-endpoint")
    expect(status).to_contain_text("“-endpoint” only leaves entries out")
    expect(page.locator("#search-results li.search-hit")).to_have_count(0)
    assert page.get_by_role("status").count() == 1
    assert status.evaluate("(region) => region.keptNode === true && region.isConnected")  # the same element
    assert not page.locator("#search-results [role=status], #search-results [aria-live]").count()  # not the list
    assert not record.errors
