"""Moving around a session's tree: BranchNavigator, keyboard, tree panel, permalinks."""

from __future__ import annotations

import re

from playwright.sync_api import expect

# 02-tree-branches: f87f9c1c (u1) → 2f760a8d (a1) → { 97690895 (u2) … → 750a4556 (leaf, session_info),
#                                                     07721729 (branch_summary) → 77f2501f (label)
#                                                       → 4b928ed4 (u2b) → 37bad775 → c191c95e → de4f0d3a }
U1, A1, U2, SUMMARY, U2B, A2B, BRANCH_END = (
    "f87f9c1c",
    "2f760a8d",
    "97690895",
    "07721729",
    "4b928ed4",
    "37bad775",
    "de4f0d3a",
)
LEAF = "750a4556"
USER_IDS = {"f87f9c1c", "97690895", "8aabce23", "4b928ed4", "ab506f7f"}


def _active_entry(page) -> str | None:
    return page.evaluate(
        "() => { const a = document.activeElement; const e = a && a.closest && a.closest('article.entry[data-entry]');"
        " return e ? e.dataset.entry : null; }"
    )


def test_navigator_switch_is_persisted_and_survives_a_reload(page, ui, sessions, server):
    seeded = sessions.seed("02-tree-branches")
    ui.open(page, seeded.url)
    assert ui.position(page) == LEAF
    u2 = page.locator(f"#entry-{U2}")
    expect(u2.locator(".navigator__count")).to_have_text("1/2")
    expect(u2.locator(".nav-prev")).to_be_disabled()
    assert SUMMARY not in ui.path_ids(page)

    u2.locator(".nav-next").click()
    ui.wait_position(page, BRANCH_END)  # where that branch was last left

    # The tab follows the session: it keeps the session's URL, since the file's position moved too...
    assert page.url == f"{server.url}{seeded.url}"
    ids = ui.path_ids(page)
    assert U2 not in ids
    assert [i for i in ids if i in (U1, A1, SUMMARY, U2B, A2B, BRANCH_END)] == [U1, A1, SUMMARY, U2B, A2B, BRANCH_END]
    summary = page.locator(f"#entry-{SUMMARY}")
    expect(summary.locator(".navigator__count")).to_have_text("2/2")
    expect(summary).to_contain_text("Summary of the branch left behind")
    # ...and the move was written to the file as a leaf entry.
    last = seeded.lines()[-1]
    assert last["type"] == "leaf" and last["targetId"] == BRANCH_END
    # The tree panel followed the move.
    expect(page.locator("#tree-panel li.tree__row.is-position button.tree__node")).to_have_attribute(
        "data-entry", BRANCH_END
    )

    # A reload of the session's own URL (not the permalink) shows the branch switched to.
    page.goto(seeded.url)
    ui.open(page, seeded.url)
    assert ui.position(page) == BRANCH_END
    ids = ui.path_ids(page)
    assert SUMMARY in ids and BRANCH_END in ids and U2 not in ids
    expect(page.locator(f"#entry-{SUMMARY} .navigator__count")).to_have_text("2/2")
    expect(page.locator(".position-note")).to_be_hidden()  # the file's leaf is where the tab is

    # Switching back resumes the first branch where it was left.
    page.locator(f"#entry-{SUMMARY} .nav-prev").click()
    ui.wait_position(page, LEAF)
    assert U2 in ui.path_ids(page)
    last = seeded.lines()[-1]
    assert last["type"] == "leaf" and last["targetId"] == LEAF


def test_keyboard_moves_focus_and_switches_siblings(page, ui, sessions):
    seeded = sessions.seed("02-tree-branches")
    ui.open(page, seeded.url)
    ids = ui.path_ids(page)
    assert ids[-1] == LEAF

    page.locator("body").press("k")  # nothing focused: the last entry
    assert _active_entry(page) == ids[-1]
    page.keyboard.press("k")
    assert _active_entry(page) == ids[-2]
    page.keyboard.press("k")
    assert _active_entry(page) == ids[-3]
    page.keyboard.press("j")
    assert _active_entry(page) == ids[-2]
    page.keyboard.press("j")
    page.keyboard.press("j")  # stays on the last one
    assert _active_entry(page) == ids[-1]

    # Walk up to the user message that has siblings.
    for _ in range(len(ids)):
        if _active_entry(page) == U2:
            break
        page.keyboard.press("k")
    assert _active_entry(page) == U2
    page.keyboard.press("k")
    page.keyboard.press("k")
    assert _active_entry(page) == U1
    page.keyboard.press("k")  # stays on the first one
    assert _active_entry(page) == U1
    page.keyboard.press("j")
    page.keyboard.press("j")
    assert _active_entry(page) == U2

    page.keyboard.press("]")
    ui.wait_position(page, BRANCH_END)
    expect(page.locator(f"#entry-{SUMMARY} .navigator__count")).to_have_text("2/2")
    assert U2 not in ui.path_ids(page)
    page.wait_for_function(f"() => document.activeElement && document.activeElement.id === 'entry-{SUMMARY}'")
    assert seeded.lines()[-1] == {**seeded.lines()[-1], "type": "leaf", "targetId": BRANCH_END}

    page.keyboard.press("[")
    ui.wait_position(page, LEAF)
    assert U2 in ui.path_ids(page)
    page.wait_for_function(f"() => document.activeElement && document.activeElement.id === 'entry-{U2}'")

    # h / l are aliases.
    page.keyboard.press("l")
    ui.wait_position(page, BRANCH_END)
    page.keyboard.press("h")
    ui.wait_position(page, LEAF)

    # Keys typed into the composer are text, not commands.
    textarea = page.locator("#composer textarea[name=text]")
    textarea.click()
    textarea.press_sequentially("jk[]")
    expect(textarea).to_have_value("jk[]")
    page.wait_for_timeout(300)
    assert ui.position(page) == LEAF


