"""Reading is bounded and one parser judges every line.

A line longer than the limit is skipped and reported, never held whole in memory; a file that grows
while it is read is read up to the size it had when the read began; FIFOs and devices are refused
without blocking; and whatever JSON oddity a line holds, the index and the entry decoder agree on it.
"""

from __future__ import annotations

import math
import os
import re
import sys
import threading
from pathlib import Path
from typing import Any

import msgspec
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.properties import examples

from sessions_app.sessionfiles import catalog, lines, listing, store, tree
from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles.context import convert_to_llm, estimate_tokens
from sessions_app.sessionfiles.errors import NotARegularFile, NotASession
from sessions_app.sessionfiles.store import SessionFile

LIMIT = 4096


def user_line(
    entry_id: str, parent: str | None, content_json: bytes, ts: bytes = b'"2026-01-01T00:00:01.000Z"'
) -> bytes:
    """A user message line with ``content`` given as raw JSON bytes (so that it can be anything)."""
    parent_json = b"null" if parent is None else orjson.dumps(parent)
    return (
        b'{"type":"message","id":'
        + orjson.dumps(entry_id)
        + b',"parentId":'
        + parent_json
        + b',"timestamp":'
        + ts
        + b',"message":{"role":"user","content":'
        + content_json
        + b',"timestamp":1767225601000}}\n'
    )


# ---------------------------------------------------------------------------------------------- long lines


@pytest.mark.parametrize("size", [LIMIT + 1, 3 << 20])  # within one read chunk, and across several
def test_a_line_longer_than_the_limit_is_skipped_and_reported(write_file: Any, L: Any, size: int) -> None:
    long_line = user_line("big", "a", orjson.dumps("x" * size))
    path = write_file(L.header(), L.user("a", None, "before"), long_line, L.user("b", "a", "after"))
    session = SessionFile(path, fsync=False, max_line_bytes=LIMIT)
    (report,) = session.index.skipped()
    assert report[0] == 3 and f"{len(long_line) - 1:,} bytes, longer than {LIMIT:,}" in report[1]
    assert [session.index.ids[row] for row in session.path_rows()] == ["a", "b"]
    assert session.index.line_numbers[session.row_of("b")] == 4  # line numbers still count the long line


def test_a_line_at_the_limit_is_read(write_file: Any, L: Any) -> None:
    line = user_line("a", None, orjson.dumps("y" * 100))
    path = write_file(L.header(), line)
    session = SessionFile(path, fsync=False, max_line_bytes=len(line) - 1)
    assert session.index.skipped() == []
    assert session.entry("a")["message"]["content"] == "y" * 100


