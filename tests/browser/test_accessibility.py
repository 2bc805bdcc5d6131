"""Every page passes axe-core with no serious or critical violation, in both themes and at phone width,
with its panels, folds and drawers open; and what a mouse does, the keyboard does too. (The OpenAI
model picker and a reply being written are checked in test_accessibility_states.py, with a server of
their own.)"""

from __future__ import annotations

import re

from playwright.sync_api import expect

LONG_CODE = "```python\n" + "\n".join(f"total_{n} = compute(value_{n}) * 2  # line {n}" for n in range(60)) + "\n```"
WIDE_CODE = "```\n" + "echo " + "wide-" * 60 + "\n```"

U2, SUMMARY = "97690895", "07721729"
ERROR_SESSION = [
    {
        "type": "message",
        "id": "u0000001",
        "parentId": None,
        "timestamp": "2026-03-02T09:00:01.000Z",
        "message": {"role": "user", "content": "Run the **tests**, please", "timestamp": 1772442001000},
    },
    {
        "type": "message",
        "id": "a0000001",
        "parentId": "u0000001",
        "timestamp": "2026-03-02T09:00:02.000Z",
        "message": {
            "role": "assistant",
            "content": [{"type": "text", "text": "Running:\n\n```python\nimport pytest\npytest.main()\n```"}],
            "provider": "openai-compatible",
            "model": "local",
            "api": "openai-completions",
            "usage": {},
            "stopReason": "error",
            "errorMessage": "Connection refused by http://127.0.0.1:8080/v1/chat/completions",
            "timestamp": 1772442002000,
        },
    },
]


def _code_session(sessions):
    """A reply with a long code block (shown folded, scrolling) and one with a line wider than a phone."""
    text = f"A long one:\n\n{LONG_CODE}\n\nAnd a wide one:\n\n{WIDE_CODE}"
    return sessions.write_lines(
        [
            ERROR_SESSION[0],
            {
                **ERROR_SESSION[1],
                "message": {**ERROR_SESSION[1]["message"], "stopReason": "stop", "errorMessage": None},
            },
            {
                "type": "message",
                "id": "a0000002",
                "parentId": "a0000001",
                "timestamp": "2026-03-02T09:00:03.000Z",
                "message": {
                    **ERROR_SESSION[1]["message"],
                    "content": [{"type": "text", "text": text}],
                    "stopReason": "stop",
                },
            },
        ]
    )


def test_session_list_search_and_error_pages(axe_context, axe, ui, sessions) -> None:
    sessions.seed("01-linear")
    sessions.seed("02-tree-branches")
    page = axe_context.new_page()
    ui.open(page, "/")
    axe.check_themes(page, "session list")
    ui.open(page, "/search/?q=endpoint")
    expect(page.locator("#search-results li").first).to_be_visible()
    axe.check_themes(page, "search results")
    page.goto("/s/no-such-session/")
    axe.check_themes(page, "404 page")
    page.goto("/?page=abc")
    axe.check_themes(page, "400 page")


def test_session_page_with_tree_tools_folds_and_panels(axe_context, axe, ui, sessions) -> None:
    seeded = sessions.seed("01-linear")
    page = axe_context.new_page()
    page.set_viewport_size({"width": 1280, "height": 800})
    ui.open(page, seeded.url)
    expect(page.locator("#tree-panel [role=tree]")).to_be_visible()
    expect(page.locator("#composer-settings select[name=model]")).to_be_visible()
    for fold in page.locator("#entries details.fold").all():  # tool calls, tool results, shell output
        fold.locator("> summary").click()
    ui.open_panel(page, "c256703f", "edit")
    axe.check_themes(page, "session page (tool calls, a panel open, the tree beside)")


def test_compaction_and_error_reply(axe_context, axe, ui, sessions) -> None:
    compacted = sessions.seed("04-compaction")
    page = axe_context.new_page()
    ui.open(page, compacted.url)
    card = page.locator("#entries > article.entry--fold details.fold")
    card.locator("> summary").click()
    expect(card.locator(".fold__body article.entry").first).to_be_visible()
    axe.check_themes(page, "a compacted session, its history unfolded")

    failed = sessions.write_lines(ERROR_SESSION)
    ui.open(page, failed.url)
    expect(page.locator("#entry-a0000001.is-error")).to_contain_text("Connection refused")
    expect(page.locator("#entry-a0000001 .code .tok-kn")).to_have_text("import")  # highlighted code
    axe.check_themes(page, "an error reply with code")


