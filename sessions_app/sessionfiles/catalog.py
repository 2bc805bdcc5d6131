"""A folder of sessions in pi's layout (``<root>/--<encoded cwd>--/<ts>_<id>.jsonl``, or flat).

A sessions folder is shared with other programs, so anything may be in it. Only regular files are
opened; FIFOs, sockets, devices, folders and broken or looping links named ``*.jsonl`` are reported,
never opened. Whatever one file holds, the others are listed: each file's failure is its own report.

Three caches keep the folder from being read again and again (and, with ``watch``, a fourth keeps it
from being even looked at):

- the listing (pi's SessionInfo fields, docs/format.md §10) re-reads only files whose (device, inode,
  size, mtime) changed since the last listing, and reads only what it shows (``listing``); a file that
  failed is remembered the same way;
- the header index: each file's header facts (its session id and ``parentSession``), or why it is no
  session. Headers never change once written, so a file's header is read at most once per file
  (device and inode), and never further than its first 64 KiB (``store.HEADER_LIMIT``); the listing
  fills it as it reads. A session page's lineage reads only the headers of files it has never seen: a
  file that was no session is looked at again by the listing, once it changed, not by every page.
  Given a cache folder, the listing and the header index are remembered between processes
  (``listcache``), failures included, so that a restart reads only the files that changed meanwhile;
- a session is found by its id from file names (``<ts>_<id>.jsonl``), so opening one session reads
  no other file; only an id that no file name carries makes the catalog consult every header;
- lineage (which file was forked from which) comes from the header index's ``parentSession``: it is
  rebuilt only when a file is added or removed (which a folder's mtime tells) or a header learned
  differs. Parents are matched by path, then by file name (the name carries the session id), so a
  sessions folder copied from elsewhere still nests its forks;
- with ``watch`` on a local filesystem, the files' stats themselves: inotify tells which names changed
  since the last look (``changes``), so only those are looked at again, and an unchanged folder of
  thousands of sessions lists without a single ``stat``. Symbolic links are looked at every time (what
  they point to changes out of the watches' sight), and so is whatever inotify cannot vouch for: a
  folder no watch could be set on, every folder once after events were lost, everything every time
  once the inotify descriptor failed. A search's catch-up recognises an unchanged file by its listing's
  object (``search.index``), so a search between changes costs its query alone.
"""

from __future__ import annotations

import functools
import os
import stat
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .changes import FolderChanges, sees_every_change
from .errors import NotASession, SessionError
from .index import MAX_LINE_BYTES
from .listcache import Header, Known, ListingCache
from .listing import NO_MESSAGES, URL_SAFE_ID, SessionInfo, read_info, session_info
from .store import SessionFile, file_kind, read_header

__all__ = [
    "NO_MESSAGES",
    "URL_SAFE_ID",
    "AmbiguousId",
    "Catalog",
    "SessionInfo",
    "UnknownSession",
    "info_fields",
    "session_info",
]


class AmbiguousId(SessionError):
    """A session id prefix that matches more than one session."""


class UnknownSession(SessionError):
    """No session with that id."""


Stamp = tuple[int, int, int, int]  # device, inode, size, mtime: a file unchanged since it was read


def _stamp(st: os.stat_result) -> Stamp:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


@dataclass
class _Folder:
    """The headers of every session file and who was forked from whom, as of ``key`` (the folders'
    mtimes, and the header index's version)."""

    key: tuple[tuple[tuple[str, int], ...], int]
    headers: dict[str, Header]
    parents: dict[str, str]
    forks: dict[str, list[str]]


