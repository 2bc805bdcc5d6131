"""A sessions folder holding everything other programs could leave in one, for tests of every reader.

``build_hostile_folder(root)`` fills ``root`` with sessions that are odd in every way a reader could
trip on (they must all be listed and open), and with files and non-files that are no sessions (they
must be reported, never opened blocking, never break the listing of the others). It returns which is
which: good files with their header's session id, bad ones with a substring of the reason the
catalog reports. Read the folder with ``max_line_bytes=folder.line_limit``: the over-long lines are
just over it, so that tests stay fast (the default limit is 64 MB).

``folder.outside`` are good sessions reached through a link (to the file, or to its folder) that leads
out of the sessions folder: they are listed and read, and every write to them is refused.

A bad file named ``<timestamp>_<id>.jsonl`` is what a lookup of that id finds: it must say why it does
not open (``HostileFolder.named_ids``). ``folder.growing`` is a good session that ``keep_growing()`` appends to from a thread while a test
reads the folder. ``FileReads`` records which files of the folder a test's code opened, and how many
bytes it read of each, at the OS level.
"""

from __future__ import annotations

import builtins
import json
import os
import socket
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

LINE_LIMIT = 64 << 10
T0 = "2026-03-02T09:00:00.000Z"
GOOD = "--hostile-good--"
BAD = "--hostile-bad--"
WEIRD_IDS = ["a/b?c#d%e&f g", "x" * 300, "", "evil\n\x1b[31mred", "../../etc/passwd", "%2F%00"]


