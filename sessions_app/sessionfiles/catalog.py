"""A folder of sessions in pi's layout (``<root>/--<encoded cwd>--/<ts>_<id>.jsonl``, or flat).

Listing gives pi's SessionInfo fields (pi-format 3.10) and re-reads only files whose (inode, size,
mtime) changed since the last listing. Lineage comes from headers' ``parentSession``: matched by path,
then by file name (the name carries the session id), so a sessions folder copied from elsewhere still
nests its forks.
"""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .entries import content_text, format_iso, iso_to_ms
from .errors import SessionError
from .store import SessionFile

NO_MESSAGES = "(no messages)"


@dataclass(frozen=True)
class SessionInfo:
    """What a session list shows of one file, without opening it again while it is unchanged."""

    path: Path
    id: str
    cwd: str
    name: str | None
    parent_session_path: str | None
    created: str
    modified_ms: int
    message_count: int
    first_message: str
    labels: tuple[str, ...]
    version: int

    @property
    def modified(self) -> str:
        return format_iso(self.modified_ms)

    @property
    def title(self) -> str:
        """What pi's picker shows: the name, else the first message."""
        return self.name or self.first_message


def session_info(session: SessionFile) -> SessionInfo:
    """pi's SessionInfo for an open file (name, counts, first message, activity time)."""
    index = session.index
    header = session.header
    created = header.get("timestamp")
    modified = index.last_activity_ms
    if modified is None:
        modified = iso_to_ms(created)
    if modified is None:
        modified = session.path.stat().st_mtime_ns // 1_000_000
    return SessionInfo(
        path=session.path,
        id=session.session_id,
        cwd=session.cwd,
        name=index.name,
        parent_session_path=session.parent_session,
        created=created if isinstance(created, str) else "",
        modified_ms=modified,
        message_count=index.message_count,
        first_message=_first_message(session),
        labels=tuple(label for label, _ in index.labels.values()),
        version=index.version,
    )


def _first_message(session: SessionFile) -> str:
    index = session.index
    for row, role in enumerate(index.roles):
        if role == "user" and index.types[row] == "message":
            message = session.entries([row])[0].get("message") or {}
            text = content_text(message.get("content"))
            if text.strip():
                return text
    return NO_MESSAGES


class AmbiguousId(SessionError):
    """A session id prefix that matches more than one session."""


class UnknownSession(SessionError):
    """No session with that id."""