class Catalog:
    """The sessions under one root folder."""

    def __init__(
        self,
        root: Path,
        *,
        max_line_bytes: int = MAX_LINE_BYTES,
        cache_folder: Path | None = None,
        watch: bool = False,
    ) -> None:
        """``cache_folder``: where to remember the listing between processes (``listcache``); None
        keeps it in this object only. ``watch``: learn from inotify which files changed (a long-lived
        catalog, such as a server's; ignored where inotify cannot see every change)."""
        self.root = Path(root).expanduser()
        self.max_line_bytes = max_line_bytes
        self.problems: dict[Path, str] = {}  # what was not listed at the last listing, and why
        self._lock = threading.Lock()
        self._cache = None if cache_folder is None else ListingCache(cache_folder, self.root, max_line_bytes)
        self._cached: set[str] | None = None  # the files the cache holds (None: not loaded yet)
        self._infos: dict[str, tuple[Stamp, SessionInfo]] = {}  # the listing, by path
        self._failures: dict[str, tuple[Stamp, str]] = {}  # files that are no readable session, and why
        self._headers: dict[str, tuple[Stamp, Header | str]] = {}  # the header index
        self._headers_version = 0  # grows whenever the header index learns something new
        self._unsaved: dict[str, tuple[Stamp, Known]] = {}  # learned, not in the cache folder yet
        self._folder: _Folder | None = None
        self._located: dict[str, str] = {}
        self._changes = FolderChanges.open() if watch and sees_every_change(self.root) else None
        self._scan_lock = threading.Lock()
        self._seen: dict[str, _Seen] | None = None  # with ``_changes``: each folder as last looked at
        self._unwatched: set[str] = set()  # with ``_changes``: folders no watch holds, looked at whole each time
        # The last listing, with the look at the folders it came from (with ``_changes``, the same
        # object until something changed).
        self._listed: tuple[dict[str, _Seen], tuple[SessionInfo, ...]] | None = None

    # ------------------------------------------------------------------ the folder

    def _folders(self) -> list[str]:
        """The root and its sub-folders (broken and looping links are no folders)."""
        if not self.root.is_dir():
            return []
        try:
            with os.scandir(self.root) as it:
                return [str(self.root), *sorted(e.path for e in it if _is_dir(e))]
        except OSError:
            return [str(self.root)]

    def _scan(self) -> tuple[list[tuple[str, os.stat_result]], dict[Path, str]]:
        """The regular ``*.jsonl`` files with their stat (plain string paths: a ``Path`` per file is
        most of a warm listing's cost), and the other ``*.jsonl`` names of sub-folders with what they are."""
        _, files, odd = self._look()
        return files, odd

    def _look(self) -> tuple[dict[str, _Seen], list[tuple[str, os.stat_result]], dict[Path, str]]:
        """``_scan``, with the look at each folder it comes from: with ``_changes``, the same object as
        the last time while nothing changed."""
        if self._changes is None:
            seen = {folder: _look(folder, folder == str(self.root)) for folder in self._folders()}
        else:
            seen = self._watched_scan()
        files = [item for folder in sorted(seen) for item in seen[folder].files]
        odd = {path: reason for folder in sorted(seen) for path, reason in seen[folder].odd.items()}
        return seen, files, odd

    def _watched_scan(self) -> dict[str, _Seen]:
        """Each folder as it is now, looking again only at what inotify says changed since the last look.

        Where inotify cannot say, the look is whole: every folder after events were lost (the kernel's
        queue overflowed) or a watched folder went away, everything every time once the inotify
        descriptor failed or while the root holds no watch (a folder added to it would go unseen), and
        a folder no watch could be set on (this user's watches used up) at every look."""
        changes = self._changes
        assert changes is not None
        root = str(self.root)
        with self._scan_lock:
            changed = changes.take()
            previous = self._seen
            if previous is None or changed is None:
                seen = {}
                unwatched = set()
                for folder in self._folders():
                    if not changes.watch(folder):  # first, so that nothing written during the look is missed
                        unwatched.add(folder)
                    seen[folder] = _look(folder, folder == root)
                self._seen = seen if root in seen and root not in unwatched else None
                self._unwatched = unwatched
                return seen
            seen = dict(previous)
            unwatched = self._unwatched
            for folder, names in changed.items():
                if folder != root:
                    if folder in seen:
                        seen[folder] = _look_again(seen[folder], folder, names, False)
                    continue
                for name in names:
                    path = os.path.join(root, name)
                    is_folder = _is_folder(path)
                    if path in seen or is_folder:  # a workspace folder came, went or was replaced
                        seen.pop(path, None)
                        unwatched.discard(path)
                        if not is_folder:
                            changes.forget(path)
                            continue
                        if not changes.watch(path):
                            unwatched.add(path)
                        seen[path] = _look(path, False)
                if root in seen:
                    files = {n for n in names if os.path.join(root, n) not in seen}
                    seen[root] = _look_again(seen[root], root, files, True)
            for folder in unwatched:
                seen[folder] = _relook(seen[folder], folder)
            for folder, looked in list(seen.items()):
                if looked.links:  # what a link points to changes without an event here
                    seen[folder] = _look_again(looked, folder, set(looked.links), folder == root)
            if seen.keys() == previous.keys() and all(seen[folder] is was for folder, was in previous.items()):
                return previous  # nothing changed: the same object, which callers may recognise
            self._seen = seen
            return seen

    # ------------------------------------------------------------------ listing

    def sessions(self) -> list[SessionInfo]:
        """Every readable session, most recent activity first (pi's ``listAll`` order).

        A file is read only when its stamp differs from the one it had when this catalog, or (with a
        cache folder) any process, last read it."""
        return list(self.listing())

    def listing(self) -> tuple[SessionInfo, ...]:
        """``sessions()`` as a tuple which, with ``watch``, is the very same object while no file
        changed: a search's catch-up recognises an unchanged folder by it, without looking at any of its
        thousands of sessions (``search.index``)."""
        seen, files, problems = self._look()
        last = self._listed
        if last is not None and last[0] is seen:
            return last[1]  # no file changed since the last listing
        self._remember()
        listed: dict[str, tuple[Stamp, SessionInfo]] = {}
        failed: dict[str, tuple[Stamp, str]] = {}
        learned: list[tuple[str, Stamp, Known]] = []
        infos, failures = self._infos, self._failures
        for path, st in files:
            stamp = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
            cached = infos.get(path)
            if cached is not None and cached[0] == stamp:
                listed[path] = cached
                continue
            failure = failures.get(path)
            if failure is not None and failure[0] == stamp:
                result: SessionInfo | str = failure[1]
            else:
                result = self._read_info(path)
                learned.append((path, stamp, result))
            if isinstance(result, str):
                failed[path] = (stamp, result)
                problems[Path(path)] = result
            else:
                listed[path] = (stamp, result)
        self._learn(learned)
        shared = _shared_ids(listed)
        for path, (_, info) in listed.items():
            if info.id in shared:
                others = ", ".join(os.path.basename(other) for other in shared[info.id] if other != path)
                problems[Path(path)] = f"holds session {info.id!r}, as {others} does: neither is listed or opened"
        with self._lock:
            self._infos, self._failures = listed, failed
            self.problems = problems
        self._save({path for path, _ in files})
        ordered = tuple(
            sorted(
                (info for _, info in listed.values() if info.id not in shared),
                key=lambda info: info.modified_ms,
                reverse=True,
            )
        )
        self._listed = (seen, ordered)
        return ordered

    def _remember(self) -> None:
        """Load what the cache folder remembers of the files, once per catalog (the first listing or
        lookup): the listing, the failures and the header index, as any process last saw them."""
        if self._cache is None or self._cached is not None:
            return
        remembered = self._cache.load()
        with self._lock:
            if self._cached is not None:
                return
            for path, (stamp, known) in remembered.items():
                if isinstance(known, SessionInfo):
                    self._infos.setdefault(path, (stamp, known))
                elif isinstance(known, str):
                    self._failures.setdefault(path, (stamp, known))
                found = _header_of(known) if isinstance(known, SessionInfo) else known
                self._headers.setdefault(path, (stamp, found))
            self._headers_version += 1
            self._cached = set(remembered)

    def _save(self, present: set[str] | None) -> None:
        """Remember what was learned since the last save in the cache folder, and forget the files no
        longer ``present`` (None: not known here)."""
        if self._cache is None or self._cached is None:
            return
        with self._lock:
            changed, self._unsaved = self._unsaved, {}
        gone = self._cached - present if present is not None else set()
        if changed or gone:
            self._cache.save(changed, gone)
            self._cached = (self._cached | changed.keys()) - gone

    def _learn(self, learned: Iterable[tuple[str, Stamp, Known]]) -> None:
        """Note what was read of files — each one's listing, its header facts, or why it is no session —
        for the cache folder (the next ``_save``), and their header facts in the header index; a failure
        is the listing's too, until the file changes (a file without a readable header lists as
        nothing). A listing notes all it read at once: one lock for thousands of files."""
        with self._lock:
            unsaved = self._unsaved if self._cache is not None else None
            headers, version = self._headers, self._headers_version
            for path, stamp, known in learned:
                found = _header_of(known) if isinstance(known, SessionInfo) else known
                if unsaved is not None:
                    unsaved[path] = (stamp, known)
                previous = headers.get(path)
                headers[path] = (stamp, found)
                if previous is None or previous[1] != found:
                    version += 1
                if isinstance(found, str):
                    self._failures[path] = (stamp, found)
            self._headers_version = version

    def _read_info(self, path: str) -> SessionInfo | str:
        """A file's SessionInfo, or what is wrong with it (``path`` was just found a regular file)."""
        try:
            return read_info(path, max_line_bytes=self.max_line_bytes, known_regular=True)
        except Exception as error:  # one file must never keep the others from being listed
            return _reason(path, error)

    def info(self, path: Path | str) -> SessionInfo:
        """One session's SessionInfo, read again only when the file changed since the catalog last read it."""
        key = str(path)
        stamp = _stamp(os.stat(key))
        cached = self._infos.get(key)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        info = session_info(SessionFile.open(key, max_line_bytes=self.max_line_bytes))
        with self._lock:
            self._infos[key] = (stamp, info)
        self._learn([(key, stamp, info)])
        return info

    # ------------------------------------------------------------------ finding a session

    def locate(self, session_id: str) -> Path:
        """The file of the session with exactly this id: a web request resolves its URL's id here on
        every hit, so only files named for the id are looked at, and the answer is remembered.

        A file named for the id that is no readable session raises NotASession with the reason, so the
        user learns why it does not open instead of seeing "not found"."""
        known = self._located.get(session_id)
        if known is not None and self._id_in(known) == session_id:
            return Path(known)
        matches, failures = self._matching(session_id, prefix=False)
        if len(matches) > 1:
            names = ", ".join(sorted(os.path.basename(path) for path in matches))
            raise AmbiguousId(f"{len(matches)} files hold session {session_id!r}: {names}")
        if not matches:
            if failures:
                raise NotASession(failures[0])
            raise UnknownSession(f"no session with id {session_id!r}")  # no path: pages show this
        (path,) = matches
        self._located[session_id] = path
        return Path(path)

    def find(self, id_or_prefix: str) -> SessionInfo:
        """A session by id, else by a unique id prefix (pi's ``--session <id>``), opening only the one
        found; NotASession with the reason when only files named for it that are no sessions match."""
        return self.info(self.find_path(id_or_prefix))

    def find_path(self, id_or_prefix: str, keep: Callable[[str, str], bool] | None = None) -> Path:
        """``find``'s file, opening none, among the sessions that ``keep(path, id)`` accepts (what one
        person may see, say): no file is read but those named for it, and headers not seen yet."""
        matches, failures = self._matching(id_or_prefix, prefix=True, keep=keep)
        exact = [path for path, session_id in matches.items() if session_id == id_or_prefix]
        found = exact or list(matches)
        if not found:
            if failures:
                raise NotASession(failures[0])
            raise UnknownSession(f"no session with id {id_or_prefix!r}")
        if len(found) > 1:
            ids = [matches[path] for path in found]
            # Files that share one id are told apart by their paths.
            names = sorted(ids) if len(set(ids)) == len(ids) else sorted(found)
            more = f" and {len(names) - 5} more" if len(names) > 5 else ""
            raise AmbiguousId(f"{id_or_prefix!r} matches {len(found)} sessions: {', '.join(names[:5])}{more}")
        return Path(found[0])

    def _matching(
        self, wanted: str, *, prefix: bool, keep: Callable[[str, str], bool] | None = None
    ) -> tuple[dict[str, str], list[str]]:
        """Files whose header id is ``wanted`` (or starts with it) that ``keep`` accepts: first among
        files named for it, then, when none is, among every file's header. Also what is wrong with
        files named for it."""
        matches: dict[str, str] = {}
        files, odd = self._scan()
        failures = [f"{path.name}: {reason}" for path, reason in odd.items() if _named(path.name, wanted, prefix)]
        for path, st in files:
            if _named(os.path.basename(path), wanted, prefix):
                header = self._header(path, st)
                if isinstance(header, str):
                    failures.append(f"{os.path.basename(path)}: {header}")
                elif (header.id.startswith(wanted) if prefix else header.id == wanted) and (
                    keep is None or keep(path, header.id)
                ):
                    matches[path] = header.id
        if not matches:
            for path, header in self._lineage().headers.items():
                if (header.id.startswith(wanted) if prefix else header.id == wanted) and (
                    keep is None or keep(path, header.id)
                ):
                    matches[path] = header.id
        return matches, failures

    def _id_in(self, path: str) -> str | None:
        """The session id in a file's header (None when it is gone or no session)."""
        try:
            header = self._header(path, os.stat(path))
        except OSError:
            return None
        return header.id if isinstance(header, Header) else None

    def _header(self, path: str, st: os.stat_result) -> Header | str:
        """A file named for an id: its header facts, read once per file (a failure: once per change)."""
        self._remember()
        stamp = _stamp(st)
        cached = self._headers.get(path)
        if cached is not None and (
            cached[0] == stamp or (isinstance(cached[1], Header) and cached[0][:2] == stamp[:2])
        ):
            return cached[1]
        found = self._read_header(path)
        self._learn([(path, stamp, found)])
        self._save(None)
        return found

    def _read_header(self, path: str) -> Header | str:
        """A file's header facts, or why it is no session (reading at most its first 64 KiB)."""
        try:
            header = read_header(path, max_line_bytes=self.max_line_bytes)
        except Exception as error:  # one file must never break the lookup of another
            return _reason(path, error)
        parent = header.get("parentSession")
        return Header(header["id"], parent if isinstance(parent, str) else None)

    # ------------------------------------------------------------------ lineage

    def _lineage(self) -> _Folder:
        """Every session file's header and the lineage between them, rebuilt only when a folder's
        listing changed (a file added, removed or renamed changes its folder's mtime) or the header
        index learned something. Only headers of files never seen are read: a file seen before keeps
        what was learned of it while it is the same file (device, inode), even one that was no session
        then (the listing looks at that again once it changed)."""
        self._remember()
        folders = tuple((folder, _mtime(folder)) for folder in self._folders())
        known = self._folder
        if known is not None and known.key == (folders, self._headers_version):
            return known
        files, _ = self._scan()
        learned: list[tuple[str, Stamp, Known]] = []
        for path, st in files:
            cached = self._headers.get(path)
            if cached is None or cached[0][:2] != (st.st_dev, st.st_ino):
                learned.append((path, _stamp(st), self._read_header(path)))
        self._learn(learned)
        present = {path for path, _ in files}
        with self._lock:
            self._headers = {path: known for path, known in self._headers.items() if path in present}
            version = self._headers_version
        self._save(present)
        headers = {path: found for path, (_, found) in self._headers.items() if isinstance(found, Header)}
        parents = _link((path, header.parent) for path, header in headers.items())
        forks: dict[str, list[str]] = {}
        for child, parent in parents.items():
            forks.setdefault(parent, []).append(child)
        folder = self._folder = _Folder((folders, version), headers, parents, forks)
        return folder

    def parent_of(self, info: SessionInfo, infos: list[SessionInfo] | None = None) -> SessionInfo | None:
        """The session this one was forked from, if it is in the catalog. With ``infos`` (a listing in
        hand) nothing is read; without, only the parent's file, if it changed."""
        if not info.parent_session_path:
            return None
        if infos is not None:
            return _lineage(infos).parents.get(info.path)
        parent = self._lineage().parents.get(str(info.path))
        return None if parent is None else self._info_or_none(parent)

    def session_named(self, ref: str) -> SessionInfo | None:
        """The session a ``parentSession`` value names, as the lineage links them (an uploaded file's
        parent, say); only that file is read, if it changed."""
        found = _Names(self._lineage().headers).file(ref) if ref else None
        return None if found is None else self._info_or_none(found)

    def forks_of(self, info: SessionInfo, infos: list[SessionInfo] | None = None) -> list[SessionInfo]:
        """Sessions forked from this one, most recent first (``infos`` as for ``parent_of``); without
        ``infos``, only the forks' files are read."""
        if infos is not None:
            return _lineage(infos).forks.get(info.path, [])
        paths = self._lineage().forks.get(str(info.path), [])
        forks = [fork for fork in map(self._info_or_none, paths) if fork is not None]
        return sorted(forks, key=lambda fork: fork.modified_ms, reverse=True)

    def _info_or_none(self, path: str) -> SessionInfo | None:
        try:
            return self.info(path)
        except (SessionError, OSError):
            return None

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


