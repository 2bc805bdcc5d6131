"""The search index: an SQLite FTS5 table that the session files feed, and the queries over it.

It is a cache. The files stay the only source of truth: the index can be deleted at any time and is
rebuilt by the next catch-up. For each file it remembers how far it has read (the byte offset after
the last whole line, and the bytes just before it) and the file's (device, inode, size, mtime) then.
Catching up reads only the bytes appended since; a file that shrank, was replaced, or whose bytes
before the offset changed is read again from the start; a file that left the listing is dropped.

Files are kept by their path as bytes (``os.fsencode``), so a file name that is not UTF-8 is indexed
like any other. One file never breaks the others: whatever goes wrong while a file is read is that
file's own failure, reported in ``CatchUp.failed`` and not tried again until the file changes; only the
index's own failures (an SQLite error) stop a catch-up.

Several threads and processes may catch up and query at once. SQLite's WAL lets queries read while one
writer writes; writers take turns (``BEGIN IMMEDIATE`` with a busy timeout). Each file is caught up in
one transaction that also records its new offset, so a query sees a file either before or after it, never
half of it; and a writer that got the lock after another re-reads the file's state first, so a file
caught up meanwhile is not read twice.
"""

from __future__ import annotations

import itertools
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ..sessionfiles.catalog import SessionInfo
from ..sessionfiles.errors import SessionError
from ..sessionfiles.lines import BadLine, loads_line
from ..sessionfiles.store import MAX_LINE_BYTES, LongLine, SessionFile, open_regular, read_chunks
from ..sessionfiles.transactions import write_transaction
from .extract import searchable_text
from .query import fts_query, marked
from .snippets import Segment, Snippets
from .text import TOKEN_CATEGORIES, index_form

SCHEMA_VERSION = 3  # bump when the tables, the tokenizer or what is indexed change: the index is then rebuilt
BUSY_TIMEOUT_S = 30.0  # how long a writer waits for another one (a first build of a large file takes seconds)
PAGE_SIZE = 20
# A query matching more entries than this ranks the newest this many first (the highest row ids: a
# first build indexes the oldest sessions first), then the older ones: ranking is most of a query's
# cost, and a word found in 27,000 entries costs ~50 ms to rank whole, while the first pages are all
# most people read.
CANDIDATES = 2000
_PREFIX_CHECK = 64  # bytes before the offset compared on catch-up to notice a rewritten file

_SCHEMA = [
    """CREATE TABLE files (
        id INTEGER PRIMARY KEY,
        path BLOB NOT NULL UNIQUE,
        session_id TEXT NOT NULL,
        device INTEGER NOT NULL,
        inode INTEGER NOT NULL,
        size INTEGER NOT NULL,
        mtime_ns INTEGER NOT NULL,
        version INTEGER NOT NULL,
        offset INTEGER NOT NULL,
        prefix BLOB NOT NULL
    )""",
    "CREATE INDEX files_session ON files (session_id)",
    """CREATE TABLE entries (
        id INTEGER PRIMARY KEY,
        file_id INTEGER NOT NULL,
        entry_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        timestamp TEXT NOT NULL,
        text TEXT NOT NULL,
        UNIQUE (file_id, entry_id)
    )""",
    f"""CREATE VIRTUAL TABLE fts USING fts5(
        text, content='entries', content_rowid='id',
        tokenize="unicode61 remove_diacritics 2 categories '{TOKEN_CATEGORIES}'"
    )""",
    """CREATE TRIGGER entries_insert AFTER INSERT ON entries BEGIN
        INSERT INTO fts (rowid, text) VALUES (new.id, new.text);
    END""",
    """CREATE TRIGGER entries_delete AFTER DELETE ON entries BEGIN
        INSERT INTO fts (fts, rowid, text) VALUES ('delete', old.id, old.text);
    END""",
    """CREATE TRIGGER entries_update AFTER UPDATE ON entries BEGIN
        INSERT INTO fts (fts, rowid, text) VALUES ('delete', old.id, old.text);
        INSERT INTO fts (rowid, text) VALUES (new.id, new.text);
    END""",
]
_TABLES = ("fts", "entries", "files")  # dropping a table drops its triggers and indexes

_UPSERT = """INSERT INTO entries (file_id, entry_id, kind, timestamp, text) VALUES (?, ?, ?, ?, ?)
    ON CONFLICT (file_id, entry_id) DO UPDATE SET kind = excluded.kind, timestamp = excluded.timestamp,
    text = excluded.text"""

