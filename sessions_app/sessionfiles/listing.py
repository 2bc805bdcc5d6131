"""What a session list shows of one file (pi's SessionInfo, docs/format.md §10), read in one pass.

A list needs a few facts of each line — its type, the first words of the first user message, the
name, the labels, the newest message time — and nothing of the tree. ``read_info`` gets them with a
decoder of its own that fits only the lines the index reads in bulk (``index.read_chunk``), without
building an index: no columns, no parents, ids only counted. The index stays the judge of odd files: a
file with any line its bulk reader would not take (blank or broken lines, a reused id, a torn end,
lines before the header, a v1 file, invalid UTF-8, an over-long line) is opened as a ``SessionFile``
instead, so that both give the same SessionInfo (a property test compares them on such files).

Most session files are small, and a cold listing reads thousands of them, so what it costs per file
and per line beside the decoder counts: a file of at most ``WHOLE_READ`` bytes is read in one read,
cut into lines by ``readlines`` and checked for UTF-8 line by line (only lines with a non-ASCII byte
are decoded); a longer one is read a chunk at a time (``store.read_chunks``), as the index reads it,
so that a long line is never held twice.
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Iterable, Sequence
from contextlib import closing
from dataclasses import dataclass
from itertools import compress, filterfalse
from operator import attrgetter
from pathlib import Path
from typing import Any

import msgspec

from .entries import joined_text, js_trim, label_text, session_name
from .index import (
    MAX_LINE_BYTES,
    MESSAGE,
    cut_lines,
    is_utf8,
    newest_activity,
    read_chunk,
)
from .instants import format_iso, iso_to_ms
from .lines import (
    DECODE_ERRORS,
    BadLine,
    Head,
    KnownHead,
    fast_path_may_nest_deeper,
    header_of,
    loads_line,
    nested_too_deeply,
)
from .migrate import read_version
from .store import HEADER_LIMIT, LongLine, SessionFile, open_regular, read_chunks, reopen_regular

NO_MESSAGES = "(no messages)"
# What a listing keeps of a first message: enough for any title and the list's filter. The whole of a
# 31 MB message, kept for every listing and cut to a title on every page, made one page take 400 MB.
FIRST_MESSAGE_CHARS = 16 * 1024

URL_SAFE_ID = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,126}[A-Za-z0-9])?")
"""pi's rule for the session ids it accepts, at most 128 characters: what a session URL may carry."""
_FIRST_MESSAGE = (MESSAGE, "user")
_EFFECTS = frozenset({"label", "session_info"})  # the types whose lines change what a list shows
WHOLE_READ = 256 << 10
"""Files up to this size are read whole (``_read_whole``): nearly every session, and a buffer small
enough that cutting it into ``bytes`` lines costs no memory to speak of."""


class _Listed(KnownHead, kw_only=True, gc=False):
    """A ``KnownHead`` that also requires what ``read_chunk`` checks after decoding one (a string id, a
    string timestamp), so that a line it fits needs none of those checks; a line it does not fit goes to
    ``read_chunk``, which says whether the index reads it in bulk anyway (an unknown type, say)."""

    id: str
    timestamp: str


_decode_listed = msgspec.json.Decoder(_Listed).decode
_ID = attrgetter("id")
_TYPE = attrgetter("type")
_ROLE = attrgetter("message.role")


@dataclass(frozen=True)
class SessionInfo:
    """What a session list shows of one file, without opening it again while it is unchanged."""

    path: Path
    id: str
    cwd: str
    name: str | None
    parent_session_path: str | None
    created: str
    modified_ms: int
    message_count: int
    first_message: str
    labels: tuple[str, ...]
    version: int

    @property
    def modified(self) -> str:
        return format_iso(self.modified_ms)

    @property
    def title(self) -> str:
        """What pi's picker shows: the name, else the first message."""
        return self.name or self.first_message

    @property
    def url_id(self) -> str | None:
        """The id, when a URL can carry it (pi's id rule); None for a header id with ``/``, spaces,
        ``%`` and the like, or longer than 128 characters: such a session is listed without a link."""
        return self.id if URL_SAFE_ID.fullmatch(self.id) else None


def session_info(session: SessionFile) -> SessionInfo:
    """pi's SessionInfo for an open file (name, counts, first message, activity time)."""
    index = session.index
    return _info(
        session.path,
        session.header,
        version=index.version,
        name=index.name,
        activity=index.last_activity_ms,
        message_count=index.message_count,
        first_message=_first_message(session),
        labels=tuple(label for label, _ in index.labels.values()),
        mtime_ns=None,
    )


