"""What the reader types is not lost: the message box's draft outlives a reload, a closed tab, Back and
Forward (kept in the browser per session), and text typed in an entry's Edit & resend or Label panel
outlives closing the panel."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import expect
from support.lines import message

LEAF = "db26dc72"  # 01-linear's leaf
USER = "c256703f"  # 01-linear's last user message
BOX = "#composer textarea[name=text]"


@pytest.fixture(scope="module")
def server(serve: Any) -> Any:
    """pitree with a slow offline responder (a reply takes seconds), so that a message can be typed
    while one is written (overrides the suite's ``server`` here)."""
    return serve({"PITREE_OFFLINE_DELAY": "0.3", "PITREE_ASSISTANT": "offline"})


def _open(ui: Any, page: Any, path: str) -> None:
    ui.open(page, path)
    page.wait_for_function("() => document.getElementById('live').dataset.live === 'live'")


def _draft(page: Any, seeded: Any) -> str | None:
    return page.evaluate("(id) => localStorage.getItem(`pitree:draft:${id}`)", seeded.id)


def _wait_draft(page: Any, seeded: Any, text: str | None) -> None:
    page.wait_for_function("([id, text]) => localStorage.getItem(`pitree:draft:${id}`) === text", arg=[seeded.id, text])


def test_a_draft_comes_back_after_a_reload_and_after_the_tab_was_closed(new_page, ui, sessions, record) -> None:
    seeded = sessions.seed("01-linear")
    page = new_page()
    _open(ui, page, seeded.url)
    page.locator(BOX).press_sequentially("Half a thought")
    _wait_draft(page, seeded, "Half a thought")
    page.reload()
    expect(page.locator(BOX)).to_have_value("Half a thought")

    page.locator(BOX).press_sequentially(", and more")
    page.close(run_before_unload=True)  # at once: what was typed a moment ago is kept as the tab goes
    again = new_page()
    _open(ui, again, seeded.url)
    expect(again.locator(BOX)).to_have_value("Half a thought, and more")
    other = sessions.seed("02-tree-branches")
    _open(ui, again, other.url)
    expect(again.locator(BOX)).to_have_value("")  # a draft belongs to its session
    assert not record.errors


def test_a_sent_message_is_no_draft_but_a_refused_one_stays_one(page, ui, sessions, record) -> None:
    seeded = sessions.seed("01-linear")
    _open(ui, page, seeded.url)
    box = page.locator(BOX)
    box.fill("Answer me slowly")
    box.press("Control+Enter")
    expect(page.locator("#entries article.is-pending .stream")).to_contain_text("Offline responder")
    assert _draft(page, seeded) is None  # it is in the conversation: a reload must not offer it again
    box.press_sequentially("Typed while the reply is written")
    box.press("Control+Enter")
    expect(page.locator("#flash")).to_contain_text("A reply is being written on this branch")
    _wait_draft(page, seeded, "Typed while the reply is written")
    page.reload()  # the reply goes on being written meanwhile
    expect(page.locator(BOX)).to_have_value("Typed while the reply is written")
    page.locator("#composer [data-stop]").click()
    page.wait_for_function("() => !document.querySelector('#entries > article[data-reply]:not([data-reply-entry])')")
    assert not record.errors


def test_a_message_whose_answer_was_lost_does_not_come_back_on_reload(page, ui, sessions, record) -> None:
    seeded = sessions.seed("01-linear")
    _open(ui, page, seeded.url)

    def lose(route: Any) -> None:  # the server takes the message; its answer never reaches the tab
        with contextlib.suppress(PlaywrightError):
            route.fetch(timeout=800)
        route.abort("connectionreset")

    page.route("**/send/", lose)
    box = page.locator(BOX)
    box.press_sequentially("Only once, please")
    box.press("Control+Enter")
    expect(page.locator("#flash")).to_contain_text("it had taken what you sent")
    expect(box).to_have_value("")
    page.unroute("**/send/")
    page.reload()
    expect(page.locator(BOX)).to_have_value("")
    sent = [e for e in seeded.entries() if e.get("message", {}).get("content") == "Only once, please"]
    assert len(sent) == 1
    assert not record.errors


def test_with_two_tabs_the_last_typed_wins_and_no_box_is_overwritten(new_page, ui, sessions, record) -> None:
    seeded = sessions.seed("01-linear")
    first, second = new_page(), new_page()
    for page in (first, second):
        _open(ui, page, seeded.url)
    second.locator(BOX).press_sequentially("Said in the second tab")
    _wait_draft(second, seeded, "Said in the second tab")
    first.locator(BOX).press_sequentially("Said in the first tab")
    _wait_draft(first, seeded, "Said in the first tab")
    expect(second.locator(BOX)).to_have_value("Said in the second tab")  # what a tab shows stays
    # The second tab sends its own message: the first tab's later draft is not its to clear.
    second.locator(BOX).press("Control+Enter")
    ui.wait_position_change(second, LEAF)
    assert _draft(second, seeded) == "Said in the first tab"
    second.reload()
    expect(second.locator(BOX)).to_have_value("Said in the first tab")
    assert not record.errors


def test_a_draft_comes_back_when_back_and_forward_put_a_page_back(page, ui, sessions, record) -> None:
    """htmx's history cache puts a page back as markup, which holds no typed text."""
    seeded = sessions.write_lines(
        [
            message("aaaa0001", None, "user", "root question", 1),
            message("aaaa0002", "aaaa0001", "assistant", "answer one", 2),
            message("aaaa0003", "aaaa0002", "user", "branch A question", 3),
            message("aaaa0004", "aaaa0002", "user", "branch B question", 4),
        ]
    )
    _open(ui, page, seeded.entry_url("aaaa0004"))
    box = page.locator(BOX)
    box.press_sequentially("Half a thought")
    _wait_draft(page, seeded, "Half a thought")
    page.locator("#entry-aaaa0004 .nav-prev").click()  # the other branch, at a URL htmx pushes
    expect(page.locator("#entry-aaaa0003")).to_be_visible()
    expect(box).to_have_value("Half a thought")
    page.go_back()
    expect(page.locator("#entry-aaaa0004")).to_be_visible()
    expect(box).to_have_value("Half a thought")
    box.press_sequentially(", and more")
    page.go_forward()  # at once: what was typed a moment ago goes with the page left
    expect(page.locator("#entry-aaaa0003")).to_be_visible()
    expect(box).to_have_value("Half a thought, and more")
    assert not record.errors


def test_storage_that_refuses_is_silent(page, ui, sessions, record) -> None:
    page.add_init_script("Storage.prototype.setItem = () => { throw new DOMException('full', 'QuotaExceededError'); };")
    seeded = sessions.seed("01-linear")
    _open(ui, page, seeded.url)
    page.locator(BOX).press_sequentially("Nowhere to keep this")
    page.wait_for_timeout(800)  # past the moment the draft is saved
    page.reload()
    expect(page.locator(BOX)).to_have_value("")
    assert not record.errors


@pytest.mark.parametrize("close", ["Escape", "Cancel", "its button"])
def test_an_edit_panel_closed_keeps_what_was_typed(page, ui, sessions, record, close) -> None:
    seeded = sessions.seed("01-linear")
    _open(ui, page, seeded.url)
    panel = ui.open_panel(page, USER, "edit")
    original = panel.locator("textarea[name=text]").input_value()
    panel.locator("textarea[name=text]").fill("Asked differently, half typed")
    if close == "Escape":
        page.keyboard.press("Escape")
    elif close == "Cancel":
        panel.get_by_role("button", name="Cancel").click()
    else:
        ui.tool(page, USER, "Edit").click()
    expect(panel).to_be_hidden()

    panel = ui.open_panel(page, USER, "edit")
    expect(panel.locator("textarea[name=text]")).to_have_value("Asked differently, half typed")
    expect(panel.locator("textarea[name=text]")).to_be_focused()
    # Opening another panel in its place keeps it too.
    ui.open_panel(page, USER, "label")
    panel = ui.open_panel(page, USER, "edit")
    expect(panel.locator("textarea[name=text]")).to_have_value("Asked differently, half typed")
    assert original != "Asked differently, half typed"
    assert not record.errors


def test_a_label_panel_closed_keeps_what_was_typed(page, ui, sessions, record) -> None:
    seeded = sessions.seed("01-linear")
    _open(ui, page, seeded.url)
    panel = ui.open_panel(page, USER, "label")
    panel.locator("input[name=label]").fill("half a label")
    page.keyboard.press("Escape")
    expect(panel).to_be_hidden()
    panel = ui.open_panel(page, USER, "label")
    expect(panel.locator("input[name=label]")).to_have_value("half a label")
    panel.locator("input[name=label]").press("Enter")  # saved: the next panel shows the label as stored
    expect(page.locator(f"#entry-{USER} .tag[title=label]")).to_have_text("half a label")
    assert not record.errors


def test_edit_opens_with_the_caret_after_the_message(page, ui, sessions, record) -> None:
    """The message to edit was selected whole: the first key pressed replaced it (" EXTRA" typed to
    add to it resent "EXTRA"). Text typed in a label panel comes back with the caret after it too."""
    seeded = sessions.seed("01-linear")
    _open(ui, page, seeded.url)
    text = ui.open_panel(page, USER, "edit").locator("textarea[name=text]")
    expect(text).to_be_focused()
    original = text.input_value()
    assert text.evaluate("(el) => [el.selectionStart, el.selectionEnd]") == [len(original), len(original)]
    page.keyboard.type(" EXTRA")
    expect(text).to_have_value(original + " EXTRA")
    ui.open_panel(page, USER, "label").locator("input[name=label]").fill("a name")
    page.keyboard.press("Escape")
    label = ui.open_panel(page, USER, "label").locator("input[name=label]")
    expect(label).to_be_focused()
    assert label.evaluate("(el) => [el.selectionStart, el.selectionEnd]") == [len("a name"), len("a name")]
    assert not record.errors
