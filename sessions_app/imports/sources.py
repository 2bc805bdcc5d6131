"""Opening an export: a file, a ``.zip`` or a folder; which product wrote it; its documents read as
streams whose bytes are counted (the progress bar), and its pictures found by file id.

| given | read as |
| --- | --- |
| ChatGPT's ``.zip``, or a folder holding its ``conversations.json`` | ChatGPT (pictures from the same zip or folder) |
| a ``.json`` file | what its first keys say: ChatGPT (``mapping``), Open WebUI (``chat``/``history``), LibreChat (``conversationId`` with ``messages`` or ``messagesTree``) |
| a ``.jsonl`` file, a folder of them (a Claude Code project), a folder of such folders (``~/.claude/projects``), or a ``.zip`` of one | Claude Code |
"""

from __future__ import annotations

import os
import re
import stat
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO, Any

import ijson

from .errors import ExportError

CHATGPT, OPEN_WEBUI, LIBRECHAT, CLAUDE_CODE = "chatgpt", "open-webui", "librechat", "claude-code"
KINDS = {CHATGPT: "ChatGPT", OPEN_WEBUI: "Open WebUI", LIBRECHAT: "LibreChat", CLAUDE_CODE: "Claude Code"}

MAX_PICTURE_BYTES = 20 << 20
"""A picture larger than this stays a reference in the entry, not base64 in its line: a session line
over ``PITREE_MAX_LINE_BYTES`` would not be read."""

_CONVERSATIONS = re.compile(r"conversations(-\d+)?\.json")
_FILE_ID = re.compile(r"(file[-_][A-Za-z0-9]+)")
_SNIFF_EVENTS = 20_000  # parser events looked at to tell what wrote a .json file
READ_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, OSError)
"""What reading a damaged zip member or a vanishing file raises."""


class Counter:
    """Bytes read so far of an export, out of ``total``; ``tick`` is called as they are read."""

    def __init__(self, total: int, tick: Callable[[int, int], None] | None = None) -> None:
        self.total = total
        self.done = 0
        self._tick = tick

    def add(self, count: int) -> None:
        self.done += count
        if self._tick is not None:
            self._tick(self.done, self.total)


class Counted:
    """A binary stream that tells ``counter`` how much was read from it (what ijson reads through)."""

    def __init__(self, raw: IO[bytes], counter: Counter) -> None:
        self.raw = raw
        self.counter = counter

    def read(self, size: int = -1) -> bytes:
        data = self.raw.read(size)
        self.counter.add(len(data))
        return data


@dataclass(frozen=True)
class Member:
    """One document of an export: its name as messages show it, its size, and how to open it."""

    name: str
    size: int
    open: Callable[[], IO[bytes]]


@dataclass
class Export:
    kind: str
    name: str
    members: list[Member]
    pictures: dict[str, Member] = field(default_factory=dict)  # ChatGPT file id -> the picture
    closing: Callable[[], None] | None = None

    @property
    def total(self) -> int:
        return sum(member.size for member in self.members)

    def picture(self, file_id: str) -> bytes | None:
        """The bytes of a picture the export holds, or None (not there, or too large to carry)."""
        member = self.pictures.get(file_id)
        if member is None or member.size > MAX_PICTURE_BYTES:
            return None
        try:
            with member.open() as stream:
                return stream.read()
        except READ_ERRORS:
            return None

    def close(self) -> None:
        if self.closing is not None:
            self.closing()


def open_export(path: Path, *, name: str | None = None, max_bytes: int | None = None) -> Export:
    """The export at ``path`` (``name``: how messages call it, by default its file name). Refused with
    the reason when it is none pitree reads, or holds more than ``max_bytes`` to read."""
    shown = name or path.name
    try:
        st = os.stat(path)
    except OSError as error:
        raise ExportError(f"{shown}: {error.strerror}") from None
    if stat.S_ISDIR(st.st_mode):
        export = _folder(path, shown)
    elif not stat.S_ISREG(st.st_mode):
        raise ExportError(f"{shown}: not a file or a folder")
    elif not st.st_size:
        raise ExportError(f"{shown}: an empty file")
    elif zipfile.is_zipfile(path):
        export = _zip(path, shown)
    elif shown.lower().endswith(".jsonl"):
        export = Export(CLAUDE_CODE, shown, [file_member(path, shown)])
    else:
        member = file_member(path, shown)
        export = Export(_sniff(member), shown, [member])
    if max_bytes is not None and export.total > max_bytes:
        export.close()
        raise ExportError(f"{shown}: {export.total:,} bytes to read; the limit is {max_bytes:,}")
    return export


def file_member(path: Path, name: str) -> Member:
    """A file of an export, named ``name`` in messages."""
    return Member(name, os.path.getsize(path), lambda: open(path, "rb"))


def _folder(path: Path, shown: str) -> Export:
    files = sorted(entry for entry in path.iterdir() if entry.is_file())
    conversations = [entry for entry in files if _CONVERSATIONS.fullmatch(entry.name)]
    if conversations:
        pictures: dict[str, Member] = {}
        for folder, _, names in os.walk(path):
            for found in names:
                match = _FILE_ID.match(found)
                if match:
                    picture = Path(folder) / found
                    pictures.setdefault(match[1], file_member(picture, found))
        return Export(
            CHATGPT, shown, [file_member(entry, f"{shown}/{entry.name}") for entry in conversations], pictures
        )
    sessions = claude_files(path)
    if not sessions:
        raise ExportError(
            f"{shown}: a folder without conversations.json (ChatGPT) or .jsonl sessions (Claude Code) in it"
        )
    return Export(CLAUDE_CODE, shown, [file_member(path / relative, f"{shown}/{relative}") for relative in sessions])