@dataclass(frozen=True)
class _Seen:
    """One folder's ``*.jsonl`` names as last looked at: the regular files with their stat, in name
    order; the others with what they are; which of the names are symbolic links."""

    files: list[tuple[str, os.stat_result]]
    odd: dict[Path, str]
    links: frozenset[str]


def _look(folder: str, is_root: bool) -> _Seen:
    """Every ``*.jsonl`` name of ``folder`` (in the root, a folder so named is a workspace, not odd).
    The directory entries tell which names are links without a syscall; each name costs one ``stat``."""
    files: list[tuple[str, os.stat_result]] = []
    odd: dict[Path, str] = {}
    links: set[str] = set()
    try:
        with os.scandir(folder) as it:
            found = sorted((e for e in it if e.name.endswith(".jsonl")), key=lambda e: e.name)
    except OSError:
        return _Seen([], {}, frozenset())
    for item in found:
        if item.is_symlink():
            links.add(item.name)
        _classify(item.path, item.stat, is_root, files, odd)
    return _Seen(files, odd, frozenset(links))


def _look_again(was: _Seen, folder: str, names: set[str], is_root: bool) -> _Seen:
    """``was`` with ``names`` of ``folder`` looked at again (each may have appeared, changed or gone);
    ``was`` itself when none changed."""
    names = {name for name in names if name.endswith(".jsonl")}
    if not names:
        return was
    paths = {os.path.join(folder, name) for name in names}
    kept = {path: st for path, st in was.files if path not in paths}
    odd = {path: reason for path, reason in was.odd.items() if str(path) not in paths}
    links = {name for name in was.links if name not in names}
    found: list[tuple[str, os.stat_result]] = []
    for name in names:
        path = os.path.join(folder, name)
        if os.path.islink(path):
            links.add(name)
        _classify(path, functools.partial(os.stat, path), is_root, found, odd)
    return _unless_same(_Seen(sorted([*kept.items(), *found]), odd, frozenset(links)), was)


