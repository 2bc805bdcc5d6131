"""Read-model queries over the index: paths, siblings, where a branch was last left, pi's tree shape."""

from __future__ import annotations

from typing import Any

from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles import tree
from sessions_app.sessionfiles.store import SessionFile


def rows_of(session: SessionFile, *ids: str) -> list[int]:
    return [session.row_of(i) for i in ids]


def ids_of(session: SessionFile, rows: list[int]) -> list[str]:
    return [session.index.ids[r] for r in rows]


def test_tree_orders_roots_by_file_and_children_by_timestamp(write_file: Any, L: Any) -> None:
    path = write_file(
        L.header(),
        L.entry("r1", None, ts="2026-01-01T00:00:05.000Z"),
        L.entry("late", "r1", ts="2026-01-01T00:00:09.000Z"),
        L.entry("early", "r1", ts="2026-01-01T00:00:06.000Z"),
        L.entry("same-a", "r1", ts="2026-01-01T00:00:07.000Z"),
        L.entry("same-b", "r1", ts="2026-01-01T00:00:07.000Z"),
        L.entry("r0", None, ts="2026-01-01T00:00:00.000Z"),  # older but later in the file: still the second root
        L.entry("lab", "r0", "label", targetId="early", label="tagged"),
        L.entry("m", "lab", "leaf", targetId="r1"),
    )
    session = SessionFile(path, fsync=False)
    assert tree.tree(session.index) == [
        {
            "id": "r1",
            "type": "custom",
            "children": [
                {"id": "early", "type": "custom", "label": "tagged", "children": []},
                {"id": "same-a", "type": "custom", "children": []},
                {"id": "same-b", "type": "custom", "children": []},
                {"id": "late", "type": "custom", "children": []},
            ],
        },
        {"id": "r0", "type": "custom", "children": [{"id": "lab", "type": "label", "children": []}]},
    ]


def test_siblings_and_subtree(write_file: Any, L: Any) -> None:
    path = write_file(
        L.header(),
        L.entry("a", None),
        L.entry("b", "a"),
        L.entry("c", "a", ts="2026-01-01T00:00:02.000Z"),
        L.entry("d", "c"),
        L.entry("z", None),
    )
    session = SessionFile(path, fsync=False)
    index = session.index
    assert ids_of(session, tree.siblings(index, session.row_of("b"))) == ["b", "c"]
    assert ids_of(session, tree.siblings(index, session.row_of("d"))) == ["d"]
    assert ids_of(session, tree.siblings(index, session.row_of("z"))) == ["a", "z"]  # roots
    assert sorted(ids_of(session, tree.subtree(index, session.row_of("a")))) == ["a", "b", "c", "d"]
    assert ids_of(session, list(tree.ancestors(index, session.row_of("d")))) == ["d", "c", "a"]
    assert tree.path(index, None) == []


def test_latest_position_under_a_branch(new_session: Any) -> None:
    session = new_session()
    u1 = session.append(E.user_message("one"))
    left = session.append(E.user_message("left"))
    left_deep = session.append(E.user_message("left deeper"))
    right = session.append(E.user_message("right"), parent=u1["id"])
    right_deep = session.append(E.user_message("right deeper"))
    index = session.index
    # Without markers: the newest entry under the branch.
    assert index.ids[tree.latest_position_under(index, session.row_of(left["id"]))] == left_deep["id"]
    assert index.ids[tree.latest_position_under(index, session.row_of(right["id"]))] == right_deep["id"]
    # A later marker that moved back into the branch wins over the newest entry there.
    session.navigate(left["id"])
    session.navigate(right_deep["id"])
    index = session.index
    assert index.ids[tree.latest_position_under(index, session.row_of(left["id"]))] == left["id"]
    assert index.ids[tree.latest_position_under(index, session.row_of(right["id"]))] == right_deep["id"]
    assert index.ids[tree.latest_position_under(index, session.row_of(u1["id"]))] == right_deep["id"]


def test_deep_chains_need_no_recursion(write_file: Any, L: Any) -> None:
    count = 20_000
    lines = [L.header()]
    parent = None
    for i in range(count):
        lines.append(L.entry(f"e{i}", parent))
        parent = f"e{i}"
    path = write_file(*lines)
    session = SessionFile(path, fsync=False)
    assert len(session.path_rows()) == count
    nodes = tree.tree(session.index)
    depth, node = 1, nodes[0]
    while node["children"]:
        (node,) = node["children"]
        depth += 1
    assert depth == count
    assert len(session.context().entry_ids) == count


def test_followed_moves_a_tab_onto_what_continued_its_branch_after_its_cursor(write_file: Any, L: Any) -> None:
    """What an open tab standing on an entry does as lines arrive (live/tabs.py), and where a write from
    it goes (``SessionFile.append``'s ``after``): an entry appended under where it stands continues its
    branch; a sibling elsewhere, a marker, an entry older than its cursor do not."""
    path = write_file(
        L.header(),
        L.entry("a", None),
        L.entry("b", "a"),
        L.entry("c", "b"),  # the tab's page ends here
        L.entry("x", "a"),  # another branch
        L.entry("d", "c"),
        L.entry("m", "d", "leaf", targetId="x"),  # a move elsewhere: not a node
        L.entry("e", "d"),
        L.entry("f", "e"),
    )
    session = SessionFile(path, fsync=False)
    index = session.index
    cursor = index.offsets[index.row("x")]
    assert ids_of(session, [tree.followed(index, index.row("c"), cursor)]) == ["f"]
    assert ids_of(session, [tree.followed(index, index.row("b"), cursor)]) == ["b"]  # c came before its cursor
    assert tree.followed(index, index.row("f"), cursor) == index.row("f")
    end = index.offsets[-1] + index.lengths[-1] + 1
    assert tree.followed(index, index.row("c"), end) == index.row("c")  # nothing after the file's end
    assert tree.followed(index, None, 0) == index.row("f")  # before the first entry: the first root, and on
