"""The store: appends (docs/format.md §5, §9), refusals that write nothing, the per-process cache and
incremental refresh."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Generator, Iterable
from pathlib import Path
from typing import Any

import orjson
import pytest

from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles import index as index_module
from sessions_app.sessionfiles.errors import EntryNotFound, FileChanged, SessionError
from sessions_app.sessionfiles.store import AT_LEAF, SessionFile

REPO = Path(__file__).resolve().parents[2]


def path_ids(session: SessionFile) -> list[str]:
    return [session.index.ids[row] for row in session.path_rows()]


@pytest.fixture
def chat(new_session: Any) -> tuple[SessionFile, dict[str, str]]:
    """u1 → a1 → u2 → a2, written by pitree."""
    session = new_session()
    ids = {}
    for key, draft in (
        ("u1", E.user_message("one")),
        ("a1", E.assistant_message("reply one", provider="p", model="m", api="x")),
        ("u2", E.user_message("two")),
        ("a2", E.assistant_message("reply two", provider="p", model="m", api="x")),
    ):
        ids[key] = session.append(draft)["id"]
    return session, ids


def test_append_writes_one_whole_line_and_returns_it(new_session: Any) -> None:
    session = new_session()
    before = session.path.read_bytes()
    written = session.append(E.user_message("hello"))
    assert session.path.read_bytes() == before + E.dump_line(written)
    assert list(written) == ["type", "id", "parentId", "timestamp", "message"]
    assert written["parentId"] is None
    assert session.leaf_id == written["id"]
    assert session.entry(written["id"]) == written


def test_append_at_leaf_and_with_explicit_parents(chat: Any) -> None:
    session, ids = chat
    assert path_ids(session) == [ids["u1"], ids["a1"], ids["u2"], ids["a2"]]
    sibling = session.append(E.user_message("two, differently"), parent=ids["a1"])
    assert sibling["parentId"] == ids["a1"]
    assert session.leaf_id == sibling["id"]  # the new entry becomes the leaf
    root = session.append(E.user_message("a second root"), parent=None)
    assert root["parentId"] is None
    assert len(session.index.roots) == 2
    child = session.append(E.user_message("at the leaf"), parent=AT_LEAF)
    assert child["parentId"] == root["id"]


def test_navigate_moves_the_leaf_with_a_marker(chat: Any) -> None:
    session, ids = chat
    marker = session.navigate(ids["a1"])
    assert marker is not None
    assert {k: marker[k] for k in ("type", "parentId", "targetId")} == {
        "type": "leaf",
        "parentId": ids["a2"],
        "targetId": ids["a1"],
    }
    assert session.leaf_id == ids["a1"]
    reopened = SessionFile(session.path)
    assert reopened.leaf_id == ids["a1"] and path_ids(reopened) == [ids["u1"], ids["a1"]]
    nxt = session.append(E.user_message("from a1"))
    assert nxt["parentId"] == ids["a1"]  # the marker is not a parent


def test_a_reply_appended_after_the_reader_moved_on_leaves_the_position_where_it_is(chat: Any) -> None:
    """A reply to u1 ends after the reader moved from u1 to a2 (they went on, or switched branches): the
    reply hangs under u1, and a marker in the same write keeps the position on a2, where a reload opens."""
    session, ids = chat
    size = session.path.stat().st_size
    late = E.assistant_message("late", provider="p", model="m", api="x")
    reply = session.append(late, ids["u1"], position_then=ids["u1"])
    assert reply["parentId"] == ids["u1"] and session.leaf_id == ids["a2"]
    written = [orjson.loads(line) for line in session.path.read_bytes()[size:].splitlines()]
    assert [line["type"] for line in written] == ["message", "leaf"]
    assert (written[1]["parentId"], written[1]["targetId"]) == (reply["id"], ids["a2"])
    assert SessionFile(session.path).leaf_id == ids["a2"]
    # A position that did not move goes to the reply, as with any append: an answer regenerated from
    # a2's position (a sibling of an answer, under its question), or one at the position itself.
    for parent in (ids["u1"], ids["a2"]):
        size = session.path.stat().st_size
        then = session.file_position
        on = session.append(E.assistant_message("on", provider="p", model="m", api="x"), parent, position_then=then)
        assert session.leaf_id == on["id"] and len(session.path.read_bytes()[size:].splitlines()) == 1


def test_entries_chained_below_a_reply_go_in_its_write_and_the_position_goes_to_the_last(chat: Any) -> None:
    """A model and a thinking level picked while a reply to u2 was written go below it, in the write
    that stores it (docs/format.md §5.2); after them, the position moved meanwhile is kept by a marker."""
    session, ids = chat
    size = session.path.stat().st_size
    picked = [E.model_change("p", "other"), E.thinking_level_change("high")]
    reply = session.append(E.assistant_message("r", provider="p", model="m", api="x"), ids["u2"], then=picked)
    written = [orjson.loads(line) for line in session.path.read_bytes()[size:].splitlines()]
    assert [line["type"] for line in written] == ["message", "model_change", "thinking_level_change"]
    assert written[0] == reply and written[1]["parentId"] == reply["id"] == session.index.ids[-3]
    assert written[2]["parentId"] == written[1]["id"] and session.leaf_id == written[2]["id"]
    assert len({line["id"] for line in written} | set(ids.values())) == 3 + len(ids)
    position = written[2]["id"]
    # The position moved while the reply was written: the marker after the chain keeps it there.
    size = session.path.stat().st_size
    late = session.append(
        E.assistant_message("late", provider="p", model="m", api="x"),
        ids["u1"],
        position_then=ids["u1"],
        then=[E.thinking_level_change("low")],
    )
    written = [orjson.loads(line) for line in session.path.read_bytes()[size:].splitlines()]
    assert [line["type"] for line in written] == ["message", "thinking_level_change", "leaf"]
    assert written[1]["parentId"] == late["id"] and written[2]["parentId"] == written[1]["id"]
    assert written[2]["targetId"] == position == session.leaf_id


def test_an_append_after_a_cursor_goes_where_that_page_stands_now(chat: Any) -> None:
    """A tab at u2 whose page reflected the file before a2 was appended: a label it sets goes below a2,
    the answer it was about to be shown, not beside it; a tab whose page showed a2 writes there as it
    named. Entries elsewhere (another branch, a marker) do not move it."""
    session, ids = chat
    row = session.index.row(ids["a2"])
    before_a2 = session.index.offsets[row]
    label = session.set_label(ids["u1"], "first", ids["u2"], after=before_a2)
    assert label["parentId"] == ids["a2"]
    cursor = session.path.stat().st_size
    session.append(E.user_message("elsewhere"), ids["a1"])
    session.navigate(ids["u1"])
    name = session.rename("named", label["id"], after=cursor)
    assert name["parentId"] == label["id"]
    model = session.append(E.model_change("p", "other"), ids["u2"], after=before_a2)
    assert model["parentId"] == name["id"]  # a2, the label, the name: each continued where it stood


def test_navigate_to_the_current_leaf_writes_nothing(chat: Any) -> None:
    session, ids = chat
    before = session.path.read_bytes()
    assert session.navigate(ids["a2"]) is None
    assert session.path.read_bytes() == before
    assert session.navigate(None) is not None
    before = session.path.read_bytes()
    assert session.navigate(None) is None
    assert session.path.read_bytes() == before


def test_navigate_to_none_then_append_starts_a_new_root(chat: Any) -> None:
    session, _ = chat
    session.navigate(None)
    assert session.leaf_id is None and session.context().messages == []
    root = session.append(E.user_message("fresh"))
    assert root["parentId"] is None
    assert path_ids(SessionFile(session.path)) == [root["id"]]


@pytest.mark.parametrize(
    "action",
    [
        lambda s, ids: s.append(E.user_message("x"), parent="nope"),
        lambda s, ids: s.set_label("nope", "label"),
        lambda s, ids: s.set_label("nope", None),
        lambda s, ids: s.navigate("nope"),
        lambda s, ids: s.branch_summary("nope", "summary"),
        lambda s, ids: s.rename("name", parent="nope"),
        lambda s, ids: s.compact("summary", ids["u1"], 10, parent="nope"),
    ],
    ids=["append", "label", "clear-label", "navigate", "branch_summary", "rename", "compact"],
)
def test_unknown_entry_is_refused_and_nothing_is_written(chat: Any, action: Any) -> None:
    session, ids = chat
    before = session.path.read_bytes()
    leaf = session.leaf_id
    with pytest.raises(EntryNotFound, match="Entry nope not found") as error:
        action(session, ids)
    assert error.value.entry_id == "nope"
    assert session.path.read_bytes() == before
    assert session.leaf_id == leaf


def test_a_leaf_marker_is_not_an_entry_to_act_on(chat: Any) -> None:
    session, ids = chat
    marker = session.navigate(ids["u1"])
    assert marker is not None
    before = session.path.read_bytes()
    with pytest.raises(EntryNotFound):
        session.append(E.user_message("x"), parent=marker["id"])
    with pytest.raises(EntryNotFound):
        session.set_label(marker["id"], "x")
    assert session.path.read_bytes() == before


def test_compaction_must_keep_an_entry_of_its_branch(chat: Any) -> None:
    session, ids = chat
    other = session.append(E.user_message("other branch"), parent=ids["u1"])
    before = session.path.read_bytes()
    with pytest.raises(SessionError, match="not on the branch"):
        session.compact("summary", ids["u2"], 100)  # u2 is on the other branch
    assert session.path.read_bytes() == before
    written = session.compact("summary", ids["u1"], 100, parent=other["id"])
    assert written["firstKeptEntryId"] == ids["u1"]
    assert list(written) == [
        "type",
        "id",
        "parentId",
        "timestamp",
        "summary",
        "firstKeptEntryId",
        "tokensBefore",
        "fromHook",
    ]


def test_branch_summary_records_the_branch_left(chat: Any) -> None:
    session, ids = chat
    written = session.branch_summary(ids["a1"], "tried two")
    assert (written["parentId"], written["fromId"]) == (ids["a1"], ids["a2"])
    assert session.leaf_id == written["id"]
    session.navigate(None)
    at_root = session.branch_summary(None, "all of it")
    assert (at_root["parentId"], at_root["fromId"]) == (None, "root")
    assert [m["role"] for m in session.context().messages] == ["branchSummary"]


def test_labels_set_and_clear(chat: Any) -> None:
    session, ids = chat
    written = session.set_label(ids["u1"], "start")
    assert (written["targetId"], written["label"], written["parentId"]) == (ids["u1"], "start", ids["a2"])
    assert session.leaf_id == written["id"]  # a label is a tree node and the new leaf, as in pi
    cleared = session.set_label(ids["u1"], None)
    assert "label" not in cleared
    cleared_empty = session.set_label(ids["u1"], "")
    assert "label" not in cleared_empty
    assert session.index.labels == {}
    session.set_label(ids["a1"], "kept")
    assert {t: text for t, (text, _) in SessionFile(session.path).index.labels.items()} == {ids["a1"]: "kept"}


def test_rename_cleans_line_breaks_like_pi(chat: Any) -> None:
    session, _ = chat
    written = session.rename("  Todo API endpoints\n review ")
    assert written["name"] == "Todo API endpoints  review"
    assert session.index.name == "Todo API endpoints  review"
    assert session.rename("a\r\n\r\nb\rc\n")["name"] == "a b c"
    assert SessionFile(session.path).index.name == "a b c"
    session.rename("   ")
    assert session.index.name is None  # an empty name clears it


def test_open_is_cached_and_reopen_reads_only_new_lines(chat: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    session, _ = chat
    opened = SessionFile.open(session.path)
    assert SessionFile.open(str(session.path)) is opened
    rows_before = len(opened.index)

    other = SessionFile(session.path, fsync=False)  # another writer
    appended = [other.append(E.user_message("from elsewhere")), other.append(E.user_message("and again"))]

    parsed: list[bytes] = []

    def counting(decode: Any) -> Any:
        def decode_counted(line: Any) -> Any:
            parsed.append(bytes(line))
            return decode(line)

        return decode_counted

    # Every line after the header goes through one of the head decoders, in bulk or alone.
    for name in ("decode_head", "decode_known_head"):
        monkeypatch.setattr(index_module, name, counting(getattr(index_module, name)))
    again = SessionFile.open(session.path)
    assert again is opened
    assert len(parsed) == 2  # only the two appended lines were parsed
    assert [json.loads(line)["id"] for line in parsed] == [entry["id"] for entry in appended]
    assert len(again.index) == rows_before + 2
    assert again.leaf_id == other.leaf_id


@pytest.mark.processes
def test_refresh_after_another_process_appended(chat: Any, workers: Any) -> None:
    session, ids = chat
    count = len(session.index)
    assert session.refresh() == []  # nothing new
    result = subprocess.run(
        [sys.executable, workers.__file__, "append", str(session.path), "first from afar", "second from afar"],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    appended = result.stdout.split()
    assert session.refresh() == [count, count + 1]
    assert [session.index.ids[r] for r in (count, count + 1)] == appended
    assert session.leaf_id == appended[-1]
    assert path_ids(session)[-3:] == [ids["a2"], *appended]
    assert session.refresh() == []


def test_file_rewritten_by_someone_else_is_reloaded_whole(chat: Any) -> None:
    session, ids = chat
    index_before = session.index
    data = session.path.read_bytes()
    # Someone edits an early line in place (the file is meant to only grow, but others may not care).
    session.path.write_bytes(data.replace(b'"content":"one"', b'"content":"one, edited"'))
    rows = session.refresh()
    assert rows == list(range(len(session.index)))
    assert session.index is not index_before
    assert session.context().messages[0]["content"] == "one, edited"
    assert path_ids(session) == [ids["u1"], ids["a1"], ids["u2"], ids["a2"]]


def test_truncated_file_is_reloaded_whole(chat: Any) -> None:
    session, ids = chat
    lines = session.path.read_bytes().split(b"\n")
    session.path.write_bytes(b"\n".join(lines[:3]) + b"\n")  # header, u1, a1
    assert session.refresh() == [0, 1]
    assert session.leaf_id == ids["a1"]


def test_replaced_file_is_reloaded_whole(chat: Any, tmp_path: Path, L: Any) -> None:
    session, _ = chat
    replacement = tmp_path / "replacement.jsonl"
    replacement.write_bytes(L.dump(L.header("other-session")) + L.dump(L.user("z", None, "new file")))
    os.replace(replacement, session.path)  # a new inode at the same path
    assert session.refresh() == [0]
    assert session.session_id == "other-session"
    assert session.leaf_id == "z"


def test_entries_decode_afresh_each_time(chat: Any) -> None:
    session, ids = chat
    first = session.entry(ids["u1"])
    first["message"]["content"] = "changed by a caller"
    assert session.entry(ids["u1"])["message"]["content"] == "one"


class _KeepsItsLines(SessionFile):
    """Keeps every iterator of lines it hands out, as a traceback holding a reader's frame would, or a
    Python that does not free objects as soon as they are dropped: whatever such an iterator still
    holds open stays open unless the reader closed it."""

    kept: list[Generator[bytes, None, None]]

    def raw_lines(self, rows: Iterable[int]) -> Generator[bytes, None, None]:
        lines = super().raw_lines(rows)
        self.kept.append(lines)
        return lines


def _open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_reading_lines_leaves_no_descriptor_open(chat: Any) -> None:
    session, ids = chat
    reader = _KeepsItsLines(session.path, fsync=False)
    reader.kept = []
    before = _open_descriptors()
    assert reader.raw_line(reader.row_of(ids["u1"])) == session.raw_line(session.row_of(ids["u1"]))
    assert _open_descriptors() == before
    rows = reader.path_rows()
    assert len(list(zip(rows, reader.raw_lines(rows)))) == len(rows)  # as the tree panel reads lines
    assert _open_descriptors() == before
    # u1's id rewritten in place: the first of the four lines no longer holds its entry.
    session.path.write_bytes(session.path.read_bytes().replace(ids["u1"].encode(), b"0" * 8, 1))
    with pytest.raises(FileChanged, match="rewritten in place"):
        reader.entries(rows)
    assert _open_descriptors() == before


def test_ids_are_fresh_8_hex_and_unique(new_session: Any) -> None:
    session = new_session()
    written = [session.append(E.user_message(str(i)))["id"] for i in range(300)]
    assert len(set(written)) == 300
    assert all(len(i) == 8 and int(i, 16) >= 0 and i == i.lower() for i in written)
