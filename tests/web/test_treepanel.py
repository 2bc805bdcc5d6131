"""The tree panel's runs, grown line by line, against a plain walk of the whole tree; the tab's path drawn
unfolded (paged when long); the panel drawn by several threads while the file grows."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from sessions_app.display import treepanel
from sessions_app.display.treepanel import (
    ELBOW,
    FILTERS,
    PATH_WINDOW,
    PIPE,
    TEE,
    TreeRow,
    earlier_rows,
    run_rows,
    tree_rows,
)
from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles.fork import create_session
from sessions_app.sessionfiles.index import NO_PARENT
from sessions_app.sessionfiles.store import SessionFile
from sessions_app.sessionfiles.tree import ancestors

# What each appended entry is: (kind, index of its parent among the entries so far, or -1 for a root)
KINDS = st.sampled_from(["user", "assistant", "tools", "label", "name"])
STEP = st.tuples(KINDS, st.integers(min_value=-1))
# The same with the parent counted back from the newest entry, one of the last four: long branches, each
# with short ones beside it.
NEAR_STEP = st.tuples(KINDS, st.integers(min_value=0, max_value=3))


def _grow(session: SessionFile, kind: str, parent: str | None) -> str:
    if kind == "user":
        return session.append(E.user_message(f"**asked** {len(session.index)}"), parent)["id"]
    if kind == "assistant":
        return session.append(E.assistant_message("answered", provider="p", model="m", api="a"), parent)["id"]
    if kind == "tools":
        draft = E.message(
            {
                "role": "assistant",
                "content": [{"type": "toolCall", "id": "t", "name": "read", "arguments": {}}],
                "provider": "p",
                "model": "m",
                "api": "a",
                "usage": {},
                "stopReason": "toolUse",
                "timestamp": 1,
            }
        )
        return session.append(draft, parent)["id"]
    if kind == "label":
        target = parent or session.leaf_id
        return session.set_label(target, "mark", parent)["id"] if target else session.rename("n", parent)["id"]
    return session.rename(f"name {len(session.index)}", parent)["id"]


def _shown_children(session: SessionFile, mode: str) -> dict[int, list[int]]:
    """Each shown entry's shown children (NO_PARENT: the top), by a plain walk: children hang from
    their nearest shown ancestor, in pi's order."""
    index = session.index
    shown = treepanel._shown_rows(session, index, mode, range(len(index)))
    nearest = {}
    for row in range(len(index)):
        if index.is_node(row):
            parent = index.parents[row]
            above = NO_PARENT if parent == NO_PARENT else nearest[parent]
            nearest[row] = row if row in shown else above
    kids: dict[int, list[int]] = {}
    for row in sorted(shown):
        parent = index.parents[row]
        kids.setdefault(NO_PARENT if parent == NO_PARENT else nearest[parent], []).append(row)
    return {row: index.order_children(children) for row, children in kids.items()}


def _reference(session: SessionFile, mode: str, position: int | None) -> list[str]:
    """Every shown entry in drawing order, the branch holding the position first at each branch point."""
    index = session.index
    kids = _shown_children(session, mode)
    path = set(ancestors(index, position)) if position is not None else set()
    order: list[str] = []
    stack = [NO_PARENT]
    while stack:
        row = stack.pop()
        if row != NO_PARENT:
            order.append(index.ids[row])
        children = kids.get(row, [])
        children = [c for c in children if c in path] + [c for c in children if c not in path]
        stack.extend(reversed(children))
    return order


def _drawn(session: SessionFile, mode: str, position: int | None, window: int = PATH_WINDOW) -> list[TreeRow]:
    """The panel's entry rows in order, every "+N" fold and "earlier" row opened (and opened again
    while it stands for more)."""
    out: list[TreeRow] = []
    pending = list(tree_rows(session, position, mode, window=window))
    while pending:
        row = pending.pop(0)
        if row.kind in ("fold", "earlier"):
            first, last = session.index.row(row.first_id), session.index.row(row.last_id)
            assert first is not None and last is not None
            if row.kind == "fold":
                pending[:0] = run_rows(session, first, last, position, mode)
            else:
                pending[:0] = earlier_rows(session, first, last, position, mode, page=max(window - 1, 1))
        else:
            out.append(row)
    return out


