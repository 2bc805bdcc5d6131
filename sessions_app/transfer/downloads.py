"""Downloads: what a grant sees of a session, as pi reads it (``.jsonl``), under a name any file system
takes. The Markdown download is ``markdown.py``'s."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..access.scoped import SessionView
from ..services.lookup import entry_row
from ..sessionfiles import entries as E
from ..sessionfiles.store import SessionFile, open_regular
from ..sessionfiles.tree import path as tree_path


@dataclass(frozen=True)
class Download:
    name: str
    data: bytes


Builder = Callable[[SessionView, str | None], Download]


def jsonl(view: SessionView, entry_id: str | None) -> Download:
    """The session as pi reads it: the whole file (what the grant sees of it), or with ``entry_id`` the
    branch through that entry. Lines are the stored bytes; the session id stays, so that uploading it
    back makes a fork of this session."""
    index = view.index
    name = download_name(view, entry_id, "jsonl")
    if entry_id is None and view.grant.whole:
        return Download(name, _file_bytes(view.path, index.offset))
    if entry_id is None:
        rows = [row for row in range(len(index)) if index.is_node(row)]
    else:
        rows = tree_path(index, entry_row(view, entry_id))
    header = E.dump_line(view.header)
    return Download(name, header + b"".join(line + b"\n" for line in view.raw_lines(rows)))


def download_name(session: SessionFile, entry_id: str | None, extension: str) -> str:
    """The file name a download gets: the session file's own (pi's ``<time>_<id>``), or with the branch's
    entry, in characters any file system and ``Content-Disposition`` take."""
    stem = _safe(session.path.stem, 160)
    return f"{stem}.branch-{_safe(entry_id, 40)}.{extension}" if entry_id is not None else f"{stem}.{extension}"


def _safe(text: str, limit: int) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", text)[:limit].strip(".") or "session"


def _file_bytes(path: Path, end: int) -> bytes:
    """The file's first ``end`` bytes, opened as the core opens a session file: a FIFO or a device put in
    its place since it was read is refused (NotARegularFile), where reading it could wait forever."""
    fd, _ = open_regular(path)
    with open(fd, "rb") as file:
        return file.read(end)
