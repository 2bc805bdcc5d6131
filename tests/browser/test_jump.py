"""Jump to in a 1,000-message session: the start is one page load away (none of the 24 pages between
is fetched), newer entries load below as the reader scrolls down, a date lands on that day's first
message, and the tab still stands where it stood (a message sent goes under the latest entry)."""

from __future__ import annotations

import re

from playwright.sync_api import expect
from support.lines import long_chat


def test_the_start_of_a_long_session_is_one_load_away(page, ui, sessions, record):
    seeded = sessions.write_lines(long_chat(1000, compaction_at=600, label_at=300))
    ui.open(page, seeded.url)
    expect(page.locator("#entry-m0999")).to_be_in_viewport()
    fetched: list[str] = []
    page.on("request", lambda request: fetched.append(request.url))

    page.locator(".jump > summary").click()
    with page.expect_navigation():
        page.get_by_role("link", name="Start", exact=True).click()
    expect(page.locator("#entry-m0000")).to_be_in_viewport()
    assert not [url for url in fetched if "/older/" in url]  # one load, not one per page of 40
    assert page.locator("#tab-state").get_attribute("data-position") == "label1"  # the tab did not move

    # Scrolling down brings the next entries, below the ones shown.
    page.locator("#entries .newer").scroll_into_view_if_needed()
    expect(page.locator("#entry-m0040")).to_be_attached()
    ids = page.locator("#entries > article.entry[data-entry]").evaluate_all("els => els.map(e => e.dataset.entry)")
    assert ids[:3] == ["m0000", "m0001", "m0002"] and ids.index("m0040") == ids.index("m0039") + 1
    assert not record.errors


def test_a_label_a_compaction_and_a_date(page, ui, sessions, record):
    seeded = sessions.write_lines(long_chat(1000, compaction_at=600, label_at=300))
    ui.open(page, seeded.url)
    page.locator(".jump > summary").click()
    with page.expect_navigation():
        page.get_by_role("link", name="Label: milestone").click()
    expect(page.locator("#entry-m0300")).to_be_in_viewport()

    page.locator(".jump > summary").click()
    with page.expect_navigation():
        # Its own link, not the menu's link before it loads ("Start, compactions, labels, a date…"),
        # which a name matched anywhere in it took when the click came first.
        page.get_by_role("link", name=re.compile(r"^Compaction")).click()
    expect(page.locator("#entry-compact")).to_be_in_viewport()

    page.locator(".jump > summary").click()
    page.locator(".jump input[name=date]").fill("2026-03-10")
    with page.expect_navigation():
        page.locator(".jump button[type=submit]").click()
    expect(page.locator("#entry-m0216")).to_be_in_viewport()  # 2026-03-10 00:00 UTC, nine days in
    expect(page.locator("#entry-m0216")).to_contain_text("Message number 216")
    assert not record.errors
