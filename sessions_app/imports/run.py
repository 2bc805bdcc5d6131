"""An import, start to end: the export read whole into a spool (one conversation a line), then each
conversation written: a new session file whole (exclusive create), or what an earlier import of it
lacks appended to its file in one write.

Reading first means a malformed export is refused, with the reason and the place, before anything
is written; a spool line at a time means memory holds one conversation, however large the export.
Each conversation's session has an id derived from the conversation and the workspace (a UUIDv7 at
the conversation's start), so the same export imported again finds the files it wrote.
"""

from __future__ import annotations

import hashlib
import tempfile
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import orjson

from ..sessionfiles.entries import dump_line, session_file_name
from ..sessionfiles.errors import SessionError
from ..sessionfiles.fork import encode_cwd, new_header
from ..sessionfiles.instants import format_iso
from ..sessionfiles.lines import nested_too_deeply
from ..sessionfiles.store import SessionFile, write_new
from . import chatgpt, claudecode, librechat, openwebui
from .conversation import Conversation
from .errors import ExportError
from .plan import Existing, plan
from .sources import CHATGPT, CLAUDE_CODE, KINDS, LIBRECHAT, OPEN_WEBUI, Counter, Export, open_export

READERS: dict[str, Callable[[Export, Counter], Iterator[Conversation]]] = {
    CHATGPT: chatgpt.conversations,
    OPEN_WEBUI: openwebui.conversations,
    LIBRECHAT: librechat.conversations,
    CLAUDE_CODE: claudecode.conversations,
}

Progress = Callable[[str, int, int], None]
"""Told how far an import is: ``("reading", bytes read, bytes in all)``, then ``("writing",
conversations written, conversations in all)``."""

CREATED, APPENDED, UNCHANGED, REFUSED = "created", "appended", "unchanged", "refused"


@dataclass(frozen=True)
class Outcome:
    title: str  # the conversation's title, or its id
    session_id: str
    path: Path | None
    status: str  # CREATED, APPENDED, UNCHANGED or REFUSED
    added: int  # entries written
    reason: str = ""  # why it was refused


@dataclass
class Report:
    name: str  # the export, as messages call it
    kind: str  # which product wrote it, as people call it
    outcomes: list[Outcome] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # odd things read as best they could be


def import_export(
    path: Path,
    *,
    root: Path,
    cwd: str,
    fsync: bool = True,
    name: str | None = None,
    max_bytes: int | None = None,
    progress: Progress | None = None,
    locate: Callable[[str, Path], Path | None] | None = None,
) -> Report:
    """Import the export at ``path`` into the workspace ``cwd`` of the sessions folder ``root``.

    ``locate(session id, its own path)`` finds the file an earlier import wrote (by default: that path,
    if it is there); an ``ExportError`` refuses the export before anything is written."""
    export = open_export(path, name=name, max_bytes=max_bytes)
    found = locate or _same_path
    try:
        report = Report(export.name, KINDS[export.kind])
        with tempfile.TemporaryFile(prefix="pitree-import-") as spool:
            count = _read(export, spool, progress, root=root, cwd=cwd, locate=found)
            spool.seek(0)
            for number in range(1, count + 1):
                record = orjson.loads(spool.readline())
                blob = spool.read(record["size"])
                report.outcomes.append(_write(record, blob, root=root, cwd=cwd, fsync=fsync))
                report.notes += record["notes"]
                if progress is not None:
                    progress("writing", number, count)
        return report
    finally:
        export.close()


def _read(
    export: Export,
    spool: IO[bytes],
    progress: Progress | None,
    *,
    root: Path,
    cwd: str,
    locate: Callable[[str, Path], Path | None],
) -> int:
    """Read the export into ``spool``, a record per conversation: for one that has no session yet, the
    whole file to write (planned now, so that writing costs a write); for one that has, the
    conversation, planned against its file when it is written."""
    counter = Counter(export.total, None if progress is None else lambda done, total: progress("reading", done, total))
    count = 0
    for conversation in READERS[export.kind](export, counter):
        session_id = session_id_for(conversation, cwd)
        own = session_path(conversation, root, cwd)
        existing = locate(session_id, own)
        record: dict[str, object] = {"title": conversation.title or conversation.id, "session": session_id}
        if existing is None:
            stamp = format_iso(max(conversation.created_ms, 0))
            header = new_header(cwd, session_id=session_id, timestamp=stamp)
            entries = plan(conversation, Existing.nothing())
            blob = b"".join(_line(entry, conversation.where) for entry in [header, *entries])
            record.update(kind="new", path=str(own), added=len(entries))
        else:
            blob = conversation.dumps()
            record.update(kind="grow", path=str(existing))
        record.update(notes=conversation.notes, size=len(blob))
        spool.write(orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE))
        spool.write(blob)
        count += 1
    return count


