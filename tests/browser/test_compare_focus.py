"""The keyboard focus kept where it was when a part of the page is fetched again: in the comparison's
grid (a cell's entry, a column's head) when a compared file grows, and in the sidebar's list after Back.
A part fetched again is new elements: the focus is found again by what it was on, never left on the
body; and what the reader opened there (a tool call, a code block shown whole) is open again."""

from __future__ import annotations

import re

from playwright.sync_api import expect
from support.lines import label, message

from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles.store import SessionFile

# The element that has the focus: its tag, the entry and column it is in, and whether it is the very
# element a test marked before the grid was fetched again.
_FOCUSED = """() => {
  const el = document.activeElement;
  return {
    tag: el.localName,
    entry: el.closest('[data-entry]')?.dataset.entry ?? null,
    column: el.closest('[data-column]')?.dataset.column ?? null,
    marked: el.dataset.marked === '1',
  };
}"""
_MARK = "() => { document.activeElement.dataset.marked = '1'; }"


def _append_elsewhere(seeded, text: str, parent: str) -> str:
    """Another writer (as the command line or pi would) appends a user message; returns its id."""
    return SessionFile(seeded.path, fsync=False).append(E.user_message(text), parent)["id"]


def _label_elsewhere(seeded, target: str, text: str) -> None:
    """Another writer labels an entry (the label line under the file's leaf, as pi writes it)."""
    SessionFile(seeded.path, fsync=False).set_label(target, text)


def _two_branches(sessions):
    """A question answered two ways: "plain" (u2a → a2a), and "rich" (u2b → a2b, whose answer holds a
    code block, a frame the keyboard reaches, and a tool call folded)."""
    rich = [
        {"type": "text", "text": "Here it is:\n\n```python\nprint('hello')\n```\n\nDone."},
        {"type": "toolCall", "id": "call-1", "name": "read", "arguments": {"path": "app.py"}},
    ]
    return sessions.write_lines(
        [
            message("u1", None, "user", "Say hello in code", 1),
            message("a1", "u1", "assistant", [{"type": "text", "text": "Which way?"}], 2),
            message("u2a", "a1", "user", "The plain way", 3),
            message("a2a", "u2a", "assistant", [{"type": "text", "text": "hello"}], 4),
            message("u2b", "a1", "user", "The rich way", 5),
            message("a2b", "u2b", "assistant", rich, 6),
        ]
    )


def _append_keeping_focus(page, seeded, text: str, parent: str, focused) -> str:
    """Another writer appends under ``parent`` while ``focused`` has the focus, marked: the grid is
    fetched again (the new entry is in the second column), and ``focused`` has the focus again, on a
    new element (the one marked is gone). Returns the new entry's id."""
    page.evaluate(_MARK)
    added = _append_elsewhere(seeded, text, parent)
    expect(page.locator(f'.compare__cell[data-column="2"] [data-entry="{added}"]')).to_have_count(1)
    expect(focused).to_be_focused()
    return added


def test_a_focus_inside_a_cell_comes_back_when_the_grid_is_fetched_again(page, ui, sessions, record):
    seeded = _two_branches(sessions)
    ui.open(page, f"/s/{seeded.id}/compare/?e=u2a&e=u2b")
    page.locator("header[data-live=live]").wait_for()

    # A code frame in an answer.
    frame = page.locator('.compare__cell[data-column="2"] [data-entry="a2b"] pre[tabindex="0"]')
    frame.focus()
    first = _append_keeping_focus(page, seeded, "Now in Rust", "a2b", frame)
    assert page.evaluate(_FOCUSED) == {"tag": "pre", "entry": "a2b", "column": "2", "marked": False}

    # The link of an entry in the other column.
    link = page.locator('.compare__cell[data-column="1"] [data-entry="a2a"] a.entry__link')
    link.focus()
    second = _append_keeping_focus(page, seeded, "And in Go", first, link)
    assert page.evaluate(_FOCUSED) == {"tag": "a", "entry": "a2a", "column": "1", "marked": False}

    # A tool call opened from the keyboard: it stays open, its summary keeps the focus.
    fold = page.locator('.compare__cell[data-column="2"] [data-entry="a2b"] details.tool-call')
    fold.locator("summary").focus()
    page.keyboard.press("Enter")
    expect(fold).to_have_attribute("open", "")
    third = _append_keeping_focus(page, seeded, "And in C", second, fold.locator("summary"))
    expect(fold).to_have_attribute("open", "")
    assert page.evaluate(_FOCUSED) == {"tag": "summary", "entry": "a2b", "column": "2", "marked": False}

    # An entry of the shared trunk (its entries shown again are replaced: they may carry a new label).
    page.locator(".compare-trunk > summary").click()
    trunk_link = page.locator('.compare-trunk [data-entry="a1"] a.entry__link')
    trunk_link.focus()
    _append_keeping_focus(page, seeded, "And in Lisp", third, trunk_link)
    assert page.evaluate(_FOCUSED) == {"tag": "a", "entry": "a1", "column": None, "marked": False}
    assert record.errors == [] and record.console_errors == []