class Catalog:
    """The sessions under one root folder."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root).expanduser()
        self._infos: dict[str, tuple[tuple[int, int, int, int], SessionInfo]] = {}
        self.problems: dict[Path, str] = {}  # files that are not readable sessions, and why
        self._lock = threading.Lock()
        self._located: dict[str, Path] = {}

    def locate(self, session_id: str) -> Path:
        """The file of the session with exactly this id, without listing the folder when it was seen
        before: a web request resolves its URL's id here on every hit."""
        path = self._located.get(session_id)
        if path is not None:
            try:
                if SessionFile.open(path).session_id == session_id:
                    return path
            except (SessionError, OSError):
                pass
        matches = [info for info in self.sessions() if info.id == session_id]
        if not matches:
            raise UnknownSession(f"no session with id {session_id!r} under {self.root}")
        if len(matches) > 1:
            raise AmbiguousId(
                f"{len(matches)} files hold session {session_id!r}: {', '.join(str(m.path) for m in matches)}"
            )
        self._located[session_id] = matches[0].path
        return matches[0].path

    def files(self) -> Iterator[tuple[Path, os.stat_result]]:
        """Every ``*.jsonl`` file in the root and its sub-folders (symlinked folders followed, broken links ignored)."""
        for path, st in self._scan():
            yield Path(path), st

    def _scan(self) -> Iterator[tuple[str, os.stat_result]]:
        """``files()`` with plain string paths (a ``Path`` per file is most of a warm listing's cost)."""
        if not self.root.is_dir():
            return
        folders = [str(self.root)]
        with os.scandir(self.root) as it:
            folders += sorted(e.path for e in it if _is_dir(e))
        for folder in folders:
            try:
                with os.scandir(folder) as it:
                    found = [e for e in it if e.name.endswith(".jsonl")]
            except OSError:
                continue
            found.sort(key=lambda e: e.name)
            for item in found:
                try:
                    st = item.stat()
                except OSError:
                    continue
                if not stat.S_ISDIR(st.st_mode):  # the stat above followed links already
                    yield item.path, st

    def sessions(self) -> list[SessionInfo]:
        """Every readable session, most recent activity first (pi's ``listAll`` order)."""
        seen: dict[str, tuple[tuple[int, int, int, int], SessionInfo]] = {}
        problems: dict[Path, str] = {}
        infos = self._infos
        for path, st in self._scan():
            stamp = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
            cached = infos.get(path)
            if cached is not None and cached[0] == stamp:
                seen[path] = cached
                continue
            try:
                info = session_info(SessionFile(Path(path)))
            except (SessionError, OSError, KeyError) as error:
                problems[Path(path)] = str(error)
                continue
            seen[path] = (stamp, info)
        with self._lock:
            self._infos = seen
            self.problems = problems
        return sorted((info for _, info in seen.values()), key=lambda info: info.modified_ms, reverse=True)

    def find(self, id_or_prefix: str) -> SessionInfo:
        """A session by id, else by a unique id prefix (pi's ``--session <id>``).

        File names carry the session id (``<ts>_<id>.jsonl``), so only the files whose name fits are
        opened; the whole folder is listed only when none does (a file named some other way)."""
        named = [path for path, _ in self.files() if path.stem.partition("_")[2].startswith(id_or_prefix)]
        infos = []
        for path in named:
            try:
                infos.append(session_info(SessionFile(path)))
            except (SessionError, OSError):
                continue
        if not any(info.id.startswith(id_or_prefix) for info in infos):
            infos = self.sessions()
        exact = [info for info in infos if info.id == id_or_prefix]
        if len(exact) == 1:
            return exact[0]
        matches = exact or [info for info in infos if info.id.startswith(id_or_prefix)]
        if not matches:
            raise UnknownSession(f"no session with id {id_or_prefix!r} under {self.root}")
        if len(matches) > 1:
            raise AmbiguousId(
                f"{id_or_prefix!r} matches {len(matches)} sessions: {', '.join(m.id for m in matches[:5])}"
            )
        return matches[0]

    def parent_of(self, info: SessionInfo, infos: list[SessionInfo] | None = None) -> SessionInfo | None:
        """The session this one was forked from, if it is in the catalog."""
        if not info.parent_session_path:
            return None
        return _lineage(infos if infos is not None else self.sessions()).parents.get(info.path)

    def forks_of(self, info: SessionInfo, infos: list[SessionInfo] | None = None) -> list[SessionInfo]:
        """Sessions forked from this one, most recent first."""
        return _lineage(infos if infos is not None else self.sessions()).forks.get(info.path, [])

    def forest(self, infos: list[SessionInfo] | None = None) -> list[tuple[SessionInfo, int]]:
        """Sessions with forks nested under their parent: (info, depth) in display order; groups sorted by
        the newest activity anywhere in them, as pi's picker does."""
        infos = infos if infos is not None else self.sessions()
        lineage = _lineage(infos)
        newest: dict[Path, int] = {}

        def subtree_newest(info: SessionInfo) -> int:
            stack, best = [info], info.modified_ms
            while stack:
                node = stack.pop()
                best = max(best, node.modified_ms)
                stack.extend(lineage.forks.get(node.path, []))
            return best

        roots = [info for info in infos if info.path not in lineage.parents]
        for root in roots:
            newest[root.path] = subtree_newest(root)
        ordered: list[tuple[SessionInfo, int]] = []
        stack = [(root, 0) for root in sorted(roots, key=lambda r: newest[r.path])]
        visited: set[Path] = set()
        while stack:
            info, depth = stack.pop()
            if info.path in visited:
                continue
            visited.add(info.path)
            ordered.append((info, depth))
            stack.extend((fork, depth + 1) for fork in reversed(lineage.forks.get(info.path, [])))
        return ordered


@dataclass
class _Lineage:
    parents: dict[Path, SessionInfo]
    forks: dict[Path, list[SessionInfo]]


def _lineage(infos: list[SessionInfo]) -> _Lineage:
    by_path = {str(info.path.absolute()): info for info in infos}
    by_name: dict[str, list[SessionInfo]] = {}
    for info in infos:
        by_name.setdefault(info.path.name, []).append(info)
    parents: dict[Path, SessionInfo] = {}
    forks: dict[Path, list[SessionInfo]] = {}
    for info in infos:
        ref = info.parent_session_path
        if not ref:
            continue
        parent = by_path.get(ref) or _unique(by_name.get(Path(ref).name, []))
        if parent is None or parent.path == info.path:
            continue
        parents[info.path] = parent
        forks.setdefault(parent.path, []).append(info)
    for children in forks.values():
        children.sort(key=lambda info: info.modified_ms, reverse=True)
    _break_cycles(parents, forks)
    return _Lineage(parents, forks)


def _unique(candidates: list[SessionInfo]) -> SessionInfo | None:
    return candidates[0] if len(candidates) == 1 else None


def _break_cycles(parents: dict[Path, SessionInfo], forks: dict[Path, list[SessionInfo]]) -> None:
    """Hand-edited headers could make two files each other's parent; such a loop is cut so that it lists."""
    for start in list(parents):
        seen = {start}
        node = parents.get(start)
        while node is not None:
            if node.path in seen:
                cut = parents.pop(node.path)
                forks[cut.path] = [fork for fork in forks[cut.path] if fork.path != node.path]
                break
            seen.add(node.path)
            node = parents.get(node.path)


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()  # follows symlinks; a broken link is not a dir
    except OSError:
        return False


def describe(info: SessionInfo) -> dict[str, Any]:
    """pi's SessionInfo as JSON-ready fields (the names pi's ``list()`` uses)."""
    return {
        "path": str(info.path),
        "id": info.id,
        "cwd": info.cwd,
        "name": info.name,
        "parentSessionPath": info.parent_session_path,
        "created": info.created,
        "modified": info.modified,
        "messageCount": info.message_count,
        "firstMessage": info.first_message,
    }