def test_phone_width_with_each_drawer_open(axe_context, axe, ui, sessions) -> None:
    seeded = sessions.seed("02-tree-branches")
    page = axe_context.new_page()
    page.set_viewport_size({"width": 390, "height": 844})
    ui.open(page, seeded.url)
    axe.check_themes(page, "session page at 390 px")
    page.get_by_role("button", name="Sessions", exact=True).click()
    expect(page.locator("#sidebar a[aria-current=page]")).to_be_visible()
    axe.check_themes(page, "the sessions drawer at 390 px")
    page.keyboard.press("Escape")
    page.get_by_role("button", name="Tree", exact=True).click()
    expect(page.locator("#tree-panel [role=tree]")).to_be_visible()
    axe.check_themes(page, "the tree drawer at 390 px")


def test_compare_and_map_pages(axe_context, axe, ui, sessions) -> None:
    seeded = sessions.seed("02-tree-branches")
    page = axe_context.new_page()
    ui.open(page, f"/s/{seeded.id}/compare/?e={U2}&e={SUMMARY}")
    axe.check_themes(page, "compare page")
    ui.open(page, f"/s/{seeded.id}/map/")
    page.locator("svg").first.wait_for()
    axe.check_themes(page, "map page")


def _branchy_session(sessions):
    """A prompt with three answers, the first long and followed by eight short prompts, each labelled
    (more labels on one branch than a column's summary shows)."""
    stamp = "2026-03-02T09:00:{:02d}.000Z".format

    def message(entry_id, parent, role, text, second):
        content = text if role == "user" else [{"type": "text", "text": text}]
        return {
            "type": "message",
            "id": entry_id,
            "parentId": parent,
            "timestamp": stamp(second),
            "message": {"role": role, "content": content, "timestamp": 1772442000000 + second * 1000},
        }

    lines = [message("u0000001", None, "user", "Which way?", 1)]
    for i, text in enumerate(["Paragraph of the first way.\n\n" * 120, "The second way.", "The third way."]):
        lines.append(message(f"a000000{i}", "u0000001", "assistant", text, 2 + i))
    parent = "a0000000"
    for i in range(8):
        lines.append(message(f"p000000{i}", parent, "user", f"and then {i}?", 10 + i))
        parent = f"p000000{i}"
    for i in range(8):
        label = {"type": "label", "id": f"l000000{i}", "parentId": parent, "timestamp": stamp(20 + i)}
        lines.append({**label, "targetId": f"p000000{i}", "label": f"tag {i}"})
        parent = f"l000000{i}"
    return sessions.write_lines(lines)


def test_compare_grid_word_diff_and_map_picks_at_phone_width(axe_context, axe, ui, sessions) -> None:
    seeded = _branchy_session(sessions)
    page = axe_context.new_page()
    ui.open(page, f"/s/{seeded.id}/compare/?e=a0000000&e=a0000001")
    for summary in page.locator(
        ".compare-trunk > summary, .compare-pick > summary, .compare__more-labels > summary"
    ).all():
        summary.click()
    expect(page.locator(".compare__more-labels[open] .tag")).to_have_count(2)
    page.get_by_role("button", name="Show all").click()
    axe.check_themes(page, "compare page: trunk, picker and a long message open")
    ui.open(page, f"/s/{seeded.id}/compare/?e=a0000000&e=a0000001&diff=1&diff=2")
    expect(page.locator(".compare-diff__row").first).to_be_visible()
    axe.check_themes(page, "word diff")
    page.set_viewport_size({"width": 390, "height": 844})
    ui.open(page, f"/s/{seeded.id}/compare/?e=a0000000&e=a0000001&e=a0000002")
    axe.check(page, "compare page at 390 px")
    ui.open(page, f"/s/{seeded.id}/map/")
    page.locator("#map[data-loaded=true]").wait_for()
    page.locator("#map-pick").check()
    page.locator(".map-node[data-entry]").first.click()
    axe.check_themes(page, "map at 390 px, one node picked")