def test_tree_click_moves_the_transcript_and_the_url(page, ui, sessions, server):
    seeded = sessions.seed("02-tree-branches")
    ui.open(page, seeded.url)
    node = page.locator(f"#tree-panel button.tree__node[data-entry='{BRANCH_END}']")
    expect(node).to_be_visible()
    assert node.locator("xpath=..").get_attribute("class").split().count("on-path") == 0
    # The leaf (a session_info entry) is bookkeeping, hidden by the default filter; its branch is on the path.
    expect(page.locator("#tree-panel button.tree__node[data-entry='e65e9e73']").locator("xpath=..")).to_have_class(
        _has_classes("on-path")
    )

    node.click()
    ui.wait_position(page, BRANCH_END)
    assert page.url == f"{server.url}{seeded.url}"  # a tab at the session's URL keeps following it
    assert ui.path_ids(page)[-1] == BRANCH_END
    assert U2 not in ui.path_ids(page)
    last = seeded.lines()[-1]
    assert last["type"] == "leaf" and last["targetId"] == BRANCH_END
    # The tree marks the new position and path.
    row = page.locator(f"#tree-panel button.tree__node[data-entry='{BRANCH_END}']")
    expect(row).to_have_attribute("aria-current", "step")
    expect(row.locator("xpath=..")).to_have_class(_has_classes("on-path", "is-position"))
    expect(page.locator(f"#tree-panel button.tree__node[data-entry='{U1}']").locator("xpath=..")).to_have_class(
        _has_classes("on-path")
    )

    # Clicking an entry in the middle of a branch shows the history up to it.
    page.locator(f"#tree-panel button.tree__node[data-entry='{A1}']").click()
    ui.wait_position(page, A1)
    assert ui.path_ids(page) == [U1, A1]
    expect(page.locator(".position-note")).to_be_hidden()
    assert seeded.lines()[-1]["targetId"] == A1


def test_tree_filters(page, ui, sessions):
    seeded = sessions.seed("02-tree-branches")
    ui.open(page, seeded.url)
    expect(page.locator("#tree-panel a.tree-filter.is-active")).to_have_text("default")
    default_ids = set(ui.tree_ids(page))
    kinds = _tree_kinds(page)
    assert {"user", "assistant"} <= kinds
    assert not kinds & {"label", "session_info", "custom", "model_change"}
    assert LEAF not in default_ids  # a session_info entry is bookkeeping

    ui.open_tree_filter(page, "user")
    ids = ui.tree_ids(page)
    assert ids and set(ids) <= USER_IDS
    assert {U1, U2B} <= set(ids)
    assert _tree_kinds(page) == {"user"}

    ui.open_tree_filter(page, "labeled")
    assert set(ui.tree_ids(page)) == {"0f649aff", SUMMARY}
    tags = page.locator("#tree-panel li.tree__row .tag").all_text_contents()
    assert sorted(tags) == ["pydantic-done", "regex-approach"]

    ui.open_tree_filter(page, "all")
    ids = set(ui.tree_ids(page))
    assert LEAF in ids  # the session_info row
    assert "session_info" in _tree_kinds(page)
    assert {"user", "assistant", "branch_summary", "session_info"} <= _tree_kinds(page)
    # A filter does not move the tab.
    assert ui.position(page) == LEAF
    assert seeded.lines()[-1]["id"] == LEAF

    # model_change rows appear only with "all" (01-linear starts with one).
    linear = sessions.seed("01-linear")
    ui.open(page, linear.url)
    ui.open_tree_filter(page, "default")
    assert "2e67a1e7" not in ui.tree_ids(page)
    ui.open_tree_filter(page, "all")
    expect(page.locator("#tree-panel button.tree__node--model_change[data-entry='2e67a1e7']")).to_be_visible()
    expect(page.locator("#tree-panel button.tree__node--model_change")).to_contain_text("anthropic/claude-sonnet-4-5")


