"""Comparing branches and the tree map, in a real browser: opening a comparison from the navigator and
from the tree panel's branch points, synced scrolling, acting on a column, and picking two nodes on the map."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

from playwright.sync_api import expect

# 02-tree-branches: f87f9c1c → 2f760a8d → { 97690895 … → 750a4556 (leaf), 07721729 … → de4f0d3a }
U2, SUMMARY, LEAF, BRANCH_END = "97690895", "07721729", "750a4556", "de4f0d3a"


def _top_row(page, column: int) -> str:
    """The turn at the top of a column's pane."""
    return page.evaluate(
        """(n) => { const pane = document.querySelector(`.compare__pane[data-column="${n}"]`);
        let top = null;
        for (const row of pane.querySelectorAll(':scope > .compare__row')) {
          if (row.offsetTop <= pane.scrollTop + 1) top = row.dataset.row; }
        return top; }""",
        column,
    )


def _long_branches(sessions):
    """Two sibling branches of twelve turns: long answers on one, short ones on the other."""
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
    for branch, size in (("a", 40), ("b", 3)):
        parent = "root0001"
        for turn in range(12):
            for role, text in (
                ("user", f"Next part {turn}"),
                ("assistant", "\n\n".join(f"{branch} line {i} of turn {turn}" for i in range(size))),
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
    expect(page.locator(".compare__pane")).to_have_count(2)
    expect(page.locator('.compare__pane[data-column="1"]')).to_contain_text("Add a docstring")
    expect(page.locator('.compare__pane[data-column="2"]')).to_contain_text("I will run the tests next.")
    expect(page.locator('.compare__head[data-column="2"] [data-summary="labels"]')).to_contain_text("regex-approach")
    # The word diff of the two, from the page's own form.
    page.locator(".compare-modes__diff button").click()
    expect(page.locator(".compare-diff")).to_contain_text("Make it reject")
    expect(page.locator(".compare-diff del").first).to_be_visible()
    assert record.errors == [] and record.console_errors == []


def test_the_columns_scroll_in_step_turn_by_turn(page, ui, sessions, server, record):
    seeded = _long_branches(sessions)
    page.set_viewport_size({"width": 1200, "height": 700})
    ui.open(page, f"/s/{seeded.id}/compare/?e=au000000&e=bu000000")
    first, second = page.locator('.compare__pane[data-column="1"]'), page.locator('.compare__pane[data-column="2"]')
    expect(first.locator(".compare__row")).to_have_count(12)
    first.scroll_into_view_if_needed()
    box = first.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + 40)
    page.mouse.wheel(0, 4000)
    page.wait_for_function("() => document.querySelector('.compare__pane[data-column=\"2\"]').scrollTop > 0")
    page.wait_for_timeout(200)  # let the follower settle on the leader's last position
    assert _top_row(page, 1) not in (None, "1")
    assert _top_row(page, 2) == _top_row(page, 1)
    # The other column leads too: scrolling it back up brings the first one along.
    box = second.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + 40)
    page.mouse.wheel(0, -100000)
    page.wait_for_function("() => document.querySelector('.compare__pane[data-column=\"1\"]').scrollTop === 0")
    assert _top_row(page, 1) == _top_row(page, 2) == "1"
    assert record.errors == []


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
    assert page.url == f"{server.url}{url}"  # the page stayed, reloaded
    label = seeded.lines()[-1]
    assert label["type"] == "label" and label["targetId"] == U2 and label["label"] == "pydantic <b>route</b>"


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
    expect(page.locator(".compare__pane")).to_have_count(2)
    expect(page.locator('.compare__pane[data-column="2"]')).to_contain_text("I will run the tests next.")
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
    from sessions_app.sessionfiles import entries as E
    from sessions_app.sessionfiles.store import SessionFile

    return SessionFile(seeded.path, fsync=False).append(E.user_message(text), parent)["id"]


def test_a_comparison_follows_what_is_appended_to_a_compared_branch(page, ui, sessions, server, record):
    seeded = sessions.seed("02-tree-branches")
    ui.open(page, f"/s/{seeded.id}/compare/?e={U2}&e={SUMMARY}")
    page.locator("header[data-live=live]").wait_for()
    new_id = _append_elsewhere(seeded, "Appended by <em>another writer</em>", BRANCH_END)
    second = page.locator('.compare__pane[data-column="2"]')
    expect(second.locator(f'[data-entry="{new_id}"]')).to_contain_text("Appended by <em>another writer</em>")
    expect(page.locator('.compare__head[data-column="2"] [data-summary="turns"]')).to_have_text("2")
    expect(page.locator('.compare__pane[data-column="1"]')).not_to_contain_text("another writer")
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
    expect(page.locator(".compare__pane")).to_have_count(2)
    expect(page.locator('.compare__pane[data-column="1"]')).to_contain_text("Add a docstring")
    expect(page.locator('.compare__pane[data-column="2"]')).to_contain_text("I will run the tests next.")
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
    expect(page.locator(".compare__pane")).to_have_count(2)
    expect(page.locator('.compare__pane[data-column="1"]')).to_contain_text("Make it reject titles longer")
    expect(page.locator('.compare__pane[data-column="2"]')).to_contain_text("Make it reject empty titles only")
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
    expect(page.locator(".compare__pane")).to_have_count(2)
    expect(page.locator(".compare__pane")).to_contain_text(["Add a docstring", "Or keep it plain"])
    assert record.errors == []


def _message(entry_id: str, parent: str | None, role: str, text: str, second: int) -> dict:
    content = text if role == "user" else [{"type": "text", "text": text}]
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": f"2026-03-02T09:{second // 60:02d}:{second % 60:02d}.000Z",
        "message": {"role": role, "content": content, "timestamp": 1772442000000 + second * 1000},
    }


def _label(entry_id: str, parent: str, target: str, text: str, second: int) -> dict:
    return {
        "type": "label",
        "id": entry_id,
        "parentId": parent,
        "timestamp": f"2026-03-02T09:{second // 60:02d}:{second % 60:02d}.000Z",
        "targetId": target,
        "label": text,
    }


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
    lines = [_message("u", None, "user", "q", 1), _message("a", "u", "assistant", "a", 2)]
    for k in range(5):
        lines += [
            _message(f"c{k}", "a", "user", f"child {k}", 3 + k),
            _message(f"r{k}", f"c{k}", "assistant", "ok", 10 + k),
        ]
    lines += [
        _label("l1", "r4", "c1", "a fairly long label here", 30),
        _label("l2", "l1", "r3", "second long label", 31),
        _label("l3", "l2", "c0", "and one on the first", 32),
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