def test_focus_is_visible_and_the_shell_works_from_the_keyboard(page, ui, sessions) -> None:
    seeded = sessions.seed("02-tree-branches")
    page.set_viewport_size({"width": 390, "height": 844})
    ui.open(page, seeded.url)
    # The first Tab reaches the skip link, which shows and leads to the content.
    page.keyboard.press("Tab")
    skip = page.get_by_role("link", name="Skip to the content")
    expect(skip).to_be_focused()
    expect(skip).to_be_in_viewport()
    # The drawers open and close from the keyboard, and focus goes into them and back.
    toggle = page.get_by_role("button", name="Sessions", exact=True)
    toggle.focus()
    page.keyboard.press("Enter")
    expect(toggle).to_have_attribute("aria-expanded", "true")
    expect(page.locator("#sidebar")).to_be_visible()
    assert page.evaluate("() => document.getElementById('sidebar').contains(document.activeElement)")
    page.keyboard.press("Escape")
    expect(page.locator("#sidebar")).to_be_hidden()
    expect(toggle).to_be_focused()
    expect(toggle).to_have_attribute("aria-expanded", "false")
    # What has keyboard focus is outlined.
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Tab")
    style = page.evaluate(
        "() => { const s = getComputedStyle(document.activeElement); return [s.outlineStyle, s.outlineWidth]; }"
    )
    assert style[0] != "none" and style[1] != "0px", style
    # An entry's actions are reachable with Tab: its row of buttons and links.
    page.locator(f"#entry-{U2}").focus()
    page.keyboard.press("Tab")
    focused = page.evaluate(
        "() => document.activeElement.closest('article') && document.activeElement.closest('article').id"
    )
    assert focused == f"entry-{U2}"


def test_long_and_wide_code_blocks_can_be_scrolled_from_the_keyboard(axe_context, axe, ui, sessions) -> None:
    seeded = _code_session(sessions)
    page = axe_context.new_page()
    for width, height in ((1280, 800), (390, 844)):
        page.set_viewport_size({"width": width, "height": height})
        ui.open(page, seeded.url)
        folded = page.locator("#entry-a0000002 .code--long pre")
        expect(folded).to_have_attribute("tabindex", "0")
        assert folded.evaluate("el => el.scrollHeight > el.clientHeight")  # folded: it scrolls
        wide = page.locator("#entry-a0000002 .code").last.locator("pre")
        assert wide.evaluate("el => el.scrollWidth > el.clientWidth")  # wider than its column: it scrolls
        expect(wide).to_have_attribute("role", "region")
        axe.check_themes(page, f"long and wide code at {width} px")
    wide.focus()
    page.keyboard.press("ArrowRight")
    page.wait_for_function("el => el.scrollLeft > 0", arg=wide.element_handle())  # the keyboard scrolls what it focused


def test_share_upload_password_and_action_pages(axe_context, axe, ui, sessions, server) -> None:
    seeded = sessions.seed("01-linear")
    page = axe_context.new_page()
    ui.open(page, f"/s/{seeded.id}/share/")
    expect(page.locator("#main form").first).to_be_visible()
    axe.check_themes(page, "share page")
    form = page.locator("form.share-form")
    form.evaluate("(f) => { f.noValidate = true; }")  # what the server says, not the browser
    form.locator("select[name=audience]").select_option("user")
    form.locator("input[name=days]").fill("0")
    form.locator("button[type=submit]").click()
    expect(form.locator("input[name=days]")).to_have_attribute("aria-invalid", "true")
    axe.check_themes(page, "share page with errors")
    ui.open(page, seeded.url)
    page.locator("#entry-c256703f > .entry__tools").get_by_role("link", name="Share…").click()
    expect(page.locator("#share-dialog input[name=entry][value=c256703f]")).to_be_checked()
    axe.check_themes(page, "the share dialog")
    page.set_viewport_size({"width": 390, "height": 844})
    axe.check_themes(page, "the share dialog at 390 px")
    page.set_viewport_size({"width": 1280, "height": 800})
    ui.open(page, "/upload/")
    axe.check_themes(page, "upload page")
    page.locator("input[name=file]").set_input_files(
        {"name": "notes.jsonl", "mimeType": "application/json", "buffer": b"not json\n"}
    )
    page.locator("form.account-form button[type=submit]").click()
    expect(page.locator("input[name=file]")).to_have_attribute("aria-invalid", "true")
    axe.check_themes(page, "upload page with errors")
    ui.open(page, "/accounts/password/")
    axe.check_themes(page, "password page")
    ui.open(page, f"/s/{seeded.id}/e/c256703f/actions/")  # what a browser without JavaScript opens
    expect(page.locator("form.fork-form")).to_be_visible()
    axe.check_themes(page, "an entry's actions as a page")
    page.set_viewport_size({"width": 390, "height": 844})
    axe.check_themes(page, "an entry's actions as a page at 390 px")