def _line(entry: dict[str, object], where: str) -> bytes:
    """An entry's line; refused (before anything is written) when it nests deeper than any reader of
    a session line reads (docs/format.md §8.2)."""
    try:
        return orjson.dumps(entry, option=orjson.OPT_APPEND_NEWLINE)
    except orjson.JSONEncodeError:
        line = dump_line(entry)  # deeper than orjson writes, or holding half a surrogate pair
    if nested_too_deeply(line):
        raise ExportError(f"{where}: holds values nested more than 1,024 levels deep")
    return line


def session_id_for(conversation: Conversation, cwd: str) -> str:
    """The id of a conversation's session in a workspace: a UUIDv7 with the conversation's start as its
    time and a digest of (workspace, product, conversation id) as its random bits, so that importing
    again finds it, and the same conversation imported into two workspaces makes two sessions."""
    digest = hashlib.sha256(f"{cwd}\0{conversation.source}\0{conversation.id}".encode("utf-8", "replace")).digest()
    ms = min(max(conversation.created_ms, 0), 2**48 - 1)
    value = ms << 80 | int.from_bytes(digest[:10], "big")
    value = value & ~(0xF << 76) | 0x7 << 76  # version 7
    value = value & ~(0x3 << 62) | 0x2 << 62  # RFC 4122 variant
    return str(uuid.UUID(int=value))


def session_path(conversation: Conversation, root: Path, cwd: str) -> Path:
    """Where a conversation's session is written in a workspace (pi's ``<time>_<id>.jsonl``)."""
    stamp = format_iso(max(conversation.created_ms, 0))
    return root / encode_cwd(cwd) / session_file_name(stamp, session_id_for(conversation, cwd))


def _same_path(_: str, path: Path) -> Path | None:
    return path if path.exists() else None


def _write(record: dict[str, Any], blob: bytes, *, root: Path, cwd: str, fsync: bool) -> Outcome:
    """Write one conversation of the spool: its new file whole, or what its file lacks appended."""
    title, session_id, path = record["title"], record["session"], Path(record["path"])
    if record["kind"] == "grow":
        conversation = Conversation.loads(blob)
        done = write_to(conversation, path, session_id, cwd=cwd, root=root, fsync=fsync)
        record["notes"] = conversation.notes  # with those the plan found
        return done
    try:
        try:
            write_new(path, blob, fsync=fsync, within=root)
            return Outcome(title, session_id, path, CREATED, record["added"])
        except FileExistsError:  # another import of it, at the same moment: what it lacks
            entries = [orjson.loads(line) for line in blob.splitlines()[1:]]
            added = SessionFile.open(path, fsync=fsync, within=root).extend(
                lambda index: [e for e in entries if e["id"] not in index.by_id]
            )
    except SessionError as error:
        return Outcome(title, session_id, None, REFUSED, 0, _unplaced(str(error), path, root))
    return Outcome(title, session_id, path, APPENDED if added else UNCHANGED, len(added))


def _unplaced(reason: str, path: Path, root: Path) -> str:
    """The core's reason without the paths it names (the page shows it, and names no server folder)."""
    for place, said in (
        (path, "this session's file"),
        (path.parent, "this session's folder"),
        (root, "the sessions folder"),
    ):
        reason = reason.replace(str(place), said)
    return reason


def write_to(conversation: Conversation, path: Path, session_id: str, *, cwd: str, root: Path, fsync: bool) -> Outcome:
    """Write one conversation to ``path`` (a session ``session_id`` in ``cwd``), planned against the
    file as it is: created whole when it is not there, else what it lacks appended in one write."""
    title = conversation.title or conversation.id
    try:
        if not path.exists():
            header = new_header(cwd, session_id=session_id, timestamp=format_iso(max(conversation.created_ms, 0)))
            entries = plan(conversation, Existing.nothing())
            try:
                write_new(
                    path,
                    b"".join(_line(entry, conversation.where) for entry in [header, *entries]),
                    fsync=fsync,
                    within=root,
                )
                return Outcome(title, session_id, path, CREATED, len(entries))
            except FileExistsError:
                pass
        session = SessionFile.open(path, fsync=fsync, within=root)
        added = session.extend(lambda _: plan(conversation, Existing.of(session)))
    except SessionError as error:
        return Outcome(title, session_id, None, REFUSED, 0, _unplaced(str(error), path, root))
    return Outcome(title, session_id, path, APPENDED if added else UNCHANGED, len(added))