def _shown_path(session: SessionFile, mode: str, position: int | None) -> list[str]:
    """The ids of the shown entries from the top down to the position (or its nearest shown ancestor)."""
    if position is None:
        return []
    index = session.index
    shown = treepanel._shown_rows(session, index, mode, range(len(index)))
    return [index.ids[row] for row in reversed(list(ancestors(index, position))) if row in shown]


@given(
    steps=st.lists(STEP, min_size=1, max_size=40),
    mode=st.sampled_from(FILTERS),
    where=st.integers(),
    window=st.sampled_from([1, 2, 5, PATH_WINDOW]),
)
def test_grown_runs_draw_what_a_plain_walk_finds(tmp_path_factory, steps, mode, where, window) -> None:
    folder: Path = tmp_path_factory.mktemp("tree")
    session = create_session(folder, "/w", fsync=False)
    ids: list[str] = []
    for kind, parent in steps:
        ids.append(_grow(session, kind, ids[parent % len(ids)] if ids and parent >= 0 else None))
        treepanel.skeleton(session, mode)  # grown one line at a time, as a live session is
    position = session.index.row(ids[where % len(ids)])
    drawn = _drawn(session, mode, position, window)
    assert [row.entry_id for row in drawn] == _reference(session, mode, position)
    _assert_compare_names_the_branches(session, mode, position, drawn)
    grown = tree_rows(session, position, mode, window=window)
    _assert_the_path_is_never_folded(session, mode, position, grown, window)
    treepanel._skeletons.clear()  # built afresh from the whole file: the same panel
    assert tree_rows(session, position, mode, window=window) == grown


def _assert_the_path_is_never_folded(
    session: SessionFile, mode: str, position: int | None, rows: list[TreeRow], window: int
) -> None:
    """The panel starts with the path: its last ``window`` entries, one after the other and marked,
    behind one "earlier" row for the rest; no fold stands for any of it."""
    path = _shown_path(session, mode, position)
    drawn = path[-window:]
    earlier = [row for row in rows if row.kind == "earlier"]
    if len(path) > window:
        assert rows[0] == earlier[0] and len(earlier) == 1 and earlier[0].folded == len(path) - window
        assert (earlier[0].first_id, earlier[0].last_id) == (path[0], path[-window - 1])
        rows = rows[1:]
    else:
        assert not earlier
    assert [row.entry_id for row in rows[: len(drawn)]] == drawn
    assert all(row.on_path for row in rows[: len(drawn)]) and not any(row.on_path for row in rows[len(drawn) :])
    assert not any(row.kind == "fold" and row.on_path for row in rows)


def _assert_compare_names_the_branches(
    session: SessionFile, mode: str, position: int | None, drawn: list[TreeRow]
) -> None:
    """A row's Compare names its shown children when it has 2 to 4 of them; with more, four of them in
    pi's order, the one holding the position among them."""
    index = session.index
    kids = _shown_children(session, mode)
    path = set(ancestors(index, position)) if position is not None else set()
    for row in drawn:
        children = [index.ids[kid] for kid in kids.get(index.row(row.entry_id), [])]
        assert row.branches == (len(children) > 1)
        if len(children) < 2:
            assert row.compare == ()
            continue
        assert len(row.compare) == min(len(children), 4)
        assert [kid for kid in children if kid in row.compare] == list(row.compare)  # in pi's order
        assert all(index.ids[kid] in row.compare for kid in path.intersection(kids[index.row(row.entry_id)]))


def test_guides_tell_siblings_from_continuations(tmp_path) -> None:
    session = create_session(tmp_path, "/w", fsync=False)
    u1 = session.append(E.user_message("one"), None)["id"]
    a1 = session.append(E.assistant_message("two", provider="p", model="m", api="a"), u1)["id"]
    left = session.append(E.user_message("left"), a1)["id"]
    left_reply = session.append(E.assistant_message("left reply", provider="p", model="m", api="a"), left)["id"]
    right = session.append(E.user_message("right"), a1)["id"]
    rows = {row.entry_id: row for row in tree_rows(session, session.index.row(left_reply), "all")}
    assert rows[u1].guide == rows[a1].guide == ""
    assert rows[left].guide == TEE and rows[left_reply].guide == PIPE  # the branch holding the position first
    assert rows[right].guide == ELBOW
    assert rows[a1].branches and not rows[left].branches
    assert rows[left_reply].is_position and rows[left].on_path and not rows[right].on_path
    moved = {row.entry_id: row for row in tree_rows(session, session.index.row(right), "all")}
    assert moved[right].guide == TEE and moved[left].guide == ELBOW and moved[left_reply].guide == "   "