def read_info(path: Path | str, *, max_line_bytes: int = MAX_LINE_BYTES, known_regular: bool = False) -> SessionInfo:
    """pi's SessionInfo of the file at ``path``, reading it once; NotASession and the like as for
    ``SessionFile``, whose reading it falls back on for a file with odd lines.

    ``known_regular``: the caller has just found ``path`` a regular file (a listing looks at every
    name), so it is opened without another ``stat`` (``store.reopen_regular``, which still checks the
    descriptor): over thousands of small files, that system call is a few percent of a listing."""
    fd, st = reopen_regular(path) if known_regular else open_regular(path)
    try:
        if st.st_size <= WHOLE_READ:
            facts = _read_whole(os.pread(fd, st.st_size, 0), max_line_bytes, str(path))
        else:
            facts = _scan(fd, st.st_size, max_line_bytes, str(path))
    finally:
        os.close(fd)
    if facts is None:
        return session_info(SessionFile(Path(path), fsync=False, max_line_bytes=max_line_bytes))
    assert facts.header is not None
    return _info(
        Path(path),
        facts.header,
        version=facts.version,
        name=facts.name,
        activity=facts.activity,
        message_count=facts.message_count,
        first_message=facts.first_message or NO_MESSAGES,
        labels=tuple(facts.labels.values()),
        mtime_ns=st.st_mtime_ns,
    )


class _Facts:
    """What the listing keeps of the lines read so far."""

    def __init__(self) -> None:
        self.header: dict[str, Any] | None = None
        self.version = 1
        self.name: str | None = None
        self.activity: int | None = None
        self.message_count = 0
        self.first_message: str | None = None
        self.labels: dict[str, str] = {}  # target id -> label, in the order the index keeps them
        self.ids: set[str] = set()  # every entry id read, to tell a reused one
        self.rows = 0

    def add(self, heads: Sequence[Head], lines: Sequence[bytes] | Sequence[memoryview]) -> bool:
        """Lines the index would read in bulk (``IndexBuilder._read_bulk``), whose heads are ``heads``;
        False for an id read before, since which line wins is the index's to say."""
        ids = self.ids
        ids.update(map(_ID, heads))
        self.rows += len(heads)
        if len(ids) != self.rows:
            return False
        types = list(map(_TYPE, heads))
        if MESSAGE in types:
            self._messages(heads, types, lines)
        if "label" in types or "session_info" in types:
            self._effects(compress(heads, map(_EFFECTS.__contains__, types)))
        return True

    def _messages(self, heads: Sequence[Head], types: list[str], lines: Sequence[bytes] | Sequence[memoryview]) -> None:
        self.message_count += types.count(MESSAGE)
        roles = list(map(_ROLE, heads))
        newest = newest_activity(heads, types, roles)
        if newest is not None and (self.activity is None or newest > self.activity):
            self.activity = newest
        if self.first_message is None:
            for position, kind in enumerate(zip(types, roles)):
                if kind == _FIRST_MESSAGE:
                    self.first_message = _text(loads_line(bytes(lines[position])))
                    if self.first_message is not None:
                        break

    def _effects(self, heads: Iterable[Head]) -> None:
        """Labels and names, in file order: the last one read wins."""
        for head in heads:
            if head.type == "session_info":
                self.name = session_name(head.name)
            elif isinstance(head.targetId, str):
                shown = label_text(head.label)
                if shown is None:
                    self.labels.pop(head.targetId, None)
                else:
                    self.labels[head.targetId] = shown


def _read_whole(data: bytes, max_line_bytes: int, source: str) -> _Facts | None:
    """``_scan`` of a file read whole into ``data``, with the same verdicts. Its lines keep their
    newline: ``readlines`` finds them with ``memchr``, in about 0.4 of the time ``bytes.split`` takes
    to look at each byte, and a decoder takes a newline after a value as the whitespace it is. As in
    ``_scan``, the header is the first line and must end within the first ``HEADER_LIMIT`` bytes."""
    if data.find(b"\n", 0, HEADER_LIMIT) < 0:
        return None
    lines = io.BytesIO(data).readlines()
    tail = b"" if lines[-1].endswith(b"\n") else lines.pop()
    if not data.isascii() and not _utf8(lines):
        return None
    facts = _Facts()
    if len(lines[0]) - 1 > max_line_bytes or not _read_header(facts, lines[0], source):
        return None
    entries = lines[1:]
    if len(data) > max_line_bytes and max(len(tail), max(map(len, entries), default=1) - 1) > max_line_bytes:
        return None
    if entries:
        heads = _heads(entries, max_line_bytes)
        if heads is None or not facts.add(heads, entries):
            return None
    return None if tail.strip() else facts  # an unterminated last line (torn, or a header alone): the index decides


def _utf8(lines: list[bytes]) -> bool:
    """Whether every line is valid UTF-8, which the index checks because msgspec does not check the keys
    it skips (``IndexBuilder.feed``). Only lines with a non-ASCII byte are decoded: most lines have none."""
    try:
        for _ in map(bytes.decode, filterfalse(bytes.isascii, lines)):
            pass
    except UnicodeDecodeError:
        return False
    return True


def _heads(lines: list[bytes], max_line_bytes: int) -> Sequence[Head] | None:
    """The heads of lines (each with its newline, none longer than the limit) if the index reads them
    all in bulk; else None."""
    if fast_path_may_nest_deeper() and any(map(nested_too_deeply, lines)):
        return None  # as ``read_chunk``
    try:
        return list(map(_decode_listed, lines))
    except DECODE_ERRORS:  # a type or role pi does not write, say: ``read_chunk`` judges, as for the index
        chunk = read_chunk([line[:-1] for line in lines], max_line_bytes, None)
        return None if chunk is None else chunk.heads


