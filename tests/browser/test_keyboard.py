"""Keyboard and screen-reader behaviour: where focus goes, what single keys act on, what a drawer
covers, what is announced."""

from __future__ import annotations

from playwright.sync_api import expect

# 02-tree-branches: f87f9c1c (u1) → 2f760a8d (a1) → { 97690895 (u2) …, 07721729 (branch_summary) … }
U2, SUMMARY = "97690895", "07721729"


def _focused(page) -> str:
    return page.evaluate(
        "() => { const a = document.activeElement; const e = a && a.closest && a.closest('article.entry[data-entry]');"
        " return e ? e.dataset.entry : a.tagName; }"
    )


def test_the_navigator_s_buttons_focus_the_sibling_they_show(page, ui, sessions) -> None:
    seeded = sessions.seed("02-tree-branches")
    ui.open(page, seeded.url)
    page.locator(f"#entry-{U2} .nav-next").focus()
    page.keyboard.press("Enter")
    expect(page.locator(f"#entry-{SUMMARY} .navigator__count")).to_have_text("2/2")
    # The focus stays on the navigator (the last branch: on ‹), so Enter goes on; the branch is said.
    expect(page.locator(f"#entry-{SUMMARY} .nav-prev")).to_be_focused()
    expect(page.locator("#announce")).to_have_text("Branch 2 of 2")
    page.keyboard.press("Enter")
    expect(page.locator(f"#entry-{U2} .navigator__count")).to_have_text("1/2")
    expect(page.locator(f"#entry-{U2} .nav-next")).to_be_focused()
    expect(page.locator("#announce")).to_have_text("Branch 1 of 2")


def test_single_keys_do_nothing_while_a_link_or_button_has_the_focus(page, ui, sessions) -> None:
    seeded = sessions.seed("02-tree-branches")
    ui.open(page, seeded.url)
    before = ui.position(page)
    page.locator("#sidebar a[aria-current=page]").focus()
    for key in ("l", "]", "j", "k"):
        page.keyboard.press(key)
    page.wait_for_timeout(300)
    assert ui.position(page) == before
    page.evaluate("() => document.activeElement.blur()")
    page.keyboard.press("l")  # the same key with no control focused switches the branch
    page.wait_for_function(f"() => document.getElementById('tab-state').dataset.position !== {before!r}")


def test_escape_closes_an_entry_s_panel_and_focus_goes_back_to_its_tool(page, ui, sessions) -> None:
    seeded = sessions.seed("02-tree-branches")
    ui.open(page, seeded.url)
    tool = page.locator(f"#entry-{U2} a[data-panel=label]")
    tool.focus()
    page.keyboard.press("Enter")
    panel = page.locator(f"#entry-{U2} .entry__panel")
    expect(panel.locator("input[name=label]")).to_be_focused()
    page.keyboard.press("Escape")
    expect(panel).to_be_hidden()
    expect(tool).to_be_focused()


def test_an_open_drawer_keeps_tab_out_of_what_it_covers(page, ui, sessions) -> None:
    seeded = sessions.seed("02-tree-branches")
    page.set_viewport_size({"width": 375, "height": 740})
    ui.open(page, seeded.url)
    page.get_by_role("button", name="Sessions", exact=True).click()
    for _ in range(30):
        page.keyboard.press("Tab")
        assert page.evaluate("() => !document.activeElement.closest('#main')"), "Tab reached the page under the drawer"
    page.keyboard.press("Escape")
    expect(page.locator("#sidebar")).to_be_hidden()
    assert page.evaluate("() => !document.getElementById('main').inert")


def test_the_end_of_a_reply_is_announced(page, ui, sessions) -> None:
    seeded = sessions.seed("01-linear")
    ui.open(page, seeded.url)
    page.locator("#composer textarea[name=text]").fill("Tell me")
    page.locator("#composer textarea[name=text]").press("Control+Enter")
    expect(page.locator("#announce")).to_have_text("The reply has ended.")
    expect(page.locator("#announce")).to_have_attribute("aria-live", "polite")


def test_on_a_phone_tab_never_lands_under_the_top_bar_or_the_composer(page, ui, sessions) -> None:
    seeded = sessions.seed("01-linear")
    page.set_viewport_size({"width": 375, "height": 740})
    ui.open(page, seeded.url)
    page.locator("#composer textarea[name=text]").focus()
    covered = """() => {
        const box = document.activeElement.getBoundingClientRect();
        const top = document.querySelector('.topbar').getBoundingClientRect().bottom;
        const dock = document.querySelector('.dock');
        const bottom = dock.contains(document.activeElement) ? innerHeight : dock.getBoundingClientRect().top;
        return box.bottom <= top || box.top >= bottom;
    }"""
    for _ in range(80):  # back through the whole transcript, to the top bar
        page.keyboard.press("Shift+Tab")
        if page.evaluate("() => !!document.activeElement.closest('.topbar, .skip-link')"):
            break
        assert not page.evaluate(covered), page.evaluate("() => document.activeElement.outerHTML.slice(0, 120)")
    else:
        raise AssertionError("Shift+Tab never reached the top bar")


def test_the_second_tab_stop_skips_to_the_message_box(page, ui, sessions) -> None:
    # A short session with a few sessions in the sidebar once took 72 Tab presses to reach the box.
    for sample in ("01-linear", "04-compaction", "07-context-edit-usage"):
        sessions.seed(sample)
    seeded = sessions.seed("02-tree-branches")
    ui.open(page, seeded.url)
    page.keyboard.press("Tab")
    expect(page.get_by_role("link", name="Skip to the content")).to_be_focused()
    page.keyboard.press("Tab")
    expect(page.get_by_role("link", name="Skip to the message box")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("#composer textarea[name=text]")).to_be_focused()
    assert "#" not in page.url  # a reload still opens at the newest message
    page.keyboard.type("typed at once")
    expect(page.locator("#composer textarea[name=text]")).to_have_value("typed at once")


def test_a_page_without_a_message_box_has_no_skip_link_to_it(page, ui, sessions) -> None:
    sessions.seed("01-linear")
    ui.open(page, "/")
    expect(page.get_by_role("link", name="Skip to the content")).to_have_count(1)
    expect(page.get_by_role("link", name="Skip to the message box")).to_have_count(0)
