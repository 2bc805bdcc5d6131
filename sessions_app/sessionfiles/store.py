"""A session file on disk: opened through a per-process cache, refreshed by reading only new bytes,
appended to by one write path that many processes can share.

The write path (docs/format.md §9.1): ``flock`` the file, catch up on whatever others appended, choose a
fresh id, write the whole line with one ``os.write`` on an ``O_APPEND`` descriptor (after a lone ``\\n``
if a torn write left the file unterminated), optionally ``fdatasync``, unlock. Writers never notify
anyone: whoever watches the file sees the new line. A write that fails or falls short (a full disk, a
folder made read-only) is taken back, under the lock: the file is cut to the length it had, and
``WriteFailed`` says why in words a user can act on. A new file that cannot be written whole is removed.

Threads share a cached ``SessionFile``. ``index`` is an immutable snapshot (see ``index``), replaced
whole by each refresh, so a reader that keeps ``index = session.index`` sees one consistent state however
long it walks. Refreshes take a lock of their own and appends another: a reader calling ``open`` waits
at most for another thread's read of newly appended bytes, never for an append's ``flock`` or ``fsync``.

A file reached through a link that leads out of the sessions folder (a file link, or a folder link on
its way) is read-only when the folder is known (``within``): pitree writes nothing outside the sessions
folder's real path (docs/format.md §9.2). The check is made on the descriptor about to be written.

Only regular files are opened, without blocking (``O_NONBLOCK``, then ``S_ISREG`` on the descriptor):
a FIFO or a device named ``*.jsonl`` would otherwise hang a reader or never end. A refresh reads up to
the size the file had when it started, and no line is held in memory beyond ``max_line_bytes``.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
import threading
from collections import OrderedDict
from collections.abc import Callable, Container, Generator, Iterable, Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, NamedTuple, TypeVar

from . import entries as E
from .context import SessionContext, build_session_context
from .entries import Draft
from .errors import (
    EntryNotFound,
    FileChanged,
    NotARegularFile,
    NotASession,
    ReadOnlySession,
    SessionError,
    WriteFailed,
)
from .index import LEAF, MAX_LINE_BYTES, IndexBuilder, NeedsRebuild, SessionIndex
from .lines import BadLine, header_of, loads_line
from .longtext import LONG_LINE, PIECE_BYTES, Span, outline, split_markers, string_pieces
from .migrate import migrate_entry, migrate_header
from .tree import followed
from .tree import path as tree_path

_CHUNK = 1 << 18
HEADER_LIMIT = 64 << 10
"""The header line must end within a file's first 64 KiB (docs/format.md §8.1): pi's headers take a few
hundred bytes, and so a file that is no session is refused after 64 KiB read, never after the whole
file (a 100 MB file without a newline was read whole looking for its header)."""
_T = TypeVar("_T")
_PREFIX_CHECK = 64  # bytes before the read position compared on refresh to notice a rewritten file
PRIVATE_FILE = 0o600  # what pitree creates is its owner's alone (sessions hold whatever was said in them)
PRIVATE_FOLDER = 0o700


class _AtLeaf:
    def __repr__(self) -> str:
        return "AT_LEAF"


AT_LEAF: Final = _AtLeaf()
"""Parent marker: append as a child of the file's leaf (pi's rule for writers that name no parent)."""

Parent = str | None | _AtLeaf
# An entry chained below another (``append``'s ``then``): a draft, or a function that decides under the
# file's lock, from the index as it is then, what to write (None: nothing), such as a title written only
# where the file holds no name yet.
Chained = Draft | Callable[[SessionIndex], Draft | None]


@dataclass(frozen=True)
class _Stamp:
    device: int
    inode: int
    size: int
    mtime_ns: int

    @classmethod
    def of(cls, st: os.stat_result) -> _Stamp:
        return cls(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def file_kind(mode: int) -> str:
    """What a non-regular file is, in words (for the reports of a folder listing)."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def open_regular(path: Path | str, flags: int = os.O_RDONLY) -> tuple[int, os.stat_result]:
    """A descriptor of ``path`` and its ``fstat`` if it is a regular file, else NotARegularFile; never blocks.

    ``stat`` first, so that a socket or a device is refused with a clear message before any open;
    then the checks of ``reopen_regular``, since the path may be swapped in between."""
    mode = os.stat(path).st_mode
    if not stat.S_ISREG(mode):
        raise NotARegularFile(f"{path}: {file_kind(mode)}, not a session file")
    return reopen_regular(path, flags)


