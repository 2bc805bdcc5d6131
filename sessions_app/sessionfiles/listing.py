"""What a session list shows of one file (pi's SessionInfo, docs/format.md §10), read in one pass.

A list needs a few facts of each line — its type, the first words of the first user message, the
name, the labels, the newest message time — and nothing of the tree. ``read_info`` gets them with the
index's own decoder (``index.read_chunk``) without building an index: no columns, no parents, ids
only counted. The index stays the judge of odd files: a file with any line its bulk reader would not
take (blank or broken lines, a reused id, a torn end, lines before the header, a v1 file, invalid
UTF-8, an over-long line) is opened as a ``SessionFile`` instead, so that both give the same
SessionInfo (a property test compares them on such files).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .entries import content_text
from .index import (
    MAX_LINE_BYTES,
    MESSAGE,
    Chunk,
    cut_lines,
    is_utf8,
    newest_activity,
    positions,
    read_chunk,
)
from .instants import format_iso, iso_to_ms
from .lines import BadLine, header_of, loads_line
from .store import HEADER_LIMIT, LongLine, SessionFile, open_regular, read_chunks

NO_MESSAGES = "(no messages)"

URL_SAFE_ID = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,126}[A-Za-z0-9])?")
"""pi's rule for the session ids it accepts, at most 128 characters: what a session URL may carry."""
_FIRST_MESSAGE = (MESSAGE, "user")


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


def read_info(path: Path | str, *, max_line_bytes: int = MAX_LINE_BYTES) -> SessionInfo:
    """pi's SessionInfo of the file at ``path``, reading it once; NotASession and the like as for
    ``SessionFile``, whose reading it falls back on for a file with odd lines."""
    fd, st = open_regular(path)
    try:
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

    def add(self, chunk: Chunk, lines: list[memoryview]) -> None:
        """A chunk of ordinary entries, as the index would take them (``IndexBuilder._read_bulk``)."""
        heads, types = chunk.heads, chunk.types
        if MESSAGE in types:
            self.message_count += types.count(MESSAGE)
            newest = newest_activity(heads, types, chunk.roles)
            if newest is not None and (self.activity is None or newest > self.activity):
                self.activity = newest
            if self.first_message is None:
                for position, kind in enumerate(zip(types, chunk.roles)):
                    if kind == _FIRST_MESSAGE:
                        self.first_message = _text(loads_line(bytes(lines[position])))
                        if self.first_message is not None:
                            break
        for position in sorted(
            p for kind in ("label", "session_info") if kind in types for p in positions(types, kind)
        ):
            head = heads[position]
            if types[position] == "session_info":
                self.name = head.name.strip() or None if isinstance(head.name, str) else None
            elif isinstance(head.targetId, str):
                if head.label:
                    self.labels[head.targetId] = head.label if isinstance(head.label, str) else str(head.label)
                else:
                    self.labels.pop(head.targetId, None)


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
        if chunk is None:
            return None
        facts.ids.update(chunk.ids)
        facts.rows += len(chunk.ids)
        if len(facts.ids) != facts.rows:
            return None  # a reused id: which line wins is the index's to say
        facts.add(chunk, lines)
    return offset


def _read_header(facts: _Facts, line: memoryview, source: str) -> bool:
    """Take the file's first line as its header if it is one of a v2/v3 file; NotASession or
    UnsupportedFormat for a first JSON object that is no header, as the index says."""
    try:
        value = loads_line(bytes(line))
    except BadLine:
        return False
    if not isinstance(value, dict):
        return False
    header = header_of(value, source, 1)
    version = header.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 2:
        return False
    facts.header, facts.version = header, version
    return True


def _first_message(session: SessionFile) -> str:
    index = session.index
    for row in range(len(index)):
        if index.roles[row] == "user" and index.types[row] == MESSAGE:
            text = _text(session.entries([row])[0])
            if text is not None:
                return text
    return NO_MESSAGES


def _text(entry: Any) -> str | None:
    """The text of a user message entry, when it has some that is not blank."""
    message = entry.get("message") if isinstance(entry, dict) else None
    text = content_text(message.get("content")) if isinstance(message, dict) else ""
    return text if text.strip() else None


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