# Hits without their text: a text is read, and its snippet cut, only for the hits of the page shown
# (``_TEXTS``, ``snippets``), never for every hit ranked.
_QUERY = """SELECT e.id, f.session_id, f.path, e.entry_id, e.kind, e.timestamp
    FROM fts JOIN entries e ON e.id = fts.rowid JOIN files f ON f.id = e.file_id
    WHERE fts MATCH ? {session}
    ORDER BY rank LIMIT ? OFFSET ?"""
_TEXTS = "SELECT id, text FROM entries WHERE id IN (SELECT value FROM json_each(?))"
# The lowest row id among the newest CANDIDATES matches, and how many there are (no ranking: rows
# come in row id order from FTS5's own index); the tables are joined only for a filter.
_CANDIDATES = """SELECT min(id), count(*) FROM (SELECT fts.rowid AS id FROM fts {joins}
    WHERE fts MATCH ? {session} ORDER BY fts.rowid DESC LIMIT ?)"""
_JOINS = "JOIN entries e ON e.id = fts.rowid JOIN files f ON f.id = e.file_id"

Row = tuple[str, str, str, str]  # entry id, kind, timestamp, text as indexed
Stamp = tuple[int, int, int, int, int]  # a file's row id, then device, inode, size, mtime (ns) when read


class SearchUnavailable(Exception):
    """The index cannot be used (its file is not a database, or another writer held it too long).
    Nothing is lost: it is a cache of the session files."""


@dataclass(frozen=True)
class Hit:
    """One entry the query found: where it is, what it is, and the matching piece of its text."""

    session_id: str
    path: str
    entry_id: str
    kind: str  # the message role, or the entry type for other entries
    timestamp: str  # the entry's, as stored (ISO)
    snippet: tuple[Segment, ...]
    title: str = ""  # the session's name or first message, when the caller knows it

    @property
    def marks(self) -> str:
        """The words the snippet shows as found, once each (space-separated): the permalink hands them
        to the page, which opens the fold holding them and marks them."""
        return " ".join(
            dict.fromkeys(piece.text.strip() for piece in self.snippet if piece.match and piece.text.strip())
        )

    @property
    def when(self) -> str:
        """The timestamp shortened for reading (``2026-03-02 09:15``), or as stored when it is no ISO time."""
        stamp = self.timestamp
        return f"{stamp[:10]} {stamp[11:16]}" if len(stamp) >= 16 and stamp[10] == "T" else stamp


@dataclass
class CatchUp:
    """What one catch-up did."""

    files_read: int = 0
    files_dropped: int = 0
    bytes_read: int = 0
    entries: int = 0
    seconds: float = 0.0
    failed: dict[str, str] = field(default_factory=dict)  # files that could not be indexed (path: why)


@dataclass(frozen=True)
class _Known:
    id: int
    device: int
    inode: int
    size: int
    mtime_ns: int
    version: int
    offset: int
    prefix: bytes


