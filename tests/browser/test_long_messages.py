"""A very long message (a pasted file) starts folded to a capped height in the transcript, with
"Show all"; short ones are shown as they are."""

from __future__ import annotations

import json

from playwright.sync_api import expect
from support.lines import message

# About 600 kB of plain text, 10,000 lines: a QA once found such a message drawn 213,000 px tall.
PASTED = "".join(f"line {n:05d} of a pasted log, with some words to make it wide enough to wrap\n" for n in range(7500))


def _height(page, entry_id: str) -> float:
    return page.locator(f"#entry-{entry_id}").bounding_box()["height"]


def test_a_pasted_file_starts_folded_and_shows_whole_when_asked(page, ui, sessions, record) -> None:
    seeded = sessions.write_lines(
        [
            message("aaaa0001", None, "user", PASTED, 1),
            message("aaaa0002", "aaaa0001", "assistant", "A **short** answer.", 2, model="x/y"),
        ]
    )
    ui.open(page, seeded.url)
    show = page.locator("#entry-aaaa0001 [data-show-long]")
    expect(show).to_be_visible()
    expect(show).to_have_text("Show all")
    expect(show).to_have_attribute("aria-expanded", "false")
    assert _height(page, "aaaa0001") < 1000
    expect(page.locator("#entry-aaaa0002 [data-show-long]")).to_have_count(0)  # short: as it is

    show.click()
    expect(show).to_have_text("Fold")
    expect(show).to_have_attribute("aria-expanded", "true")
    assert _height(page, "aaaa0001") > 50_000
    show.click()
    expect(show).to_have_text("Show all")
    assert _height(page, "aaaa0001") < 1000
    # Copy still copies the whole message.
    source = page.locator("#entry-aaaa0001 > template.entry__source").evaluate("t => t.content.textContent")
    assert source == PASTED
    assert not record.errors


def test_a_long_message_appended_live_is_folded_too(page, ui, sessions, record) -> None:
    seeded = sessions.write_lines([message("bbbb0001", None, "user", "A short question", 1)])
    ui.open(page, seeded.url)
    page.wait_for_function("() => document.getElementById('live').dataset.live === 'live'")
    with seeded.path.open("ab") as file:  # as pi appends
        file.write(json.dumps(message("bbbb0002", "bbbb0001", "assistant", PASTED[:60_000], 2)).encode() + b"\n")
    expect(page.locator("#entry-bbbb0002").get_by_role("button", name="Show all")).to_be_visible()
    assert _height(page, "bbbb0002") < 1000
    assert not record.errors
