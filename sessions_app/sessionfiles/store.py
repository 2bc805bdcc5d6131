"""A session file on disk: opened through a per-process cache, refreshed by reading only new bytes,
appended to by one write path that many processes can share.

The write path (pitree-rules §4): ``flock`` the file, catch up on whatever others appended, choose a
fresh id, write the whole line with one ``os.write`` on an ``O_APPEND`` descriptor (after a lone ``\\n``
if a torn write left the file unterminated), optionally ``fdatasync``, unlock. Writers never notify
anyone: whoever watches the file sees the new line.
"""

from __future__ import annotations

import fcntl
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import orjson

from . import entries as E
from .context import SessionContext, build_session_context
from .entries import Draft
from .errors import (
    EntryNotFound,
    NotASession,
    ReadOnlySession,
    SessionError,
    WriteFailed,
)
from .index import SessionIndex
from .migrate import migrate_entry, migrate_header
from .tree import path as tree_path

_CHUNK = 1 << 20
_PREFIX_CHECK = 64  # bytes before the read position compared on refresh to notice a rewritten file


class _AtLeaf:
    def __repr__(self) -> str:
        return "AT_LEAF"


AT_LEAF: Final = _AtLeaf()
"""Parent marker: append as a child of the file's leaf (pi's rule for writers that name no parent)."""

Parent = str | None | _AtLeaf


