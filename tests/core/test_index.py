"""Loading odd and broken files (docs/format.md §4.2, §5, §8): every problem is reported
with its 1-based line number, nothing loops, nothing is lost, and reading never changes the file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles import tree
from sessions_app.sessionfiles.errors import NotASession, UnsupportedFormat
from sessions_app.sessionfiles.listing import read_info
from sessions_app.sessionfiles.store import SessionFile


def read_everything(path: Path) -> SessionFile:
    """Open the file and use every read path (tree, every context, every raw line); the bytes must not change."""
    before = path.read_bytes()
    session = SessionFile(path, fsync=False)
    index = session.index
    tree.tree(index)
    session.context()
    for row in range(len(index)):
        assert session.raw_line(row)
        if index.is_node(row):
            session.context(index.ids[row])
    session.entries(range(len(index)))
    assert path.read_bytes() == before
    return session


def path_ids(session: SessionFile, leaf: Any = None) -> list[str]:
    rows = session.path_rows() if leaf is None else session.path_rows(leaf)
    return [session.index.ids[row] for row in rows]


def shape(session: SessionFile) -> list[Any]:
    """The tree as nested (id, [children]) pairs, for compact assertions."""

    def walk(node: dict[str, Any]) -> Any:
        return (node["id"], [walk(child) for child in node["children"]]) if node["children"] else node["id"]

    return [walk(node) for node in tree.tree(session.index)]


# ---------------------------------------------------------------------------------------------- refused


def test_empty_file_is_refused_untouched(write_file: Any) -> None:
    path = write_file()
    with pytest.raises(NotASession, match="empty"):
        SessionFile(path)
    assert path.read_bytes() == b""


def test_header_without_final_newline_opens_untouched(write_file: Any, L: Any) -> None:
    """A file holding only its header, without the "\n" (a writer stopped there): pi opens it, and so
    does pitree, without writing; the first append starts on a line of its own."""
    path = write_file(L.dump(L.header())[:-1])
    before = path.read_bytes()
    session = SessionFile(path, fsync=False)
    assert session.session_id == L.header()["id"]
    assert len(session.index) == 0 and session.leaf_id is None and session.index.skipped() == []
    assert path.read_bytes() == before
    added = session.append(E.user_message("hello"))
    assert path.read_bytes() == before + b"\n" + L.dump(added)
    again = SessionFile(path)
    assert [again.index.ids[row] for row in again.path_rows()] == [added["id"]]
    assert again.index.skipped() == []


def test_header_without_final_newline_seen_growing(write_file: Any, L: Any) -> None:
    """Another writer completes the header line and appends: a refresh reads on from the header."""
    path = write_file(L.dump(L.header())[:-1])
    session = SessionFile(path, fsync=False)
    with open(path, "ab") as handle:
        handle.write(b"\n" + L.dump(L.user("a", None, "hi")))
    assert session.refresh() == [0]
    assert session.leaf_id == "a" and session.index.skipped() == []


def test_lone_unterminated_object_that_is_no_header_is_refused(write_file: Any, L: Any) -> None:
    path = write_file(L.dump(L.user("a", None, "no header"))[:-1])
    with pytest.raises(NotASession, match="line 1 is not a session header"):
        SessionFile(path)


def test_whitespace_only_file_is_refused_untouched(write_file: Any) -> None:
    path = write_file(b"  \n\n\t\r\n ")
    with pytest.raises(NotASession, match="no session header"):
        SessionFile(path)
    assert path.read_bytes() == b"  \n\n\t\r\n "


def test_non_session_jsonl_is_refused_untouched(write_file: Any, L: Any) -> None:
    path = write_file(L.user("a", None, "hi"), {"type": "session", "id": "late"})
    before = path.read_bytes()
    with pytest.raises(NotASession, match="line 1 is not a session header"):
        SessionFile(path)
    assert path.read_bytes() == before


def test_header_without_string_id_is_not_a_session(write_file: Any) -> None:
    path = write_file({"type": "session", "version": 3, "id": 7})
    with pytest.raises(NotASession):
        SessionFile(path)


def test_harness_v4_file_is_refused_with_a_clear_message(write_file: Any) -> None:
    path = write_file(
        {"kind": "header", "version": 4, "id": "s4", "createdAt": 1772442900000, "cwd": "/x"},
        {"kind": "entry", "seq": 1, "entry": {"type": "message"}},
    )
    before = path.read_bytes()
    with pytest.raises(UnsupportedFormat, match="v4") as error:
        SessionFile(path)
    assert "v3 only" in str(error.value)
    assert isinstance(error.value, NotASession)  # callers that refuse non-sessions refuse it too
    assert path.read_bytes() == before


# ---------------------------------------------------------------------------------------------- bad lines


def test_bad_lines_are_reported_by_line_number_and_skipped(write_file: Any, L: Any) -> None:
    path = write_file(
        "not json before the header",  # 1
        "",  # 2
        L.header(),  # 3
        L.user("a", None, "first"),  # 4
        "{this is not json",  # 5
        "   ",  # 6
        "[1, 2]",  # 7
        "42",  # 8
        '"a string"',  # 9
        "null",  # 10
        {"id": "no-type", "parentId": None},  # 11
        {"type": "custom", "parentId": "a"},  # 12: no id
        b'{"type":"custom","id":"bad","parentId":"a","x":"\xff\xfe"}\n',  # 13: invalid UTF-8
        L.header("second-header"),  # 14
        L.assistant("b", "a", "second"),  # 15
    )
    session = read_everything(path)
    assert session.index.skipped() == [
        (1, "skipped before the header: not valid JSON"),
        (2, "skipped before the header: blank line"),
        (5, "skipped: not valid JSON"),
        (6, "skipped: blank line"),
        (7, "skipped: JSON list is not an object"),
        (8, "skipped: JSON int is not an object"),
        (9, "skipped: JSON str is not an object"),
        (10, "skipped: JSON NoneType is not an object"),
        (11, "skipped: no string 'type'"),
        (12, "skipped: no string 'id'"),
        (13, "skipped: not valid UTF-8"),
        (14, "skipped: a second session header"),
    ]
    assert session.session_id == "sess-1"  # the first header counts
    assert session.index.ids == ["a", "b"]
    assert path_ids(session) == ["a", "b"]
    assert [m["role"] for m in session.context().messages] == ["user", "assistant"]


def test_invalid_utf8_inside_an_unknown_key_is_not_an_entry(write_file: Any, L: Any) -> None:
    """msgspec skips unknown keys without checking them; such a line must still be refused, or
    decoding it later (context, listing) would fail."""
    path = write_file(
        L.header(), b'{"type":"custom","id":"q","parentId":null,"x":"\xc3\x28"}\n', L.user("a", None, "ok")
    )
    session = read_everything(path)
    assert session.index.skipped() == [(2, "skipped: not valid UTF-8")]
    assert "q" not in session.index.by_id


def test_crlf_line_endings(write_file: Any, L: Any) -> None:
    lines = [L.header(), L.user("a", None, "hello"), L.assistant("b", "a", "hi there")]
    path = write_file(b"".join(L.dump(line).replace(b"\n", b"\r\n") for line in lines))
    session = read_everything(path)
    assert session.index.skipped() == []
    assert path_ids(session) == ["a", "b"]
    assert session.context().messages[0]["content"] == "hello"
    added = session.append(E.user_message("appended"))
    assert path.read_bytes().endswith(b"\r\n" + E.dump_line(added))
    assert path_ids(SessionFile(path)) == ["a", "b", added["id"]]


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\u0085"])
def test_unicode_line_separators_do_not_split_a_line(write_file: Any, L: Any, separator: str) -> None:
    """Python's str.splitlines() splits at these; JSON allows them raw inside strings (pi writes them raw)."""
    text = f"before{separator}after"
    raw = (
        b'{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z",'
        b'"message":{"role":"user","content":"' + text.encode("utf-8") + b'"}}\n'
    )
    assert len(raw.decode().splitlines()) == 2
    path = write_file(L.header(), raw, L.assistant("b", "a", f"reply{separator}"))
    session = read_everything(path)
    assert session.index.skipped() == []
    assert path_ids(session) == ["a", "b"]
    assert session.context().messages[0]["content"] == text