def _scan(fd: int, size: int, max_line_bytes: int, source: str) -> _Facts | None:
    """The listing facts of a file whose every line is one the index reads in bulk; None as soon as
    one is not. The first ``HEADER_LIMIT`` bytes are read first, and must hold the header, as for
    ``SessionFile``: a file that is no session is not read any further."""
    facts = _Facts()
    head = min(size, HEADER_LIMIT)
    offset = _scan_range(facts, fd, 0, head, head == size, max_line_bytes, source)
    if offset is None or facts.header is None:
        return None
    if head < size and _scan_range(facts, fd, offset, size, True, max_line_bytes, source) is None:
        return None
    return facts


def _scan_range(
    facts: _Facts, fd: int, start: int, stop: int, at_eof: bool, max_line_bytes: int, source: str
) -> int | None:
    """Add the lines from ``start`` to ``stop`` to ``facts``; where the last whole line ends, or None as
    soon as a line is not one the index reads in bulk (at ``at_eof``, an unterminated last line)."""
    offset = start
    for piece in read_chunks(fd, start, stop, max_line_bytes):
        if isinstance(piece, LongLine):
            return None
        buf, base, end = piece
        if not end:
            if buf.strip() and at_eof:
                return None  # an unterminated last line (torn, or a header alone): the index decides
            break
        if not buf.isascii() and not is_utf8(memoryview(buf)[:end]):
            return None
        lines, _ = cut_lines(buf, 0, end)
        offset = base + end
        if facts.header is None:
            if len(lines[0]) > max_line_bytes or not _read_header(facts, lines[0], source):
                return None
            lines = lines[1:]
            if not lines:
                continue
        chunk = read_chunk(lines, max_line_bytes, None)
        if chunk is None or not facts.add(chunk.heads, lines):
            return None
    return offset


def _read_header(facts: _Facts, line: bytes | memoryview, source: str) -> bool:
    """Take the file's first line as its header if it is one of a v2/v3 file; NotASession or
    UnsupportedFormat for a first JSON object that is no header, as the index says."""
    try:
        value = loads_line(bytes(line))
    except BadLine:
        return False
    if not isinstance(value, dict):
        return False
    header = header_of(value, source, 1)
    version = read_version(header)
    if version < 2:
        return False
    facts.header, facts.version = header, version
    return True


def _first_message(session: SessionFile) -> str:
    index = session.index
    for row in range(len(index)):
        if index.roles[row] == "user" and index.types[row] == MESSAGE:
            # Outlined: a message of megabytes is read for its first characters only.
            ((entry, spans),) = session.outlines([row])
            with closing(session.with_long_texts(_joined(entry), spans)) as pieces:
                text = _first_chars(pieces)
            if text is not None:
                return text
    return NO_MESSAGES


def _text(entry: Any) -> str | None:
    """The text of a user message entry as pi's list reads it, its first ``FIRST_MESSAGE_CHARS``, when
    it is not blank (whitespace as pi's ``trim()`` counts it; pi itself skips only empty texts:
    docs/format.md §10, §11.2)."""
    return _first_chars([_joined(entry)])


def _joined(entry: Any) -> str:
    message = entry.get("message") if isinstance(entry, dict) else None
    return joined_text(message.get("content")) if isinstance(message, dict) else ""


def _first_chars(pieces: Iterable[str]) -> str | None:
    """``_text`` of a text given in pieces: its first characters, read no further than its first
    character that is not blank."""
    kept = ""
    for piece in pieces:
        take = FIRST_MESSAGE_CHARS - len(kept)
        kept += piece[:take]
        if len(kept) == FIRST_MESSAGE_CHARS and (js_trim(kept) or js_trim(piece[take:])):
            return kept
    return kept if js_trim(kept) else None


def _info(
    path: Path,
    header: dict[str, Any],
    *,
    version: int,
    name: str | None,
    activity: int | None,
    message_count: int,
    first_message: str,
    labels: tuple[str, ...],
    mtime_ns: int | None,
) -> SessionInfo:
    created = header.get("timestamp")
    modified = activity
    if modified is None or modified <= 0:  # pi: no positive activity time, then the header's
        modified = iso_to_ms(created) if isinstance(created, str) else None
    if modified is None:
        modified = (path.stat().st_mtime_ns if mtime_ns is None else mtime_ns) // 1_000_000
    cwd = header.get("cwd")
    parent = header.get("parentSession")
    return SessionInfo(
        path=path,
        id=str(header["id"]),
        cwd=cwd if isinstance(cwd, str) else "",
        name=name,
        parent_session_path=parent if isinstance(parent, str) else None,
        created=created if isinstance(created, str) else "",
        modified_ms=modified,
        message_count=message_count,
        first_message=first_message,
        labels=labels,
        version=version,
    )