def test_tree_filter_is_kept_when_the_tab_moves(page, ui, sessions):
    seeded = sessions.seed("02-tree-branches")
    ui.open(page, seeded.url)
    ui.open_tree_filter(page, "user")
    page.locator(f"#tree-panel button.tree__node[data-entry='{U2B}']").click()
    ui.wait_position(page, U2B)
    page.locator(f"#tree-panel button.tree__node[data-entry='{U2B}'][aria-current='step']").wait_for()
    expect(page.locator("#tree-panel a.tree-filter.is-active")).to_have_text("user")
    assert _tree_kinds(page) == {"user"}


def test_permalink_opens_that_branch_state(context, new_page, ui, sessions, server):
    seeded = sessions.seed("02-tree-branches")
    before = seeded.path.read_bytes()
    page = new_page()
    ui.open(page, seeded.entry_url(U2B))
    assert ui.position(page) == U2B
    ids = ui.path_ids(page)
    assert ids == [U1, A1, SUMMARY, U2B]
    expect(page.locator(f"#entry-{SUMMARY} .navigator__count")).to_have_text("2/2")
    expect(page.locator(f"#entry-{U2B}")).to_have_class(_has_classes("is-position"))
    expect(page.locator("#composer input[name=parent]")).to_have_value(U2B)
    expect(page.locator(".position-note")).to_be_visible()
    expect(page.locator(f"#tree-panel button.tree__node[data-entry='{U2B}']")).to_have_attribute("aria-current", "step")
    # Looking is not moving: nothing was written.
    assert seeded.path.read_bytes() == before
    # The session URL still opens the file's leaf.
    other = new_page()
    ui.open(other, seeded.url)
    assert ui.position(other) == LEAF
    # The "#" link of an entry is its permalink.
    href = other.locator(f"#entry-{A1} a.entry__link").get_attribute("href")
    assert href == seeded.entry_url(A1)
    # An unknown entry is a 404, not another branch.
    response = other.goto(seeded.entry_url("deadbeef"))
    assert response is not None and response.status == 404


def test_continue_from_here_moves_the_tab(page, ui, sessions, server):
    seeded = sessions.seed("02-tree-branches")
    ui.open(page, seeded.url)
    ui.tool(page, A1, "Continue from here").click()
    ui.wait_position(page, A1)
    assert page.url == f"{server.url}{seeded.url}"  # the file's position is A1 too: the session URL shows it
    assert ui.path_ids(page) == [U1, A1]
    assert seeded.lines()[-1] == {**seeded.lines()[-1], "type": "leaf", "targetId": A1}
    expect(page.locator("#composer input[name=parent]")).to_have_value(A1)


def _tree_kinds(page) -> set[str]:
    classes = page.eval_on_selector_all("#tree-panel button.tree__node", "els => els.map(e => e.className)")
    return {c.split("tree__node--", 1)[1].split()[0] for c in classes if "tree__node--" in c}


def _has_classes(*names: str):
    return re.compile("".join(rf"(?=.*\b{re.escape(n)}\b)" for n in names))


def _chain(count: int, prefix: str = "m", parent: str | None = None, second: int = 0) -> list[dict]:
    """``count`` user messages, each answering the one before (ids ``<prefix>0000001``…)."""
    lines = []
    for n in range(count):
        entry_id = f"{prefix}{n:07d}"
        lines.append(
            {
                "type": "message",
                "id": entry_id,
                "parentId": parent,
                "timestamp": f"2026-03-02T{9 + (second + n) // 3600:02d}:{(second + n) // 60 % 60:02d}:{(second + n) % 60:02d}.000Z",
                "message": {"role": "user", "content": f"message {prefix} {n}", "timestamp": 1772442000000 + n},
            }
        )
        parent = entry_id
    return lines