def test_a_one_megabyte_line(write_file: Any, L: Any) -> None:
    big = "x" * (1 << 20) + " end \u2028 é"
    path = write_file(L.header(), L.user("a", None, big), L.assistant("b", "a", "ok"))
    session = read_everything(path)
    assert session.index.skipped() == []
    assert session.entry("a")["message"]["content"] == big
    assert session.context().messages[0]["content"] == big


def test_a_line_longer_than_the_read_chunk(write_file: Any, L: Any) -> None:
    """Reads go in 4 MiB chunks; a line across several chunks is still one line."""
    big = "y" * (9 << 20)
    path = write_file(L.header(), L.user("a", None, "small"), L.user("b", "a", big), L.user("c", "b", "after"))
    session = SessionFile(path, fsync=False)
    assert session.index.skipped() == []
    assert path_ids(session) == ["a", "b", "c"]
    assert session.entry("b")["message"]["content"] == big


# ---------------------------------------------------------------------------------------------- links


def test_cycle_is_cut_reported_and_walks_end(write_file: Any, L: Any) -> None:
    path = write_file(L.header(), L.entry("a", "b"), L.entry("b", "a"), L.entry("c", "b"))
    session = read_everything(path)
    assert session.index.skipped() == [(2, "parent b closes a cycle: shown as a root")]
    assert shape(session) == [("a", [("b", ["c"])])]
    assert path_ids(session) == ["a", "b", "c"]
    assert path_ids(session, "a") == ["a"]