def test_sign_in_pages_and_a_one_time_link(chromium, axe, server, add_account) -> None:
    signed_out = chromium.new_context(base_url=server.url, bypass_csp=True)
    try:
        page = signed_out.new_page()
        page.goto("/accounts/login/")
        expect(page.locator("input[name=username]")).to_be_visible()
        axe.check_themes(page, "sign-in page")
        page.goto(add_account("axe-newcomer"))  # signs in, then asks for a password
        expect(page).to_have_url(re.compile(r"/accounts/password/$"))
        axe.check_themes(page, "the page a one-time link lands on")
        page.goto("/accounts/once/spent-or-unknown/")
        axe.check_themes(page, "an unknown one-time link")
    finally:
        signed_out.close()


def test_an_empty_session_in_both_themes_and_at_phone_width(axe_context, axe, ui, sessions) -> None:
    empty = sessions.write_lines([])
    page = axe_context.new_page()
    ui.open(page, empty.url)
    expect(page.locator("#composer textarea")).to_be_visible()
    axe.check_themes(page, "an empty session")
    page.set_viewport_size({"width": 390, "height": 844})
    axe.check_themes(page, "an empty session at 390 px")


def test_at_phone_width_an_entry_s_small_controls_are_targets_of_at_least_24_px(page, ui, sessions) -> None:
    """WCAG 2.2's minimum target size: ‹ › measured 22 × 21 px and the "#" permalink 11 × 20."""
    seeded = sessions.seed("02-tree-branches")
    page.set_viewport_size({"width": 390, "height": 844})
    ui.open(page, seeded.url)
    small = page.eval_on_selector_all(
        "#entries .navigator button, #entries .entry__link",
        "els => els.filter(e => e.offsetParent).map(e => e.getBoundingClientRect())"
        ".filter(r => r.width < 24 || r.height < 24).map(r => [r.width, r.height])",
    )
    assert small == []
    assert page.locator("#entries .navigator button").count() > 0


def test_the_import_pages(axe_context, axe, ui, sessions, server, tmp_path) -> None:
    page = axe_context.new_page()
    ui.open(page, "/import/")
    axe.check_themes(page, "import page")
    chat = tmp_path / "chat.json"
    chat.write_text(
        '[{"id": "c", "user_id": "u", "title": "Hi", "chat": {"history": {"messages": {"m": {"id": "m", "parentId": null, "role": "user", "content": "Hi", "timestamp": 1760000000}}, "currentId": "m"}}}]'
    )
    page.locator("input[name=file]").set_input_files(str(chat))
    page.locator("#import-form button[type=submit]").click()
    expect(page.locator("#import-status")).to_contain_text("Imported from Open WebUI: 1 conversation.")
    axe.check_themes(page, "an import's status page")
    ui.open(page, "/import/")
    page.locator("input[name=file]").set_input_files(
        {"name": "x.json", "mimeType": "application/json", "buffer": b"[1, 2]"}
    )
    page.locator("#import-form button[type=submit]").click()
    expect(page.get_by_role("alert")).to_contain_text("Not imported")
    axe.check_themes(page, "an import refused")