@dataclass(frozen=True)
class _Stamp:
    device: int
    inode: int
    size: int
    mtime_ns: int

    @classmethod
    def of(cls, st: os.stat_result) -> _Stamp:
        return cls(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


class SessionFile:
    """One session file: its index, decoded entries on demand, and appends."""

    def __init__(self, path: Path, *, fsync: bool = True) -> None:
        self.path = Path(path)
        self.fsync = fsync
        self._lock = threading.RLock()
        self._stamp: _Stamp | None = None
        self._prefix = b""
        self.index = self._load()

    # ------------------------------------------------------------------ opening and refreshing

    @classmethod
    def open(cls, path: Path | str, *, fsync: bool | None = None) -> SessionFile:
        """The cached SessionFile for ``path``, brought up to date (a re-open after one append parses one line).

        ``fsync`` None keeps the cached file's setting (on for a new one)."""
        return _cache.get(Path(path), fsync)

    def _load(self) -> SessionIndex:
        index = SessionIndex(str(self.path))
        with open(self.path, "rb", buffering=0) as handle:
            st = os.fstat(handle.fileno())
            self._read(handle, index, at_eof=True)
            if index.header is None:
                empty = "; the file is empty" if st.st_size == 0 else ""
                raise NotASession(f"{self.path}: not a pi session (no session header{empty})")
            index.commit()
            self._remember(handle, st, index)
        return index

    def _read(self, handle: Any, index: SessionIndex, *, at_eof: bool) -> None:
        for buf, base, end in read_chunks(handle, index.offset):
            if end:
                index.feed(buf, base, at_eof=False, end=end)
            elif buf or at_eof:
                index.feed(buf, base, at_eof=at_eof)

    def _remember(self, handle: Any, st: os.stat_result, index: SessionIndex) -> None:
        """Note what was read, so that the next refresh can tell growth from a rewrite."""
        self._stamp = _Stamp.of(st)
        start = max(0, index.offset - _PREFIX_CHECK)
        self._prefix = os.pread(handle.fileno(), index.offset - start, start)

    def refresh(self) -> list[int]:
        """Read what was appended since the last read; returns the new rows (file order).

        A file that shrank, was replaced or whose already-read bytes changed is loaded again from
        scratch (the returned rows are then all of them).
        """
        with self._lock:
            with open(self.path, "rb", buffering=0) as handle:
                st = os.fstat(handle.fileno())
                stamp = _Stamp.of(st)
                if stamp == self._stamp:
                    return []
                index = self.index
                if not self._same_prefix(handle, stamp):
                    self.index = self._load()
                    return list(range(len(self.index)))
                before = len(index)
                self._read(handle, index, at_eof=False)
                if index.needs_rebuild:
                    self.index = self._load()
                    return list(range(len(self.index)))
                index.commit()
                self._remember(handle, st, index)
            return list(range(before, len(index)))

    def _same_prefix(self, handle: Any, stamp: _Stamp) -> bool:
        old = self._stamp
        if old is None or (stamp.device, stamp.inode) != (old.device, old.inode) or stamp.size < self.index.offset:
            return False
        start = self.index.offset - len(self._prefix)
        return os.pread(handle.fileno(), len(self._prefix), start) == self._prefix

    # ------------------------------------------------------------------ reading

    @property
    def header(self) -> dict[str, Any]:
        header = self.index.header or {}
        return migrate_header(header) if self.index.read_only else header

    @property
    def version(self) -> int:
        """The format version the file was written in (1 when the header has none), before any migration."""
        return self.index.version

    @property
    def session_id(self) -> str:
        return str(self.header["id"])

    @property
    def cwd(self) -> str:
        cwd = self.header.get("cwd")
        return cwd if isinstance(cwd, str) else ""

    @property
    def parent_session(self) -> str | None:
        parent = self.header.get("parentSession")
        return parent if isinstance(parent, str) else None

    @property
    def leaf_id(self) -> str | None:
        return self.index.leaf_id

    def row_of(self, entry_id: str) -> int:
        """The row of a tree node, or EntryNotFound."""
        row = self.index.row(entry_id)
        if row is None:
            raise EntryNotFound(entry_id)
        return row

    def raw_line(self, row: int) -> bytes:
        """The bytes of an entry's line as stored (shown in the raw view)."""
        return next(iter(self.raw_lines([row])))

    def raw_lines(self, rows: Iterable[int]) -> Iterable[bytes]:
        """The stored bytes of each row's line, read with one open file."""
        offsets, lengths = self.index.offsets, self.index.lengths
        with open(self.path, "rb", buffering=0) as handle:
            fd = handle.fileno()
            for row in rows:
                yield os.pread(fd, lengths[row], offsets[row])

    def entries(self, rows: Iterable[int]) -> list[dict[str, Any]]:
        """Decoded entries for ``rows`` (v1/v2 ones migrated to v3 in memory). Each call decodes afresh,
        so callers may change what they get."""
        rows = list(rows)
        decoded = [orjson.loads(line) for line in self.raw_lines(rows)]
        if self.index.read_only:
            return [self._migrated(row, entry) for row, entry in zip(rows, decoded)]
        return decoded

    def _migrated(self, row: int, entry: dict[str, Any]) -> dict[str, Any]:
        index = self.index
        parent = index.parents[row]
        parent_id = index.ids[parent] if parent >= 0 else None
        return migrate_entry(entry, index.version, index.ids[row], parent_id, index.v1_id_for_parsed_index)

    def entry(self, entry_id: str) -> dict[str, Any]:
        return self.entries([self.row_of(entry_id)])[0]

    def path_rows(self, leaf_id: str | _AtLeaf | None = AT_LEAF) -> list[int]:
        """Rows from the root to ``leaf_id`` (default: the file's leaf; None: before the first entry)."""
        if isinstance(leaf_id, _AtLeaf):
            return tree_path(self.index, self.index.leaf_row)
        return tree_path(self.index, None if leaf_id is None else self.row_of(leaf_id))

    def path_entries(self, leaf_id: str | _AtLeaf | None = AT_LEAF) -> list[dict[str, Any]]:
        return self.entries(self.path_rows(leaf_id))

    def context(self, leaf_id: str | _AtLeaf | None = AT_LEAF) -> SessionContext:
        """What the LLM sees at ``leaf_id`` (default: the file's leaf)."""
        return build_session_context(self.path_entries(leaf_id))

    # ------------------------------------------------------------------ writing

    def append(self, draft: Draft, parent: Parent = AT_LEAF) -> dict[str, Any]:
        """Append one entry as a child of ``parent`` (an id, None for a new root, AT_LEAF for the leaf)."""

        def plan(index: SessionIndex) -> tuple[Draft, str | None]:
            return draft, self._parent_id(parent)

        written = self._append(plan)
        assert written is not None
        return written

    def navigate(self, target_id: str | None) -> dict[str, Any] | None:
        """Move the persisted position to ``target_id`` (None: before the first entry) by appending a
        ``leaf`` entry — only when the position actually moves (pitree-rules §2)."""

        def plan(index: SessionIndex) -> tuple[Draft, str | None] | None:
            if target_id is not None:
                self.row_of(target_id)
            if target_id == index.leaf_id:
                return None
            return Draft("leaf", {"targetId": target_id}), index.leaf_id

        return self._append(plan)

    def set_label(self, target_id: str, text: str | None, parent: Parent = AT_LEAF) -> dict[str, Any]:
        """Set (text) or clear (None or empty) the label of an entry."""
        self.row_of(target_id)
        return self.append(E.label(target_id, text), parent)

    def rename(self, name: str, parent: Parent = AT_LEAF) -> dict[str, Any]:
        """Name the session (an empty name clears it), cleaned as pi cleans names."""
        return self.append(E.session_info(name), parent)

    def compact(
        self,
        summary: str,
        first_kept_id: str,
        tokens_before: int,
        parent: Parent = AT_LEAF,
        **extra: Any,
    ) -> dict[str, Any]:
        """Fold the history before ``first_kept_id`` into ``summary`` (the entry must be on the branch)."""

        def plan(index: SessionIndex) -> tuple[Draft, str | None]:
            parent_id = self._parent_id(parent)
            branch = {index.ids[row] for row in self.path_rows(parent_id)}
            if first_kept_id not in branch:
                raise SessionError(f"Entry {first_kept_id} is not on the branch being compacted")
            return E.compaction(summary, first_kept_id, tokens_before, **extra), parent_id

        written = self._append(plan)
        assert written is not None
        return written

    def branch_summary(
        self, target_id: str | None, summary: str, *, left_leaf: str | _AtLeaf | None = AT_LEAF, **extra: Any
    ) -> dict[str, Any]:
        """pi's ``branchWithSummary``: continue at ``target_id`` with a summary of the branch left behind.

        ``left_leaf`` is the tip of that branch (pi 1.6.0's ``fromId``); by default the file's leaf, but
        a browser tab names the branch it showed."""

        def plan(index: SessionIndex) -> tuple[Draft, str | None]:
            if target_id is not None:
                self.row_of(target_id)
            left = index.leaf_id if isinstance(left_leaf, _AtLeaf) else left_leaf
            return E.branch_summary(left if left is not None else "root", summary, **extra), target_id

        written = self._append(plan)
        assert written is not None
        return written

    def _parent_id(self, parent: Parent) -> str | None:
        if isinstance(parent, _AtLeaf):
            return self.index.leaf_id
        if parent is not None:
            self.row_of(parent)
        return parent

    def _append(self, plan: Callable[[SessionIndex], tuple[Draft, str | None] | None]) -> dict[str, Any] | None:
        """The one write path. ``plan`` runs under the lock, after catching up, and decides what to write."""
        if self.index.read_only:
            raise ReadOnlySession(
                f"{self.path}: a version {self.index.version} session is read-only; fork it to continue"
            )
        with self._lock:
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CLOEXEC)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                try:
                    self.refresh()
                    planned = plan(self.index)
                    if planned is None:
                        return None
                    draft, parent_id = planned
                    entry = draft.build(E.new_entry_id(self.index.by_id), parent_id, E.now_iso())
                    _write_line(fd, E.dump_line(entry), fsync=self.fsync)
                    self.refresh()
                    return entry
                finally:
                    fcntl.flock(fd, fcntl.LOCK_UN)
            finally:
                os.close(fd)