def test_three_entry_cycle(write_file: Any, L: Any) -> None:
    path = write_file(L.header(), L.entry("a", "c"), L.entry("b", "a"), L.entry("c", "b"))
    session = read_everything(path)
    assert [reason for _, reason in session.index.skipped()] == ["parent c closes a cycle: shown as a root"]
    assert [session.index.ids[r] for r in session.index.roots] == ["a"]
    assert path_ids(session) == ["a", "b", "c"]


def test_cycle_closed_by_a_later_append_is_cut(write_file: Any, L: Any) -> None:
    path = write_file(L.header(), L.entry("a", "b"))
    session = SessionFile(path, fsync=False)
    assert session.index.skipped() == [(2, "parent b not found: shown as a root")]
    with open(path, "ab") as handle:
        handle.write(L.dump(L.entry("b", "a")))
    assert session.refresh() == [1]
    assert path_ids(session) == ["a", "b"]  # b hangs under a; a stays a root: no loop
    assert [session.index.ids[r] for r in session.index.roots] == ["a"]


def test_self_parent_is_a_reported_root(write_file: Any, L: Any) -> None:
    path = write_file(L.header(), L.entry("a", "a"), L.entry("b", "a"))
    session = read_everything(path)
    assert session.index.skipped() == [(2, "entry is its own parent: shown as a root")]
    assert shape(session) == [("a", ["b"])]
    assert path_ids(session) == ["a", "b"]


def test_orphan_becomes_a_reported_root(write_file: Any, L: Any) -> None:
    path = write_file(
        L.header(), L.user("a", None, "root"), L.user("b", "missing", "orphan"), L.user("c", "b", "below")
    )
    session = read_everything(path)
    assert session.index.skipped() == [(3, "parent missing not found: shown as a root")]
    assert shape(session) == ["a", ("b", ["c"])]
    assert path_ids(session) == ["b", "c"]  # the walk stops at the missing parent
    assert [m["content"] for m in session.context().messages] == ["orphan", "below"]


def test_parent_later_in_the_file_is_found(write_file: Any, L: Any) -> None:
    """pi indexes every id before linking: a parent written after its child is still its parent."""
    path = write_file(L.header(), L.entry("child", "parent"), L.entry("parent", None))
    session = read_everything(path)
    assert session.index.skipped() == []
    assert shape(session) == [("parent", ["child"])]


@pytest.mark.parametrize(
    ("parent", "shown"),
    [(5, "5"), (True, "true"), (["a"], '["a"]'), ({"id": "a"}, '{"id":"a"}'), ("x" * 60, None)],
)
def test_parent_id_that_is_no_string_is_a_reported_root(write_file: Any, L: Any, parent: Any, shown: Any) -> None:
    """pi links by id strings, so a number (or any other JSON value) names no entry: a root, reported."""
    path = write_file(L.header(), L.user("a", None, "root"), L.user("b", parent, "odd parent"), L.user("c", "b", "c"))
    session = read_everything(path)
    assert shape(session) == ["a", ("b", ["c"])]
    assert path_ids(session) == ["b", "c"]
    if shown is None:  # a string that names nothing: the usual report
        assert session.index.skipped() == [(3, f"parent {'x' * 60} not found: shown as a root")]
    else:
        assert session.index.skipped() == [(3, f"parentId {shown} is not a string: shown as a root")]