def _relook(was: _Seen, folder: str) -> _Seen:
    """A workspace folder looked at whole again (no watch holds it); ``was`` itself when nothing in it changed."""
    return _unless_same(_look(folder, False), was)


def _unless_same(now: _Seen, was: _Seen) -> _Seen:
    """``was`` when ``now`` holds the same names with the same stamps (so callers may recognise an
    unchanged folder by its object), else ``now``."""
    same = now.odd == was.odd and now.links == was.links and len(now.files) == len(was.files)
    if same and all(a[0] == b[0] and _stamp(a[1]) == _stamp(b[1]) for a, b in zip(now.files, was.files)):
        return was
    return now


def _classify(
    path: str,
    stat_of: Callable[[], os.stat_result],
    is_root: bool,
    files: list[tuple[str, os.stat_result]],
    odd: dict[Path, str],
) -> None:
    """Put ``path`` among the regular files (with its stat, links followed) or the odd names (with what
    it is); a name that vanished meanwhile goes nowhere."""
    try:
        st = stat_of()
    except FileNotFoundError:
        if os.path.lexists(path):
            odd[Path(path)] = "a broken symbolic link"
        return
    except OSError as error:
        odd[Path(path)] = f"cannot be opened: {error.strerror or error}"
        return
    if stat.S_ISREG(st.st_mode):
        files.append((path, st))
    elif not (is_root and stat.S_ISDIR(st.st_mode)):  # a root sub-folder is a folder of sessions
        odd[Path(path)] = f"{file_kind(st.st_mode)}, not a session file"