def claude_files(path: Path) -> list[str]:
    """The ``.jsonl`` files of a Claude Code project folder (its sessions and their subagents'), or of
    a folder of project folders, as paths relative to ``path``."""
    found = []
    for folder, folders, names in os.walk(path):
        folders.sort()
        depth = len(Path(folder).relative_to(path).parts)
        if depth > 4:  # <projects>/<project>/<session>/subagents/agent-….jsonl is as deep as they go
            folders.clear()
            continue
        found += [str(Path(folder, name).relative_to(path)) for name in sorted(names) if name.endswith(".jsonl")]
    return found


def _zip(path: Path, shown: str) -> Export:
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as error:
        raise ExportError(f"{shown}: not a zip file pitree can read ({error})") from None
    infos = [info for info in archive.infolist() if not info.is_dir()]

    def member(info: zipfile.ZipInfo) -> Member:
        return Member(f"{shown}/{info.filename}", info.file_size, lambda: archive.open(info))

    names = {info.filename: info for info in infos}
    conversations = [info for info in infos if _CONVERSATIONS.fullmatch(PurePosixPath(info.filename).name)]
    if conversations:
        pictures: dict[str, Member] = {}
        for info in infos:
            match = _FILE_ID.match(PurePosixPath(info.filename).name)
            if match:
                pictures.setdefault(match[1], member(info))
        return Export(
            CHATGPT,
            shown,
            [member(info) for info in sorted(conversations, key=lambda i: i.filename)],
            pictures,
            archive.close,
        )
    sessions = sorted(name for name in names if name.endswith(".jsonl"))
    if sessions:
        return Export(CLAUDE_CODE, shown, [member(names[name]) for name in sessions], closing=archive.close)
    documents = [info for info in infos if info.filename.endswith(".json")]
    if len(documents) == 1:
        one = member(documents[0])
        return Export(_sniff(one), shown, [one], closing=archive.close)
    archive.close()
    raise ExportError(f"{shown}: a zip without conversations.json (ChatGPT), .jsonl sessions or one .json export")


def _sniff(member: Member) -> str:
    """Which product wrote a JSON document, from the keys of its first object (of the first item of
    a list): the document is not read further."""
    keys: set[str] = set()
    with member.open() as stream:
        try:
            for count, (prefix, event, value) in enumerate(ijson.parse(stream)):
                if event == "map_key" and prefix in ("", "item"):
                    keys.add(value)
                    kind = _kind_of(keys)
                    if kind is not None:
                        return kind
                if (event == "end_map" and prefix in ("", "item")) or count > _SNIFF_EVENTS:
                    break
        except ijson.JSONError as error:
            raise ExportError(f"{member.name}: not valid JSON at its start: {_first_line(error)}") from None
        except READ_ERRORS as error:
            raise unreadable(error, member, 0) from None
    raise ExportError(
        f"{member.name}: not an export pitree reads (ChatGPT's conversations.json, an Open WebUI chat export "
        "or a LibreChat JSON export)"
    )


def _kind_of(keys: set[str]) -> str | None:
    if "mapping" in keys:
        return CHATGPT
    if "history" in keys or {"chat", "user_id"} <= keys:
        return OPEN_WEBUI
    if "conversationId" in keys and keys & {"messages", "messagesTree"}:
        return LIBRECHAT
    return None


def _first_line(error: Exception) -> str:
    return str(error).split("\n", 1)[0]


def json_error(error: Exception, member: Member, counter: Counter, start: int, what: str) -> ExportError:
    """A JSON parse error said with its place: the byte where the reader was (``counter`` minus
    ``start``, the bytes of other documents before this one) and what it was reading."""
    return ExportError(
        f"{member.name}: not valid JSON near byte {counter.done - start:,} ({what}): {_first_line(error)}"
    )


def items(member: Member, counter: Counter) -> Iterator[tuple[int, Any]]:
    """The items of a JSON document that is a list (or the document itself when it is one object),
    one at a time, numbered from 1: a 300 MB list is never held whole."""
    start = counter.done
    with member.open() as raw:
        stream = Counted(raw, counter)
        number = 0
        try:
            first = _first_byte(stream)
            if first == b"{":
                yield 1, _whole(first, stream)
                return
            if first != b"[":
                raise ExportError(f"{member.name}: neither a list nor an object of conversations")
            for number, item in enumerate(ijson.items(_Prefixed(first, stream), "item", use_float=True), 1):
                yield number, item
        except ijson.JSONError as error:
            raise json_error(error, member, counter, start, f"after item {number:,}") from None
        except READ_ERRORS as error:
            raise unreadable(error, member, counter.done - start) from None


def unreadable(error: Exception, member: Member, at: int) -> ExportError:
    return ExportError(f"{member.name}: could not be read near byte {at:,}: {error}")


def _first_byte(stream: Counted) -> bytes:
    while True:
        byte = stream.read(1)
        if byte not in (b" ", b"\t", b"\r", b"\n", b"\xef", b"\xbb", b"\xbf"):
            return byte


def _whole(first: bytes, stream: Counted) -> Any:
    return next(iter(ijson.items(_Prefixed(first, stream), "", use_float=True)))


class _Prefixed:
    """A stream with one byte already read put back in front."""

    def __init__(self, head: bytes, stream: Counted) -> None:
        self.head = head
        self.stream = stream

    def read(self, size: int = -1) -> bytes:
        if size == 0:  # ijson asks for nothing first, to see whether the stream gives bytes
            return b""
        head, self.head = self.head, b""
        if size < 0:
            return head + self.stream.read()
        return head + self.stream.read(size - len(head)) if head else self.stream.read(size)