def test_long_odd_parent_id_is_cut_short_in_the_report(write_file: Any, L: Any) -> None:
    path = write_file(L.header(), L.user("b", list(range(100)), "odd parent"))
    session = read_everything(path)
    ((line, reason),) = session.index.skipped()
    assert line == 2 and reason.startswith("parentId [0,1,2,") and reason.endswith("… is not a string: shown as a root")
    assert len(reason) < 100


def test_missing_parent_key_means_root(write_file: Any, L: Any) -> None:
    path = write_file(L.header(), {"type": "custom", "customType": "x", "id": "a", "timestamp": L.T0})
    session = read_everything(path)
    assert session.index.skipped() == []
    assert shape(session) == ["a"]


def test_duplicate_id_last_wins_and_is_reported(write_file: Any, L: Any) -> None:
    path = write_file(
        L.header(),
        L.user("a", None, "first a"),
        L.user("b", "a", "b"),
        L.user("a", None, "second a"),
        L.user("c", "a", "c"),
    )
    session = read_everything(path)
    assert session.index.skipped() == [(2, "duplicate id a: superseded by line 4")]
    assert session.entry("a")["message"]["content"] == "second a"
    assert session.index.node_count == 3
    assert path_ids(session) == ["a", "c"]
    assert shape(session) == [("a", ["b", "c"])]  # b's parent id now names the second "a"


def test_superseded_duplicate_message_is_not_counted(write_file: Any, L: Any) -> None:
    """message_count counts the messages of the session: a line superseded by a later one with its id
    is no message of it any more (pi's listing counts every message line; see docs/format.md §10 and §11.2)."""
    path = write_file(
        L.header(),
        L.user("a", None, "first"),
        L.assistant("b", "a", "one"),
        L.assistant("b", "a", "two"),
        L.entry("c", "b", "custom"),
        L.entry("c", "b", "custom"),  # a superseded custom entry changes no count
    )
    session = read_everything(path)
    assert session.index.message_count == 2
    assert session.index.node_count == 3
    with open(path, "ab") as handle:  # a duplicate arriving later: the reload counts the same way
        handle.write(L.dump(L.user("a", None, "again")))
    session.refresh()
    assert session.index.message_count == 2
    assert session.index.skipped() == [
        (2, "duplicate id a: superseded by line 7"),
        (3, "duplicate id b: superseded by line 4"),
        (5, "duplicate id c: superseded by line 6"),
    ]


def test_duplicate_id_arriving_on_refresh_reloads(write_file: Any, L: Any) -> None:
    path = write_file(L.header(), L.user("a", None, "first a"), L.user("b", "a", "b"))
    session = SessionFile(path, fsync=False)
    with open(path, "ab") as handle:
        handle.write(L.dump(L.user("a", None, "second a")))
    assert session.refresh() == [0, 1, 2]  # earlier parent links change meaning: the whole file again
    assert session.entry("a")["message"]["content"] == "second a"
    assert session.index.skipped() == [(2, "duplicate id a: superseded by line 4")]


def test_unknown_entry_type_is_kept_in_the_tree_without_context(write_file: Any, L: Any) -> None:
    odd = L.entry("u", "a", "future_type", payload={"nested": [1, 2.5, None]}, extra="kept")
    path = write_file(L.header(), L.user("a", None, "hi"), odd, L.user("b", "u", "after"))
    session = read_everything(path)
    assert session.index.skipped() == []
    assert shape(session) == [("a", [("u", ["b"])])]
    assert path_ids(session) == ["a", "u", "b"]
    assert session.context().entry_ids == ["a", "u", "b"]
    assert [m["content"] for m in session.context().messages] == ["hi", "after"]
    assert session.context("u").messages == session.context("a").messages
    assert session.entry("u") == odd
    assert session.raw_line(session.row_of("u")) == L.dump(odd).rstrip(b"\n")


def test_version_above_3_is_read_as_v3(write_file: Any, L: Any) -> None:
    path = write_file(L.header(version=5), L.user("a", None, "hi"))
    session = read_everything(path)
    assert session.index.version == 5 and not session.index.read_only
    assert path_ids(session) == ["a"]


