"""The session list remembered between processes: what each file was as of its (device, inode, size,
mtime) — its SessionInfo, or only its header's facts (read for lineage, not listed yet), or why it is
no session — in a small SQLite file under a cache folder the caller chooses.

Without it, a restart reads every file of the sessions folder again (3,000 sessions: 90 MB), and a
session page's lineage every header. With it, a restart reads only the files that changed since any
process last listed them, and a file that is no session is not read again while it stays the same. It is a cache and never
the only copy: a file whose stamp differs is read again, rows of files that are gone are dropped, and
deleting the database (or finding it damaged, which deletes it) loses nothing. Every failure to read
or write it is silent; the listing then reads the files, as without a cache.

Several processes may list the same folder at once. SQLite in WAL mode lets them read while one
writes; writes are one short transaction each (``BEGIN IMMEDIATE``, waiting up to ``TIMEOUT_S`` for
another writer), and a row's stamp and facts are written together, so a reader sees a file either as
it was or as it is. Rows are kept per root folder and per line limit (the limit changes what a file
lists as).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import NamedTuple

import orjson

from .listing import SessionInfo
from .transactions import write_transaction

FILE_NAME = "listing.sqlite3"
SCHEMA = 5
"""Bump when SessionInfo's fields, or what a file lists as, change: older rows are then dropped."""
TIMEOUT_S = 5.0

Stamp = tuple[int, int, int, int]  # device, inode, size, mtime: a file unchanged since it was read


class Header(NamedTuple):
    """What lineage and lookups need of a header (which never changes once written)."""

    id: str
    parent: str | None


Known = SessionInfo | Header | str
"""What is remembered of a file: its listing, its header alone, or why it is no session."""

_TABLE = """CREATE TABLE IF NOT EXISTS sessions (
    root BLOB NOT NULL,
    line_limit INTEGER NOT NULL,
    name BLOB NOT NULL,
    stamp TEXT NOT NULL,
    info BLOB NOT NULL,
    PRIMARY KEY (root, line_limit, name)
) WITHOUT ROWID"""
_CORRUPT = frozenset({"SQLITE_CORRUPT", "SQLITE_NOTADB"})


class ListingCache:
    """The remembered listing of the ``*.jsonl`` files under ``root``, kept in ``folder``."""

    def __init__(self, folder: Path, root: Path, max_line_bytes: int) -> None:
        self.path = Path(folder) / FILE_NAME
        self._root = str(root)
        self._prefix = os.path.join(self._root, "")  # what every listed path starts with
        self._key = (os.fsencode(os.path.abspath(root)), max_line_bytes)

    def load(self) -> dict[str, tuple[Stamp, Known]]:
        """What was known of each file the last time, by path as the catalog spells it; empty when
        there is no cache or it cannot be read."""
        try:
            with self._connect() as db:
                rows = db.execute(
                    "SELECT name, stamp, info FROM sessions WHERE root = ? AND line_limit = ?", self._key
                ).fetchall()
        except (sqlite3.Error, OSError):
            return {}
        found = {}
        for name, stamp, info in rows:
            path = os.path.join(self._root, os.fsdecode(name))
            try:
                found[path] = (_stamp(stamp), _known(path, info))
            except (ValueError, TypeError):  # a row this code did not write: read the file again
                continue
        return found

    def save(self, changed: dict[str, tuple[Stamp, Known]], gone: Iterable[str]) -> None:
        """Remember ``changed`` (files read since) and forget the files that are ``gone``."""
        rows = []
        for path, (stamp, info) in changed.items():
            try:
                rows.append((*self._key, self._name(path), ":".join(map(str, stamp)), _encode(info)))
            except (orjson.JSONEncodeError, ValueError):
                continue  # not representable (it never happens with what the reader returns): not cached
        forget = [(*self._key, self._name(path)) for path in gone]
        try:
            with self._connect() as db, write_transaction(db):
                db.executemany("INSERT OR REPLACE INTO sessions VALUES (?, ?, ?, ?, ?)", rows)
                db.executemany("DELETE FROM sessions WHERE root = ? AND line_limit = ? AND name = ?", forget)
                roots = [root for (root,) in db.execute("SELECT DISTINCT root FROM sessions")]
                for root in roots:  # folders deleted since (test runs, moved projects) leave nothing behind
                    if not os.path.isdir(os.fsdecode(root)):
                        db.execute("DELETE FROM sessions WHERE root = ?", (root,))
        except (sqlite3.Error, OSError):
            return

    def _name(self, path: str) -> bytes:
        """A file's key: its path inside the root (the root itself is a key of its own)."""
        inside = path[len(self._prefix) :] if path.startswith(self._prefix) else os.path.relpath(path, self._root)
        return os.fsencode(inside)

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """A connection to the cache, created (or re-created, when damaged or from an older SCHEMA)."""
        try:
            with closing(self._open()) as db:
                yield db
        except sqlite3.DatabaseError as error:
            if getattr(error, "sqlite_errorname", None) not in _CORRUPT:
                raise
            for suffix in ("", "-wal", "-shm"):  # damaged: it is only a cache
                Path(f"{self.path}{suffix}").unlink(missing_ok=True)
            raise

    def _open(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.path, timeout=TIMEOUT_S, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")  # a cache: a power cut may lose the last write
            if db.execute("PRAGMA user_version").fetchone()[0] != SCHEMA:
                with write_transaction(db):
                    if db.execute("PRAGMA user_version").fetchone()[0] != SCHEMA:
                        db.execute("DROP TABLE IF EXISTS sessions")
                        db.execute(_TABLE)
                        db.execute(f"PRAGMA user_version = {SCHEMA}")
        except BaseException:
            db.close()
            raise
        return db


def _stamp(text: str) -> Stamp:
    device, inode, size, mtime = map(int, text.split(":"))
    return device, inode, size, mtime


def _encode(known: Known) -> bytes:
    if isinstance(known, str):
        return orjson.dumps({"failure": known})
    if isinstance(known, Header):
        return orjson.dumps({"header": list(known)})
    info = known
    return orjson.dumps(
        [
            info.id,
            info.cwd,
            info.name,
            info.parent_session_path,
            info.created,
            info.modified_ms,
            info.message_count,
            info.first_message,
            list(info.labels),
            info.version,
        ]
    )


def _known(path: str, data: bytes) -> Known:
    fields = orjson.loads(data)
    if isinstance(fields, dict):
        if isinstance(fields.get("failure"), str):
            return str(fields["failure"])
        header = fields.get("header")
        if not isinstance(header, list) or len(header) != 2:
            raise ValueError("not a row this code wrote")
        session, parent = header
        if not isinstance(session, str) or not isinstance(parent, str | None):
            raise ValueError("not a header this code wrote")
        return Header(session, parent)
    session_id, cwd, name, parent, created, modified_ms, count, first, labels, version = fields
    return SessionInfo(
        path=Path(path),
        id=session_id,
        cwd=cwd,
        name=name,
        parent_session_path=parent,
        created=created,
        modified_ms=modified_ms,
        message_count=count,
        first_message=first,
        labels=tuple(labels),
        version=version,
    )