def _line(session: SessionFile, count: int, parent: str | None = None) -> list[str]:
    ids: list[str] = []
    for _ in range(count):
        parent = session.append(E.user_message(f"message {len(session.index)}"), parent)["id"]
        ids.append(parent)
    return ids


def test_the_path_is_drawn_whole_and_other_runs_fold_keeping_ends_and_labels(tmp_path) -> None:
    session = create_session(tmp_path, "/w", fsync=False)
    trunk = _line(session, 40)
    side = _line(session, 30, trunk[9])  # a branch at trunk[9] that the tab is not on
    session.set_label(side[12], "middle", trunk[-1])
    rows = tree_rows(session, session.index.row(trunk[30]), "user")
    assert [row.entry_id for row in rows[:31]] == trunk[:31] and all(row.on_path for row in rows[:31])
    folds = [row for row in rows if row.kind == "fold"]
    assert [(f.first_id, f.last_id, f.folded, f.on_path) for f in folds] == [
        (trunk[31], trunk[38], 8, False),  # below the position: not its path
        (side[1], side[11], 11, False),
        (side[13], side[28], 16, False),
    ]
    label = next(row for row in rows if row.entry_id == side[12])
    assert label.label == "middle" and label.text == f"message {session.index.row(side[12])}"
    # A fold opens a hundred entries at a time; the rest folds again.
    long = _line(session, 150, trunk[0])
    rows = tree_rows(session, session.index.row(trunk[30]), "user")
    assert [row.folded for row in rows if row.kind == "fold" and row.first_id == long[1]] == [148]
    opened = run_rows(session, session.index.row(long[1]), session.index.row(long[-2]), None, "user")
    assert [row.entry_id for row in opened[:-1]] == long[1:101] and opened[-1].kind == "fold"
    assert (opened[-1].first_id, opened[-1].last_id) == (long[101], long[-2])


def test_a_long_path_is_paged_from_the_position_up(tmp_path) -> None:
    session = create_session(tmp_path, "/w", fsync=False)
    trunk = _line(session, 10)
    left = _line(session, 10, trunk[-1])
    right = _line(session, 1, trunk[-1])
    position = session.index.row(left[-1])
    rows = tree_rows(session, position, "all", window=10)
    assert rows[0].kind == "earlier" and rows[0].on_path and rows[0].folded == 10
    assert (rows[0].first_id, rows[0].last_id) == (trunk[0], trunk[-1])
    assert [(row.entry_id, row.guide) for row in rows[1:]] == [
        (left[0], TEE),
        *((entry, PIPE) for entry in left[1:]),
        (right[0], ELBOW),  # the branch beside the path, under the branch point not drawn yet
    ]
    assert rows[-2].is_position
    # Each "earlier" row loads the page just above what is drawn, and stands for what is left.
    page = earlier_rows(session, session.index.row(trunk[0]), session.index.row(trunk[-1]), position, "all", page=4)
    assert page[0].kind == "earlier" and (page[0].first_id, page[0].last_id, page[0].folded) == (trunk[0], trunk[5], 6)
    assert [row.entry_id for row in page[1:]] == trunk[6:] and all(row.on_path for row in page)
    assert page[-1].compare == (left[0], right[0])  # the branch point, now drawn, offers Compare
    rest = earlier_rows(session, session.index.row(trunk[0]), session.index.row(trunk[5]), position, "all", page=6)
    assert [row.entry_id for row in rest] == trunk[:6]
    # An "earlier" row whose ends are no longer one path above the other draws nothing.
    assert earlier_rows(session, session.index.row(left[0]), session.index.row(right[0]), position, "all") == []
    # The default window holds a path this long whole.
    assert len(trunk) + len(left) <= PATH_WINDOW and tree_rows(session, position, "all")[0].entry_id == trunk[0]