MISSING = object()
VERSIONS_READ = [
    # As pi's migration compares ``version ?? 1`` (docs/format.md §2.2): JS reads the value as a number.
    *[(value, 3) for value in ("3", 3.0, "3.0", " 3\n", "0x3", "0b11", "3e0", [3], ["3"], [[3]], 3.5, "Infinity")],
    *[(value, 3) for value in ("abc", {}, [1, 2], "3 3", 1e300)],  # no number, or beyond 2**53: 3
    ("4", 4),
    (4.0, 4),
    *[(value, 2) for value in ("2", 2.0, 2.5, "2.9", " 2 ", "0x2", [2], ["2"])],
    *[(value, 1) for value in (MISSING, None, 1, 1.0, 0, -1, 1.5, "1", "", " ", "-Infinity", True, False, [], [None])],
]


@pytest.mark.parametrize(("value", "version"), VERSIONS_READ)
def test_a_header_version_is_read_as_javascript_compares_it(write_file: Any, L: Any, value: Any, version: int) -> None:
    """``"3"`` and ``3.0`` are version 3, ``"2"`` is 2 and ``0`` or ``true`` is 1, as in pi; the header is
    kept as written, except that an older version reads as ``3`` in its place (pi's migration)."""
    head = L.header(version=None if value is MISSING else value)
    if value is None:
        head = {"type": "session", "version": None, **head}
    hook = {"role": "hookMessage", "customType": "ext", "content": "from a hook", "display": True, "timestamp": 1}
    path = write_file(head, L.entry("h", None, "message", message=hook), L.user("u", "h", "hi"))
    session = read_everything(path)
    index = session.index
    assert index.version == version
    assert index.read_only == (version < 3)
    assert read_info(path).version == version
    assert (index.ids[0] == "h") == (version > 1)  # a version 1 file's lines get pitree's ids
    assert session.entry(index.ids[0])["message"]["role"] == ("hookMessage" if version >= 3 else "custom")
    expected = head if version >= 3 else {**head, "version": 3}
    assert list(session.header.items()) == list(expected.items())


def test_v2_file_renames_hook_messages_and_is_read_only(write_file: Any, L: Any) -> None:
    hook = {"role": "hookMessage", "customType": "ext", "content": "from a hook", "display": True, "timestamp": 1}
    path = write_file(L.header(version=2), L.user("a", None, "hi"), L.entry("h", "a", "message", message=hook))
    session = read_everything(path)
    assert session.index.version == 2 and session.index.read_only
    assert path_ids(session) == ["a", "h"]  # v2 ids are kept
    # pi's migration sets the version where it was (JS's assignment keeps a key in its place).
    assert list(session.header.items())[:3] == [("type", "session"), ("version", 3), ("id", "sess-1")]
    assert [m["role"] for m in session.context().messages] == ["user", "custom"]
    assert session.entry("h")["message"] == {**hook, "role": "custom"}
    assert b"hookMessage" in path.read_bytes()


# ---------------------------------------------------------------------------------------------- leaf entries


def marker(entry_id: str, parent: str | None, target: Any, L: Any) -> dict[str, Any]:
    return L.entry(entry_id, parent, "leaf", targetId=target)


def test_leaf_after_load_follows_leaf_markers(write_file: Any, L: Any) -> None:
    path = write_file(
        L.header(),
        L.user("a", None, "one"),
        L.user("b", "a", "two"),
        marker("m1", "b", "a", L),
        L.user("c", "a", "two again"),
        marker("m2", "c", "b", L),
    )
    session = read_everything(path)
    assert session.index.skipped() == []
    assert session.leaf_id == "b"
    assert path_ids(session) == ["a", "b"]
    # Markers are positions, not content: not nodes, not on paths, not in the tree, not in the context.
    assert session.index.row("m1") is None and session.index.row("m2") is None
    assert shape(session) == [("a", ["b", "c"])]
    assert session.index.node_count == 3 and len(session.index) == 5
    assert json.loads(session.raw_line(session.index.by_id["m2"]))["targetId"] == "b"


def test_leaf_marker_may_point_at_metadata(write_file: Any, L: Any) -> None:
    path = write_file(
        L.header(),
        L.user("a", None, "one"),
        L.entry("l", "a", "label", targetId="a", label="x"),
        L.user("b", "l", "two"),
        marker("m", "b", "l", L),
    )
    session = read_everything(path)
    assert session.leaf_id == "l" and path_ids(session) == ["a", "l"]


