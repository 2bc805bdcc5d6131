"""Replies being written survive their process: a killed server (``kill -9``, a crash, the power of a
container pulled) loses none of the text it streamed.

A reply's entry is appended to its session only when the reply ends (``replies``); until then its text
exists in the process alone. So each running reply also has a journal of its own, a file in
``PITREE_JOURNAL_DIR`` (``var/replies/`` by default): a first line saying where the reply belongs (the
session file, the entry it answers, the file's position when it began, the model, and the id its entry
will have), then one line per piece of text, appended as it streams (a ``write`` each, no ``fsync``:
it survives the process, not a power cut). The process holds an exclusive ``flock`` on it while the
reply runs, and deletes it once the entry is in the session file.

When a server starts (``recover``), each journal no process holds a lock on is one a process left
behind: its text is appended as a stopped reply (``aborted``, as a reply stopped by SIGTERM, its
``errorMessage`` saying that the server restarted: ``RESTART_MESSAGE``), under the entry it answered,
with the id the journal names, and the journal is deleted. The id makes it happen
once: an entry with that id already in the file means the reply was stored before the process died
(between the append and the deletion), so nothing more is written. A journal that cannot be stored yet
(a full disk, the session file gone) is kept, said in the log, and tried again at the next start.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import secrets
from pathlib import Path
from typing import Any

import orjson

from ..assistants.base import RESTART_MESSAGE, Reply
from ..sessionfiles import entries as E
from ..sessionfiles.errors import SessionError
from ..sessionfiles.index import SessionIndex
from ..sessionfiles.store import SessionFile

log = logging.getLogger(__name__)

SUFFIX = ".journal"


class AlreadyStored(SessionError):
    """The journal's entry is in the session file: the reply was stored before its process ended."""


class Journal:
    """The journal of one running reply; ``entry_id`` is the id its entry is to have."""

    def __init__(self, folder: Path, session: SessionFile, parent_id: str, position_then: str | None, reply: Reply):
        self.entry_id = E.new_entry_id(session.index.by_id)
        self.path = folder / f"{self.entry_id}-{secrets.token_hex(4)}{SUFFIX}"
        self._fd: int | None = None
        header = {
            "session": os.fsencode(session.path.absolute()).hex(),  # a file name need not be UTF-8
            "sessionId": session.session_id,
            "parent": parent_id,
            "positionThen": position_then,
            "entry": self.entry_id,
            "provider": reply.provider,
            "model": reply.model,
            "api": reply.api,
        }
        try:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | os.O_CLOEXEC, 0o600)
        except OSError:
            log.warning("reply journal %s cannot be created: a killed server would lose this reply", self.path)
            return
        fcntl.flock(fd, fcntl.LOCK_EX)
        self._fd = fd
        self._write(orjson.dumps(header) + b"\n")

    def add(self, text: str) -> None:
        """One more piece of the reply's text."""
        if self._fd is not None:
            self._write(orjson.dumps({"t": text}) + b"\n")

    def close(self, *, stored: bool) -> None:
        """Done with it: deleted when the reply is ``stored`` in its session, else left for the next
        start to store."""
        if self._fd is None:
            return
        if stored:
            self.path.unlink(missing_ok=True)
        os.close(self._fd)  # releases the lock
        self._fd = None

    def _write(self, line: bytes) -> None:
        assert self._fd is not None
        try:
            os.write(self._fd, line)
        except OSError:
            # A full disk costs the journal, never the reply being written: it is kept as far as it got.
            log.warning("reply journal %s cannot grow: a killed server would lose the rest of this reply", self.path)
            os.close(self._fd)
            self._fd = None


def recover(folder: Path, *, sessions: Path, fsync: bool) -> list[dict[str, Any]]:
    """Store the replies that ended with their process (journals nobody holds) as stopped replies, once;
    returns the entries written. ``sessions``: the sessions folder, outside which nothing is written."""
    written = []
    for path in sorted(folder.glob(f"*{SUFFIX}")) if folder.is_dir() else []:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:
            continue  # stored by another process starting at the same time
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # a live process is writing this reply
            entry = _store(fd, path, sessions, fsync)
            if entry is not None:
                written.append(entry)
        finally:
            os.close(fd)
    return written


def _store(fd: int, path: Path, sessions: Path, fsync: bool) -> dict[str, Any] | None:
    try:
        header, text = _read(fd)
    except (ValueError, KeyError):
        # Killed before its first line was whole: it names no session, and holds no text.
        path.unlink(missing_ok=True)
        return None
    target = Path(os.fsdecode(bytes.fromhex(header["session"])))
    draft = E.assistant_message(
        text,
        provider=header["provider"],
        model=header["model"],
        api=header["api"],
        stop_reason="aborted",
        error_message=RESTART_MESSAGE,
    )
    entry_id = header["entry"]

    def not_stored_yet(index: SessionIndex) -> None:
        if index.row(entry_id) is not None:
            raise AlreadyStored(entry_id)

    try:
        session = SessionFile.open(target, fsync=fsync, within=sessions)
        entry = session.append(
            draft, header["parent"], check=not_stored_yet, position_then=header["positionThen"], entry_id=entry_id
        )
    except AlreadyStored:
        path.unlink(missing_ok=True)
        return None
    except (SessionError, OSError) as error:
        log.warning(
            "the reply cut short in session %s could not be stored (%s); its journal %s is kept and tried "
            "again at the next start",
            header["sessionId"],
            error,
            path,
        )
        return None
    path.unlink(missing_ok=True)
    log.warning(
        "pitree: a reply to entry %s of session %s, cut short when its server stopped, was stored as "
        "stopped (%s characters)",
        header["parent"],
        header["sessionId"],
        f"{len(text):,}",
    )
    return entry


def _read(fd: int) -> tuple[dict[str, Any], str]:
    """The journal's header and text; a last line cut short by the kill is left out."""
    with os.fdopen(os.dup(fd), "rb") as journal:
        lines = journal.read().split(b"\n")
    header = orjson.loads(lines[0])
    parts = []
    for line in lines[1:-1]:  # after the last newline: nothing, or a line the kill cut
        with contextlib.suppress(orjson.JSONDecodeError):
            parts.append(orjson.loads(line)["t"])
    return header, "".join(parts)