def _labelled_branches(sessions):
    """Two branches at a1; the second of four turns, six of its entries labelled (the most a head
    shows before "+N more")."""
    lines = [
        message("u1", None, "user", "q", 1),
        message("a1", "u1", "assistant", [{"type": "text", "text": "a"}], 2),
        message("x1", "a1", "user", "one way", 3),
        message("y1", "x1", "assistant", [{"type": "text", "text": "one answer"}], 4),
    ]
    parent = "a1"
    for turn in range(4):
        lines += [
            message(f"p{turn}", parent, "user", f"prompt {turn}", 10 + 2 * turn),
            message(f"r{turn}", f"p{turn}", "assistant", [{"type": "text", "text": f"reply {turn}"}], 11 + 2 * turn),
        ]
        parent = f"r{turn}"
    for n, target in enumerate(["p0", "r0", "p1", "r1", "p2", "r2"]):
        lines.append(label(f"l{n}", parent, target, f"tag {n}", 30 + n))
        parent = f"l{n}"
    return sessions.write_lines(lines)


def test_a_focus_in_a_column_head_is_found_again_by_what_it_is(page, ui, sessions, record):
    """The head's controls shift when a seventh label brings "+1 more" before them: the focus comes
    back to the same control, not to the one now at its place; and on "+N more", open, it stays."""
    seeded = _labelled_branches(sessions)
    ui.open(page, f"/s/{seeded.id}/compare/?e=x1&e=p0")
    page.locator("header[data-live=live]").wait_for()
    head = page.locator('.compare__head[data-column="2"]')
    more = head.locator("details.compare__more-labels")
    expect(head.locator(".tag")).to_have_count(6)
    expect(more).to_have_count(0)

    cont = head.get_by_role("button", name="Continue on this branch")
    cont.focus()
    page.evaluate(_MARK)
    _label_elsewhere(seeded, "p3", "tag 6")
    expect(more.locator("summary")).to_have_text("+1 more")
    expect(cont).to_be_focused()
    assert page.evaluate(_FOCUSED) == {"tag": "button", "entry": None, "column": "2", "marked": False}

    more.locator("summary").focus()
    page.keyboard.press("Enter")
    expect(more).to_have_attribute("open", "")
    page.evaluate(_MARK)
    _label_elsewhere(seeded, "r3", "tag 7")
    expect(more.locator("summary")).to_have_text("+2 more")
    expect(more).to_have_attribute("open", "")
    expect(more.locator("summary")).to_be_focused()
    assert page.evaluate(_FOCUSED) == {"tag": "summary", "entry": None, "column": "2", "marked": False}
    assert record.errors == [] and record.console_errors == []


def test_a_sidebar_link_keeps_its_focus_after_back(page, ui, sessions, record):
    """The page Back puts back has the sidebar's list as it was then, which the next answer replaces:
    the focus on one of its links comes back to that link."""
    seeded = sessions.seed("02-tree-branches")
    other = sessions.write_lines([message("o1", None, "user", "Another session", 1)])
    ui.open(page, seeded.entry_url("de4f0d3a"))  # a permalink: a move pushes an address of its own
    links = page.locator("#sidebar .sidebar__sessions a")
    expect(links).to_have_count(2)
    page.evaluate("() => { window.notReloaded = true; }")
    page.locator("#entry-07721729 .nav-prev").click()  # to the other branch
    ui.wait_position(page, "750a4556")
    page.go_back()
    page.wait_for_url(f"**{seeded.entry_url('de4f0d3a')}")
    expect(page.locator("#entry-de4f0d3a")).to_be_visible()
    assert page.evaluate("() => window.notReloaded") is True  # put back by htmx, not loaded anew
    link = page.locator(f"#sidebar .sidebar__sessions a[href='{other.url}']")
    link.focus()
    page.evaluate(_MARK)
    sessions.write_lines([message("n1", None, "user", "A third one", 2)])  # the list changes
    expect(links).to_have_count(3)
    expect(link).to_be_focused()
    assert page.evaluate(_FOCUSED)["marked"] is False  # a new list, the focus found again on its link
    assert record.errors == []


def test_a_code_block_shown_whole_stays_whole_when_the_grid_is_fetched_again(page, ui, sessions, record):
    code = "\n".join(f"step_{n} = {n}" for n in range(60))
    seeded = sessions.write_lines(
        [
            message("u1", None, "user", "Write it", 1),
            message("a1", "u1", "assistant", [{"type": "text", "text": "Which way?"}], 2),
            message("u2a", "a1", "user", "Short", 3),
            message("a2a", "u2a", "assistant", [{"type": "text", "text": "step = 1"}], 4),
            message("u2b", "a1", "user", "Long", 5),
            message("a2b", "u2b", "assistant", [{"type": "text", "text": f"```python\n{code}\n```"}], 6),
        ]
    )
    ui.open(page, f"/s/{seeded.id}/compare/?e=u2a&e=u2b")
    page.locator("header[data-live=live]").wait_for()
    block = page.locator('.compare__cell[data-column="2"] [data-entry="a2b"] .code')
    expand = block.locator("[data-expand-code]")
    expect(expand).to_have_text("Show all 60 lines")
    expand.click()
    expect(block).to_have_class(re.compile(r"\bis-open\b"))
    page.evaluate("() => { document.querySelector('.compare').dataset.marked = '1'; }")
    added = _append_elsewhere(seeded, "And shorter?", "a2b")
    expect(page.locator(f'.compare__cell[data-column="2"] [data-entry="{added}"]')).to_have_count(1)
    expect(page.locator(".compare[data-marked]")).to_have_count(0)  # the grid is a new one
    expect(block).to_have_class(re.compile(r"\bis-open\b"))
    expect(expand).to_have_text("Fold")
    expect(expand).to_have_attribute("aria-expanded", "true")
    expand.click()  # and it folds again from there
    expect(expand).to_have_text("Show all 60 lines")
    assert record.errors == [] and record.console_errors == []