@pytest.mark.parametrize(
    ("target", "reason"),
    [
        ("nowhere", "leaf entry targets 'nowhere', not an earlier entry: ignored"),
        ("later", "leaf entry targets 'later', not an earlier entry: ignored"),
        ("m0", "leaf entry targets 'm0', not an earlier entry: ignored"),
        (7, "leaf entry targets 7, not an earlier entry: ignored"),
    ],
)
def test_bad_leaf_marker_is_reported_and_ignored(write_file: Any, L: Any, target: Any, reason: str) -> None:
    path = write_file(
        L.header(),
        L.user("a", None, "one"),
        L.user("b", "a", "two"),
        marker("m0", "b", "a", L),  # valid: the leaf is a
        marker("m1", "a", target, L),  # line 5
        L.user("later", "a", "written after the marker"),
        marker("m2", "later", "a", L),
    )
    session = read_everything(path)
    assert session.index.skipped() == [(5, reason)]
    assert session.leaf_id == "a"


def test_leaf_marker_without_target_key_is_reported(write_file: Any, L: Any) -> None:
    path = write_file(L.header(), L.user("a", None, "one"), L.entry("m", "a", "leaf"))
    session = read_everything(path)
    assert session.index.skipped() == [(3, "leaf entry without 'targetId': ignored")]
    assert session.leaf_id == "a"


def test_leaf_marker_with_null_target_means_before_the_first_entry(write_file: Any, L: Any) -> None:
    path = write_file(L.header(), L.user("a", None, "one"), L.assistant("b", "a", "two"), marker("m", "b", None, L))
    session = read_everything(path)
    assert session.index.skipped() == []
    assert session.leaf_id is None
    assert session.path_rows() == []
    context = session.context()
    assert (context.messages, context.entry_ids, context.model) == ([], [], None)
    added = session.append(E.user_message("new root"))
    assert added["parentId"] is None
    assert [session.index.ids[r] for r in session.index.roots] == ["a", added["id"]]


def test_child_of_a_leaf_marker_is_a_reported_root(write_file: Any, L: Any) -> None:
    path = write_file(
        L.header(), L.user("a", None, "one"), marker("m", "a", "a", L), L.user("c", "m", "under a marker")
    )
    session = read_everything(path)
    assert session.index.skipped() == [(4, "parent m is a leaf marker: shown as a root")]
    assert shape(session) == ["a", "c"]
    assert path_ids(session) == ["c"]


# ---------------------------------------------------------------------------------------------- derived state


def test_labels_and_name_replay_in_file_order_across_branches(write_file: Any, L: Any) -> None:
    path = write_file(
        L.header(),
        L.user("a", None, "one"),
        L.user("b", "a", "branch 1"),
        L.user("c", "a", "branch 2"),
        L.entry("l1", "b", "label", ts="2026-01-01T00:00:05.000Z", targetId="a", label="on branch 1"),
        L.entry("l2", "c", "label", ts="2026-01-01T00:00:06.000Z", targetId="c", label="c-label"),
        L.entry("l3", "c", "label", ts="2026-01-01T00:00:07.000Z", targetId="c", label=""),  # "" clears too
        L.entry("l4", "c", "label", ts="2026-01-01T00:00:08.000Z", targetId="b", label="b-label"),
        L.entry("l5", "c", "label", ts="2026-01-01T00:00:09.000Z", targetId="b"),  # no key: clears
        L.entry("n1", "b", "session_info", name="  Branch one name  "),
        L.entry("n2", "c", "session_info", name="Last name wins"),
    )
    session = read_everything(path)
    assert session.index.labels == {"a": ("on branch 1", "2026-01-01T00:00:05.000Z")}
    assert session.index.name == "Last name wins"
    assert session.leaf_id == "n2"
    # Labels are metadata: never in the context.
    assert [m["content"] for m in session.context().messages] == ["one", "branch 2"]


def test_message_count_and_activity(write_file: Any, L: Any) -> None:
    path = write_file(
        L.header(),
        L.user("a", None, "one"),
        L.assistant("b", "a", "two"),
        L.entry("t", "b", "message", message={"role": "toolResult", "content": [], "timestamp": 1999999999999}),
        L.entry("x", "b", "custom"),
    )
    session = read_everything(path)
    assert session.index.message_count == 3  # every message entry, any role
    assert session.index.last_activity_ms == 1767225602000  # only user/assistant count as activity
