"""Downloads: what a grant sees of a session, as pi reads it (``.jsonl``), under a name any file system
takes. The Markdown download is ``markdown.py``'s.

A download is made as it is sent (``Download.pieces``): the file read ``PIECE_BYTES`` at a time, or its
lines one at a time, never the whole of it in memory (a 31 MB session's Markdown, built whole, took 22
times its size). The view reads the pieces in a worker thread as the client takes them.
"""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ..access.scoped import SessionView
from ..services.lookup import entry_row
from ..sessionfiles import entries as E
from ..sessionfiles.store import SessionFile, open_regular
from ..sessionfiles.tree import path as tree_path

PIECE_BYTES = 256 * 1024  # what one piece of a download holds (a longer line or text is cut into such)


class Pieces(Protocol):
    """A download's bytes, piece by piece; ``close`` lets go of what it holds (its file) if not done."""

    def __iter__(self) -> Iterator[bytes]: ...
    def __next__(self) -> bytes: ...
    def close(self) -> None: ...


@dataclass(frozen=True)
class Download:
    name: str
    pieces: Pieces
    size: int | None = None  # its length, when known before it is read


Builder = Callable[[SessionView, str | None], Download]


def jsonl(view: SessionView, entry_id: str | None) -> Download:
    """The session as pi reads it: the whole file (what the grant sees of it), or with ``entry_id`` the
    branch through that entry. Lines are the stored bytes; the session id stays, so that uploading it
    back makes a fork of this session."""
    index = view.index
    name = download_name(view, entry_id, "jsonl")
    if entry_id is None and view.grant.whole:
        return Download(name, _FilePieces(view.path, index.offset), index.offset)
    if entry_id is None:
        rows = [row for row in range(len(index)) if index.is_node(row)]
    else:
        rows = tree_path(index, entry_row(view, entry_id))
    lines = itertools.chain([E.dump_line(view.header)], (line + b"\n" for line in view.raw_lines(rows)))
    return Download(name, in_pieces(lines))


def in_pieces(parts: Iterable[bytes | str]) -> Generator[bytes, None, None]:
    """``parts`` (text is encoded as UTF-8) as pieces of about ``PIECE_BYTES``: small ones joined, a
    long one cut (a text by characters, so that no copy of it whole is made)."""
    held: list[bytes] = []
    size = 0
    for part in parts:
        step = PIECE_BYTES // 4 if isinstance(part, str) else PIECE_BYTES  # UTF-8: 4 bytes a character at most
        for start in range(0, len(part), step):
            piece = part[start : start + step]
            data = piece.encode() if isinstance(piece, str) else piece
            held.append(data)
            size += len(data)
            if size >= PIECE_BYTES:
                yield b"".join(held)
                held, size = [], 0
    if held:
        yield b"".join(held)


def download_name(session: SessionFile, entry_id: str | None, extension: str) -> str:
    """The file name a download gets: the session file's own (pi's ``<time>_<id>``), or with the branch's
    entry, in characters any file system and ``Content-Disposition`` take."""
    stem = _safe(session.path.stem, 160)
    return f"{stem}.branch-{_safe(entry_id, 40)}.{extension}" if entry_id is not None else f"{stem}.{extension}"


def _safe(text: str, limit: int) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", text)[:limit].strip(".") or "session"


class _FilePieces:
    """The file's first ``end`` bytes, ``PIECE_BYTES`` at a time. Opened at once, as the core opens a
    session file (a FIFO or a device put in its place since it was read is refused, NotARegularFile,
    where reading it could wait forever), so that the refusal comes before the answer begins."""

    def __init__(self, path: Path, end: int) -> None:
        self._fd: int | None = open_regular(path)[0]
        self._at, self._end = 0, end

    def __iter__(self) -> Iterator[bytes]:
        return self

    def __next__(self) -> bytes:
        piece = os.pread(self._fd, min(PIECE_BYTES, self._end - self._at), self._at) if self._fd is not None else b""
        if not piece:
            self.close()
            raise StopIteration
        self._at += len(piece)
        return piece

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