def read_chunks(handle: Any, offset: int) -> Iterator[tuple[bytes, int, int]]:
    """The file from ``offset`` on, 1 MB at a time, as ``(buffer, its file offset, end of its last
    whole line)``; a line longer than a chunk is carried into the next one. The last item is whatever
    follows the last newline (often ``b""``), with end 0. Buffers are handed on uncut, never copied."""
    handle.seek(offset)
    carry = b""
    while chunk := handle.read(_CHUNK):
        buf = carry + chunk if carry else chunk
        end = buf.rfind(b"\n") + 1
        if end:
            yield buf, offset, end
            offset += end
        carry = buf[end:]
    yield carry, offset, 0


def _write_line(fd: int, line: bytes, *, fsync: bool) -> None:
    """Write one whole line at the end; a torn last line first gets the ``\\n`` it lacks."""
    size = os.fstat(fd).st_size
    if size and os.pread(fd, 1, size - 1) != b"\n":
        line = b"\n" + line
    written = os.write(fd, line)
    if written != len(line):
        raise WriteFailed(f"short write: {written} of {len(line)} bytes reached the file")
    if fsync:
        os.fdatasync(fd)


def create_file(path: Path, lines: list[dict[str, Any]], *, fsync: bool = True) -> None:
    """Write a new session file whole, refusing to replace an existing one (pi's exclusive create)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = b"".join(E.dump_line(line) for line in lines)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
    try:
        _write_line(fd, data, fsync=fsync)
    finally:
        os.close(fd)


class _FileCache:
    """Open SessionFiles by path, least recently used dropped first; entries are immutable, so a
    cached index only ever needs the bytes appended since."""

    def __init__(self, size: int = 64) -> None:
        self._size = size
        self._files: OrderedDict[Path, SessionFile] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, path: Path, fsync: bool | None) -> SessionFile:
        key = path.absolute()
        with self._lock:
            cached = self._files.get(key)
            if cached is not None:
                self._files.move_to_end(key)
        if cached is None:
            cached = SessionFile(key, fsync=True if fsync is None else fsync)
            with self._lock:
                self._files[key] = cached
                while len(self._files) > self._size:
                    self._files.popitem(last=False)
        else:
            if fsync is not None:
                cached.fsync = fsync
            cached.refresh()
        return cached

    def clear(self) -> None:
        with self._lock:
            self._files.clear()


_cache = _FileCache()
clear_cache = _cache.clear
