"""The app shell: sessions beside the conversation (or in a drawer on a phone), a session opening at
its newest message with the composer in view, copy buttons, code, themes, and the tree by keyboard."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from playwright.sync_api import expect
from support.lines import message

U1, A1, U2, SUMMARY, U2B, BRANCH_END, LEAF = (
    "f87f9c1c",
    "2f760a8d",
    "97690895",
    "07721729",
    "4b928ed4",
    "de4f0d3a",
    "750a4556",
)
REPO = Path(__file__).resolve().parents[2]
LONG_CODE = "\n".join(f"value_{n} = {n} * 2  # line {n}" for n in range(60))


def test_sidebar_lists_filters_and_marks_the_session(page, ui, sessions) -> None:
    tree = sessions.seed("02-tree-branches")
    linear = sessions.seed("01-linear")
    fork = sessions.seed("03-fork-of-02")
    lines = fork.path.read_bytes().split(b"\n", 1)  # the seed drops the sample's lineage: point it at ``tree``
    header = json.loads(lines[0])
    fork.path.write_bytes(json.dumps({**header, "parentSession": str(tree.path)}).encode() + b"\n" + lines[1])
    ui.open(page, tree.url)
    sidebar = page.locator("#sidebar")
    expect(sidebar).to_be_visible()  # beside the conversation at 1280 px
    current = sidebar.locator("a[aria-current=page]")
    expect(current).to_have_attribute("href", tree.url)
    expect(sidebar.locator(".sidebar__when").first).to_be_visible()  # by day, newest first
    expect(sidebar.locator("#sidebar-workspace")).to_have_count(0)  # one workspace: nothing to choose
    links = sidebar.locator(".sidebar__sessions a")
    hrefs = [links.nth(i).get_attribute("href") for i in range(links.count())]
    assert sorted(hrefs) == sorted([tree.url, linear.url, f"/s/{fork.id}/"])
    # The fork is nested right under the session it came from.
    parent_link = sidebar.locator(f"a[href='{tree.url}']")
    expect(sidebar.locator(f"li:has(a[href='/s/{fork.id}/'])")).to_have_attribute("style", "--depth: 1")
    assert hrefs.index(f"/s/{fork.id}/") == hrefs.index(tree.url) + 1
    expect(parent_link).to_contain_text("Title validation experiments")

    # Typing filters the list by name and first message; the search link carries the words.
    page.locator("#sidebar-filter").press_sequentially("endpoints")
    expect(sidebar.locator(".sidebar__sessions a")).to_have_count(1)
    expect(sidebar.locator(".sidebar__sessions a")).to_contain_text("Todo API endpoints")
    expect(sidebar.get_by_role("link", name="Search inside every session")).to_have_attribute(
        "href", "/search/?q=endpoints"
    )
    page.locator("#sidebar-filter").fill("")
    page.locator("#sidebar-filter").dispatch_event("input")
    expect(sidebar.locator(".sidebar__sessions a")).to_have_count(3)
    # Clicking a session opens it.
    sidebar.locator(f"a[href='/s/{fork.id}/']").click()
    page.wait_for_url(re.compile(f"/s/{fork.id}/$"))


def test_sidebar_loads_more_sessions_as_it_is_scrolled(page, ui, sessions) -> None:
    for n in range(60):
        sessions.write_lines([message(f"u{n:07d}", None, "user", f"Session number {n:02d}", 1)])
    # The newest, so listed first: the sidebar shows the open session's link, which at the end of the
    # first page would bring "More sessions" into view, and the next page with it.
    target = sessions.write_lines([message("u9999999", None, "user", "The one open", 2)])
    ui.open(page, target.url)
    links = page.locator("#sidebar .sidebar__sessions a")
    expect(links).to_have_count(50)  # one page at first
    more = page.locator("#sidebar .sidebar__more")
    expect(more).to_contain_text("61 in all")
    # The sixty files written just now make the sidebar refresh once more, which may replace the
    # link being scrolled to: scroll to the one there is until the rest has loaded.
    for _ in range(40):
        if links.count() == 61:
            break
        page.evaluate(
            "() => { const more = document.querySelector('#sidebar .sidebar__more'); if (more) more.scrollIntoView(); }"
        )
        page.wait_for_timeout(250)
    expect(links).to_have_count(61)
    expect(more).to_have_count(0)
    # Read from the top again, then a session written refreshes the sidebar: with every page it had
    # scrolled in (its last page out of sight, not fetched again as it is reached).
    page.evaluate("document.querySelector('#sidebar .sidebar__sessions a').scrollIntoView()")  # the one there is
    sessions.write_lines([message("u9999998", None, "user", "One more", 1)])
    expect(page.locator("#sidebar .sidebar__sessions a", has_text="One more")).to_have_count(1)
    expect(links).to_have_count(62)


def test_new_chat_from_the_search_page(page, ui, sessions, record) -> None:
    # The sidebar's "New session" asked for a folder; "New chat" in the top bar asks nothing, on every
    # page (tests/browser/test_chat_list.py starts one from a session).
    ui.open(page, "/search/")
    page.get_by_role("button", name="New chat").click()
    page.wait_for_url(re.compile(r"/s/[A-Za-z0-9._-]+/$"))
    expect(page.locator("#composer textarea[name=text]")).to_be_focused()  # "write the first one below"
    expect(page.locator("#session-title")).to_have_text("New session")
    assert not record.errors, record.errors


def test_a_long_session_opens_at_its_newest_message_with_the_composer_in_view(page, ui, sessions) -> None:
    lines, parent = [], None
    for n in range(30):
        lines.append(message(f"u{n:07d}", parent, "user", f"Question {n}\n\n" + "words " * 60, 2 * n))
        lines.append(
            message(f"a{n:07d}", f"u{n:07d}", "assistant", f"Answer {n}\n\n" + "more " * 80, 2 * n + 1, model="pi/m")
        )
        parent = f"a{n:07d}"
    seeded = sessions.write_lines(lines)
    page.set_viewport_size({"width": 1280, "height": 700})
    ui.open(page, seeded.url)
    expect(page.locator("#entry-a0000029")).to_be_in_viewport()
    expect(page.locator("#composer textarea")).to_be_in_viewport()
    # Scrolled to the top (the older page loads above), the composer still stays at the bottom.
    page.evaluate("window.scrollTo(0, 0)")
    expect(page.locator("#entries > .older")).to_have_count(0)
    page.evaluate("window.scrollTo(0, 0)")
    expect(page.locator("#entry-u0000000")).to_be_in_viewport()
    expect(page.locator("#composer textarea")).to_be_in_viewport()


def test_older_messages_load_above_without_moving_what_is_read(page, ui, sessions) -> None:
    lines, parent = [], None
    for n in range(200):
        lines.append(message(f"m{n:07d}", parent, "user", f"Message {n}\n\nSome words.", n % 60))
        parent = f"m{n:07d}"
    seeded = sessions.write_lines(lines)
    page.set_viewport_size({"width": 1280, "height": 800})
    ui.open(page, seeded.url)
    entries = page.locator("#entries > article.entry")
    expect(entries).to_have_count(40)
    oldest = page.locator("#entry-m0000160")
    # Scrolled to the very top, the page before loads above; the message read stays where it was on
    # screen, and no further page loads until the reader scrolls up to it.
    page.evaluate("window.scrollTo(0, 0)")
    before = oldest.bounding_box()["y"]
    expect(entries).to_have_count(80)
    page.wait_for_timeout(600)
    assert entries.count() == 80
    assert abs(oldest.bounding_box()["y"] - before) < 2
    expect(page.locator("#entry-m0000120")).not_to_be_in_viewport()
    page.evaluate("window.scrollTo(0, 0)")
    expect(entries).to_have_count(120)
    page.wait_for_timeout(600)
    assert entries.count() == 120
    expect(page.locator("#entry-m0000120")).to_be_in_viewport()


def test_phone_width_puts_sessions_and_tree_in_drawers(page, ui, sessions) -> None:
    seeded = sessions.seed("02-tree-branches")
    page.set_viewport_size({"width": 390, "height": 844})
    ui.open(page, seeded.url)
    expect(page.locator("#sidebar")).to_be_hidden()
    expect(page.locator("#tree-aside")).to_be_hidden()
    expect(page.locator("#composer textarea")).to_be_in_viewport()
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= 390, f"the page is {width} px wide"  # nothing sticks out sideways

    page.get_by_role("button", name="Sessions", exact=True).click()
    expect(page.locator("#sidebar a[aria-current=page]")).to_be_in_viewport()
    page.locator(".drawer-backdrop").click(position={"x": 380, "y": 400})
    expect(page.locator("#sidebar")).to_be_hidden()

    page.get_by_role("button", name="Tree", exact=True).click()
    node = page.locator(f"#tree-panel button.tree__node[data-entry='{BRANCH_END}']")
    expect(node).to_be_in_viewport()
    node.click()
    ui.wait_position(page, BRANCH_END)
    page.get_by_role("button", name="Close the tree").click()
    expect(page.locator("#tree-aside")).to_be_hidden()


def test_the_tree_panel_closes_and_stays_closed(page, ui, sessions) -> None:
    seeded = sessions.seed("02-tree-branches")
    ui.open(page, seeded.url)
    toggle = page.get_by_role("button", name="Tree", exact=True)
    expect(toggle).to_have_attribute("aria-expanded", "true")
    toggle.click()
    expect(page.locator("#tree-aside")).to_be_hidden()
    expect(toggle).to_have_attribute("aria-expanded", "false")
    page.reload()
    expect(page.locator("#tree-aside")).to_be_hidden()
    page.get_by_role("button", name="Tree", exact=True).click()
    expect(page.locator("#tree-panel [role=tree]")).to_be_visible()


def test_copy_a_message_and_a_code_block(context, page, ui, sessions) -> None:
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    text = "Use `pytest -q`, **then** read:\n\n```python\nprint('ok')\n```"
    seeded = sessions.write_lines(
        [
            message("u0000001", None, "user", "Hi", 1),
            message("a0000001", "u0000001", "assistant", text, 2, model="pi/m"),
        ]
    )
    ui.open(page, seeded.url)
    copy = page.locator("#entry-a0000001 > .entry__tools [data-copy]")
    expect(copy).to_have_accessible_name("Copy")
    copy.click()
    expect(copy).to_have_text("Copied")
    assert page.evaluate("navigator.clipboard.readText()") == text  # the Markdown as written
    expect(copy).to_have_text("Copy")
    code = page.locator("#entry-a0000001 .code")
    expect(code.locator(".tok-nb")).to_have_text("print")  # highlighted on the server
    code.get_by_role("button", name="Copy").click()
    assert page.evaluate("navigator.clipboard.readText()") == "print('ok')\n"

    # Without the clipboard API (an insecure origin, an old browser) the selection is copied instead.
    page.evaluate(
        "() => { Object.defineProperty(navigator, 'clipboard', {value: undefined});"
        " window.__copied = null; document.addEventListener('copy', () => { window.__copied = document.getSelection().toString(); }); }"
    )
    copy.click()
    page.wait_for_function("() => window.__copied !== null")
    assert page.evaluate("window.__copied") == text


def test_long_code_is_folded_until_asked(page, ui, sessions) -> None:
    reply = f"Here:\n\n```python\n{LONG_CODE}\n```"
    seeded = sessions.write_lines(
        [
            message("u0000001", None, "user", "Show me", 1),
            message("a0000001", "u0000001", "assistant", reply, 2, model="pi/m"),
        ]
    )
    ui.open(page, seeded.url)
    pre = page.locator("#entry-a0000001 .code pre")
    folded = pre.evaluate("el => el.clientHeight < el.scrollHeight")
    assert folded
    expand = page.locator("#entry-a0000001 .code .code__expand")
    expect(expand).to_have_text("Show all 60 lines")
    expand.click()
    expect(expand).to_have_attribute("aria-expanded", "true")
    assert pre.evaluate("el => el.clientHeight >= el.scrollHeight")


def test_theme_follows_the_system_and_a_choice_is_kept_without_a_flash(context, page, ui, sessions) -> None:
    seeded = sessions.seed("01-linear")
    page.emulate_media(color_scheme="dark")
    ui.open(page, seeded.url)
    dark_bg = page.evaluate("getComputedStyle(document.body).backgroundColor")
    page.emulate_media(color_scheme="light")
    light_bg = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert dark_bg != light_bg  # no choice made: the system's

    page.locator("#theme-switch").select_option("dark")
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") == dark_bg
    # On the next page the choice is in place before the body exists: nothing is drawn in the wrong theme.
    page.add_init_script(
        "new MutationObserver((records, observer) => { if (document.body) {"
        " window.__themeAtBody = document.documentElement.dataset.theme || ''; observer.disconnect(); } })"
        ".observe(document, {childList: true, subtree: true});"
    )
    ui.open(page, "/")
    assert page.evaluate("window.__themeAtBody") == "dark"
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") == dark_bg
    expect(page.locator("#theme-switch")).to_have_value("dark")
    page.locator("#theme-switch").select_option("system")
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") == light_bg
    assert page.evaluate("localStorage.getItem('pitree:theme')") is None


def test_the_tree_by_keyboard(page, ui, sessions) -> None:
    seeded = sessions.seed("02-tree-branches")
    ui.open(page, seeded.url)
    ui.open_tree_filter(page, "all")
    tree = page.locator("#tree-panel [role=tree]")
    rows = tree.locator(":scope > [role=treeitem]")

    def focused() -> str:
        return page.evaluate(
            "() => { const r = document.activeElement.closest('[role=treeitem]');"
            " if (!r) return 'outside'; const b = r.querySelector('.tree__node'); return b ? b.dataset.entry : 'fold'; }"
        )

    # Guides are drawn in a fixed-width font, so that "│" continues under "├─".
    expect(tree.locator(".tree__guide").first).to_have_css("white-space", "pre")
    assert "mono" in tree.locator(".tree__guide").first.evaluate("el => getComputedStyle(el).fontFamily").lower()
    expect(tree.locator(".badge").first).to_have_css("display", "inline-block")
    # One row is in the tab order: the tab's position.
    expect(tree.locator("[role=treeitem][tabindex='0']")).to_have_count(1)
    tree.locator("[role=treeitem][tabindex='0']").focus()
    assert focused() == LEAF
    page.keyboard.press("Home")
    assert focused() == U1
    page.keyboard.press("ArrowDown")
    assert focused() == A1
    page.keyboard.press("ArrowDown")
    assert focused() == U2  # the first branch under A1
    # Left from inside a branch goes to its branch point; Left there folds it, Right unfolds it.
    page.keyboard.press("ArrowLeft")
    assert focused() == A1
    shown = rows.count() - tree.locator(":scope > [role=treeitem][hidden]").count()
    page.keyboard.press("ArrowLeft")
    expect(tree.locator(f"[role=treeitem]:has(button[data-entry='{A1}'])")).to_have_attribute("aria-expanded", "false")
    expect(tree.locator(f"button[data-entry='{U2}']")).to_be_hidden()
    page.keyboard.press("ArrowDown")
    assert focused() == A1  # nothing visible below it
    page.keyboard.press("ArrowRight")
    assert rows.count() - tree.locator(":scope > [role=treeitem][hidden]").count() == shown
    # A fold opens with Right, and focus moves onto what it held.
    fold = tree.locator(".tree__row--fold").first
    fold.focus()
    page.keyboard.press("ArrowRight")
    page.wait_for_function(
        "() => document.activeElement.closest('[role=treeitem]') && document.activeElement.querySelector('.tree__node')"
    )
    assert focused() not in ("fold", "outside")
    # Enter goes there.
    page.locator(f"#tree-panel [role=treeitem]:has(button[data-entry='{SUMMARY}'])").focus()
    page.keyboard.press("Enter")
    ui.wait_position(page, SUMMARY)
    assert seeded.lines()[-1]["targetId"] == SUMMARY
    # After the panel is fetched again for the new position, focus is still on that row.
    ui.wait_tree_at(page, SUMMARY)
    page.wait_for_function(
        f"() => document.activeElement.querySelector && document.activeElement.querySelector(\"button[data-entry='{SUMMARY}']\")"
    )


def test_offline_the_model_picker_shows_its_one_model_disabled(page, ui, sessions) -> None:
    seeded = sessions.seed("01-linear")
    ui.open(page, seeded.url)
    picker = page.locator("#composer-settings select[name=model]")
    expect(picker).to_be_disabled()
    expect(picker).to_have_value("offline-echo")
    expect(page.locator("#composer-settings select[name=level]")).to_be_enabled()


def test_bookkeeping_is_slim_and_a_compaction_shows_once(page, ui, sessions) -> None:
    linear = sessions.seed("01-linear")
    ui.open(page, linear.url)
    marker = page.locator("#entry-2e67a1e7")
    expect(marker).to_have_class(re.compile(r"\bentry--marker\b"))
    expect(marker).to_contain_text("Model → anthropic/claude-sonnet-4-5")
    expect(marker.locator(".entry__tools")).to_have_count(0)  # no message actions on bookkeeping
    slim, card = marker.bounding_box()["height"], page.locator("#entry-c256703f").bounding_box()["height"]
    assert slim < card / 2, (slim, card)

    compacted = sessions.seed("04-compaction")
    ui.open(page, compacted.url)
    summary = page.locator("#transcript").get_by_text("Build a small todo API.")
    expect(summary).to_have_count(1)  # the summary, once: in the card where the history was
    expect(page.locator("#fold-bccf51c5")).to_contain_text("Build a small todo API.")
    compaction = page.locator("#entry-bccf51c5")
    expect(compaction).to_have_class(re.compile(r"\bentry--marker\b"))
    expect(compaction).to_contain_text("48,213 tokens before")
    expect(compaction.get_by_role("link", name="its summary")).to_have_attribute("href", "#fold-bccf51c5")


def test_what_is_typed_stays_while_the_tab_acts_elsewhere(page, ui, sessions) -> None:
    seeded = sessions.seed("02-tree-branches")
    ui.open(page, seeded.url)
    page.locator("#composer textarea[name=text]").fill("a draft in progress")
    form = ui.open_panel(page, A1, "label").locator("form.label-form")
    form.locator("input[name=label]").fill("kept")
    form.get_by_role("button", name="Save label").click()
    expect(page.locator(f"#entry-{A1} > .entry__head .tag")).to_have_text("kept")
    expect(page.locator("#composer textarea[name=text]")).to_have_value("a draft in progress")
    page.locator(f"#entry-{U2} .nav-next").click()
    ui.wait_position(page, BRANCH_END)
    expect(page.locator("#composer textarea[name=text]")).to_have_value("a draft in progress")


def _long_names() -> list[dict]:
    """A branch whose every name, id and label is one long unbroken word: a 150-character session name,
    a 120-character model id (its change and its replies), a label, a tool name, a wide code line,
    wide table cells and an extension state."""
    long = "x" * 120
    wide = "```\n" + "a" * 200 + "\n```\n\n| " + " | ".join("w" * 40 for _ in range(5)) + " |\n|" + "---|" * 5
    wide += "\n| " + " | ".join("v" * 40 for _ in range(5)) + " |"
    reply = {"provider": "openai-compatible", "model": f"model-{long}", "api": "x", "usage": {}, "stopReason": "stop"}
    call = {"type": "toolCall", "id": "t1", "name": "tool" + "b" * 100, "arguments": {"command": "c" * 300}}
    lines = [
        {"type": "session_info", "id": "n0000001", "parentId": None, "name": "N" * 150},
        {"type": "model_change", "id": "m0000001", "parentId": "n0000001", "provider": "p", "modelId": f"model-{long}"},
        {
            "type": "message",
            "id": "u0000001",
            "parentId": "m0000001",
            "message": {"role": "user", "content": "see /" + "p" * 200},
        },
        {
            "type": "message",
            "id": "a0000001",
            "parentId": "u0000001",
            "message": {"role": "assistant", "content": [{"type": "text", "text": wide}, call], **reply},
        },
        {"type": "label", "id": "l0000001", "parentId": "a0000001", "targetId": "u0000001", "label": f"label-{long}"},
        {
            "type": "custom",
            "id": "c0000001",
            "parentId": "l0000001",
            "customType": "ext" + "e" * 100,
            "data": {"k": "v" * 300},
        },
    ]
    for n, line in enumerate(lines):
        line["timestamp"] = f"2026-03-02T09:00:{n:02d}.000Z"
        if "message" in line:
            line["message"]["timestamp"] = 1772442000000 + n
    return lines


def _page_fits(page) -> None:
    width = page.evaluate("[document.documentElement.scrollWidth, innerWidth]")
    assert width[0] <= width[1], width


def test_long_unbroken_names_never_widen_the_page(page, ui, sessions) -> None:
    seeded = sessions.write_lines(_long_names(), cwd="/home/alice/" + "w" * 120)
    page.set_viewport_size({"width": 390, "height": 844})
    ui.open(page, seeded.url)
    for fold in page.locator("#entries details.fold").all():
        fold.locator("> summary").click()
    expect(page.locator("#entry-u0000001 .tag")).to_contain_text("label-xxx")
    _page_fits(page)
    page.get_by_role("button", name="Tree", exact=True).click()
    expect(page.locator("#tree-panel [role=tree]")).to_be_visible()
    tree = page.locator("#tree-aside").bounding_box()
    label = page.locator("#tree-panel .tag").bounding_box()
    assert label["x"] + label["width"] <= tree["x"] + tree["width"]  # the chip stays inside the drawer
    page.keyboard.press("Escape")
    page.get_by_role("button", name="Sessions", exact=True).click()
    expect(page.locator("#sidebar a[aria-current=page]")).to_be_visible()
    _page_fits(page)
    for path in ("/", "/search/?q=label"):
        ui.open(page, path)
        _page_fits(page)
    page.set_viewport_size({"width": 1400, "height": 900})
    ui.open(page, seeded.url)
    _page_fits(page)
    main = page.locator("#main").bounding_box()
    for selector in ("#entry-m0000001 code", "#entry-u0000001 .tag", "#entry-a0000001 .entry__meta"):
        box = page.locator(selector).first.bounding_box()
        assert box["x"] + box["width"] <= main["x"] + main["width"], selector


def _pitree(server: Any, *args: str) -> str:
    """``manage.py pitree ARGS`` in a process of its own (as pi or a script writes): its output."""
    env = {**os.environ, "PITREE_SESSIONS_DIR": str(server.root), "PITREE_FSYNC": "0"}
    done = subprocess.run(
        [sys.executable, "manage.py", "pitree", *args], cwd=REPO, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def test_the_sidebar_follows_renames_new_sessions_and_the_clock(page, ui, sessions, server) -> None:
    seeded = sessions.seed("01-linear")
    page.clock.install()
    ui.open(page, seeded.url)
    sidebar = page.locator("#sidebar")
    current = sidebar.locator("a[aria-current=page]")
    expect(current).to_contain_text("Todo API endpoints review")
    # The sample's last activity was months ago: how many depends on today's date (it once said "8").
    months = _calendar_months(current.locator("time").get_attribute("datetime") or "", datetime.now(UTC))
    assert months >= 1
    expect(current.locator("time")).to_have_text(f"{months}\u00a0month{'s' if months > 1 else ''} ago")
    # A rename written elsewhere, and a new session's first message, show without a reload.
    _pitree(server, "rename", str(seeded.path), "Renamed elsewhere")
    expect(current).to_contain_text("Renamed elsewhere")
    path = _pitree(server, "new", "--cwd", "/home/alice/projects/todo-api")
    expect(sidebar.locator(".sidebar__sessions a", has_text="New session")).to_have_count(1)
    _pitree(server, "append", path, "--role", "user", "--text", "A **brand** new question")
    fresh = sidebar.locator(".sidebar__sessions a", has_text="A brand new question")
    expect(fresh).to_have_count(1)
    expect(fresh.locator("time")).to_have_text("just now")  # not "0 minutes ago"
    expect(current).to_contain_text("Renamed elsewhere")  # still marking the session on screen
    # Ages move on with the clock.
    page.clock.fast_forward("05:00")
    expect(fresh.locator("time")).to_have_text("5\u00a0minutes ago")
    expect(current.locator("time")).to_have_text(f"{months}\u00a0month{'s' if months > 1 else ''} ago")


def _calendar_months(iso: str, now: datetime) -> int:
    """Whole calendar months from ``iso`` to ``now``, as the sidebar counts them (Django's timesince)."""
    then = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    months = (now.year - then.year) * 12 + now.month - then.month
    in_month = lambda d: (d.day, d.hour, d.minute, d.second, d.microsecond)  # noqa: E731
    return months - 1 if in_month(then) > in_month(now) else months


def test_the_sidebar_filter_stays_while_its_list_scrolls(page, ui, sessions) -> None:
    for n in range(45):
        sessions.write_lines([message(f"u{n:07d}", None, "user", f"Session number {n:02d}", 1)])
    ui.open(page, "/")
    box = page.locator("#sidebar-filter")
    expect(page.locator("#sidebar .sidebar__sessions a")).to_have_count(45)  # the home page is the shell too
    top = box.bounding_box()["y"]
    page.locator("#sidebar .sidebar__sessions a").last.scroll_into_view_if_needed()
    expect(page.locator("#sidebar .sidebar__sessions a").last).to_be_in_viewport()
    assert box.bounding_box()["y"] == top
    expect(box).to_be_in_viewport()
    # The home page's search buttons keep their words on one line.
    search_all = page.get_by_role("button", name="Search all")
    assert (
        search_all.bounding_box()["height"]
        <= page.get_by_role("button", name="Search", exact=True).bounding_box()["height"]
    )


def test_an_empty_session_is_a_new_session_with_the_composer_at_the_bottom(page, ui, sessions) -> None:
    empty = sessions.write_lines([])
    for width, height in ((1400, 900), (390, 844)):
        page.set_viewport_size({"width": width, "height": height})
        ui.open(page, empty.url)
        expect(page.locator("#session-title")).to_have_text("New session")
        expect(page).to_have_title("New session · pitree")
        box = page.locator("#composer textarea").bounding_box()
        assert height - (box["y"] + box["height"]) < 40, (width, box)  # at the bottom of the window
    expect(page.locator("#entries .empty-note")).to_be_visible()


def test_a_message_s_actions_are_one_row_of_named_icons_on_a_phone(page, ui, sessions) -> None:
    seeded = sessions.seed("01-linear")
    page.set_viewport_size({"width": 390, "height": 844})
    ui.open(page, seeded.url)
    tools = page.locator("#entry-c256703f > .entry__tools")
    tops = tools.evaluate("el => Array.from(el.children, c => Math.round(c.getBoundingClientRect().top))")
    assert len(tops) == 8 and len(set(tops)) == 1, tops  # one row
    for name in ("Copy", "Edit", "Fork…", "Share…", "Label…", "Continue from here", "Compact…", "Raw line"):
        action = ui.tool(page, "c256703f", name)
        expect(action).to_have_count(1)
        assert action.get_attribute("title")  # a tooltip says what it does
    # Copying says so for a moment.
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    ui.tool(page, "c256703f", "Copy").click()
    expect(tools.locator(".tool.is-done")).to_have_text("Copied")
    # The theme switch's words fit in it.
    switch = page.locator("#theme-switch")
    expect(switch).to_be_visible()
    fits = switch.evaluate(
        "s => { const probe = document.createElement('span'); probe.style.font = getComputedStyle(s).font;"
        " probe.textContent = s.options[s.selectedIndex].text; document.body.append(probe);"
        " const w = probe.getBoundingClientRect().width; probe.remove(); return w + 16 <= s.clientWidth; }"
    )
    assert fits and switch.bounding_box()["x"] + switch.bounding_box()["width"] <= 390


# Counts the answers to the sidebar's list requests made from now on, once htmx has handled each (swapped
# it, or kept the list shown when it is the same).
_COUNT_SIDEBAR_ANSWERS = """() => {
  const list = document.getElementById('sidebar-list');
  let asked = false;
  window.sidebarAnswers = 0;
  document.addEventListener('htmx:beforeRequest', (ev) => { if (ev.detail.elt === list) asked = true; });
  document.addEventListener('htmx:afterRequest', (ev) => { if (ev.detail.elt === list && asked) window.sidebarAnswers++; });
}"""


def test_a_sidebar_refresh_keeps_the_focus_on_its_link(page, ui, sessions) -> None:
    """When the folder changes outside what the sidebar lists, its list is not swapped (the focus and
    the very elements stay); when the list does change, the focus comes back to the link it was on."""
    seeded = sessions.seed("01-linear")
    sessions.write_lines([message("u0000001", None, "user", "Another session", 1)])
    ui.open(page, seeded.url)
    current = page.locator("#sidebar a[aria-current=page]")
    links = page.locator("#sidebar .sidebar__sessions a")
    expect(links).to_have_count(2)
    current.focus()
    page.evaluate("document.querySelector('#sidebar a[aria-current=page]').dataset.marked = '1'")
    page.evaluate(_COUNT_SIDEBAR_ANSWERS)
    (sessions.root / "not-a-session.jsonl").write_text("no header here\n")  # listed nowhere in the sidebar
    page.wait_for_function("() => window.sidebarAnswers > 0")  # the list fetched again, and its answer handled
    expect(current).to_be_focused()
    assert page.evaluate("document.querySelector('#sidebar a[aria-current=page]').dataset.marked") == "1"
    sessions.write_lines([message("u0000002", None, "user", "A third one", 2)])
    expect(links).to_have_count(3)
    expect(current).to_be_focused()
    assert page.evaluate("document.querySelector('#sidebar a[aria-current=page]').dataset.marked") is None


def test_a_wide_table_scrolls_sideways_on_a_phone_with_its_words_whole(page, ui, sessions) -> None:
    columns = ["column", "another", "heading", "values", "numbers", "words", "longer", "last"]
    table = "| " + " | ".join(columns) + " |\n|" + "---|" * len(columns) + "\n| " + " | ".join(columns) + " |\n"
    seeded = sessions.write_lines(
        [
            message("u0000001", None, "user", "A table?", 1),
            message("a0000001", "u0000001", "assistant", table, 2, model="pi/m"),
        ]
    )
    page.set_viewport_size({"width": 390, "height": 844})
    ui.open(page, seeded.url)
    frame = page.locator("#entry-a0000001 .md-table")
    expect(frame).to_have_attribute("tabindex", "0")
    sizes = frame.evaluate(
        """(el) => ({scroll: el.scrollWidth, client: el.clientWidth, page: document.documentElement.scrollWidth,
             lines: Array.from(el.querySelectorAll("td"), (td) => td.getClientRects().length &&
               Math.round(td.getBoundingClientRect().height / parseFloat(getComputedStyle(td).lineHeight)))})"""
    )
    assert sizes["scroll"] > sizes["client"] and sizes["page"] <= 390, sizes  # the frame scrolls, not the page
    assert max(sizes["lines"]) <= 2, sizes  # one line of text (and its padding) per cell: no word cut up