def _shared_ids(listed: dict[str, tuple[Stamp, SessionInfo]]) -> dict[str, list[str]]:
    """Session ids that more than one file holds (a copy, a link), with those files: such a session is
    found nowhere (docs/format.md §1.3), neither listed nor searched, as it is not opened."""
    files: dict[str, list[str]] = {}
    for path, (_, info) in listed.items():
        files.setdefault(info.id, []).append(path)
    return {session_id: sorted(paths) for session_id, paths in files.items() if len(paths) > 1}


def _is_folder(path: str) -> bool:
    try:
        return stat.S_ISDIR(os.stat(path).st_mode)
    except OSError:
        return False


@dataclass
class _Lineage:
    parents: dict[Path, SessionInfo]
    forks: dict[Path, list[SessionInfo]]


def _lineage(infos: list[SessionInfo]) -> _Lineage:
    by_path = {str(info.path): info for info in infos}
    parents: dict[Path, SessionInfo] = {}
    forks: dict[Path, list[SessionInfo]] = {}
    for child, parent in _link((str(info.path), info.parent_session_path) for info in infos).items():
        parents[Path(child)] = by_path[parent]
        forks.setdefault(Path(parent), []).append(by_path[child])
    for children in forks.values():
        children.sort(key=lambda info: info.modified_ms, reverse=True)
    return _Lineage(parents, forks)