def test_a_long_path_is_never_folded_and_pages_upward(page, ui, sessions):
    # 400 entries on the path, a side branch at the 10th: the path is drawn from the position up, a
    # page at a time; only the side branch folds.
    trunk = _chain(400)
    side = _chain(30, "s", parent="m0000009", second=500)
    seeded = sessions.write_lines(
        [
            *trunk,
            *side,
            {
                "type": "leaf",
                "id": "l1",
                "parentId": None,
                "timestamp": "2026-03-02T10:00:00.000Z",
                "targetId": "m0000399",
            },
        ]
    )
    page.set_viewport_size({"width": 1400, "height": 900})
    ui.open(page, seeded.url)
    tree = page.locator("#tree-panel [role=tree]")
    position = tree.locator(":scope > .is-position")
    expect(position.locator(".tree__node")).to_have_attribute("data-entry", "m0000399")
    expect(position).to_be_in_viewport()  # scrolled into the panel's view, far down it
    expect(tree.locator(".tree__row--fold.on-path")).to_have_count(0)
    path = tree.locator(":scope > .on-path .tree__node")
    expect(path).to_have_count(150)
    earlier = tree.locator(":scope > .tree__row--earlier")
    expect(earlier).to_have_count(1)
    expect(earlier).to_contain_text("Show earlier entries of your branch (250 more)")
    assert page.evaluate("document.documentElement.scrollWidth") <= 1400
    # From the keyboard: Home is the "earlier" row, Enter loads the page above, and focus moves onto
    # the entry just above where the path started.
    tree.locator("[role=treeitem][tabindex='0']").focus()
    page.keyboard.press("Home")
    page.keyboard.press("Enter")
    page.wait_for_function(
        "() => { const b = document.activeElement.querySelector && document.activeElement.querySelector('.tree__node');"
        " return b && b.dataset.entry === 'm0000249'; }"
    )
    expect(path).to_have_count(300)
    expect(earlier).to_contain_text("(100 more)")
    earlier.click()  # and with the mouse: the last page, the top of the path
    expect(path).to_have_count(400)
    expect(earlier).to_have_count(0)
    ids = ui.tree_ids(page)
    assert ids[:400] == [f"m{n:07d}" for n in range(400)]  # the whole path, in order, none folded
    assert ids[400] == "s0000000" and ids[-1] == "s0000029"  # the side branch: its ends, its run folded
    expect(tree.locator(".tree__row--fold")).to_have_count(1)


def test_a_permalink_tab_keeps_an_address_for_any_entry_id(page, ui, sessions):
    """A tab on a permalink follows its branch as it grows, its address too: the server's permalink of
    the newest entry, so an id holding ``%``, ``/``, ``?`` or a space reloads to the same place."""
    odd = ["a/b%41c", "p?q r#s"]
    lines = [
        {
            "type": "message",
            "id": entry_id,
            "parentId": odd[n - 1] if n else None,
            "timestamp": f"2026-03-02T09:00:0{n}.000Z",
            "message": {"role": "user", "content": f"odd {n}", "timestamp": 1772442000000 + n},
        }
        for n, entry_id in enumerate(odd)
    ]
    seeded = sessions.write_lines(lines)
    ui.open(page, seeded.url)
    pinned = page.locator(f"[id='entry-{odd[1]}'] > .entry__head > a.entry__link").get_attribute("href")
    ui.open(page, pinned)  # a permalink tab at the branch's end
    ui.wait_position(page, odd[1])
    grown = "t%2Fu/v&w"
    line = {**lines[1], "id": grown, "parentId": odd[1], "timestamp": "2026-03-02T09:00:05.000Z"}
    with seeded.path.open("a", encoding="utf-8") as handle:  # another program continues the branch
        handle.write(__import__("json").dumps(line) + "\n")
    ui.wait_position(page, grown)
    link = page.locator(f"[id='entry-{grown}'] > .entry__head > a.entry__link").get_attribute("href")
    assert link and link != pinned
    page.wait_for_function("(href) => location.pathname === href", arg=link)
    page.reload()
    ui.wait_position(page, grown)


def test_back_to_a_session_left_by_a_link_shows_it_where_the_tab_left_it(page, ui, sessions, server, record):
    # The browser's Back reloads a page it left by a full navigation: from its cache when the page lets
    # it, which showed the branch the page first came with, and a note blaming another tab for the
    # switch this tab made.
    seeded = sessions.seed("02-tree-branches")
    other = sessions.seed("01-linear")
    ui.open(page, "/")
    page.locator(f"#sidebar a[href='{seeded.url}']").click()
    page.wait_for_function("(url) => location.pathname === url", arg=seeded.url)
    ui.wait_position(page, LEAF)
    page.locator(f"#entry-{U2} .nav-next").click()
    ui.wait_position(page, BRANCH_END)
    page.locator(f"#sidebar a[href='{other.url}']").click()
    page.wait_for_function("(url) => location.pathname === url", arg=other.url)
    page.go_back()
    page.wait_for_function("(url) => location.pathname === url", arg=seeded.url)
    ui.wait_position(page, BRANCH_END)
    expect(page.locator(f"#entry-{SUMMARY} .navigator__count")).to_have_text("2/2")
    page.wait_for_function("() => document.getElementById('live').dataset.live === 'live'")
    expect(page.locator("#moved-note")).to_have_count(0)
    assert not record.errors