class SearchIndex:
    """The index stored in one SQLite file (created, or rebuilt when its schema is older, on first use)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._local = threading.local()  # one connection per thread: sqlite3 connections stay in theirs

    # ------------------------------------------------------------------ connection

    def _db(self) -> sqlite3.Connection:
        db: sqlite3.Connection | None = getattr(self._local, "db", None)
        if db is None:
            db = self._open()
            self._local.db = db
            self._local.known = None
            self._local.failed = {}
        return db

    def _known(self, db: sqlite3.Connection) -> dict[str, Stamp]:
        """Each indexed file's id and stamp. Kept between catch-ups while no other connection has
        committed (``data_version`` tells), since this one updates it with its own writes."""
        version = db.execute("PRAGMA data_version").fetchone()[0]
        local = self._local
        if local.known is None or local.data_version != version:
            local.known = {
                os.fsdecode(row[0]): row[1:]
                for row in db.execute("SELECT path, id, device, inode, size, mtime_ns FROM files")
            }
            local.data_version = version
            local.listed = {}
            local.caught_up = None
        known: dict[str, Stamp] = local.known
        return known

    def _open(self) -> sqlite3.Connection:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        except (OSError, sqlite3.Error) as error:
            raise _unavailable(self.path, error) from error
        try:
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")  # a cache: losing the last commits to a crash is fine
            if db.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
                with write_transaction(db):
                    if db.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
                        for table in _TABLES:
                            db.execute(f"DROP TABLE IF EXISTS {table}")
                        for statement in _SCHEMA:
                            db.execute(statement)
                        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        except sqlite3.Error as error:
            db.close()
            raise _unavailable(self.path, error) from error
        return db

    def close(self) -> None:
        """Close this thread's connection (others close when their thread's objects are collected)."""
        db = getattr(self._local, "db", None)
        if db is not None:
            db.close()
            self._local.db = None

    # ------------------------------------------------------------------ catching up

    def catch_up(self, sessions: Sequence[SessionInfo], *, max_line_bytes: int = MAX_LINE_BYTES) -> CatchUp:
        """Bring the index to ``sessions`` (a catalog's listing: the readable session files), reading
        lines as that catalog does (``max_line_bytes``).

        A catalog hands out the same ``SessionInfo`` object for a file while the file's stamp is the
        one it had: a file listed with the very object this connection caught up with last time has not
        changed since, and is not looked at again (a search's listing already looked at every file; a
        second ``stat`` of each cost as much as the listing). A watching catalog hands out the very
        same listing object while no file changed (``Catalog.listing``): given the listing this
        connection caught up with last time, with nothing committed meanwhile, there is nothing to do,
        and no file is looked at. Files are taken oldest first, so that row ids grow with recency
        (``CANDIDATES``)."""
        started = time.perf_counter()
        report = CatchUp()
        try:
            db = self._db()
            known = self._known(db)
            last = self._local.caught_up
            if last is not None and last[0] is sessions:
                report.failed = dict(last[1])  # still failing: none of the files changed
                report.seconds = time.perf_counter() - started
                return report
            same: dict[str, SessionInfo] = self._local.listed
            failed: dict[str, tuple[tuple[int, int, int, int], str]] = self._local.failed
            listed: set[str] = set()
            for info in reversed(sessions):
                path = str(info.path)
                if same.get(path) is info:
                    listed.add(path)
                    continue
                try:
                    st = os.stat(path)
                except OSError:
                    continue  # gone since the listing; dropped next time
                listed.add(path)
                stamp = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
                seen = known.get(path)
                if seen is None or seen[1:] != stamp:
                    failure = failed.get(path)
                    if failure is not None and failure[0] == stamp:
                        report.failed[path] = failure[1]
                        continue
                    try:
                        with write_transaction(db):
                            seen = self._read_file(db, info, report, max_line_bytes)
                    except sqlite3.Error:
                        raise  # the index's own trouble, not the file's
                    except Exception as error:  # one file must never keep the others from being searched
                        failed[path] = (stamp, report.failed.setdefault(path, _failure(error)))
                        continue
                    failed.pop(path, None)
                    if seen is not None:
                        known[path] = seen
                if seen is not None:
                    same[path] = info
            for path in [path for path in same if path not in listed]:
                del same[path]
            for path in [path for path in failed if path not in listed]:
                del failed[path]
            gone = [path for path in known if path not in listed]
            if gone:
                with write_transaction(db):
                    for path in gone:
                        _forget(db, known[path][0])
                for path in gone:
                    del known[path]
                report.files_dropped = len(gone)
            self._local.caught_up = (sessions, dict(report.failed))  # kept, so that its id is never reused
        except sqlite3.Error as error:
            self._local.known = None
            raise _unavailable(self.path, error) from error
        report.seconds = time.perf_counter() - started
        return report

    def _read_file(
        self, db: sqlite3.Connection, info: SessionInfo, report: CatchUp, max_line_bytes: int
    ) -> Stamp | None:
        """Index what ``info``'s file holds beyond what is indexed (inside the caller's transaction);
        returns the file's id and stamp as now recorded, None when it was not read."""
        path = str(info.path)
        key = os.fsencode(path)
        found = db.execute(
            "SELECT id, device, inode, size, mtime_ns, version, offset, prefix FROM files WHERE path = ?", (key,)
        ).fetchone()
        known = _Known(*found) if found else None
        try:
            fd, st = open_regular(path)  # a FIFO or a device swapped in must neither block nor be read
        except (OSError, SessionError):
            return None
        with open(fd, "rb", buffering=0):  # closes the descriptor
            stamp = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
            if known is not None and (known.device, known.inode, known.size, known.mtime_ns) == stamp:
                return None  # another writer caught up on it while this one waited for the lock
            start = known.offset if known is not None and _grew(known, info, st, fd) else 0
            if known is not None and start == 0:
                db.execute("DELETE FROM entries WHERE file_id = ?", (known.id,))
            if info.version < 3:
                rows, offset = _legacy_rows(info.path, max_line_bytes)
            else:
                rows, offset = _rows_after(fd, start, st.st_size, max_line_bytes)
            start_prefix = max(0, offset - _PREFIX_CHECK)
            prefix = os.pread(fd, offset - start_prefix, start_prefix)
        values = (info.id, *stamp, info.version, offset, prefix)
        if known is None:
            cursor = db.execute(
                "INSERT INTO files (session_id, device, inode, size, mtime_ns, version, offset, prefix, path)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (*values, key),
            )
            file_id = cursor.lastrowid
            assert file_id is not None
        else:
            db.execute(
                "UPDATE files SET session_id = ?, device = ?, inode = ?, size = ?, mtime_ns = ?, version = ?,"
                " offset = ?, prefix = ? WHERE id = ?",
                (*values, known.id),
            )
            file_id = known.id
        db.executemany(_UPSERT, ((file_id, *row) for row in rows))
        report.files_read += 1
        report.bytes_read += max(0, offset - start)
        report.entries += len(rows)
        return (file_id, *stamp)

    # ------------------------------------------------------------------ querying

    def search(
        self,
        query: str,
        *,
        session: str | None = None,
        page: int = 1,
        paths: Sequence[str] | None = None,
        keep: Callable[[str, str], bool] | None = None,
    ) -> tuple[list[Hit], bool]:
        """One page of hits for ``query``, best first (bm25), and whether another page follows.
        ``session`` keeps only hits in that session, ``paths`` only hits in those files, ``keep(path,
        entry id)`` only the hits it accepts (the pages are then counted after it). A query with nothing
        to search finds nothing. A query matching more than ``CANDIDATES`` entries lists the newest of
        them first, by rank, then the others (``_ranked``); with ``keep``, every match by rank."""
        expression = fts_query(query)
        if expression is None:
            return [], False
        where = "AND f.session_id = ?" if session is not None else ""
        params: list[object] = [expression]
        if session is not None:
            params.append(session)
        if paths is not None:
            where += " AND hex(f.path) IN (SELECT value FROM json_each(?))"  # JSON holds no bytes: hex
            params.append(orjson.dumps([os.fsencode(path).hex().upper() for path in paths]).decode())
        skip = (max(page, 1) - 1) * PAGE_SIZE
        try:
            db = self._db()
            with _snapshot(db):  # the page's texts as the query saw them
                if keep is not None:
                    rows = db.execute(_QUERY.format(session=where), [*params, -1, 0])
                    kept = (row for row in rows if keep(os.fsdecode(row[2]), row[3]))
                    found = list(itertools.islice(kept, skip, skip + PAGE_SIZE + 1))
                    rows.close()
                else:
                    found = _ranked(db, where, params, skip, PAGE_SIZE + 1)
                shown = found[:PAGE_SIZE]
                texts = dict(db.execute(_TEXTS, [orjson.dumps([row[0] for row in shown]).decode()]))
        except sqlite3.Error as error:
            raise _unavailable(self.path, error) from error
        snippets = Snippets(marked(query))
        hits = [Hit(row[1], os.fsdecode(row[2]), row[3], row[4], row[5], snippets.of(texts[row[0]])) for row in shown]
        return hits, len(found) > PAGE_SIZE