def reopen_regular(path: Path | str, flags: int = os.O_RDONLY) -> tuple[int, os.stat_result]:
    """``open_regular`` for a path that was a regular file when last read (the hot path of a refresh,
    without the ``stat``): ``O_NONBLOCK`` so that a FIFO swapped in meanwhile cannot make the open wait
    for a writer forever, ``O_NOCTTY`` for a terminal, and the descriptor checked before it is used."""
    fd = os.open(path, flags | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotARegularFile(f"{path}: {file_kind(st.st_mode)}, not a session file")
    except BaseException:
        os.close(fd)
        raise
    return fd, st


class SessionFile:
    """One session file: its index, decoded entries on demand, and appends."""

    def __init__(
        self, path: Path, *, fsync: bool = True, max_line_bytes: int = MAX_LINE_BYTES, within: Path | None = None
    ) -> None:
        """``within``: the sessions folder the file was found in; writes are refused when the file's real
        path is outside it (None: no such check, for a file named by the caller)."""
        self.path = Path(path)
        self.within = within
        self.fsync = fsync
        self.max_line_bytes = max_line_bytes
        self._read_lock = threading.Lock()  # one refresh at a time
        self._write_lock = threading.Lock()  # one append at a time (across processes: flock)
        self._stamp: _Stamp | None = None
        self._prefix = b""
        self._builder = IndexBuilder(str(self.path), max_line_bytes=max_line_bytes)
        self.index: SessionIndex = self._load()

    # ------------------------------------------------------------------ opening and refreshing

    @classmethod
    def open(
        cls,
        path: Path | str,
        *,
        fsync: bool | None = None,
        max_line_bytes: int | None = None,
        within: Path | None = None,
    ) -> SessionFile:
        """The cached SessionFile for ``path``, brought up to date (a re-open after one append parses one line).

        ``fsync`` and ``max_line_bytes`` None keep the cached file's settings (the defaults for a new one);
        so does ``within`` (see ``__init__``), which once given stays."""
        return _cache.get(Path(path), fsync, max_line_bytes, within)

    def _load(self) -> SessionIndex:
        """Read the whole file into a new builder and publish it: the first ``HEADER_LIMIT`` bytes, which
        must hold the header, then the rest."""
        builder = IndexBuilder(str(self.path), max_line_bytes=self.max_line_bytes)
        fd, st = open_regular(self.path)
        try:
            head = min(st.st_size, HEADER_LIMIT)
            feed_file(fd, builder, head, at_eof=head == st.st_size)
            if builder.header is None:
                raise NotASession(_no_header(self.path, st.st_size))
            if head < st.st_size:
                feed_file(fd, builder, st.st_size, at_eof=True)
            builder.commit()
            self._remember(fd, st, builder)
        finally:
            os.close(fd)
        self._builder = builder
        return builder.snapshot()

    def _remember(self, fd: int, st: os.stat_result, builder: IndexBuilder) -> None:
        """Note what was read, so that the next refresh can tell growth from a rewrite."""
        self._stamp = _Stamp.of(st)
        start = max(0, builder.offset - _PREFIX_CHECK)
        self._prefix = os.pread(fd, builder.offset - start, start)

    def refresh(self) -> list[int]:
        """Read what was appended since the last read; returns the new rows (file order).

        A file that shrank, was replaced, or whose already-read bytes changed is loaded again from
        scratch, and so is one whose new lines would change earlier rows (a reused id, a parent that
        was missing); the returned rows are then all of them.
        """
        with self._read_lock:
            fd, st = reopen_regular(self.path)
            try:
                stamp = _Stamp.of(st)
                if stamp == self._stamp:
                    return []
                builder = self._builder
                if not self._same_prefix(fd, stamp):
                    return self._reload()
                before = len(self.index)
                try:
                    feed_file(fd, builder, st.st_size, at_eof=False)
                    builder.commit()
                except NeedsRebuild:
                    return self._reload()
                self._remember(fd, st, builder)
            finally:
                os.close(fd)
            self.index = builder.snapshot()
            return list(range(before, len(self.index)))

    def _reload(self) -> list[int]:
        self.index = self._load()
        return list(range(len(self.index)))

    def _same_prefix(self, fd: int, stamp: _Stamp) -> bool:
        old = self._stamp
        offset = self._builder.offset
        if old is None or (stamp.device, stamp.inode) != (old.device, old.inode) or stamp.size < offset:
            return False
        start = offset - len(self._prefix)
        return os.pread(fd, len(self._prefix), start) == self._prefix

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

    @property
    def file_position(self) -> str | None:
        """The file's position, whatever part of it this object shows (``append``'s ``position_then``)."""
        return self.index.leaf_id

    @property
    def outside(self) -> bool:
        """Whether the file is in the sessions folder only through a link that leads out of it, so
        read-only (see ``within``)."""
        return self.within is not None and leads_outside(self.path, self.within)

    def row_of(self, entry_id: str) -> int:
        """The row of a tree node, or EntryNotFound."""
        return _row_of(self.index, entry_id)

    view_key: Any = None
    """What tells apart readers of one file that see different rows or lines of it (None: the file
    as it is); a view of part of it (``access.scoped``) sets its own, for caches of what is drawn from
    the rows."""

    def line_key(self, offset: int, length: int) -> tuple[Any, ...]:
        """What identifies the stored line at ``offset`` as this reader sees it, for caches of what is
        drawn from it (a line never changes, so its place in the file does)."""
        return (str(self.path), offset, length)

    def raw_line(self, row: int) -> bytes:
        """The bytes of an entry's line as stored (shown in the raw view)."""
        return next(self.raw_lines([row]))

    def raw_lines(self, rows: Iterable[int]) -> Generator[bytes, None, None]:
        """The stored bytes of each row's line, read with one open file, one line at a time (a caller may
        read every line of a large file).

        The file is closed before the last line is handed out: a reader that takes one line per row
        (``zip(rows, ...)``) is never back for the end of the generator, whose ``finally`` would
        otherwise close the file only when the generator is collected. A reader that may stop earlier
        closes the generator (``contextlib.closing``)."""
        rows = list(rows)
        if not rows:
            return
        offsets, lengths = self.index.offsets, self.index.lengths
        fd, _ = reopen_regular(self.path)
        try:
            for row in rows[:-1]:
                yield os.pread(fd, lengths[row], offsets[row])
            last = os.pread(fd, lengths[rows[-1]], offsets[rows[-1]])
        finally:
            os.close(fd)
        yield last

    def entries(self, rows: Iterable[int]) -> list[dict[str, Any]]:
        """Decoded entries for ``rows`` (v1/v2 ones migrated to v3 in memory). Each call decodes afresh,
        so callers may change what they get.

        A row the index accepted decodes the same way again (one judge, ``lines.loads_line``); bytes
        that no longer hold that entry mean the file was rewritten in place: FileChanged."""
        rows = list(rows)
        with closing(self.raw_lines(rows)) as lines:  # FileChanged stops the reading midway
            return [self._decoded(row, line) for row, line in zip(rows, lines)]

    def outlines(self, rows: Iterable[int]) -> list[tuple[dict[str, Any], tuple[Span, ...]]]:
        """``entries``, except that an entry whose line is ``LONG_LINE`` bytes or longer is decoded
        without its long strings: each is ``longtext.marker(n)`` in it, and the n-th span says where
        ``long_text`` reads it from. A large text then costs a reader a piece of it, never the whole."""
        rows = list(rows)
        index = self.index
        long = {row for row in rows if index.lengths[row] >= LONG_LINE and self._stored_as_is(row)}
        short = [row for row in rows if row not in long]
        read: dict[int, tuple[dict[str, Any], tuple[Span, ...]]] = {
            row: (entry, ()) for row, entry in zip(short, self.entries(short))
        }
        if long:
            fd, _ = reopen_regular(self.path)
            try:
                for row in long:
                    found = outline(fd, index.offsets[row], index.lengths[row])
                    read[row] = (self._decoded(row, found.line), found.spans)
            finally:
                os.close(fd)
        return [read[row] for row in rows]

    def long_text(self, span: Span) -> Generator[str, None, None]:
        """The text of a long string an outline left out, decoded ``longtext.PIECE_BYTES`` at a time."""
        fd, _ = reopen_regular(self.path)
        try:
            stored = (
                os.pread(fd, min(PIECE_BYTES, span.offset + span.length - at), at)
                for at in range(span.offset, span.offset + span.length, PIECE_BYTES)
            )
            yield from string_pieces(stored, PIECE_BYTES)
        except BadLine:
            raise FileChanged(
                f"{self.path}: the text at byte {span.offset} is no longer there; the file was rewritten in place"
            ) from None
        finally:
            os.close(fd)

    def with_long_texts(self, text: str, spans: tuple[Span, ...]) -> Generator[str, None, None]:
        """``text`` from an outlined entry (``outlines``) in pieces, with each marker in it as the long
        string it stands for."""
        for part in split_markers(text):
            if isinstance(part, str):
                yield part
            else:
                yield from self.long_text(spans[part])

    def _stored_as_is(self, row: int) -> bool:
        """Whether this reader's line of ``row`` is the file's (a view may show some cleaned)."""
        return True

    def _decoded(self, row: int, line: bytes) -> dict[str, Any]:
        index = self.index
        try:
            entry = loads_line(line)
        except BadLine:
            entry = None
        if not isinstance(entry, dict) or (index.version > 1 and entry.get("id") != index.ids[row]):
            raise FileChanged(
                f"{self.path}: line {index.line_numbers[row]} no longer holds entry {index.ids[row]}; "
                "the file was rewritten in place"
            )
        return self._migrated(index, row, entry) if index.read_only else entry

    def _migrated(self, index: SessionIndex, row: int, entry: dict[str, Any]) -> dict[str, Any]:
        parent = index.parents[row]
        parent_id = index.ids[parent] if parent >= 0 else None
        return migrate_entry(
            entry, index.version, index.ids[row], parent_id, lambda parsed: index.v1_id_for_parsed_index(parsed, row)
        )

    def entry(self, entry_id: str) -> dict[str, Any]:
        return self.entries([self.row_of(entry_id)])[0]

    def path_rows(self, leaf_id: str | _AtLeaf | None = AT_LEAF) -> list[int]:
        """Rows from the root to ``leaf_id`` (default: the file's leaf; None: before the first entry)."""
        index = self.index
        if isinstance(leaf_id, _AtLeaf):
            return tree_path(index, index.leaf_row)
        return tree_path(index, None if leaf_id is None else _row_of(index, leaf_id))

    def path_entries(self, leaf_id: str | _AtLeaf | None = AT_LEAF) -> list[dict[str, Any]]:
        return self.entries(self.path_rows(leaf_id))

    def context(self, leaf_id: str | _AtLeaf | None = AT_LEAF) -> SessionContext:
        """What the LLM sees at ``leaf_id`` (default: the file's leaf)."""
        return build_session_context(self.path_entries(leaf_id))

    # ------------------------------------------------------------------ writing

    def append(
        self,
        draft: Draft,
        parent: Parent = AT_LEAF,
        *,
        check: Callable[[SessionIndex], None] | None = None,
        position_then: Parent = AT_LEAF,
        entry_id: str | None = None,
        after: int | None = None,
        then: Sequence[Chained] = (),
    ) -> dict[str, Any]:
        """Append one entry as a child of ``parent`` (an id, None for a new root, AT_LEAF for the leaf).
        ``check`` looks at the index under the lock, after catching up, and may refuse (raise).
        ``entry_id``: the id the entry gets unless the file holds it already (then a fresh one), so that
        whoever chose it can tell later whether the entry was written (a reply's journal).

        ``after``: the byte offset of the file the page naming ``parent`` reflected (its cursor). The
        entry goes where that tab stands now (``tree.followed``): what continued its branch since, an
        answer it was shown being written and that was stored a moment ago, say, it would have moved
        onto, so the write does not become a sibling of it.

        ``position_then``: the file's position (``file_position``) when the work this entry ends began
        (a reply). When the position moved since (the reader edited a message or switched branches
        while the reply was written), it stays where it moved: a ``leaf`` marker back to it follows the
        entry, in the same write. Otherwise the reply would take the session back to the branch the
        reader had left, in every tab and at the next reload. A position that did not move goes to
        the new entry, as with any append (a regenerated answer becomes the position).

        ``then``: entries chained below this one in the same write, each under the one before (the
        model or thinking level picked while a reply was written, a title: docs/format.md §5.2); one given
        as a function is planned under the lock and left out when it returns None."""

        def plan(index: SessionIndex) -> tuple[Draft, str | None]:
            parent_id = self._parent_id(parent)
            if after is not None:
                row = followed(index, None if parent_id is None else index.row(parent_id), after)
                parent_id = None if row is None else index.ids[row]
            if check is not None:
                check(index)
            return draft, parent_id

        return self._append(plan, position_then=position_then, entry_id=entry_id, then=then)[0]

    def navigate(self, target_id: str | None) -> dict[str, Any] | None:
        """Move the persisted position to ``target_id`` (None: before the first entry) by appending a
        ``leaf`` entry — only when the position actually moves (docs/format.md §5.2)."""

        def plan(index: SessionIndex) -> tuple[Draft, str | None] | None:
            if target_id is not None:
                self.row_of(target_id)
            if target_id == index.leaf_id:
                return None
            return Draft("leaf", {"targetId": target_id}), index.leaf_id

        written = self._append(plan)
        return written[0] if written else None

    def set_label(
        self, target_id: str, text: str | None, parent: Parent = AT_LEAF, *, after: int | None = None
    ) -> dict[str, Any]:
        """Set (text) or clear (None or empty) the label of an entry (``after``: as ``append``)."""
        self.row_of(target_id)
        return self.append(E.label(target_id, text), parent, after=after)

    def rename(self, name: str, parent: Parent = AT_LEAF, *, after: int | None = None) -> dict[str, Any]:
        """Name the session (an empty name clears it), cleaned as pi cleans names (``after``: as ``append``)."""
        return self.append(E.session_info(name), parent, after=after)

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

        return self._append(plan)[0]

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

        return self._append(plan)[0]

    def _parent_id(self, parent: Parent) -> str | None:
        if isinstance(parent, _AtLeaf):
            return self.index.leaf_id
        if parent is not None:
            self.row_of(parent)
        return parent

    def extend(self, plan: Callable[[SessionIndex], list[dict[str, Any]]]) -> list[dict[str, Any]]:
        """Append whole entries that ``plan`` builds, all in one write: they land together or not at all
        (an import's new entries). ``plan`` runs under the lock after catching up, like ``_append``'s,
        and sets each entry's id (unique in the file) and parent; it may return none."""

        def lines(index: SessionIndex) -> tuple[list[dict[str, Any]], bytes] | None:
            entries = plan(index)
            return (entries, b"".join(map(E.dump_line, entries))) if entries else None

        return self._write(lines) or []

    def _append(
        self,
        plan: Callable[[SessionIndex], tuple[Draft, str | None] | None],
        *,
        position_then: Parent = AT_LEAF,
        entry_id: str | None = None,
        then: Sequence[Chained] = (),
    ) -> list[dict[str, Any]]:
        """One entry (after it, the entries ``then`` chains below it, each under the one before, and a
        ``leaf`` marker when the position moved since ``position_then``; the entry's id: ``append``) that
        ``plan`` decides on under the lock, after catching up. Returns the entries written, marker aside
        (none when the plan wrote nothing)."""

        def lines(index: SessionIndex) -> tuple[list[dict[str, Any]], bytes] | None:
            planned = plan(index)
            if planned is None:
                return None
            draft, parent_id = planned
            now = E.now_iso()
            taken: Container[str] = index.by_id
            fresh = entry_id if entry_id is not None and entry_id not in taken else E.new_entry_id(taken)
            written: list[dict[str, Any]] = []
            drafts = [draft, *(each if isinstance(each, Draft) else each(index) for each in then)]
            for each in filter(None, drafts):
                built_id = fresh if not written else E.new_entry_id(taken)
                entry = each.build(built_id, written[-1]["id"] if written else parent_id, now)
                written.append(entry)
                taken = _Taken(taken, entry["id"])
            data = b"".join(E.dump_line(entry) for entry in written)
            position = index.leaf_id
            if position_then is not AT_LEAF and position not in (position_then, parent_id):
                marker = Draft(LEAF, {"targetId": position}).build(E.new_entry_id(taken), written[-1]["id"], now)
                data += E.dump_line(marker)
            return written, data

        return self._write(lines) or []

    def _write(self, lines: Callable[[SessionIndex], tuple[_T, bytes] | None]) -> _T | None:
        """The one write path: under the file's lock, after catching up, ``lines`` decides what to write
        from the fresh index (or that nothing is written), and it goes out in one ``os.write`` (taken
        back when it fails or falls short: ``_write_line``)."""
        if self.index.read_only:
            raise ReadOnlySession(
                f"{self.path}: a version {self.index.version} session is read-only; fork it to continue"
            )
        with self._write_lock:
            try:
                fd, _ = reopen_regular(self.path, os.O_RDWR | os.O_APPEND)
            except OSError as error:
                raise WriteFailed(self.path, cannot_write(error)) from error
            try:
                if self.within is not None and leads_outside(self.path, self.within, _real_path(fd, self.path)):
                    raise ReadOnlySession(f"{self.path}: {OUTSIDE}; fork it to continue")
                fcntl.flock(fd, fcntl.LOCK_EX)
                try:
                    self.refresh()
                    planned = lines(self.index)
                    if planned is None:
                        return None
                    written, data = planned
                    _write_line(fd, data, fsync=self.fsync, path=self.path)
                    self.refresh()
                    return written
                finally:
                    fcntl.flock(fd, fcntl.LOCK_UN)
            finally:
                os.close(fd)


class _Taken:
    """Ids taken: a file's and one more (an entry built but not written yet), for ``new_entry_id``."""

    def __init__(self, ids: Container[str], also: str) -> None:
        self.ids, self.also = ids, also

    def __contains__(self, entry_id: object) -> bool:
        return entry_id == self.also or entry_id in self.ids


def _row_of(index: SessionIndex, entry_id: str) -> int:
    row = index.row(entry_id)
    if row is None:
        raise EntryNotFound(entry_id)
    return row


class LongLine(NamedTuple):
    """A line longer than the limit, from byte ``start`` to ``end`` (its newline, or how far the file went)."""

    start: int
    end: int
    terminated: bool


def read_chunks(
    fd: int, offset: int, stop: int, max_line: int = MAX_LINE_BYTES, *, skip_from: int | None = None
) -> Iterator[tuple[bytes, int, int] | LongLine]:
    """Bytes ``offset`` to ``stop`` of the file, 256 KB (``_CHUNK``) at a time, as ``(buffer, its file offset, end of
    its last whole line)``; a line longer than a chunk is carried into the next one. The last item is
    whatever follows the last newline (often ``b""``), with end 0. Buffers are handed on uncut, and a
    carried line is joined once, when its newline arrives (a long one read again whole instead).

    A line that grows past ``max_line`` bytes is not carried any further: it comes out as a
    ``LongLine`` once its newline is found, or as an unterminated one at the end. ``skip_from`` resumes
    such a line: the read starts inside it, at ``offset``."""
    parts: list[bytes] = []  # an unfinished line, carried over (none kept once it is a long one)
    carried = 0
    # A line carried this far is read again in one piece once its end is found: joining its parts
    # would hold it twice (a 31 MB message's line took twice its size to index).
    kept = 4 * _CHUNK
    long_start = skip_from
    pos = offset
    while pos < stop:
        chunk = os.pread(fd, min(_CHUNK, stop - pos), pos)
        if not chunk:
            break  # the file shrank under us: the next refresh sees it
        base = pos
        pos += len(chunk)
        if long_start is not None:
            newline = chunk.find(b"\n")
            if newline < 0:
                continue
            yield LongLine(long_start, base + newline, True)
            long_start = None
            chunk = chunk[newline + 1 :]
            base += newline + 1
        end = chunk.rfind(b"\n") + 1
        if end:
            if carried > kept:
                yield os.pread(fd, pos - (base - carried), base - carried), base - carried, carried + end
            else:
                yield (b"".join([*parts, chunk]) if parts else chunk), base - carried, carried + end
            parts = [chunk[end:]] if end < len(chunk) else []
            carried = len(chunk) - end
        else:
            parts.append(chunk)
            carried += len(chunk)
            if carried > kept:
                parts = []
        if carried > max_line:
            long_start = pos - carried
            parts, carried = [], 0
    if long_start is not None:
        yield LongLine(long_start, pos, False)
    else:
        yield (os.pread(fd, carried, pos - carried) if carried > kept else b"".join(parts)), pos - carried, 0


def feed_file(fd: int, builder: IndexBuilder, stop: int, *, at_eof: bool) -> None:
    """Feed the builder the file from where it stopped up to ``stop`` (the size seen when the read began);
    ``at_eof`` says that ``stop`` is the file's end, so that a last line without a newline may count."""
    pieces = read_chunks(fd, builder.offset, stop, builder.max_line_bytes, skip_from=builder.skip_from)
    for piece in pieces:
        if isinstance(piece, LongLine):
            builder.long_line(piece.start, piece.end, terminated=piece.terminated)
            continue
        buf, base, end = piece
        if end:
            builder.feed(buf, base, at_eof=False, end=end)
        elif buf or at_eof:
            builder.feed(buf, base, at_eof=at_eof)


def read_header(path: Path | str, *, max_line_bytes: int = MAX_LINE_BYTES) -> dict[str, Any]:
    """A session file's header, reading no further than the line that holds it, and never beyond
    ``HEADER_LIMIT`` (headers never change, so a folder's lineage and ids need no more); NotASession or
    UnsupportedFormat as for a full open."""
    fd, st = open_regular(path)
    try:
        lineno = 0
        skipped: tuple[int, str] | None = None  # the first line that was not JSON
        stop = min(st.st_size, HEADER_LIMIT)
        for piece in read_chunks(fd, 0, stop, max_line_bytes):
            if isinstance(piece, LongLine):
                lineno += piece.terminated
                continue
            buf, _, end = piece
            if not end and stop < st.st_size:
                break  # a line cut at the limit: the header cannot be in it
            pos, end = 0, end or len(buf)
            while pos < end:
                newline = buf.find(b"\n", pos, end)
                line = buf[pos : end if newline < 0 else newline]
                pos = end if newline < 0 else newline + 1
                lineno += 1
                if not line.strip():
                    continue
                try:
                    value = loads_line(line)
                except BadLine as bad:
                    skipped = skipped or (lineno, bad.reason)
                    continue
                if isinstance(value, dict):
                    return header_of(value, str(path), lineno, skipped)
    finally:
        os.close(fd)
    raise NotASession(_no_header(path, st.st_size))


def _no_header(path: Path | str, size: int) -> str:
    if size == 0:
        return f"{path}: not a pi session (no session header; the file is empty)"
    if size > HEADER_LIMIT:
        return f"{path}: not a pi session (no session header in its first {HEADER_LIMIT:,} bytes)"
    return f"{path}: not a pi session (no session header)"


def _write_line(fd: int, line: bytes, *, fsync: bool, path: Path) -> None:
    """Write one whole line at the end; a torn last line first gets the ``\\n`` it lacks. A write that
    fails or falls short, or whose ``fdatasync`` fails, is taken back (``_take_back``): WriteFailed."""
    size = os.fstat(fd).st_size
    if size and os.pread(fd, 1, size - 1) != b"\n":
        line = b"\n" + line
    written = 0
    try:
        written = os.write(fd, line)
        if written != len(line):
            raise WriteFailed(path, f"only {written:,} of {len(line):,} bytes fitted (the disk is full)")
        if fsync:
            os.fdatasync(fd)
    except OSError as error:
        _take_back(fd, size, written)
        raise WriteFailed(path, cannot_write(error)) from error
    except WriteFailed:
        _take_back(fd, size, written)
        raise


def _take_back(fd: int, size: int, written: int) -> None:
    """Cut the file back to ``size`` when it ends with the ``written`` bytes of a failed write, so that
    no partial line stays in it (shrinking needs no free space). When it does not (another program
    appended meanwhile: pi takes no lock), it is left as it is: cutting would take that program's line;
    the next append then ends the partial line first."""
    if written and os.fstat(fd).st_size == size + written:
        os.ftruncate(fd, size)


def cannot_write(error: OSError) -> str:
    """Why a write failed, in words a user can act on (the page shows them where they acted)."""
    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        return "the disk is full"
    if error.errno == errno.EROFS:
        return "the sessions folder is on a read-only file system"
    if error.errno in (errno.EACCES, errno.EPERM):
        return "the folder or the file is read-only (permission denied)"
    return f"it could not be written ({error.strerror or error})"


OUTSIDE = "a link to a file outside the sessions folder: read-only"


def leads_outside(path: Path | str, root: Path | str, real: str | None = None) -> bool:
    """Whether ``path``, inside the sessions folder ``root`` by its name, is outside it in fact: a link
    to the file, or to a folder on its way, leads out of ``root``'s real path. ``real``: the path's real
    path when known (an open descriptor's). A path outside ``root`` by name is the caller's own choice."""
    name, base = os.path.abspath(path), os.path.abspath(root)
    if os.path.commonpath([name, base]) != base:
        return False
    real_base = os.path.realpath(root)
    return os.path.commonpath([real if real is not None else os.path.realpath(path), real_base]) != real_base


def _real_path(fd: int, path: Path) -> str:
    """Where an open descriptor's file really is (what is written to, whatever its path now names)."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return os.path.realpath(path)


def create_file(path: Path, lines: list[dict[str, Any]], *, fsync: bool = True, within: Path | None = None) -> None:
    """Write a new session file whole, refusing to replace an existing one (pi's exclusive create).

    With ``fsync`` the file survives a power cut once this returns: its data, its name in its folder,
    and the names of any folders created for it (each in its own parent). ``within``: the sessions
    folder, outside whose real path nothing is created (a folder link leading out of it)."""
    write_new(path, b"".join(E.dump_line(line) for line in lines), fsync=fsync, within=within)


def write_new(path: Path, data: bytes, *, fsync: bool = True, within: Path | None = None) -> None:
    """``create_file`` for lines already written out (an upload keeps its bytes as they came). A file
    that cannot be written whole is removed (WriteFailed); one that exists already is left alone
    (FileExistsError)."""
    if within is not None and leads_outside(path, within):
        raise ReadOnlySession(
            f"{path.parent}: a link to a folder outside the sessions folder: nothing is written there"
        )
    try:
        folders = _make_folders(path.parent)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, PRIVATE_FILE)
    except FileExistsError:
        raise
    except OSError as error:
        raise WriteFailed(path.parent, cannot_write(error)) from error
    try:
        try:
            _write_line(fd, data, fsync=False, path=path)
            if fsync:
                os.fsync(fd)
        finally:
            os.close(fd)
    except (OSError, WriteFailed) as error:
        path.unlink(missing_ok=True)
        if isinstance(error, WriteFailed):
            raise
        raise WriteFailed(path, cannot_write(error)) from error
    if fsync:
        for folder in (path.parent, *folders):
            _fsync_folder(folder)


def _make_folders(folder: Path) -> list[Path]:
    """Create ``folder`` and its missing parents; return the folders whose listing gained a new name
    (the parent of each one created), deepest first."""
    missing = []
    current = folder
    while not current.is_dir():
        missing.append(current)
        current = current.parent
    for created in reversed(missing):
        created.mkdir(PRIVATE_FOLDER, exist_ok=True)
    return [created.parent for created in missing]


def _fsync_folder(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class _FileCache:
    """Open SessionFiles by path, least recently used dropped first; entries are immutable, so a
    cached index only ever needs the bytes appended since."""

    def __init__(self, size: int = 64) -> None:
        self._size = size
        self._files: OrderedDict[Path, SessionFile] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, path: Path, fsync: bool | None, max_line_bytes: int | None, within: Path | None) -> SessionFile:
        key = path.absolute()
        with self._lock:
            cached = self._files.get(key)
            if cached is not None:
                self._files.move_to_end(key)
        if cached is None:
            cached = SessionFile(
                key,
                fsync=True if fsync is None else fsync,
                max_line_bytes=MAX_LINE_BYTES if max_line_bytes is None else max_line_bytes,
                within=within,
            )
            with self._lock:
                self._files[key] = cached
                while len(self._files) > self._size:
                    self._files.popitem(last=False)
        else:
            if fsync is not None:
                cached.fsync = fsync
            if within is not None:
                cached.within = within
            cached.refresh()
        return cached

    def clear(self) -> None:
        with self._lock:
            self._files.clear()


_cache = _FileCache()
clear_cache = _cache.clear
