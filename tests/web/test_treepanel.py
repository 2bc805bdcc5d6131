"""The tree panel's runs, grown line by line, against a plain walk of the whole tree."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from sessions_app.display import treepanel
from sessions_app.display.treepanel import ELBOW, FILTERS, NEAR_POSITION, PIPE, TEE, TreeRow, run_rows, tree_rows
from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles.fork import create_session
from sessions_app.sessionfiles.index import NO_PARENT
from sessions_app.sessionfiles.store import SessionFile
from sessions_app.sessionfiles.tree import ancestors

# What each appended entry is: (kind, index of its parent among the entries so far, or -1 for a root)
STEP = st.tuples(st.sampled_from(["user", "assistant", "tools", "label", "name"]), st.integers(min_value=-1))


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


def _drawn(session: SessionFile, mode: str, position: int | None) -> list[TreeRow]:
    """The panel's entry rows in order, every "+N" fold opened (and opened again while it folds more)."""
    out: list[TreeRow] = []
    pending = list(tree_rows(session, position, mode))
    while pending:
        row = pending.pop(0)
        if row.kind == "fold":
            first, last = session.index.row(row.first_id), session.index.row(row.last_id)
            assert first is not None and last is not None
            pending[:0] = run_rows(session, first, last, position, mode)
        else:
            out.append(row)
    return out


@given(steps=st.lists(STEP, min_size=1, max_size=40), mode=st.sampled_from(FILTERS), where=st.integers())
def test_grown_runs_draw_what_a_plain_walk_finds(tmp_path_factory, steps, mode, where) -> None:
    folder: Path = tmp_path_factory.mktemp("tree")
    session = create_session(folder, "/w", fsync=False)
    ids: list[str] = []
    for kind, parent in steps:
        ids.append(_grow(session, kind, ids[parent % len(ids)] if ids and parent >= 0 else None))
        treepanel.skeleton(session, mode)  # grown one line at a time, as a live session is
    position = session.index.row(ids[where % len(ids)])
    drawn = _drawn(session, mode, position)
    assert [row.entry_id for row in drawn] == _reference(session, mode, position)
    _assert_compare_names_the_branches(session, mode, position, drawn)
    grown = tree_rows(session, position, mode)
    treepanel._skeletons.clear()  # built afresh from the whole file: the same panel
    assert tree_rows(session, position, mode) == grown


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


def test_a_long_run_folds_but_keeps_its_ends_labels_and_the_entries_above_the_position(tmp_path) -> None:
    session = create_session(tmp_path, "/w", fsync=False)
    ids: list[str] = []
    for n in range(300):
        ids.append(session.append(E.user_message(f"message {n}"), ids[-1] if ids else None)["id"])
    session.set_label(ids[120], "middle", ids[-1])
    position = session.index.row(ids[200])
    rows = tree_rows(session, position, "user")
    drawn = [row.entry_id for row in rows if row.kind != "fold"]
    assert drawn == [ids[0], ids[120], *ids[200 - NEAR_POSITION : 201], ids[-1]]
    folds = [row for row in rows if row.kind == "fold"]
    assert [(f.first_id, f.last_id, f.folded) for f in folds] == [
        (ids[1], ids[119], 119),
        (ids[121], ids[200 - NEAR_POSITION - 1], 200 - NEAR_POSITION - 121),
        (ids[201], ids[298], 98),
    ]
    assert [f.on_path for f in folds] == [True, True, False]
    label = next(row for row in rows if row.entry_id == ids[120])
    assert label.label == "middle" and label.text == "message 120"
    # A fold opens a hundred entries at a time; the rest folds again.
    opened = run_rows(session, session.index.row(ids[1]), session.index.row(ids[119]), position, "user")
    assert [row.entry_id for row in opened[:-1]] == ids[1:101] and opened[-1].kind == "fold"
    assert (opened[-1].first_id, opened[-1].last_id) == (ids[101], ids[119])


def test_previews_are_plain_text(tmp_path) -> None:
    session = create_session(tmp_path, "/w", fsync=False)
    session.append(E.user_message("**Bold** and `code` with a [link](http://example.com)\n\n# Heading"), None)
    (row,) = tree_rows(session, session.index.leaf_row, "all")
    assert row.text == "Bold and code with a link Heading"
