"""Uploads: a ``.jsonl`` from pi or a teammate becomes a new session file in one of the uploader's
workspaces, never replacing one, and tells nothing of sessions the uploader may not see."""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.core.exceptions import PermissionDenied

from ..access.grants import Access
from ..access.listing import visible_sessions
from ..access.workspaces import may_create_in
from ..services.lookup import catalog
from ..sessionfiles import entries as E
from ..sessionfiles.catalog import URL_SAFE_ID, SessionInfo, UnknownSession
from ..sessionfiles.errors import SessionError
from ..sessionfiles.fork import encode_cwd
from ..sessionfiles.lines import BadLine, loads_line
from ..sessionfiles.store import SessionFile, write_new
from .newfiles import created_by

_ISO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z")


class UploadError(Exception):
    """An upload that was refused; nothing was written (the message says why)."""


@dataclass(frozen=True)
class Uploaded:
    session: SessionFile
    forked_from: SessionInfo | None  # the session it is a fork of, as the uploader sees it
    skipped: int  # lines the core cannot read, kept as they were


def upload(access: Access, data: bytes, cwd: str) -> Uploaded:
    """Store an uploaded ``.jsonl`` as a new session in ``cwd``'s folder. Refused (nothing written)
    unless the core reads it as a session.

    What is stored depends only on what the uploader may see, so an upload tells nothing of sessions
    they may not see: their id is given to a new session of its own (a fork of the session with that
    id when they may see it: ``parentSession`` names it), and a ``parentSession`` naming a session they
    may not see is dropped, so nobody can claim a fork of a session that is not theirs. Only an
    uploader who sees every session keeps the file whole, when no session has its id."""
    if not may_create_in(access, cwd):
        raise PermissionDenied("You may add sessions only to your own or your teams' workspaces.")
    if len(data) > settings.PITREE_MAX_UPLOAD_BYTES:
        raise UploadError(f"The file has {len(data):,} bytes; the limit is {settings.PITREE_MAX_UPLOAD_BYTES:,}.")
    checked = _check(data)
    header = dict(checked.index.header or {})
    session_id = str(header.get("id"))
    taken, existing = _existing(session_id)
    same_id = _as_seen(access, existing)
    if access.actor.sees_everything and not taken and URL_SAFE_ID.fullmatch(session_id):
        content, forked_from = data, None
    else:
        header["id"] = session_id = E.new_session_id()
        if same_id is not None:
            header["timestamp"] = E.now_iso()  # a fork by upload, made now
        named = header.pop("parentSession", None)
        forked_from = same_id or _as_seen(access, catalog().session_named(named) if isinstance(named, str) else None)
        if forked_from is not None:
            header["parentSession"] = str(forked_from.path.absolute())
        content = E.dump_line(header) + data[_header_end(data) :]
    stamp = header.get("timestamp")
    folder = Path(catalog().root) / encode_cwd(cwd)
    path = folder / E.session_file_name(
        stamp if isinstance(stamp, str) and _ISO.fullmatch(stamp) else E.now_iso(), session_id
    )
    write_new(path, content, fsync=settings.PITREE_FSYNC)  # its folders synced too, as for a new session
    created_by(access, session_id)
    return Uploaded(SessionFile.open(path), forked_from, len(checked.index.skipped()))


def _as_seen(access: Access, info: SessionInfo | None) -> SessionInfo | None:
    """``info`` as the actor sees it (titled as their share shows it); None when they may not see it."""
    return next(iter(visible_sessions(access, [info])), None) if info is not None else None


def _check(data: bytes) -> SessionFile:
    """The upload read by the core from a file of its own (outside the sessions folder)."""
    with tempfile.TemporaryDirectory(prefix="pitree-upload-") as folder:
        path = Path(folder) / "upload.jsonl"
        path.write_bytes(data)
        try:
            session = SessionFile(path, fsync=False, max_line_bytes=settings.PITREE_MAX_LINE_BYTES)
        except SessionError as error:
            raise UploadError(
                f"This is not a session pitree can read: {str(error).removeprefix(f'{path}: ')}"
            ) from None
        if not isinstance((session.index.header or {}).get("id"), str):
            raise UploadError("The session header has no id.")
        return session


def _existing(session_id: str) -> tuple[bool, SessionInfo | None]:
    """Whether a file here is named for this session id, and the session it holds when it is one."""
    try:
        path = catalog().locate(session_id)
    except UnknownSession:
        return False, None
    except SessionError:
        return True, None  # several files hold it, or one named for it is no session
    return True, catalog().info(path)


def _header_end(data: bytes) -> int:
    """Where the line after the header starts: the header is the first line holding a JSON object, as
    the core reads it (lines before it are skipped there, and dropped here)."""
    start = 0
    while start < len(data):
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end + 1
        try:
            if isinstance(loads_line(data[start:end].rstrip(b"\r\n")), dict):
                return end
        except BadLine:
            pass
        start = end
    return len(data)
