"""A very long message (a pasted file) starts folded to a capped height in the transcript, with
"Show all"; short ones are shown as they are. One too large for the page (megabytes) shows its head and
a fold that loads the whole text, and its Copy fetches the message."""

from __future__ import annotations

from playwright.sync_api import expect
from support.lines import message

# About 180 kB of plain text, 2,400 lines: a QA once found a message of 600 kB drawn 213,000 px tall
# (one past LAZY_TEXT_CHARS is no longer in the page whole: see below).
PASTED = "".join(f"line {n:05d} of a pasted log, with some words to make it wide enough to wrap\n" for n in range(2400))
# About 2 MB: only its head is in the page.
HUGE = "".join(
    f"line {n:06d} of a huge <b>paste</b>, & some words to make it wide enough to wrap\n" for n in range(25_000)
)


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
    seeded.append(message("bbbb0002", "bbbb0001", "assistant", PASTED[:60_000], 2))
    expect(page.locator("#entry-bbbb0002").get_by_role("button", name="Show all")).to_be_visible()
    assert _height(page, "bbbb0002") < 1000
    assert not record.errors


def test_a_huge_message_loads_when_opened_and_copies_whole(context, page, ui, sessions, record) -> None:
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    answer = [{"type": "text", "text": "Read:"}, {"type": "text", "text": HUGE}]
    seeded = sessions.write_lines(
        [message("cccc0001", None, "user", HUGE, 1), message("cccc0002", "cccc0001", "assistant", answer, 2)]
    )
    ui.open(page, seeded.url)
    assert len(page.content()) < 200_000
    entry = page.locator("#entry-cccc0001")
    expect(entry).to_contain_text("line 000000 of a huge <b>paste</b>, & some words")  # its head, as text
    fold = entry.locator("details.fold")
    expect(fold.locator("summary")).to_contain_text("The whole message (1.9")
    fold.locator("summary").click()
    expect(fold.locator(".fold__body")).to_contain_text("line 024999 of a huge <b>paste</b>")
    assert fold.locator(".fold__body b").count() == 0  # text, not markup
    expect(entry.locator(".plain:has(+ details.fold)")).to_be_hidden()  # the head, not read twice
    body = fold.locator(".fold__body")
    assert body.evaluate("(el) => el.scrollHeight > el.clientHeight")  # scrolls in its frame

    for entry_id, whole in (("cccc0001", HUGE), ("cccc0002", f"Read:\n\n{HUGE}")):
        copy = page.locator(f"#entry-{entry_id} > .entry__tools [data-copy]")
        copy.click()
        expect(copy).to_have_text("Copied")
        assert page.evaluate("navigator.clipboard.readText()") == whole

    # Without the clipboard API (an insecure origin, an old browser) the selection is copied instead.
    page.evaluate(
        "() => { Object.defineProperty(navigator, 'clipboard', {value: undefined});"
        " window.__copied = null; document.addEventListener('copy', () => { window.__copied = document.getSelection().toString(); }); }"
    )
    copy = page.locator("#entry-cccc0001 > .entry__tools [data-copy]")
    expect(copy).to_have_text("Copy")  # what it said after the copy above has gone
    # What the button says, as it says it: "Copied" shows for 1.5 s, which a loaded machine's polling
    # could miss.
    copy.evaluate(
        "(button) => { window.__said = []; new MutationObserver(() => window.__said.push(button.textContent))"
        ".observe(button, {subtree: true, childList: true, characterData: true}); }"
    )
    copy.click()
    page.wait_for_function("() => window.__copied !== null")
    assert page.evaluate("window.__copied") == HUGE
    page.wait_for_function("() => window.__said.some((text) => text.trim() === 'Copied')")
    assert not record.errors


def test_a_search_hit_in_a_message_too_large_for_the_page_opens_its_fold(page, ui, sessions, record) -> None:
    seeded = sessions.write_lines([message("dddd0001", None, "user", HUGE + "the zebracorn at the end\n", 1)])
    ui.open(page, f"{seeded.entry_url('dddd0001')}?hl=zebracorn#entry-dddd0001")
    mark = page.locator("#entry-dddd0001 .fold__body mark.hit")
    expect(mark).to_have_text("zebracorn")
    expect(mark).to_be_in_viewport()
    assert not record.errors