def _ranked(db: sqlite3.Connection, where: str, params: list[object], skip: int, limit: int) -> list[Any]:
    """``limit`` hits from the ``skip``-th on, in one order for every page: the newest ``CANDIDATES``
    matches by rank, then (for a query matching more) the older ones by rank."""
    candidates = _CANDIDATES.format(session=where, joins=_JOINS if where else "")
    lowest, count = db.execute(candidates, [*params, CANDIDATES]).fetchone()
    if count < CANDIDATES:
        return db.execute(_QUERY.format(session=where), [*params, limit, skip]).fetchall()
    newest = where + " AND fts.rowid >= ?"
    found = db.execute(_QUERY.format(session=newest), [*params, lowest, limit, skip]).fetchall() if skip < count else []
    if len(found) < limit:
        older = where + " AND fts.rowid < ?"
        found += db.execute(
            _QUERY.format(session=older), [*params, lowest, limit - len(found), max(0, skip - count)]
        ).fetchall()
    return found


def _grew(known: _Known, info: SessionInfo, st: os.stat_result, fd: int) -> bool:
    """Whether the file is the one indexed, only longer: same inode, no shorter, the bytes before the
    offset unchanged, and a version-3 file both times (older ones are read whole)."""
    if known.version < 3 or info.version < 3 or (st.st_dev, st.st_ino) != (known.device, known.inode):
        return False
    if st.st_size < known.offset:
        return False
    start = known.offset - len(known.prefix)
    return os.pread(fd, len(known.prefix), start) == known.prefix