def test_an_unterminated_long_line_is_skipped_once_its_end_arrives(
    write_file: Any, L: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While the long line has no end it is reported as a tail; later reads go on from where the
    last one stopped instead of reading the long line again."""
    path = write_file(
        L.header(), L.user("a", None, "before"), b'{"type":"message","id":"big","junk":"' + b"z" * (2 << 20)
    )
    session = SessionFile(path, fsync=False, max_line_bytes=LIMIT)
    assert session.index.skipped() == [(3, f"skipped: longer than {LIMIT:,} bytes (not terminated yet)")]
    with open(path, "ab") as handle:
        handle.write(b"z" * (1 << 20))
    read: list[int] = []
    original = os.pread

    def counting(fd: int, size: int, offset: int) -> bytes:
        data = original(fd, size, offset)
        read.append(len(data))
        return data

    monkeypatch.setattr(store.os, "pread", counting)
    session.refresh()
    assert sum(read) < (1 << 20) + 1024  # the new megabyte (and the rewrite check), not the three before it
    with open(path, "ab") as handle:
        handle.write(b'"}\n' + L.dump(L.user("b", "a", "after")))
    session.refresh()
    assert session.index.skipped() == [(3, f"skipped: {_line_length(path, 3):,} bytes, longer than {LIMIT:,}")]
    assert [session.index.ids[row] for row in session.path_rows()] == ["a", "b"]
    assert SessionFile(path, max_line_bytes=LIMIT).index.skipped() == session.index.skipped()


def _line_length(path: Path, number: int) -> int:
    return len(path.read_bytes().split(b"\n")[number - 1])


def test_a_header_longer_than_the_limit_means_no_session(write_file: Any, L: Any) -> None:
    path = write_file(L.header(padding="p" * (2 * LIMIT)), L.user("a", None, "hi"))
    with pytest.raises(NotASession, match="line 2 is not a session header"):
        SessionFile(path, max_line_bytes=LIMIT)


def test_a_file_growing_while_it_is_read_is_read_up_to_its_size_at_the_start(
    write_file: Any, L: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_file(L.header(), *(L.user(f"e{n}", f"e{n - 1}" if n else None, "x" * 1000) for n in range(3000)))
    size = path.stat().st_size
    original = os.pread
    grown = []

    def growing(fd: int, count: int, offset: int) -> bytes:
        with open(path, "ab") as handle:  # another writer, faster than the reader
            handle.write(L.dump(L.user(f"late{len(grown)}", None, "late")))
        grown.append(1)
        return original(fd, count, offset)

    monkeypatch.setattr(store.os, "pread", growing)
    session = SessionFile(path, fsync=False)
    monkeypatch.setattr(store.os, "pread", original)
    assert len(grown) > 1  # it grew during the read
    assert len(session.index) == 3000
    assert session.index.offsets[-1] + session.index.lengths[-1] + 1 == size
    assert len(session.refresh()) == len(grown)  # the rest on the next refresh


# ---------------------------------------------------------------------------------------------- not a regular file


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    outcome: list[BaseException] = []
    thread = threading.Thread(target=lambda: _try(lambda: SessionFile(fifo), outcome), daemon=True)
    thread.start()
    thread.join(timeout=10)
    assert not thread.is_alive(), "opening a FIFO blocked"
    assert isinstance(outcome[0], NotARegularFile) and "a FIFO" in str(outcome[0])


def _try(action: Any, outcome: list[BaseException]) -> None:
    try:
        action()
    except BaseException as error:
        outcome.append(error)


@pytest.mark.parametrize(("target", "kind"), [("/dev/zero", "a character device"), ("/dev/null", "a character device")])
def test_a_link_to_a_device_is_refused(tmp_path: Path, target: str, kind: str) -> None:
    link = tmp_path / "device.jsonl"
    link.symlink_to(target)
    with pytest.raises(NotARegularFile, match=kind):
        SessionFile(link)


def test_a_folder_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "folder.jsonl"
    folder.mkdir()
    with pytest.raises(NotARegularFile, match="a folder"):
        SessionFile(folder)


def test_a_cached_file_replaced_by_a_fifo_is_refused_on_refresh(new_session: Any) -> None:
    session = new_session()
    session.append(E.user_message("hi"))
    opened = SessionFile.open(session.path)
    session.path.unlink()
    os.mkfifo(session.path)
    with pytest.raises(NotARegularFile):
        opened.refresh()
    with pytest.raises(NotARegularFile):
        opened.append(E.user_message("lost?"))


# ---------------------------------------------------------------------------------------------- JSON oddities

DEEP = b"[" * 1000 + b"]" * 1000  # orjson reads 1024 levels; msgspec's Struct gives up about there
AT_THE_LIMIT = b"[" * 1022 + b"]" * 1022  # with the entry's object and its message's: 1,024 levels


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b'"\\ud83d is half an emoji"', "\ufffd is half an emoji"),  # JSON.stringify writes lone surrogates
        (b'"\\udc00\\ud800"', "\ufffd\ufffd"),
        (b'"\\ud83d\\ude00 is whole"', "\U0001f600 is whole"),
        (b'"\\\\ud800 is no escape"', "\\ud800 is no escape"),
        (b"[1e400, -1e400, 1e308]", [None, None, 1e308]),  # JSON.parse reads Infinity; it is written back as null
        (DEEP, 999),
        (AT_THE_LIMIT, 1021),
        (b'[{"a":' * 510 + b'"\\ud800 1e400"' + b"}]" * 510, 1020),
    ],
)
def test_oddities_json_parse_reads_are_entries(write_file: Any, L: Any, content: bytes, expected: Any) -> None:
    path = write_file(L.header(), user_line("a", None, content), L.user("b", "a", "after"))
    session = SessionFile(path, fsync=False)
    assert session.index.skipped() == []
    got = session.entry("a")["message"]["content"]
    if isinstance(expected, int):  # the depth of a nested value: walk down without recursion
        depth = 0
        while isinstance(got, list | dict) and got:
            got, depth = (got[0] if isinstance(got, list) else got["a"]), depth + 1
        assert depth == expected
    else:
        assert got == expected
    assert [session.index.ids[row] for row in session.path_rows()] == ["a", "b"]
    E.dump_line(session.entry("a"))  # and it can be written again (fork)


def test_infinite_numbers_in_fields_the_index_reads(write_file: Any, L: Any) -> None:
    line = b'{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"x","timestamp":1e400}}'
    session = SessionFile(write_file(L.header(), line), fsync=False)
    assert session.index.skipped() == []
    assert session.entry("a")["message"]["timestamp"] is None
    assert session.index.last_activity_ms == 1767225601000  # the entry's own timestamp, as pi falls back


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (user_line("a", None, b"[" * 1000 + b"]" * 999), "not valid JSON"),
        (user_line("a", None, b"[" * 1023 + b"]" * 1023), "nested too deeply (more than 1,024 levels)"),
        (user_line("a", None, b"[" * 100_000 + b"]" * 100_000), "nested too deeply (more than 1,024 levels)"),
        (user_line("a", None, b'[{"a":' * 2000 + b"1" + b"}]" * 2000), "nested too deeply (more than 1,024 levels)"),
        (user_line("a", None, b"[" * 2000 + b"]" * 1999), "nested too deeply (more than 1,024 levels)"),
        (user_line("a", None, b"NaN"), "not valid JSON"),
        (user_line("a", None, b"Infinity"), "not valid JSON"),
        (user_line("a", None, b'"nul \x00 inside"'), "not valid JSON"),
        (user_line("a", None, b'"ok"').rstrip(b"\n") + b"\x00\n", "not valid JSON"),
        (b"\x00\x00\x00\n", "not valid JSON"),
        (b"\xef\xbb\xbf" + user_line("a", None, b'"bom"'), "not valid JSON (starts with a byte order mark)"),
        (user_line("a", None, b'"\xed\xa0\x80"'), "not valid UTF-8"),  # a surrogate encoded as UTF-8
        (user_line("a", None, b'"\xff"'), "not valid UTF-8"),
    ],
)
def test_oddities_are_skipped_by_both(write_file: Any, L: Any, line: bytes, reason: str) -> None:
    path = write_file(L.header(), line, L.user("b", None, "after"))
    session = SessionFile(path, fsync=False)
    assert [(number, text) for number, text in session.index.skipped()] == [(2, f"skipped: {reason}")]
    assert session.index.row("a") is None
    assert session.entry("b")["message"]["content"] == "after"


def test_duplicate_keys_the_last_wins_for_both(write_file: Any, L: Any) -> None:
    line = b'{"type":"message","id":"first","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"one","content":"two"}}\n'
    session = SessionFile(write_file(L.header(), line), fsync=False)
    assert session.index.row("first") is None
    assert session.entry("a")["message"]["content"] == "two"


def test_crlf_and_a_byte_order_mark_at_the_start(write_file: Any, L: Any) -> None:
    path = write_file(b"\xef\xbb\xbf" + L.dump(L.header()), L.user("a", None, "hi"))
    with pytest.raises(NotASession):  # JSON.parse refuses the mark as pi reads the file: no header
        SessionFile(path)
    crlf = write_file(
        L.dump(L.header()).replace(b"\n", b"\r\n"),
        L.dump(L.user("a", None, "hi")).replace(b"\n", b"\r\n"),
        name="crlf.jsonl",
    )
    assert SessionFile(crlf).entry("a")["message"]["content"] == "hi"


# A line with an oddity spliced into a message: every way JSON can be odd, valid or not.
FRAGMENTS = st.sampled_from(
    [
        b'"plain"',
        b'"\\ud800"',
        b'"\\udfff\\ud800"',
        b'"\\\\ud800"',
        b'"\\ud83d\\ude00"',
        b"1e400",
        b"-1e999",
        b"1e308",
        b"123456789012345678901234567890",
        b"NaN",
        b"-Infinity",
        b'"\x00"',
        b'"\xff"',
        b'"\xed\xa0\x80"',
        b'"\xe2\x80\xa8"',
        b"[" * 300 + b"]" * 300,
        b"[" * 1020 + b"]" * 1020,
        b"[" * 1030 + b"]" * 1030,
        b"[" * 1030 + b"]" * 1029,
        b'[{"k":' * 600 + b"1e400" + b"}]" * 600,
        b"{}",
        b'{"a":1,"a":2}',
        b"tru",
        b"",
        b"\r",
        b'"unterminated',
    ]
)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(FRAGMENTS, min_size=1, max_size=3), st.sampled_from(["content", "details", "timestamp"]))
def test_the_index_and_the_decoder_agree_on_any_line(
    tmp_path_factory: pytest.TempPathFactory, fragments: list[bytes], where: str
) -> None:
    value = b"[" + b",".join(fragments) + b"]" if len(fragments) > 1 else fragments[0]
    line = (
        b'{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user",'
        + (b'"content":' + value if where == "content" else b'"content":"x","' + where.encode() + b'":' + value)
        + b"}}"
    )
    path = tmp_path_factory.mktemp("odd") / "odd.jsonl"
    path.write_bytes(
        b'{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}\n' + line + b"\n"
    )
    session = SessionFile(path, fsync=False)
    try:
        decoded: Any = lines.loads_line(line)
    except lines.BadLine:
        decoded = None
    accepted = session.index.row("a") is not None
    assert accepted == (decoded is not None), line[:120]
    assert accepted != bool(session.index.skipped())
    if accepted:
        assert session.entry("a") == decoded
        E.dump_line(decoded)
    # The index's fast path never takes a line the decoder refuses (the index checks UTF-8 itself, and
    # the depth of what msgspec accepted where it may nest deeper than the decoder reads).
    try:
        line.decode("utf-8")
        lines.decode_head(line)
    except (UnicodeDecodeError, msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return
    if lines.fast_path_may_nest_deeper() and lines.nested_too_deeply(line):
        return
    assert decoded is not None, line[:120]


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=20,
)


def _depth(value: Any) -> int:
    """How deeply arrays and objects nest in a decoded value (without recursion)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, list | dict):
            deepest = max(deepest, level)
            stack.extend((child, level + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


@settings(max_examples=examples(200), deadline=None)
@given(JSON_VALUES, st.integers(-3, 3))
def test_values_nested_up_to_the_limit_come_back_whole_and_deeper_ones_are_refused(value: Any, extra: int) -> None:
    wraps = lines.MAX_DEPTH - _depth(value) + extra
    wrapped = b"[" * wraps + orjson.dumps(value) + b"]" * wraps
    assert lines.nested_too_deeply(wrapped) == (extra > 0)
    if extra > 0:
        with pytest.raises(lines.BadLine, match="nested too deeply"):
            lines.loads_line(wrapped)
        return
    got = lines.loads_line(wrapped)
    for _ in range(wraps):
        (got,) = got
    assert got == orjson.loads(orjson.dumps(value))
    assert E.dump_json(lines.loads_line(wrapped)) == wrapped


def test_brackets_inside_strings_do_not_count_as_nesting() -> None:
    text = orjson.dumps(["[" * 5000, '\\"[{' * 2000, {"k": "{" * 3000}])
    assert not lines.nested_too_deeply(text)
    assert lines.loads_line(text)[0] == "[" * 5000


def test_a_huge_line_of_brackets_is_refused_quickly_and_small(write_file: Any, L: Any) -> None:
    # 8 MB of "[" cost 6.6 s and 700 MB when any depth was read; refused now after a scan of its bytes.
    line = user_line("a", None, b"[" * (8 << 20))
    session = SessionFile(write_file(L.header(), line, L.user("b", None, "after")), fsync=False)
    assert session.index.skipped() == [(2, "skipped: nested too deeply (more than 1,024 levels)")]
    assert session.entry("b")["message"]["content"] == "after"


def test_deep_nesting_reaches_no_caller_as_recursion_error(write_file: Any, L: Any) -> None:
    line = user_line("a", None, b'[{"type":"text","text":' * 510 + b'"x"' + b"}]" * 510)
    session = SessionFile(write_file(L.header(), line, L.user("b", "a", "ok")), fsync=False)
    assert session.index.skipped() == []
    assert math.isfinite(session.index.instant(session.row_of("b")))
    tree.tree(session.index)
    context = session.context()
    assert len(context.messages) == 2

    convert_to_llm(context.messages)
    assert estimate_tokens(context.messages) > 0


@pytest.fixture
def deep_recursion() -> Any:
    """msgspec's Struct decoders as Python 3.12+ (or a raised recursion limit) have them: they skip an
    unknown key of any depth."""
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(100_000)
    yield
    sys.setrecursionlimit(previous)


@pytest.mark.parametrize("neighbours", [0, 20])  # read line by line, and in bulk
def test_a_deep_line_is_skipped_even_where_msgspec_would_read_it(
    write_file: Any, L: Any, neighbours: int, deep_recursion: None
) -> None:
    deep = b'{"type":"custom","id":"deep","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","k":'
    deep += b"[" * 3000 + b"]" * 3000 + b"}\n"
    lines.decode_head(deep)  # msgspec reads it
    before = [L.user(f"before-{n}", None, "x") for n in range(neighbours)]
    after = [L.user(f"after-{n}", None, "x") for n in range(neighbours)]
    session = SessionFile(write_file(L.header(), *before, deep, *after), fsync=False)
    assert session.index.row("deep") is None
    assert session.index.skipped() == [(neighbours + 2, "skipped: nested too deeply (more than 1,024 levels)")]
    with pytest.raises(lines.BadLine, match="nested too deeply"):
        lines.read_head(deep)


# ---------------------------------------------------------------------------------------------- the header's 64 KiB


@pytest.fixture
def bytes_read(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many bytes each ``os.pread`` from now on read."""
    sizes: list[int] = []
    real = os.pread

    def counting(fd: int, size: int, offset: int) -> bytes:
        data = real(fd, size, offset)
        sizes.append(len(data))
        return data

    monkeypatch.setattr(os, "pread", counting)
    return sizes


@pytest.mark.parametrize("content", [b"y" * (8 << 20), b"\n" * 70_000 + b"y" * (8 << 20), b"{" * (8 << 20) + b"\n"])
def test_a_file_without_a_header_in_its_first_64_kib_is_refused_after_reading_them(
    write_file: Any, content: bytes, bytes_read: list[int]
) -> None:
    path = write_file(content, name="2026-03-02T09-00-00-000Z_named.jsonl")
    no_header = "not a pi session (no session header in its first 65,536 bytes)"
    for read, reads in (
        (lambda: SessionFile(path, fsync=False), 1),
        (lambda: store.read_header(path), 1),
        (lambda: listing.read_info(path), 2),  # its own reader first, then SessionFile's verdict
        (lambda: catalog.Catalog(path.parent).locate("named"), 1),
    ):
        bytes_read.clear()
        with pytest.raises(NotASession, match=re.escape(no_header)):
            read()
        assert sum(bytes_read) <= reads * store.HEADER_LIMIT


def test_a_header_ending_within_the_first_64_kib_starts_the_session(write_file: Any, L: Any) -> None:
    header = L.dump(L.header())
    junk = b"not json\n" * ((store.HEADER_LIMIT - len(header)) // 9)
    padding = b" " * (store.HEADER_LIMIT - len(junk) - len(header))  # the header's newline is byte 65,536
    fits = write_file(junk + padding + header, L.user("a", None, "hi"), name="fits.jsonl")
    assert SessionFile(fits, fsync=False).entry("a")["message"]["content"] == "hi"
    assert listing.read_info(fits).message_count == 1
    late = write_file(b" " + junk + padding + header, L.user("a", None, "hi"), name="late.jsonl")
    with pytest.raises(NotASession, match="in its first 65,536 bytes"):
        SessionFile(late, fsync=False)
    with pytest.raises(NotASession, match="in its first 65,536 bytes"):
        store.read_header(late)