@given(
    steps=st.lists(NEAR_STEP, min_size=1, max_size=40),
    mode=st.sampled_from(FILTERS),
    where=st.integers(min_value=0, max_value=3),
    window=st.sampled_from([1, 2, 5]),
    picks=st.lists(st.integers(min_value=0), max_size=8),
)
def test_a_panel_drawn_again_keeps_what_its_reader_opened(tmp_path_factory, steps, mode, where, window, picks) -> None:
    """The panel is drawn again at every append: drawn with the folds its reader opened (by their ends)
    and the earliest page of the path they loaded (by its last row), it is the panel as they left it,
    whatever they opened in whatever order."""
    session = create_session(tmp_path_factory.mktemp("tree"), "/w", fsync=False)
    ids: list[str] = []
    for kind, back in steps:
        ids.append(_grow(session, kind, ids[-1 - back % len(ids)] if ids else None))
    position = session.index.row(ids[-1 - where % len(ids)])  # deep in the tree: a path longer than the window
    rows = tree_rows(session, position, mode, window=window)
    opened: list[tuple[int, int]] = []
    loaded = None
    for pick in picks:
        closed = [at for at, row in enumerate(rows) if row.kind in ("fold", "earlier")]
        if not closed:
            break
        at = closed[pick % len(closed)]
        row = rows[at]
        first, last = session.index.row(row.first_id), session.index.row(row.last_id)
        assert first is not None and last is not None
        if row.kind == "fold":
            rows[at : at + 1] = run_rows(session, first, last, position, mode)
            opened.append((first, last))
        else:
            rows[at : at + 1] = earlier_rows(session, first, last, position, mode, page=window)
            loaded = last
    again = tree_rows(session, position, mode, window=window, opened=opened, loaded=loaded, page=window)
    assert again == rows


def test_what_the_reader_opened_stays_open_as_the_file_grows(tmp_path) -> None:
    session = create_session(tmp_path, "/w", fsync=False)
    trunk = _line(session, 12)
    side = _line(session, 250, trunk[2])  # a long run beside the path: "+248" between its ends

    def row(entry_id: str) -> int | None:
        return session.index.row(entry_id)  # of the index as it is now (an append makes a new one)

    drawn_first = tree_rows(session, row(trunk[-1]), "user", window=5)
    (earlier,) = [r for r in drawn_first if r.kind == "earlier"]
    assert [(r.first_id, r.last_id) for r in drawn_first if r.kind == "fold"] == [(side[1], side[-2])]
    opened = [(row(side[1]), row(side[-2])), (row(side[101]), row(side[-2]))]  # the fold, then what it left
    loaded = row(earlier.last_id)  # trunk[6]: the page above the 5 rows first drawn
    # An agent goes on, on the tab's branch and at the end of the side run; a label lands in the opened part.
    trunk += _line(session, 1, trunk[-1])
    side += _line(session, 1, side[-1])
    session.set_label(side[50], "here", trunk[-1])
    position = row(trunk[-1])
    rows = tree_rows(session, position, "user", window=5, opened=opened, loaded=loaded, page=3)
    assert rows[0].kind == "earlier" and (rows[0].first_id, rows[0].last_id) == (trunk[0], trunk[3])
    drawn = [r.entry_id for r in rows if r.entry_id]
    assert drawn[:9] == trunk[4:]  # the path from the page loaded (3 rows above the first 5) down
    assert drawn[9:] == [*side[:201], side[-1]]  # both folds open, the rest of the run folded
    assert [(r.first_id, r.last_id) for r in rows if r.kind == "fold"] == [(side[201], side[-2])]
    # What is not where it was is passed over: ends no longer one above the other, a row off the path.
    plain = tree_rows(session, position, "user", window=5)
    assert tree_rows(session, position, "user", window=5, opened=[(row(side[5]), row(trunk[3]))]) == plain
    assert tree_rows(session, position, "user", window=5, loaded=row(side[5])) == plain


def test_previews_are_plain_text(tmp_path) -> None:
    session = create_session(tmp_path, "/w", fsync=False)
    session.append(E.user_message("**Bold** and `code` with a [link](http://example.com)\n\n# Heading"), None)
    (row,) = tree_rows(session, session.index.leaf_row, "all")
    assert row.text == "Bold and code with a link Heading"
    # A link whose target the renderer refuses still reads as its text, not as Markdown source.
    session.append(E.user_message("see [the docs](javascript:alert(3)) and ![a chart](vbscript:x)"))
    rows = tree_rows(session, session.index.leaf_row, "all")
    assert rows[-1].text == "see the docs and a chart"
