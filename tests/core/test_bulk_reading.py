"""The index reads most chunks in bulk and links most rows in bulk; whatever a file holds, the result
must be the one the careful, line-by-line reader gives (``IndexBuilder.bulk = False``).

Files here mix ordinary entries with every kind of odd line, and are read through the store's own
chunk reader with tiny chunks, so that bulk chunks, careful chunks and refreshes (appended pieces,
each followed by a commit) alternate in one file.
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.properties import examples

from sessions_app.sessionfiles import listing, store, tree
from sessions_app.sessionfiles.errors import SessionError
from sessions_app.sessionfiles.index import IndexBuilder, NeedsRebuild, SessionIndex
from sessions_app.sessionfiles.listing import read_info, session_info
from sessions_app.sessionfiles.store import SessionFile

HEADER = {"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}


class LineByLine(IndexBuilder):
    bulk = False


class Eager(IndexBuilder):
    """Every chunk in bulk that allows it, however short (the default leaves chunks of a few lines to
    the careful reader)."""

    bulk_from = 1


def dump(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


IDS = ["a", "b", "c", "d", "e", "f", "g", "é"]
# Line kinds (see ``lines``): 0 ordinary, 1–5 entries a bulk chunk reads too (odd parents, reused ids,
# leaf markers, labels, names), the others lines only the careful reader takes.
KINDS = st.sampled_from([0] * 12 + [1, 1, 2, 2, 3, 3, 3, 4, 4, 5] + list(range(6, 17)))
# Files a list reads without the index, and the few odd lines that only show when looked for (an id
# used twice, an over-long line, invalid UTF-8 in a part the head decoder skips).
LIST_KINDS = st.sampled_from([0] * 12 + [1, 3, 4, 4, 4, 5, 5, 2, 14, 16])
VERSIONS = [{"version": 2}, {"version": 1}, {"version": None}, {"version": "2"}, {"version": 3.0}, {"version": "x"}]
HEADERS = st.sampled_from([{}, {}, {}, *VERSIONS, {"pad": "h" * 300}])
ODD_TEXTS = [{"type": "text"}, {"type": "text", "text": 5}]
CONTENTS = st.sampled_from(
    ["hello", "  ", "", None, [{"type": "text", "text": "hi"}], [{"type": "image"}], 3, ODD_TEXTS]
)


@st.composite
def lines(draw: st.DrawFn, kinds: st.SearchStrategy[int] = KINDS) -> list[bytes]:
    """A session file as lines: mostly ordinary entries, each chained to the one before, with odd
    parents, duplicates, leaf markers, labels, names and broken lines mixed in."""
    count = draw(st.integers(0, 60))
    out = [dump({**HEADER, **draw(HEADERS)})] if draw(st.integers(0, 9)) else []
    made = 0
    for _ in range(count):
        made += 1
        kind = draw(kinds)
        fresh = f"r{made}"
        last = f"r{made - 1}" if made > 1 else None
        stamp = f"2026-01-01T00:00:{made % 60:02d}.000Z"
        entry: dict[str, Any] = {"type": "message", "id": fresh, "parentId": last, "timestamp": stamp}
        entry["message"] = {"role": draw(st.sampled_from(["user", "assistant", "toolResult"])), "timestamp": made}
        entry["message"]["content"] = draw(CONTENTS)
        if kind == 1:
            entry["parentId"] = draw(st.sampled_from([None, *IDS, f"r{made + 1}", fresh, f"r{made // 2}"]))
        elif kind == 2:
            entry["id"] = draw(st.sampled_from([*IDS, f"r{made // 2}"]))
        elif kind == 3:
            entry = {"type": "leaf", "id": fresh, "parentId": last, "timestamp": stamp}
            target = draw(st.sampled_from(["none", "missing", "prev", "later", *IDS]))
            if target != "missing":
                entry["targetId"] = {"none": None, "prev": last, "later": f"r{made + 1}"}.get(target, target)
        elif kind == 4:
            entry = {"type": "label", "id": fresh, "parentId": last, "timestamp": stamp}
            entry["targetId"] = draw(st.sampled_from([last, "a", "b", 5]))
            entry["label"] = draw(st.sampled_from(["x", "", None, 3]))
        elif kind == 5:
            entry = {"type": "session_info", "id": fresh, "parentId": last, "timestamp": stamp}
            entry["name"] = draw(st.sampled_from([" n ", "", None, 7]))
        elif kind == 6:
            entry["timestamp"] = draw(st.sampled_from([None, 5, "yesterday", "2026-01-01T00:00:00+01:00", "jour é"]))
        elif kind == 7:
            del entry["timestamp"]
        elif kind == 8:
            entry["message"] = draw(st.sampled_from([None, "text", {"role": 5}, {"role": "user", "timestamp": 1.5}]))
        elif kind == 9:
            entry["message"] = {
                "role": "assistant",
                "timestamp": draw(st.sampled_from(["x", None, 10**17, -(10**17), True])),
            }
        elif kind == 10:
            entry["parentId"] = draw(st.sampled_from([5, True, ["a"], {"id": "a"}]))
        elif kind == 11:
            del entry["id"]
        elif kind == 12:
            entry["type"] = draw(st.sampled_from(["custom", "odd", "session", 4]))
        elif kind == 13:
            raw = draw(st.sampled_from([b"", b"  ", b"not json", b"[1,2]", b'"s"', b"{", b'{"id":"z"}', b"\xff\xfe"]))
            out.append(raw)
            continue
        elif kind == 14:
            entry["pad"] = "x" * 300  # longer than the limit these tests set
        elif kind == 15:
            entry["note"] = draw(st.sampled_from(["é", "😀", "\u2028"]))
        elif kind == 16:
            entry["note"] = "@"
            out.append(dump(entry).replace(b'"@"', b'"\xff\xfe"'))  # invalid UTF-8 where the head decoder skips
            continue
        out.append(dump(entry))
    return out


def state(index: SessionIndex, builder: IndexBuilder) -> dict[str, Any]:
    """Everything a reader can see, row by row."""
    rows = range(len(index))
    return {
        "rows": [
            (
                index.ids[row],
                index.types[row],
                index.roles[row],
                index.timestamps[row],
                index.parents[row],
                index.offsets[row],
                index.lengths[row],
                index.line_numbers[row],
                index.is_node(row),
                index.children(row),
                index.instant(row) if index.instant(row) == index.instant(row) else "nan",
                index.leaf_target_row(row),
            )
            for row in rows
        ],
        "by_id": {entry_id: index.by_id.get(entry_id) for entry_id in set(index.ids[: len(index)])},
        "roots": index.roots,
        "leaf": (index.leaf_id, index.leaf_row),
        "labels": index.labels,
        "name": index.name,
        "counts": (index.message_count, index.last_activity_ms, index.node_count, index.offset),
        "skipped": index.skipped(),
        "header": (index.header, index.version),
        "tree": tree.tree(index) if len(index) < 60 else None,
        "reading": (builder.offset, builder.line_count, builder.swallow_newline, builder.forward_parents),
    }


def read(kind: type[IndexBuilder], path: Path, pieces: list[int], limit: int) -> dict[str, Any] | str:
    """Read ``path`` as it grew: after each piece, what was appended since (a refresh), then a commit."""
    data = path.read_bytes()
    builder = kind(str(path), max_line_bytes=limit)
    seen: dict[str, Any] | str = "no header"
    with open(path, "rb") as handle:
        fd = handle.fileno()
        for number, stop in enumerate(pieces):
            try:
                store.feed_file(fd, builder, stop, at_eof=number == len(pieces) - 1 and stop == len(data))
                builder.commit()
            except NeedsRebuild:
                return "rebuild"
            except SessionError as error:  # refusals (no session) must match too
                return f"{type(error).__name__}: {error}"
            if builder.header is not None:
                seen = state(builder.snapshot(), builder)
    return seen


@settings(max_examples=examples(500), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    file_lines=lines(),
    chunk=st.integers(16, 3000),
    cuts=st.lists(st.floats(0, 1), max_size=4),
    torn=st.booleans(),
)
def test_bulk_reading_gives_the_careful_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, file_lines: list[bytes], chunk: int, cuts: list[float], torn: bool
) -> None:
    data = b"\n".join(file_lines) + (b"" if torn else b"\n")
    path = tmp_path / "s.jsonl"
    path.write_bytes(data)
    pieces = sorted({int(len(data) * cut) for cut in cuts} | {len(data)})
    monkeypatch.setattr(store, "_CHUNK", chunk)
    careful = read(LineByLine, path, pieces, 200)
    assert read(Eager, path, pieces, 200) == careful
    assert read(IndexBuilder, path, pieces, 200) == careful


def test_a_clean_file_is_read_and_linked_in_bulk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bulk paths do run on a file pi writes (branches, labels, a leaf marker, a name included),
    and give what the careful reader gives."""
    entries: list[dict[str, Any]] = []
    for number in range(300):
        parent = entries[-1]["id"] if entries else None
        if number % 50 == 49:
            parent = entries[-10]["id"]  # a branch
        entry: dict[str, Any] = {"type": "message", "id": f"e{number}", "parentId": parent}
        entry["timestamp"] = f"2026-01-01T00:{number // 60:02d}:{number % 60:02d}.000Z"
        entry["message"] = {"role": "user" if number % 2 else "assistant", "timestamp": 1_000 + number}
        if number == 120:
            entry = {**entry, "type": "label", "targetId": "e3", "label": "here"}
            del entry["message"]
        if number == 200:
            entry = {**entry, "type": "leaf", "targetId": "e150"}
            del entry["message"]
        if number == 201:
            entry["parentId"] = "e150"
        if number == 250:
            entry = {**entry, "type": "session_info", "name": "  named "}
            del entry["message"]
        entries.append(entry)
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(dump(line) + b"\n" for line in [HEADER, *entries]))
    monkeypatch.setattr(store, "_CHUNK", 4096)

    calls = {"bulk": 0, "read": 0, "linked": 0}
    read_bulk, link = IndexBuilder._read_bulk, IndexBuilder._link

    def counting_read(self: IndexBuilder, chunk: list[memoryview], offset: int) -> bool:
        calls["read"] += 1
        done = read_bulk(self, chunk, offset)
        calls["bulk"] += done
        return done

    def counting_link(self: IndexBuilder, rows: range, irregular: list[int]) -> None:
        calls["linked"] += 1
        link(self, rows, irregular)

    monkeypatch.setattr(IndexBuilder, "_read_bulk", counting_read)
    monkeypatch.setattr(IndexBuilder, "_link", counting_link)
    size = os.path.getsize(path)
    bulk = read(IndexBuilder, path, [size // 3, size], 1 << 20)
    assert calls["bulk"] == calls["read"] > 10
    assert calls["linked"] == 2
    assert bulk == read(LineByLine, path, [size // 3, size], 1 << 20)
    assert isinstance(bulk, dict)
    assert bulk["leaf"][0] == "e299" and bulk["name"] == "named" and bulk["labels"]["e3"][0] == "here"
    assert bulk["counts"][0] == 297  # messages: all rows but the label, the leaf marker and the name


@pytest.mark.parametrize("times", [[-(10**17)] * 3, [10**17, 5], [1.5, 7], ["x", None], [3, True], [8, 9]])
def test_activity_times_read_in_bulk_as_one_by_one(tmp_path: Path, times: list[Any]) -> None:
    """pi's ``modified``: the newest user/assistant message time; a time JS cannot date is ignored."""
    path = tmp_path / "s.jsonl"
    entries = [dump(HEADER)]
    for number, ms in enumerate(times):
        entry = {"type": "message", "id": f"m{number}", "parentId": f"m{number - 1}" if number else None}
        message = {"role": "user", "content": "hi", "timestamp": ms}  # pi dates a session by messages with content
        entry |= {"timestamp": "2026-01-01T00:00:07.000Z", "message": message}
        entries.append(dump(entry))
    path.write_bytes(b"\n".join(entries) + b"\n")
    bulk = read(Eager, path, [path.stat().st_size], 1 << 20)
    assert bulk == read(LineByLine, path, [path.stat().st_size], 1 << 20)
    assert isinstance(bulk, dict)
    expected = {-(10**17): None, 10**17: 5, 1.5: 7, "x": 1767225607000, 3: 1767225607000, 8: 9}[times[0]]
    assert bulk["counts"][1] == expected


def _outcome(read: Any) -> Any:
    try:
        return read()
    except Exception as error:  # a refusal must be the same refusal
        return f"{type(error).__name__}: {error}"


# ``read_info`` reads a small file whole and a longer one a chunk at a time: 0 makes every file longer.
READS = pytest.mark.parametrize("whole_read", [listing.WHOLE_READ, 0], ids=["read whole", "read in chunks"])


@READS
@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    file_lines=st.one_of(lines(), lines(kinds=LIST_KINDS)),
    torn=st.booleans(),
    limit=st.sampled_from([200, 1 << 20]),
    chunk=st.integers(64, 3000),
)
def test_a_list_reads_a_file_as_the_index_does(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    whole_read: int,
    file_lines: list[bytes],
    torn: bool,
    limit: int,
    chunk: int,
) -> None:
    """``read_info`` reads the few facts a list shows without an index, or falls back on the index:
    either way, what ``session_info`` of the opened file says."""
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n".join(file_lines) + (b"" if torn else b"\n"))
    monkeypatch.setattr(store, "_CHUNK", chunk)
    monkeypatch.setattr(listing, "WHOLE_READ", whole_read)
    fast = _outcome(lambda: read_info(path, max_line_bytes=limit))
    assert fast == _outcome(lambda: session_info(SessionFile(path, fsync=False, max_line_bytes=limit)))


@READS
def test_a_list_reads_a_clean_file_without_the_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, whole_read: int
) -> None:
    path = tmp_path / "s.jsonl"
    entries = [{**HEADER, "parentSession": "/elsewhere/p.jsonl"}]
    for number in range(40):
        entry = {"type": "message", "id": f"m{number}", "parentId": f"m{number - 1}" if number else None}
        role = "user" if number % 2 else "assistant"
        entry |= {"timestamp": "2026-01-01T00:00:07.000Z", "message": {"role": role, "timestamp": 100 + number}}
        entry["message"]["content"] = [{"type": "text", "text": "  "}] if number == 1 else f"said {number}"
        entries.append(entry)
    stamp = "2026-01-01T00:00:08.000Z"
    labels = [("m3", "look"), ("m5", "gone"), ("m5", None), ("m7", "seven"), ("m3", "look again"), ("m9", "")]
    for number, (target, text) in enumerate(labels):
        label = {"type": "label", "id": f"l{number}", "parentId": entries[-1]["id"], "timestamp": stamp}
        entries.append(label | {"targetId": target, "label": text})
    entries.append({"type": "session_info", "id": "n1", "parentId": "l5", "timestamp": stamp, "name": " The name "})
    path.write_bytes(b"".join(dump(entry) + b"\n" for entry in entries))
    monkeypatch.setattr(store, "_CHUNK", 1024)
    monkeypatch.setattr(listing, "WHOLE_READ", whole_read)

    def no_index(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the index was built")

    monkeypatch.setattr(listing, "SessionFile", no_index)
    info = read_info(path)
    monkeypatch.undo()
    assert info == session_info(SessionFile(path))
    assert (info.message_count, info.first_message, info.name) == (40, "said 3", "The name")
    assert info.labels == ("look again", "seven")
    assert (info.modified_ms, info.parent_session_path, info.version) == (139, "/elsewhere/p.jsonl", 3)


def _clean(count: int, **header: Any) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = [{**HEADER, **header}]
    for number in range(count):
        entry = {"type": "message", "id": f"m{number}", "parentId": f"m{number - 1}" if number else None}
        entry |= {"timestamp": "2026-01-01T00:00:07.000Z", "message": {"role": "user", "content": f"said {number}"}}
        entries.append(entry)
    return entries


ODD_BUT_QUIET = {
    "an id used twice": (_clean(5), lambda lines: [*lines, lines[3]]),
    "a header longer than the limit": (_clean(3, pad="h" * 300), None),
    "a line longer than the limit": (
        _clean(3),
        lambda lines: [*lines[:2], lines[2][:-1] + b',"pad":"' + b"p" * 300 + b'"}'],
    ),
    "invalid UTF-8 the head skips": (_clean(3), lambda lines: [*lines, lines[-1].replace(b'"said 2"', b'"\xff"')]),
    "a version 1 header": (_clean(3, version=1), None),
    "a version 2 header": (_clean(3, version=2), None),
    "a blank line": (_clean(3), lambda lines: [*lines[:2], b"", *lines[2:]]),
    "a line before the header": (_clean(3), lambda lines: [b"{", *lines]),
    "no final newline": (_clean(3), "torn"),
    "nothing but a header, no final newline": (_clean(0), "torn"),
}


@READS
@pytest.mark.parametrize("case", list(ODD_BUT_QUIET))
def test_a_list_leaves_odd_files_to_the_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str, whole_read: int
) -> None:
    monkeypatch.setattr(listing, "WHOLE_READ", whole_read)
    entries, change = ODD_BUT_QUIET[case]
    raw = [dump(entry) for entry in entries]
    if callable(change):
        raw = change(raw)
    data = b"\n".join(raw) + (b"" if change == "torn" else b"\n")
    path = tmp_path / "s.jsonl"
    path.write_bytes(data)
    fast = _outcome(lambda: read_info(path, max_line_bytes=200))
    assert fast == _outcome(lambda: session_info(SessionFile(path, fsync=False, max_line_bytes=200)))


def _sized(size: int) -> bytes:
    """A clean file of exactly ``size`` bytes, some of them not ASCII: its last message is padded."""
    lines = [dump(entry) for entry in _clean(4)]
    lines[2] = lines[2].replace(b'"said 1"', dump("said é 1"))
    pad = size - sum(len(line) + 1 for line in lines)
    lines[-1] = lines[-1].replace(b'"said 3"', dump("said 3" + "x" * pad))
    return b"".join(line + b"\n" for line in lines)


def test_a_file_at_the_whole_read_bound_is_read_whole_and_lists_as_one_read_in_chunks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads: list[int] = []
    real_pread = os.pread

    def counting(fd: int, size: int, offset: int) -> bytes:
        reads.append(size)
        return real_pread(fd, size, offset)

    monkeypatch.setattr(os, "pread", counting)
    infos = []
    for size, expected_reads in ((listing.WHOLE_READ, 1), (listing.WHOLE_READ + 1, 2)):
        path = tmp_path / f"{size}.jsonl"
        path.write_bytes(_sized(size))
        reads.clear()
        info = read_info(path)
        assert len(reads) == expected_reads  # whole; or the first 64 KiB (the header), then the rest
        assert info == session_info(SessionFile(path, fsync=False))
        infos.append(replace(info, path=tmp_path))
    assert infos[0] == infos[1]
    assert (infos[0].message_count, infos[0].first_message) == (4, "said 0")


@READS
@pytest.mark.parametrize("late", [0, 1])
def test_a_list_takes_a_header_only_within_the_first_64_kib(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, whole_read: int, late: int
) -> None:
    """Like ``SessionFile``, whether the file is read whole or not: a header line that ends at byte
    65,536 starts the session, one that ends a byte later does not."""
    monkeypatch.setattr(listing, "WHOLE_READ", whole_read)
    header = dump(HEADER)
    header = header[:-1] + b',"pad":"' + b"h" * (store.HEADER_LIMIT - len(header) - 10 + late) + b'"}\n'
    path = tmp_path / "s.jsonl"
    path.write_bytes(header + b"".join(dump(entry) + b"\n" for entry in _clean(2)[1:]))
    assert len(header) == store.HEADER_LIMIT + late
    fast = _outcome(lambda: read_info(path))
    assert fast == _outcome(lambda: session_info(SessionFile(path, fsync=False)))
    assert isinstance(fast, str) == bool(late)  # a refusal


@pytest.mark.parametrize("case", list(ODD_BUT_QUIET))
def test_the_index_reads_odd_files_in_bulk_as_one_by_one(tmp_path: Path, case: str) -> None:
    entries, change = ODD_BUT_QUIET[case]
    raw = [dump(entry) for entry in entries]
    if callable(change):
        raw = change(raw)
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n".join(raw) + (b"" if change == "torn" else b"\n"))
    whole = [path.stat().st_size]
    careful = read(LineByLine, path, whole, 200)
    assert read(Eager, path, whole, 200) == careful
    assert read(IndexBuilder, path, whole, 200) == careful
