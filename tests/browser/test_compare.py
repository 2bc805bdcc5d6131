"""Comparing branches and the tree map, in a real browser: opening a comparison from the navigator and
from the tree panel's branch points, turns aligned in one grid that scrolls as one (on a phone too),
long messages folded, the trunk read page by page, acting on a column, following appends, and the map:
picking two nodes, captions clear of their neighbours."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

from playwright.sync_api import expect
from support.lines import label, message

from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles.store import SessionFile

# 02-tree-branches: f87f9c1c → 2f760a8d → { 97690895 … → 750a4556 (leaf), 07721729 … → de4f0d3a }
U2, SUMMARY, LEAF, BRANCH_END = "97690895", "07721729", "750a4556", "de4f0d3a"
PARTING = "2f760a8d"  # the answer both branches follow


def _in_column(page, column: int, text: str):
    """The cells of a column that hold ``text`` (a column is its cells of the grid)."""
    return page.locator(f'.compare__cell[data-column="{column}"]', has_text=text)


# Where each prompt and answer cell of the grid is on the screen: {"part turn column": [top, left]}.
_CELLS = """() => Object.fromEntries([...document.querySelectorAll('.compare__cell[data-row]')].map((cell) => {
  const box = cell.getBoundingClientRect();
  const part = cell.classList.contains('compare__cell--prompt') ? 'prompt' : 'answer';
  return [`${part} ${cell.dataset.row} ${cell.dataset.column}`, [Math.round(box.top), Math.round(box.left)]];
}))"""


def _aligned(cells: dict) -> dict:
    """Per (part, turn): the distinct tops of its cells across the columns (one, when they line up)."""
    tops: dict = {}
    for key, (top, _) in cells.items():
        part, turn, _column = key.split()
        tops.setdefault((part, turn), set()).add(top)
    return tops


def _uneven_branches(sessions):
    """Three sibling branches: 6 turns with prompts that wrap to several lines and long answers, 3
    short turns, and 5 turns of middling ones."""
    lines = [
        {
            "type": "message",
            "id": "root0001",
            "parentId": None,
            "timestamp": "2026-03-02T09:00:01.000Z",
            "message": {"role": "user", "content": "Tell me a story", "timestamp": 1},
        },
    ]
    second = 2
    for branch, turns, prompt_words, answer_lines in (("a", 6, 60, 14), ("b", 3, 2, 1), ("c", 5, 15, 5)):
        parent = "root0001"
        for turn in range(turns):
            for role, text in (
                ("user", " ".join(f"{branch}-word{i}" for i in range(prompt_words)) + f" (turn {turn})"),
                ("assistant", "\n\n".join(f"{branch} line {i} of turn {turn}" for i in range(answer_lines))),
            ):
                entry_id = f"{branch}{role[0]}{turn:06d}"
                content = text if role == "user" else [{"type": "text", "text": text}]
                lines.append(
                    {
                        "type": "message",
                        "id": entry_id,
                        "parentId": parent,
                        "timestamp": f"2026-03-02T09:{second // 60:02d}:{second % 60:02d}.000Z",
                        "message": {"role": role, "content": content, "timestamp": second},
                    }
                )
                parent = entry_id
                second += 1
    return sessions.write_lines(lines)


def test_a_comparison_opens_from_the_navigator(page, ui, sessions, server, record):
    seeded = sessions.seed("02-tree-branches")
    ui.open(page, seeded.url)
    page.locator(f"#entry-{U2} .navigator__compare").click()
    page.wait_for_url(f"{server.url}/s/{seeded.id}/compare/?e={U2}&e={SUMMARY}")
    expect(page.locator(".compare__col-title")).to_have_count(2)
    expect(_in_column(page, 1, "Add a docstring")).to_have_count(1)
    expect(_in_column(page, 2, "I will run the tests next.")).to_have_count(1)
    expect(page.locator('.compare__head[data-column="2"] [data-summary="labels"]')).to_contain_text("regex-approach")
    # The word diff of the two, from the page's own form.
    page.locator(".compare-modes__diff button").click()
    expect(page.locator(".compare-diff__row", has_text="Make it reject").first).to_be_visible()
    expect(page.locator(".compare-diff del").first).to_be_visible()
    assert record.errors == [] and record.console_errors == []


def test_turns_line_up_row_by_row_and_scroll_as_one(page, ui, sessions, server, record):
    seeded = _uneven_branches(sessions)
    page.set_viewport_size({"width": 1200, "height": 700})
    ui.open(page, f"/s/{seeded.id}/compare/?e=au000000&e=bu000000&e=cu000000")
    expect(page.locator(".compare__turn")).to_have_count(6)
    before = page.evaluate(_CELLS)
    # Each turn's prompts start at one height in every column, and so do its answers, however much
    # the cells above them hold (a shorter branch's cells are there, empty).
    assert all(len(tops) == 1 for tops in _aligned(before).values()), _aligned(before)
    assert {key for key in before if key.startswith("prompt 6 ")} == {"prompt 6 1", "prompt 6 2", "prompt 6 3"}
    assert before["answer 2 1"][0] - before["prompt 2 1"][0] > 80  # the long prompt wrapped: its answer is lower…
    assert before["answer 2 2"][0] == before["answer 2 1"][0]  # …and so is the short one's beside it
    # Scrolling over the shortest column scrolls them all: the grid is one.
    page.locator(".compare__scroll").scroll_into_view_if_needed()
    short = page.locator('.compare__cell--prompt[data-column="2"][data-row="1"]').bounding_box()
    page.mouse.move(short["x"] + short["width"] / 2, short["y"] + 10)
    page.mouse.wheel(0, 900)
    page.wait_for_function("() => document.querySelector('.compare__scroll').scrollTop > 0")
    page.wait_for_timeout(200)
    before = page.evaluate(_CELLS)  # the page itself may have scrolled first: measure from here
    page.mouse.wheel(0, 600)
    page.wait_for_timeout(300)
    after = page.evaluate(_CELLS)
    assert all(len(tops) == 1 for tops in _aligned(after).values()), _aligned(after)
    moved = {before[key][0] - after[key][0] for key in before}
    assert len(moved) == 1 and moved.pop() > 0  # every cell moved up by the same distance
    # The column titles stay at the grid's top.
    titles = page.evaluate(
        "() => [...document.querySelectorAll('.compare__col-title')].map(t => Math.round(t.getBoundingClientRect().top))"
    )
    grid_top = page.evaluate("() => Math.round(document.querySelector('.compare__scroll').getBoundingClientRect().top)")
    assert len(set(titles)) == 1 and abs(titles[0] - grid_top) <= 1
    assert record.errors == []


def test_on_a_phone_the_grid_scrolls_sideways_under_its_titles(page, ui, sessions, server, record):
    seeded = _uneven_branches(sessions)
    page.set_viewport_size({"width": 390, "height": 844})
    ui.open(page, f"/s/{seeded.id}/compare/?e=au000000&e=bu000000&e=cu000000")
    scroller = page.locator(".compare__scroll")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390  # the page itself does not widen
    width = scroller.evaluate("(el) => el.clientWidth")
    assert 250 <= page.locator('.compare__col-title[data-column="1"]').bounding_box()["width"] <= width
    scroller.evaluate("(el) => { el.scrollLeft = el.scrollWidth; }")
    page.wait_for_timeout(200)
    title = page.locator('.compare__col-title[data-column="3"]').bounding_box()
    cell = page.locator('.compare__cell--prompt[data-column="3"][data-row="1"]').bounding_box()
    frame = scroller.bounding_box()
    assert frame["x"] <= title["x"] and title["x"] + title["width"] <= frame["x"] + frame["width"] + 1
    assert abs(title["x"] - cell["x"]) < 1  # each title stays over its column
    heading = page.locator(".compare__turn").first.bounding_box()
    assert frame["x"] <= heading["x"] < frame["x"] + 40  # turn headings stay in view too
    assert record.errors == []


def test_long_messages_fold_and_open(page, ui, sessions, server, record):
    long_answer = "\n\n".join(f"Paragraph {i}: the quick brown fox jumps over the lazy dog." for i in range(200))
    seeded = sessions.write_lines(
        [
            message("u0000001", None, "user", "q", 1),
            message("a0000001", "u0000001", "assistant", long_answer, 2),
            message("a0000002", "u0000001", "assistant", "short", 3),
        ]
    )
    ui.open(page, f"/s/{seeded.id}/compare/?e=a0000001&e=a0000002&end=exact")
    entry = page.locator('[data-entry="a0000001"]')
    button = entry.get_by_role("button", name="Show all")
    expect(button).to_be_visible()
    expect(button).to_have_attribute("aria-expanded", "false")
    clip = entry.locator(".compare__clip")
    folded = clip.bounding_box()["height"]
    assert folded < 400
    assert clip.evaluate("(el) => getComputedStyle(el).overflowY") == "hidden"
    button.click()
    expect(entry.get_by_role("button", name="Fold")).to_have_attribute("aria-expanded", "true")
    assert clip.bounding_box()["height"] > 4 * folded
    expect(page.locator('[data-entry="a0000002"] [data-show-all]')).to_have_count(0)
    assert record.errors == []


def test_the_trunk_opens_a_page_at_a_time(page, ui, sessions, server, record):
    lines, parent = [], None
    for i in range(30):
        lines += [
            message(f"u{i:07d}", parent, "user", f"question {i}", 2 * i),
            message(f"a{i:07d}", f"u{i:07d}", "assistant", f"answer {i}", 2 * i + 1),
        ]
        parent = f"a{i:07d}"
    lines += [message("x0000001", parent, "user", "one way", 70), message("y0000001", parent, "user", "another", 71)]
    seeded = sessions.write_lines(lines)
    ui.open(page, f"/s/{seeded.id}/compare/?e=x0000001&e=y0000001")
    trunk = page.locator(".compare-trunk")
    trunk.locator("> summary").click()
    entries = trunk.locator("article.entry")
    expect(entries).to_have_count(2)  # its last turn
    trunk.get_by_role("link", name="Show earlier entries of the trunk").click()
    expect(entries).to_have_count(42)
    trunk.get_by_role("link", name="Show earlier entries of the trunk").click()
    expect(entries).to_have_count(60)
    expect(trunk.get_by_role("link", name="Show earlier entries of the trunk")).to_have_count(0)
    ids = entries.evaluate_all("(els) => els.map((el) => el.dataset.entry)")
    assert ids == [f"{kind}{i:07d}" for i in range(30) for kind in "ua"]
    assert page.url.endswith("/compare/?e=x0000001&e=y0000001")  # loaded in place
    assert record.errors == []


def test_a_word_diff_of_a_branch_with_itself_is_refused_where_it_was_picked(page, ui, sessions, server, record):
    seeded = sessions.seed("02-tree-branches")
    url = f"{seeded.url}compare/?e={LEAF}&e={BRANCH_END}"
    ui.open(page, url)
    page.get_by_label("Left branch").select_option("2")
    page.get_by_role("button", name="Show the diff").click()
    expect(page.locator("#flash")).to_contain_text("Pick two different branches")
    expect(page.get_by_label("Right branch")).to_be_focused()
    assert page.url == server.url + url  # still the comparison, not a page refusing it
    expect(_in_column(page, 1, "Added a docstring to TodoModel.")).to_have_count(1)
    page.get_by_label("Left branch").select_option("1")
    page.get_by_role("button", name="Show the diff").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Word diff of branches 1 and 2")
    assert not record.errors


def test_continue_on_a_branch_from_its_column(page, ui, sessions, server):
    seeded = sessions.seed("02-tree-branches")
    ui.open(page, f"/s/{seeded.id}/compare/?e={U2}&e={SUMMARY}")
    page.locator('.compare__head[data-column="2"] button.continue-branch').click()
    page.wait_for_url(f"{server.url}{seeded.entry_url(BRANCH_END)}")
    ui.wait_position(page, BRANCH_END)
    last = seeded.lines()[-1]
    assert last["type"] == "leaf" and last["targetId"] == BRANCH_END


def test_label_a_branch_from_its_column(page, ui, sessions, server):
    seeded = sessions.seed("02-tree-branches")
    url = f"/s/{seeded.id}/compare/?e={U2}&e={SUMMARY}"
    ui.open(page, url)
    head = page.locator('.compare__head[data-column="1"]')
    head.locator("input[name=label]").fill("pydantic <b>route</b>")
    head.locator(".compare__label button").click()
    expect(page.locator('.compare__head[data-column="1"] [data-summary="labels"]')).to_contain_text(
        "pydantic <b>route</b>"
    )
    assert page.url == f"{server.url}{url}"  # the page stayed
    label = seeded.lines()[-1]
    assert label["type"] == "label" and label["targetId"] == U2 and label["label"] == "pydantic <b>route</b>"


# The column (by its number) and the name of the control that has the focus.
_FOCUSED = "() => [document.activeElement.closest('.compare__head')?.dataset.column, document.activeElement.name]"


def test_a_label_saved_from_the_keyboard_keeps_the_focus_in_its_field(page, ui, sessions, server, record):
    seeded = sessions.seed("02-tree-branches")
    ui.open(page, f"/s/{seeded.id}/compare/?e={U2}&e={SUMMARY}")
    page.locator("header[data-live=live]").wait_for()  # the label's own append is followed too
    page.evaluate("() => { window.notReloaded = true; }")
    page.locator('.compare__head[data-column="2"] input[name=label]').focus()
    page.keyboard.type("second-try")
    page.keyboard.press("Enter")
    expect(page.locator('.compare__head[data-column="2"] [data-summary="labels"]')).to_contain_text("second-try")
    assert page.evaluate(_FOCUSED) == ["2", "label"]
    expect(page.locator("#announce")).to_have_text("Branch 2 is labelled “second-try”.")
    # The append comes back from the file too, and the grid is fetched once more: the focus stays.
    expect(page.locator(".compare")).to_have_attribute("data-refreshed", "2")
    assert page.evaluate(_FOCUSED) == ["2", "label"]
    assert page.evaluate("() => window.notReloaded") is True  # scroll and opened messages kept
    page.keyboard.type("again")
    expect(page.locator('.compare__head[data-column="2"] input[name=label]')).to_have_value("again")
    assert record.errors == [] and record.console_errors == []


def test_a_refused_label_keeps_its_text_and_the_focus(page, ui, sessions, server, record):
    seeded = sessions.seed("02-tree-branches")
    ui.open(page, f"/s/{seeded.id}/compare/?e={U2}&e={SUMMARY}")
    head = page.locator('.compare__head[data-column="1"]')
    entry = head.locator(".compare__label input[name=entry]")
    entry.evaluate("(el) => { el.value = 'no-such-entry'; }")  # as if the branch were gone meanwhile
    head.locator("input[name=label]").fill("lost?")
    head.locator(".compare__label button").click()
    expect(page.locator("#flash [role=alert]")).to_contain_text("no-such-entry")
    assert page.evaluate(_FOCUSED) == ["1", "label"]
    expect(head.locator("input[name=label]")).to_have_value("lost?")
    expect(head.locator(".compare__label button")).to_be_enabled()
    assert seeded.lines()[-1]["type"] != "label"


def test_a_label_saved_after_signing_out_says_it_was_not_saved(page, ui, sessions, server, record):
    """Signed out meanwhile (in another tab, or the session expired), the post ends at the sign-in
    page: nothing was written, and the page says so rather than that the label was saved."""
    seeded = sessions.seed("02-tree-branches")
    ui.open(page, f"/s/{seeded.id}/compare/?e={U2}&e={SUMMARY}")
    head = page.locator('.compare__head[data-column="1"]')
    page.context.clear_cookies(name=server.daphne.cookie.partition("=")[0])  # the sign-in, not the CSRF cookie
    head.locator("input[name=label]").fill("unsaved")
    head.locator("input[name=label]").press("Enter")
    expect(page.locator("#flash [role=alert]")).to_contain_text("signed out")
    expect(head.locator("input[name=label]")).to_have_value("unsaved")
    expect(page.locator("#announce")).not_to_contain_text("labelled")
    assert seeded.lines()[-1]["type"] != "label"


def test_a_label_on_the_trunk_shows_there(page, ui, sessions, server, record):
    """A column that adds nothing to the trunk (it ends where the other branches part) labels its
    end, which the trunk shows."""
    seeded = sessions.seed("02-tree-branches")
    ui.open(page, f"/s/{seeded.id}/compare/?e={PARTING}&e={U2}&end=exact")
    page.locator(".compare-trunk summary").click()
    head = page.locator('.compare__head[data-column="1"]')
    head.locator("input[name=label]").fill("where-they-part")
    head.locator("input[name=label]").press("Enter")
    expect(page.locator(f'.compare-trunk [data-entry="{PARTING}"] .tag[title=label]')).to_have_text("where-they-part")
    assert record.errors == []


def test_pick_two_nodes_on_the_map_and_compare_them(page, ui, sessions, server, record):
    seeded = sessions.seed("02-tree-branches")
    ui.open(page, f"/s/{seeded.id}/map/")
    page.locator("#map[data-loaded=true]").wait_for()
    expect(page.locator("#map-note")).to_contain_text("7 of 19 entries drawn")  # no fork of it here
    # Hovering shows the entry's text.
    page.locator(f'.map-node[data-entry="{BRANCH_END}"]').hover()
    expect(page.locator(".map-tip")).to_contain_text("I will run the tests next.")
    page.locator("#map-pick").check()
    page.locator(f'.map-node[data-entry="{LEAF}"]').click()
    expect(page.locator("#map-compare")).to_have_attribute("aria-disabled", "true")
    page.locator(f'.map-node[data-entry="{BRANCH_END}"]').click()
    expect(page.locator("#map-compare")).to_have_attribute("aria-disabled", "false")
    assert page.url == f"{server.url}/s/{seeded.id}/map/"  # picking does not navigate
    page.locator("#map-compare").click()
    page.wait_for_url(re.compile(rf"/s/{seeded.id}/compare/\?e={LEAF}&e={BRANCH_END}&end=exact$"))
    expect(page.locator(".compare__col-title")).to_have_count(2)
    expect(_in_column(page, 2, "I will run the tests next.")).to_have_count(1)
    assert record.errors == [] and record.console_errors == []


def test_a_map_node_is_a_link_and_hostile_text_stays_text(page, ui, sessions, server, record):
    evil = '<img src=x onerror="window.pwned=1">'
    seeded = sessions.write_lines(
        [
            {
                "type": "message",
                "id": "u0000001",
                "parentId": None,
                "timestamp": "2026-03-02T09:00:01.000Z",
                "message": {"role": "user", "content": evil, "timestamp": 1},
            },
            {
                "type": "message",
                "id": "a0000001",
                "parentId": "u0000001",
                "timestamp": "2026-03-02T09:00:02.000Z",
                "message": {"role": "assistant", "content": [{"type": "text", "text": "one"}], "timestamp": 2},
            },
            {
                "type": "message",
                "id": "a0000002",
                "parentId": "u0000001",
                "timestamp": "2026-03-02T09:00:03.000Z",
                "message": {"role": "assistant", "content": [{"type": "text", "text": "two"}], "timestamp": 3},
            },
            {
                "type": "label",
                "id": "l0000001",
                "parentId": "a0000002",
                "timestamp": "2026-03-02T09:00:04.000Z",
                "targetId": "u0000001",
                "label": evil,
            },
        ]
    )
    ui.open(page, f"/s/{seeded.id}/map/")
    page.locator("#map[data-loaded=true]").wait_for()
    node = page.locator('.map-node[data-entry="u0000001"]')
    expect(node.locator("text")).to_have_text(evil[:23] + "…")
    node.hover()
    expect(page.locator(".map-tip")).to_contain_text(evil)
    assert page.locator("#map img").count() == 0 and page.evaluate("() => window.pwned") is None
    page.locator('.map-node[data-entry="a0000001"]').click()
    page.wait_for_url(f"{server.url}/s/{seeded.id}/e/a0000001/")
    assert record.errors == []


def _append_elsewhere(seeded, text: str, parent: str) -> str:
    """Another writer (as the command line or pi would) appends a user message; returns its id."""
    return SessionFile(seeded.path, fsync=False).append(E.user_message(text), parent)["id"]


def test_a_comparison_follows_what_is_appended_to_a_compared_branch(page, ui, sessions, server, record):
    seeded = sessions.seed("02-tree-branches")
    ui.open(page, f"/s/{seeded.id}/compare/?e={U2}&e={SUMMARY}")
    page.locator("header[data-live=live]").wait_for()
    new_id = _append_elsewhere(seeded, "Appended by <em>another writer</em>", BRANCH_END)
    second = page.locator('.compare__cell[data-column="2"]')
    expect(second.locator(f'[data-entry="{new_id}"]')).to_contain_text("Appended by <em>another writer</em>")
    expect(page.locator('.compare__head[data-column="2"] [data-summary="turns"]')).to_have_text("2")
    expect(_in_column(page, 1, "another writer")).to_have_count(0)
    assert record.errors == []


def test_a_large_block_loads_when_opened_after_the_grid_is_fetched_again(page, ui, sessions, server, record):
    """A block too large to be in the page loads when its fold is opened, in a grid fetched again too
    (the new grid is handed to htmx); opened, it stays open when the grid is fetched once more, and the
    focus on what follows it comes back there, although the fold comes again empty."""
    thinking = "pondering " * 1000  # larger than a page holds inline: it loads when opened
    large = message("a0000001", "u0000001", "assistant", "The code:\n\n```python\nprint(1)\n```", 2)
    large["message"]["content"].insert(0, {"type": "thinking", "thinking": thinking})
    seeded = sessions.write_lines(
        [message("u0000001", None, "user", "q", 1), large, message("a0000002", "u0000001", "assistant", "two", 3)]
    )
    ui.open(page, f"/s/{seeded.id}/compare/?e=a0000001&e=a0000002")
    page.locator("header[data-live=live]").wait_for()
    first = _append_elsewhere(seeded, "Go on", "a0000002")
    expect(page.locator(f'.compare__cell[data-column="2"] [data-entry="{first}"]')).to_have_count(1)
    fold = page.locator('[data-entry="a0000001"] details.fold')
    expect(fold.locator(".fold__body")).to_have_text("Open")  # not loaded yet
    fold.locator("summary").click()
    expect(fold.locator(".fold__body")).to_contain_text("pondering pondering")
    code = page.locator('[data-entry="a0000001"] pre[tabindex="0"]')
    code.focus()
    second = _append_elsewhere(seeded, "Go on again", first)
    expect(page.locator(f'.compare__cell[data-column="2"] [data-entry="{second}"]')).to_have_count(1)
    expect(fold.locator(".fold__body")).to_contain_text("pondering pondering")  # open, loaded again
    expect(code).to_be_focused()
    assert record.errors == []


def test_the_map_follows_a_new_branch(page, ui, sessions, server, record):
    seeded = sessions.seed("02-tree-branches")
    ui.open(page, f"/s/{seeded.id}/map/")
    page.locator("#map[data-loaded=true]").wait_for()
    page.locator("header[data-live=live]").wait_for()
    page.locator("#map-pick").check()
    page.locator(f'.map-node[data-entry="{LEAF}"]').click()
    new_id = _append_elsewhere(seeded, "A third approach", "2f760a8d")
    expect(page.locator(f'.map-node[data-entry="{new_id}"]')).to_have_count(1)
    expect(page.locator("#map-note")).to_contain_text("8 of 20 entries drawn")
    expect(page.locator(f'.map-node[data-entry="{LEAF}"]')).to_have_class(re.compile("is-picked"))  # picks stay
    assert record.errors == []


def _tree_row(page, entry_id: str):
    return page.locator(f"#tree-panel [role=treeitem]:has(> button[data-entry='{entry_id}'])")


def _focused_entry(page) -> str | None:
    return page.evaluate(
        "() => { const r = document.activeElement.closest && document.activeElement.closest('[role=treeitem]');"
        " const b = r && r.querySelector('.tree__node'); return b ? b.dataset.entry : null; }"
    )


def test_a_comparison_opens_from_a_branch_point_of_the_tree_by_keyboard(page, ui, sessions, server, record):
    seeded = sessions.seed("02-tree-branches")
    page.set_viewport_size({"width": 1280, "height": 800})
    posts: list[str] = []
    page.on("request", lambda request: posts.append(request.url) if request.method == "POST" else None)
    ui.open(page, seeded.url)
    expect(page.locator("#tree-panel .tree__compare")).to_have_count(1)  # 2f760a8d is the one branch point
    row = _tree_row(page, "2f760a8d")
    expect(row.locator(".tree__compare")).to_be_visible()
    expect(row).to_have_accessible_description("Branch point: C compares its branches side by side.")
    expect(_tree_row(page, U2)).to_have_accessible_description("")
    row.focus()
    page.keyboard.press("ArrowDown")  # the link inside the row leaves the arrow keys alone
    assert _focused_entry(page) == U2
    page.keyboard.press("ArrowUp")
    assert _focused_entry(page) == "2f760a8d"
    page.keyboard.press("c")
    page.wait_for_url(f"{server.url}/s/{seeded.id}/compare/?e={U2}&e={SUMMARY}")
    expect(page.locator(".compare__col-title")).to_have_count(2)
    expect(_in_column(page, 1, "Add a docstring")).to_have_count(1)
    expect(_in_column(page, 2, "I will run the tests next.")).to_have_count(1)
    assert posts == []  # the tab did not move: Compare only opens the comparison
    assert record.errors == [] and record.console_errors == []


def test_a_filtered_tree_compares_the_branches_it_draws(page, ui, sessions, server, record):
    seeded = sessions.seed("02-tree-branches")
    page.set_viewport_size({"width": 1280, "height": 800})
    posts: list[str] = []
    page.on("request", lambda request: posts.append(request.url) if request.method == "POST" else None)
    ui.open(page, seeded.url)
    ui.open_tree_filter(page, "user")
    # Only prompts are drawn: the first one is where they branch (its answer, where the file parts, is hidden).
    expect(page.locator("#tree-panel .tree__compare")).to_have_count(1)
    _tree_row(page, "f87f9c1c").locator(".tree__compare").click()
    page.wait_for_url(f"{server.url}/s/{seeded.id}/compare/?e={U2}&e=4b928ed4")
    expect(page.locator(".compare__col-title")).to_have_count(2)
    expect(_in_column(page, 1, "Make it reject titles longer")).to_have_count(1)
    expect(_in_column(page, 2, "Make it reject empty titles only")).to_have_count(1)
    assert posts == []  # a click on the link is not a click on the row
    assert record.errors == [] and record.console_errors == []


def test_the_trees_compare_follows_a_new_branch(page, ui, sessions, server, record):
    seeded = sessions.seed("02-tree-branches")
    page.set_viewport_size({"width": 1280, "height": 800})
    ui.open(page, seeded.url)
    page.wait_for_function("() => document.getElementById('live').dataset.live === 'live'")
    expect(_tree_row(page, "0f649aff").locator(".tree__compare")).to_have_count(0)
    new_id = _append_elsewhere(seeded, "Or keep it plain", "0f649aff")
    link = _tree_row(page, "0f649aff").locator(".tree__compare")
    expect(link).to_have_count(1)
    link.click()
    page.wait_for_url(re.compile(r"/compare/\?"))
    assert sorted(parse_qs(urlsplit(page.url).query)["e"]) == sorted(["ab506f7f", new_id])
    expect(page.locator(".compare__col-title")).to_have_count(2)
    expect(page.locator(".compare__cell", has_text="Add a docstring")).to_have_count(1)
    expect(page.locator(".compare__cell", has_text="Or keep it plain")).to_have_count(1)
    assert record.errors == []


# Every caption's box against every other node's circle and every other caption, in page pixels.
_OVERLAPS = """() => {
  const box = (el) => el.getBoundingClientRect();
  const hit = (a, b) => a.left < b.right && a.right > b.left && a.top < b.bottom && a.bottom > b.top;
  const nodes = [...document.querySelectorAll('#map .map-node')];
  const found = [];
  for (const node of nodes) {
    const text = node.querySelector('text');
    if (!text) continue;
    for (const other of nodes) {
      if (other === node) continue;
      if (hit(box(text), box(other.querySelector('circle')))) found.push(`${text.textContent} over a node`);
      const caption = other.querySelector('text');
      if (caption && hit(box(text), box(caption))) found.push(`${text.textContent} over ${caption.textContent}`);
    }
  }
  return found;
}"""


def test_map_captions_keep_clear_of_their_neighbours(page, ui, sessions, server, record):
    lines = [message("u", None, "user", "q", 1), message("a", "u", "assistant", "a", 2)]
    for k in range(5):
        lines += [
            message(f"c{k}", "a", "user", f"child {k}", 3 + k),
            message(f"r{k}", f"c{k}", "assistant", "ok", 10 + k),
        ]
    lines += [
        label("l1", "r4", "c1", "a fairly long label here", 30),
        label("l2", "l1", "r3", "second long label", 31),
        label("l3", "l2", "c0", "and one on the first", 32),
    ]
    seeded = sessions.write_lines(lines)
    ui.open(page, f"/s/{seeded.id}/map/")
    page.locator("#map[data-loaded=true]").wait_for()
    expect(page.locator("#map .map-label")).to_have_count(3)
    assert page.evaluate(_OVERLAPS) == []
    assert record.errors == []


def test_the_compare_link_of_the_map_waits_for_two_picks(page, ui, sessions, server, record):
    seeded = sessions.seed("02-tree-branches")
    ui.open(page, f"/s/{seeded.id}/map/")
    page.locator("#map[data-loaded=true]").wait_for()
    link = page.locator("#map-compare")
    assert link.get_attribute("href") is None  # no link yet: an empty href would reload the page
    page.locator("#map-pick").check()
    page.locator(f'.map-node[data-entry="{LEAF}"]').click()
    link.dispatch_event("click")  # as a click that reached it would
    page.wait_for_timeout(300)
    assert page.url == f"{server.url}/s/{seeded.id}/map/"
    expect(page.locator(f'.map-node[data-entry="{LEAF}"]')).to_have_class(re.compile("is-picked"))  # still picked
    expect(link).to_have_attribute("aria-disabled", "true")
    page.locator(f'.map-node[data-entry="{BRANCH_END}"]').click()
    expect(link).to_have_attribute("href", re.compile(rf"e={LEAF}&e={BRANCH_END}&end=exact$"))
    page.locator(f'.map-node[data-entry="{BRANCH_END}"]').click()  # unpicked again: no link again
    assert link.get_attribute("href") is None
    assert record.errors == []