def _rows_after(fd: int, start: int, stop: int, max_line_bytes: int) -> tuple[list[Row], int]:
    """Searchable entries of the whole lines from ``start`` to ``stop``, and the offset after the last one.

    Lines are read as the session reader reads them (``read_chunks``, ``loads_line``): a line over the
    length limit is passed over, never buffered. An unterminated last line that holds a whole JSON object
    is an entry (pi reads it so), but the offset stays before it: it is read again once complete, and its
    row replaced by the same one."""
    rows: list[Row] = []
    offset = start
    for piece in read_chunks(fd, start, stop, max_line_bytes):
        if isinstance(piece, LongLine):
            if piece.terminated:
                offset = piece.end + 1
            continue
        buf, base, end = piece
        view = memoryview(buf)
        if not end:
            if buf.strip() and len(buf) <= max_line_bytes:
                _add_row(view, rows)
            break
        pos = 0
        while pos < end:
            newline = buf.find(b"\n", pos, end)
            if newline - pos <= max_line_bytes:  # a longer line inside one chunk: skipped as the reader skips it
                _add_row(view[pos:newline], rows)
            pos = newline + 1
        offset = base + end
    return rows, offset


def _add_row(line: memoryview, rows: list[Row]) -> None:
    try:
        entry = loads_line(bytes(line))
    except BadLine:
        return  # not an entry: the session's own reader reports it
    if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
        return
    found = searchable_text(entry)
    if found is not None:
        timestamp = entry.get("timestamp")
        rows.append((entry["id"], found[0], timestamp if isinstance(timestamp, str) else "", index_form(found[1])))


def _legacy_rows(path: Path, max_line_bytes: int) -> tuple[list[Row], int]:
    """A v1/v2 file, read whole through the session reader: it gives v1 lines their ids and migrates
    entries to v3 in memory."""
    try:
        session = SessionFile(path, fsync=False, max_line_bytes=max_line_bytes)
    except (SessionError, OSError):
        return [], 0
    index = session.index
    nodes = [row for row in range(len(index)) if index.is_node(row)]
    rows: list[Row] = []
    for row, entry in zip(nodes, session.entries(nodes)):
        found = searchable_text(entry)
        if found is not None:
            rows.append((index.ids[row], found[0], index.timestamps[row], index_form(found[1])))
    return rows, index.offset


def _failure(error: Exception) -> str:
    """Why a file could not be indexed, in one line."""
    if isinstance(error, OSError):
        return f"cannot be read: {error.strerror or error}"
    return f"could not be indexed ({type(error).__name__}: {error})"


def _forget(db: sqlite3.Connection, file_id: int) -> None:
    db.execute("DELETE FROM entries WHERE file_id = ?", (file_id,))
    db.execute("DELETE FROM files WHERE id = ?", (file_id,))


@contextmanager
def _snapshot(db: sqlite3.Connection) -> Iterator[None]:
    """One read transaction: its statements see the index as it was at the first of them."""
    db.execute("BEGIN")
    try:
        yield
    finally:
        db.execute("COMMIT")


def _unavailable(path: Path, error: sqlite3.Error | OSError) -> SearchUnavailable:
    if isinstance(error, sqlite3.OperationalError) and "locked" in str(error):
        return SearchUnavailable(f"the search index {path} is busy (another process is updating it); try again")
    return SearchUnavailable(
        f"the search index {path} cannot be used ({error}); it is only a cache of the session files: "
        "delete it and it is rebuilt, or point PITREE_SEARCH_DB at another file"
    )