class _Names:
    """Which of some files a ``parentSession`` value names: the file at that absolute path, else the
    only file with that name (docs/format.md §7.3)."""

    def __init__(self, paths: Iterable[str]) -> None:
        self.by_path: dict[str, str] = {}
        self.by_name: dict[str, list[str]] = {}
        for path in paths:
            self.by_path[os.path.abspath(path)] = path
            self.by_name.setdefault(os.path.basename(path), []).append(path)

    def file(self, ref: str) -> str | None:
        named = self.by_name.get(os.path.basename(ref), [])
        return self.by_path.get(os.path.abspath(ref)) or (named[0] if len(named) == 1 else None)


def _link(files: Iterable[tuple[str, str | None]]) -> dict[str, str]:
    """``{child path: parent path}`` from each file's ``parentSession``: the file at that absolute path,
    else the only file with that name; a file is never its own parent, and a loop (hand-edited headers
    can make two files each other's parent) is cut so that everything still lists."""
    refs = dict(files)
    named_by = _Names(refs)
    parents: dict[str, str] = {}
    for path, ref in refs.items():
        parent = named_by.file(ref) if ref else None
        if parent is not None and parent != path:
            parents[path] = parent
    for start in list(parents):
        seen = {start}
        node = parents.get(start)
        while node is not None:
            if node in seen:
                del parents[node]
                break
            seen.add(node)
            node = parents.get(node)
    return parents