@dataclass
class HostileFolder:
    root: Path
    line_limit: int
    good: dict[Path, str] = field(default_factory=dict)  # session file -> the id in its header
    bad: dict[Path, str] = field(default_factory=dict)  # path -> part of the reason it is reported with
    growing: Path | None = None
    outside: set[Path] = field(default_factory=set)  # good sessions behind a link out of the folder: read-only

    @property
    def twins(self) -> set[Path]:
        """Good sessions whose id another file holds too: found nowhere (docs/format.md §1.3)."""
        ids = list(self.good.values())
        return {path for path, session_id in self.good.items() if ids.count(session_id) > 1}

    @property
    def listed(self) -> dict[Path, str]:
        """The good sessions a listing shows: all but the twins."""
        twins = self.twins
        return {path: session_id for path, session_id in self.good.items() if path not in twins}

    @property
    def named_ids(self) -> dict[str, Path]:
        """The ids that bad files are named for (``<timestamp>_<id>.jsonl``), with the file."""
        return {path.stem.partition("_")[2]: path for path in self.bad if "_" in path.stem}

    @contextmanager
    def keep_growing(self, pause: float = 0.001) -> Iterator[None]:
        """Append entries to ``growing`` from another thread until the block ends (as a live agent does)."""
        assert self.growing is not None
        stop = threading.Event()

        def grow() -> None:
            number = 0
            parent = "g0"
            fd = os.open(self.growing, os.O_WRONLY | os.O_APPEND)
            try:
                while not stop.wait(pause):
                    number += 1
                    entry_id = f"grown-{number}"
                    os.write(fd, _line(_user(entry_id, parent, f"grown while read {number}")))
                    parent = entry_id
            finally:
                os.close(fd)

        thread = threading.Thread(target=grow, daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join(timeout=10)


class FileReads:
    """Every file under the sessions folder opened through the OS (``os.open``, ``open``), and the bytes
    ``os.pread`` read from each: what strace would show of the Python process."""

    def __init__(self, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.root = os.path.realpath(root)
        self.opened: list[str] = []
        self.read: dict[str, int] = {}
        self._fds: dict[int, str] = {}
        real_open, real_pread, real_builtin_open = os.open, os.pread, builtins.open

        def spy_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
            fd = real_open(path, flags, *args, **kwargs)
            if self._inside(path):
                self.opened.append(os.fsdecode(path))
                self._fds[fd] = os.fsdecode(path)
            return fd

        def spy_pread(fd: int, size: int, offset: int) -> bytes:
            data = real_pread(fd, size, offset)
            if fd in self._fds:
                self.read[self._fds[fd]] = self.read.get(self._fds[fd], 0) + len(data)
            return data

        def spy_builtin_open(file: Any, *args: Any, **kwargs: Any) -> Any:
            if isinstance(file, str | bytes | os.PathLike) and self._inside(file):
                self.opened.append(os.fsdecode(file))
            return real_builtin_open(file, *args, **kwargs)

        monkeypatch.setattr(os, "open", spy_open)
        monkeypatch.setattr(os, "pread", spy_pread)
        monkeypatch.setattr(builtins, "open", spy_builtin_open)

    def _inside(self, path: Any) -> bool:
        return os.path.abspath(os.fsdecode(path)).startswith(self.root) and os.fsdecode(path).endswith(".jsonl")

    def clear(self) -> None:
        self.opened.clear()
        self.read.clear()

    def files(self) -> set[str]:
        return {os.path.realpath(path) for path in self.opened}


def build_hostile_folder(root: Path, *, line_limit: int = LINE_LIMIT) -> HostileFolder:
    """Fill ``root`` (created if needed) with the hostile corpus; see the module docstring."""
    root.mkdir(parents=True, exist_ok=True)
    folder = HostileFolder(root, line_limit)
    _good_sessions(folder, root / GOOD)
    _bad_files(folder, root / BAD)
    return folder


# ---------------------------------------------------------------------------------------------- lines


def _line(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode("utf-8") + b"\n"


def _header(session_id: str, **extra: Any) -> dict[str, Any]:
    return {"type": "session", "version": 3, "id": session_id, "timestamp": T0, "cwd": "/srv/hostile", **extra}


def _user(entry_id: Any, parent: Any, content: Any, ts: Any = T0, **message: Any) -> dict[str, Any]:
    body = {"role": "user", "content": content, "timestamp": 1772442000000, **message}
    return {"type": "message", "id": entry_id, "parentId": parent, "timestamp": ts, "message": body}


def _assistant(entry_id: Any, parent: Any, text: Any, ts: Any = T0) -> dict[str, Any]:
    body = {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "api": "x",
        "provider": "p",
        "model": "m",
        "usage": {},
        "stopReason": "stop",
        "timestamp": 1772442001000,
    }
    return {"type": "message", "id": entry_id, "parentId": parent, "timestamp": ts, "message": body}


def _raw_user(entry_id: str, parent: str | None, content_json: bytes) -> bytes:
    """A user message whose content is given as raw bytes (so that it can be anything at all)."""
    parent_json = b"null" if parent is None else json.dumps(parent).encode()
    return (
        b'{"type":"message","id":'
        + json.dumps(entry_id).encode()
        + b',"parentId":'
        + parent_json
        + b',"timestamp":"'
        + T0.encode()
        + b'","message":{"role":"user","content":'
        + content_json
        + b"}}\n"
    )


# ---------------------------------------------------------------------------------------------- good sessions


def _good_sessions(folder: HostileFolder, where: Path) -> None:
    where.mkdir()
    limit = folder.line_limit

    def good(name: str | bytes, session_id: str, *parts: Any, header: dict[str, Any] | None = None) -> Path:
        """A good session file: the header, then each part (an entry, or raw bytes that end their line)."""
        path = Path(os.fsdecode(os.path.join(os.fsencode(where), os.fsencode(name))))
        data = _line(header or _header(session_id)) + b"".join(p if isinstance(p, bytes) else _line(p) for p in parts)
        path.write_bytes(data)
        folder.good[path] = session_id
        return path

    good(
        "2026-03-02T09-00-00-000Z_good-plain.jsonl",
        "good-plain",
        _user("u1", None, "hello"),
        _assistant("a1", "u1", "hi"),
    )
    good("header-only.jsonl", "good-header-only")
    crlf = good("crlf.jsonl", "good-crlf", _user("u1", None, "carriage returns"), _user("u2", "u1", "everywhere"))
    crlf.write_bytes(crlf.read_bytes().replace(b"\n", b"\r\n"))
    good(
        "long-line.jsonl",
        "good-long-line",
        _user("u1", None, "before the long line"),
        _raw_user("long", "u1", json.dumps("L" * (2 * limit)).encode()),
        _user("u2", "long", "after it: an orphan, shown as a root"),
    )
    good(
        "deep.jsonl",
        "good-deep",
        _raw_user("d1", None, b"[" * 1000 + b'"a thousand levels"' + b"]" * 1000),
        _raw_user("d2", "d1", b'[{"type":"text","text":' * 20_000 + b'"twenty thousand"' + b"}]" * 20_000),
        _raw_user("d3", "d2", b"[" * 30_000 + b"]" * 29_999),  # nested too deeply (and unbalanced): skipped
        _raw_user("d4", "d1", b'[{"type":"text","text":' * 1_500 + b'"x"' + b"}]" * 1_500),  # too deep: skipped
        _raw_user("d5", "d1", b"[" * (limit - 200)),  # as deep as the line limit allows: refused, never built
        _user("d6", "d1", "after the deep lines"),
    )
    good(
        "numbers.jsonl",
        "good-numbers",
        _raw_user("n1", None, b"[1e400,-1e999,123456789012345678901234567890,1e308,-0,0.1e-400]"),
        _raw_user("n2", "n1", b'"infinite time","timestamp":1e400'),  # the number the index itself reads
        _raw_user("n3", "n2", b"NaN"),
        _raw_user("n4", "n2", b"-Infinity"),
    )
    good(
        "unicode.jsonl",
        "good-unicode",
        _raw_user("s1", None, b'"half an emoji: \\ud83d, a lone low: \\udc00, whole: \\ud83d\\ude00"'),
        _raw_user("s2", "s1", b'"a surrogate as UTF-8: \xed\xa0\x80"'),
        _raw_user("s3", "s1", b'"not UTF-8: \xff\xfe"'),
        _raw_user("s4", "s1", b'"NUL inside: \x00"'),
        b"\x00\x00\x00\x00\n",
        b'\xef\xbb\xbf{"type":"custom","id":"bom","parentId":"s1"}\n',
        _raw_user("s5", "s1", '"separators \u2028 and \u2029 and \u0085 stay in one line"'.encode()),
        _raw_user("s6", "s5", b'"control \\u001b[31m red \\u0007 bell"'),
    )
    good(
        "links.jsonl",
        "good-links",
        _user("c1", "c2", "cycle one"),
        _user("c2", "c1", "cycle two"),
        _user("self", "self", "my own parent"),
        _user("orphan", "missing", "parent missing"),
        _user("fwd", "later", "parent written after me"),
        _user("later", None, "written later"),
        {"type": "leaf", "id": "m1", "parentId": "later", "timestamp": T0, "targetId": "c1"},
        _user("under-marker", "m1", "parent is a leaf marker"),
        {"type": "leaf", "id": "m2", "parentId": "c1", "timestamp": T0, "targetId": ["not", "an", "id"]},
        {"type": "leaf", "id": "m3", "parentId": "c1", "timestamp": T0, "targetId": "no-such-entry"},
    )
    good(
        "duplicates.jsonl",
        "good-duplicates",
        _user("dup", None, "first"),
        _user("child", "dup", "child of the first"),
        _user("dup", None, "second, wins"),
        _user("dup", "dup", "third, its own parent"),
    )
    good(
        "times.jsonl",
        "good-times",
        _user("t0", None, "year zero", ts="0000-01-01T00:00:00.000Z", timestamp=-1e300),
        _user("t1", "t0", "year 99999", ts="+099999-12-31T23:59:59.999Z", timestamp=1e300),
        _user("t2", "t0", "offset", ts="2026-03-02T10:00:00+01:00", timestamp="not a number"),
        _user("t3", "t0", "not a date", ts="yesterday", timestamp=None),
        _user("t4", "t0", "no millis", ts="2026-03-02T09:00:00Z"),
        _user("t5", "t0", "beyond JS", ts="+275760-09-13T00:00:00.001Z", timestamp=8.64e15 + 1),
        _user("t6", "t0", "number", ts=1e300),
    )
    wrong = [
        _user("w1", None, 12345),
        _user("w2", "w1", {"not": "blocks"}),
        _user("w3", "w2", [1, None, "x", {"type": "text", "text": ["a", "list"]}, {"type": "image"}]),
        {"type": "message", "id": "w4", "parentId": "w3", "timestamp": {"an": "object"}, "message": ["an", "array"]},
        {"type": "message", "id": "w5", "parentId": "w4", "timestamp": T0, "message": {"role": 7, "content": "role 7"}},
        {"type": 42, "id": "w6", "parentId": "w5"},
        {"type": "message", "id": 43, "parentId": "w5"},
        {
            "type": "message",
            "id": "w7",
            "parentId": 44,
            "timestamp": T0,
            "message": {"role": "assistant", "content": 5},
        },
        {"type": "session_info", "id": "w8", "parentId": "w5", "timestamp": T0, "name": {"a": 1}},
        {"type": "session_info", "id": "w9", "parentId": "w8", "timestamp": T0, "name": ["a"]},
        {"type": "label", "id": "w10", "parentId": "w9", "timestamp": T0, "targetId": "w1", "label": {"x": [1]}},
        {"type": "label", "id": "w11", "parentId": "w10", "timestamp": T0, "targetId": ["w1"], "label": "list target"},
        {"type": "label", "id": "w12", "parentId": "w11", "timestamp": T0, "targetId": "w2", "label": 3.5},
        {
            "type": "compaction",
            "id": "w13",
            "parentId": "w12",
            "timestamp": T0,
            "summary": ["x"],
            "firstKeptEntryId": {},
            "tokensBefore": "many",
        },
        {"type": "branch_summary", "id": "w14", "parentId": "w13", "timestamp": T0, "fromId": 5, "summary": {"s": 1}},
        {
            "type": "custom_message",
            "customType": ["t"],
            "content": 9,
            "display": "yes",
            "id": "w15",
            "parentId": "w14",
            "timestamp": T0,
        },
        {"type": "model_change", "id": "w16", "parentId": "w15", "timestamp": T0, "provider": None, "modelId": 5},
        {"type": "thinking_level_change", "id": "w17", "parentId": "w16", "timestamp": T0, "thinkingLevel": [1]},
        {
            "type": "context_edit",
            "id": "w18",
            "parentId": "w17",
            "timestamp": T0,
            "targetId": "w1",
            "replacement": "str",
        },
        {
            "type": "message",
            "id": "w19",
            "parentId": "w18",
            "timestamp": T0,
            "message": {"role": "bashExecution", "command": ["ls"], "output": {"o": 1}, "exitCode": "x"},
        },
        {
            "type": "message",
            "id": "w20",
            "parentId": "w19",
            "timestamp": T0,
            "message": {"role": "toolResult", "toolName": 1, "content": "s", "isError": "no"},
        },
        {
            "type": "message",
            "id": "w21",
            "parentId": "w20",
            "timestamp": T0,
            "message": {
                "role": "assistant",
                "content": [
                    {"type": "toolCall", "name": 5, "arguments": "not an object"},
                    {"type": "thinking", "thinking": 7},
                ],
            },
        },
    ]
    wrong_header = _header(
        "good-wrong-types", cwd=["not", "a", "path"], parentSession=12, timestamp={"t": 1}, version="3"
    )
    good("wrong-types.jsonl", "good-wrong-types", *wrong, header=wrong_header)
    good("v3-types.jsonl", "good-v3-types", *wrong[:6], header=_header("good-v3-types", cwd=7, parentSession=["x"]))
    good(
        "v1.jsonl",
        "good-v1",
        {"type": "message", "timestamp": T0, "message": {"role": "user", "content": "v1"}},
        header={"type": "session", "id": "good-v1", "timestamp": T0, "cwd": "/srv/hostile"},
    )
    good("v2.jsonl", "good-v2", _user("v2a", None, "v2"), header=_header("good-v2", version=2))
    for number, session_id in enumerate(WEIRD_IDS):
        good(
            f"weird-{number}.jsonl",
            session_id,
            _user(session_id, None, "an entry with the same id"),
            _user("a/b", session_id, "slash"),
            _user("x" * 300, "a/b", "long"),
            _user("? #&%", "x" * 300, "marks"),
        )
    good("2026-03-02T09-00-00-000Z_named-for-another.jsonl", "good-renamed", _user("r1", None, "the name lies"))
    good("twin-1.jsonl", "good-twin", _user("tw", None, "one of two files holding this id"))
    good("twin-2.jsonl", "good-twin", _user("tw", None, "the other"))
    parent_a, parent_b = where / "loop-a.jsonl", where / "loop-b.jsonl"
    good(
        parent_a.name, "good-loop-a", _user("la", None, "a"), header=_header("good-loop-a", parentSession=str(parent_b))
    )
    good(
        parent_b.name, "good-loop-b", _user("lb", None, "b"), header=_header("good-loop-b", parentSession=str(parent_a))
    )
    good(
        "orphan-fork.jsonl",
        "good-orphan-fork",
        _user("of", None, "x"),
        header=_header("good-orphan-fork", parentSession="/nowhere/gone.jsonl"),
    )
    good(
        "self-fork.jsonl",
        "good-self-fork",
        header=_header("good-self-fork", parentSession=str(where / "self-fork.jsonl")),
    )
    good(b"bad-name-\xff\xfe.jsonl", "good-undecodable-name", _user("b1", None, "my file name is not UTF-8"))
    good("torn.jsonl", "good-torn", _user("t1", None, "complete"), b'{"type":"message","id":"t2","parentId":"t1","mess')
    folder.growing = good("growing.jsonl", "good-growing", _user("g0", None, "the first of many"))
    flat = folder.root / "flat.jsonl"
    flat.write_bytes(_line(_header("good-flat")) + _line(_user("f1", None, "a session in the root itself")))
    folder.good[flat] = "good-flat"
    (folder.root / "--self-loop--").symlink_to(folder.root / "--self-loop--")  # a folder link that loops
    # Links out of the sessions folder, to a file and to a folder: listed and read, never written through.
    elsewhere = folder.root.parent / f"{folder.root.name}-elsewhere"
    (elsewhere / "--far--").mkdir(parents=True)
    secret = elsewhere / "secret.jsonl"
    secret.write_bytes(
        _line(_header("good-outside-file"))
        + _line(_user("o1", None, "a file outside the folder"))
        + _line(_assistant("o2", "o1", "an answer to regenerate"))
    )
    link = where / "2026-03-02T09-00-00-000Z_good-outside-file.jsonl"
    link.symlink_to(secret)
    far = elsewhere / "--far--" / "2026-03-02T09-00-00-000Z_good-outside-folder.jsonl"
    far.write_bytes(_line(_header("good-outside-folder")) + _line(_user("f1", None, "in a folder outside")))
    (folder.root / "--far--").symlink_to(elsewhere / "--far--", target_is_directory=True)
    for path, session_id in ((link, "good-outside-file"), (folder.root / "--far--" / far.name, "good-outside-folder")):
        folder.good[path] = session_id
        folder.outside.add(path)
    (folder.root / "notes.txt").write_text("not a .jsonl file: never looked at")


# ---------------------------------------------------------------------------------------------- bad files


def _bad_files(folder: HostileFolder, where: Path) -> None:
    where.mkdir()
    limit = folder.line_limit

    def bad(name: str, reason: str, data: bytes | None = None) -> Path:
        path = where / name
        if data is not None:
            path.write_bytes(data)
        folder.bad[path] = reason
        return path

    os.mkfifo(bad("fifo.jsonl", "a FIFO"))
    os.mkfifo(bad("2026-03-02T09-00-00-000Z_fifo-named.jsonl", "a FIFO"))  # named for an id: found, and refused
    _socket_at(bad("socket.jsonl", "a socket"))
    bad("zero.jsonl", "a character device").symlink_to("/dev/zero")
    bad("random.jsonl", "a character device").symlink_to("/dev/urandom")
    bad("broken.jsonl", "broken symbolic link").symlink_to(where / "does-not-exist.jsonl")
    bad("loop.jsonl", "symbolic links").symlink_to(where / "loop.jsonl")
    bad("dir.jsonl", "a folder").mkdir()
    regular = where / "regular.txt"
    regular.write_text("a file, not a folder")
    bad("through-a-file.jsonl", "Not a directory").symlink_to(regular / "child.jsonl")
    if os.geteuid() != 0:  # root reads any file whatever its mode: the link above is how open fails there
        os.chmod(bad("unreadable.jsonl", "Permission denied", _line(_header("unreadable"))), 0)
    bad("empty.jsonl", "empty", b"")
    bad("whitespace.jsonl", "no session header", b"  \n\r\n\t\n")
    bad("no-header.jsonl", "not a pi session", _line(_user("u1", None, "an entry, no header")))
    bad("v4.jsonl", "v4", _line({"kind": "header", "version": 4, "id": "v4", "createdAt": 1, "cwd": "/"}))
    bad("bom.jsonl", "not a pi session", b"\xef\xbb\xbf" + _line(_header("bom")) + _line(_user("u1", None, "x")))
    bad("header-id-number.jsonl", "not a pi session", _line({"type": "session", "version": 3, "id": 7}))
    bad("only-garbage.jsonl", "no session header", bytes(range(256)) * 64)
    bad("one-huge-line.jsonl", "no session header", b"{" + b'"k":"' + b"z" * (2 * limit))
    bad(
        "huge-header.jsonl",
        "not a pi session",
        _line(_header("huge", padding="p" * 2 * limit)) + _line(_user("u", None, "x")),
    )
    bad("2026-03-02T09-00-00-000Z_broken-named.jsonl", "not a pi session", b"garbage named for an id\n")
    late = b"\n" * (64 << 10) + _line(_header("late"))  # a header, but not within the first 64 KiB
    bad("late-header.jsonl", "no session header in its first 65,536 bytes", late)
    bad("no-newline.jsonl", "no session header in its first 65,536 bytes", b"y" * (4 << 20))  # read 64 KiB of it


def _socket_at(path: Path) -> None:
    """A UNIX socket at ``path`` (bound in a short temporary folder, then moved: socket paths are short)."""
    with tempfile.TemporaryDirectory(prefix="s") as short:
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            server.bind(os.path.join(short, "s"))
            os.rename(os.path.join(short, "s"), path)
        finally:
            server.close()