def _named(name: str, wanted: str, prefix: bool) -> bool:
    """Whether a file name (``<timestamp>_<id>.jsonl``) carries the id ``wanted`` (or one it starts)."""
    named = name.removesuffix(".jsonl").partition("_")[2]
    return named.startswith(wanted) if prefix else named == wanted


def _header_of(info: SessionInfo) -> Header:
    return Header(info.id, info.parent_session_path)


def _reason(path: str, error: Exception) -> str:
    """Why a file is no readable session, without its path (reports list the path beside it)."""
    if isinstance(error, OSError):
        return f"cannot be read: {error.strerror or error}"
    message = str(error).removeprefix(f"{path}: ")
    return message if isinstance(error, SessionError) else f"could not be read ({type(error).__name__}: {message})"


def _mtime(folder: str) -> int:
    try:
        return os.stat(folder).st_mtime_ns
    except OSError:
        return -1


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()  # follows symlinks; a broken link is not a dir
    except OSError:
        return False


def info_fields(info: SessionInfo) -> dict[str, Any]:
    """pi's SessionInfo as JSON-ready fields (the names pi's ``list()`` uses)."""
    return {
        "path": os.fsencode(info.path).decode("utf-8", "replace"),  # JSON holds no undecodable name
        "id": info.id,
        "cwd": info.cwd,
        "name": info.name,
        "parentSessionPath": info.parent_session_path,
        "created": info.created,
        "modified": info.modified,
        "messageCount": info.message_count,
        "firstMessage": info.first_message,
    }
