"""Knowing when a session file or the sessions folder may have changed, without a thread.

inotify is read by the event loop itself (asyncinotify registers its descriptor with
``loop.add_reader``): there is no worker thread to join at shutdown, which is what made a
thread-based watcher hang daphne's SIGTERM. One inotify instance per event loop serves every watch,
because the kernel allows a user only 128 instances by default but many thousands of watches. Folders
are watched rather than files: a folder watch reports appends to the files in it *and* a file being
replaced by a rename or deleted, which a watch on the file's inode would not see.

Where inotify cannot see the changes — another machine writing a network filesystem — or where
``PITREE_WATCH=poll`` asks for it, ``os.stat`` is polled every ``POLL_INTERVAL`` seconds instead, in a
worker thread: on a network filesystem each ``stat`` is a round trip to the server (as long as the
server takes to answer), and a folder's look stats every file in it, so on the event loop every socket
and async view of the process would wait for it several times a second. Whether inotify can be used
is found out in a worker thread too (it reads the mount table and resolves the path).

A wake-up only says "look again": the reader finds out what changed from the file itself (the store's
``refresh`` reads only new bytes and notices a replaced file), so a spurious wake-up costs one
``fstat``, and several changes coalesce into one look.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from django.conf import settings

from ..sessionfiles.changes import folder_events, sees_every_change

if TYPE_CHECKING:
    from asyncinotify import Inotify
    from asyncinotify import Watch as InotifyWatch

POLL_INTERVAL = 0.25


class Watch:
    """Something to wait on: ``wait()`` returns once the watched path may have changed since the last
    ``wait()`` returned (or since the watch was made)."""

    async def wait(self) -> None:
        raise NotImplementedError

    def close(self) -> None:
        """Stop watching; safe to call twice."""


async def watch_file(path: Path) -> Watch:
    """Wake-ups for one file: appends, and the file being created, replaced or deleted (from when this
    returns: a change made after that wakes the first ``wait()``)."""
    folder, name = path.parent, path.name
    if await _inotify_usable(folder):
        hub = _Hub.current()
        if hub is not None:
            with contextlib.suppress(OSError):
                return _FolderWatch(hub, [folder], lambda f, n: n == name or n is None)
    return await _PollWatch.start(lambda: _file_signature(path))


async def watch_tree(root: Path) -> Watch:
    """Wake-ups for a sessions folder: any file added, grown, renamed or removed in the root or in one of
    its workspace folders (pi's layout is one level deep), and workspace folders appearing (from when
    this returns)."""
    if await _inotify_usable(root):
        hub = _Hub.current()
        if hub is not None:
            with contextlib.suppress(OSError):
                return _TreeWatch(hub, root)
    return await _PollWatch.start(lambda: _tree_signature(root))


# --------------------------------------------------------------------------------------- polling


class _PollWatch(Watch):
    """A signature of the watched path, taken again every ``POLL_INTERVAL`` seconds in a worker thread
    (never on the event loop: see the module's docstring)."""

    @classmethod
    async def start(cls, signature: Callable[[], object]) -> _PollWatch:
        """A watch whose first signature is taken before it is returned, so that a change made after
        that is not missed."""
        return cls(signature, await asyncio.to_thread(signature))

    def __init__(self, signature: Callable[[], object], first: object) -> None:
        self._signature = signature
        self._last = first

    async def wait(self) -> None:
        while True:
            await asyncio.sleep(POLL_INTERVAL)
            current = await asyncio.to_thread(self._signature)
            if current != self._last:
                self._last = current
                return


def _file_signature(path: Path) -> tuple[int, int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _tree_signature(root: Path) -> frozenset[tuple[str, int, int, int]]:
    """Name, inode, size and mtime of every entry of the root and of its sub-folders."""
    seen: set[tuple[str, int, int, int]] = set()
    folders = [str(root)]
    while folders:
        folder = folders.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                st = entry.stat()
            except OSError:
                continue
            seen.add((entry.path, st.st_ino, st.st_size, st.st_mtime_ns))
            if folder == str(root) and entry.is_dir():
                folders.append(entry.path)
    return frozenset(seen)


# --------------------------------------------------------------------------------------- inotify


async def _inotify_usable(path: Path) -> bool:
    if settings.PITREE_WATCH == "poll":
        return False
    return await asyncio.to_thread(sees_every_change, path)


Listener = Callable[[Path, str | None], None]
"""Called with the folder and the name of the changed entry (None: the folder itself, or an overflow)."""


class _Hub:
    """The event loop's one inotify instance: folder watches shared by every listener, and one reader."""

    @classmethod
    def current(cls) -> _Hub | None:
        """The running loop's hub, made on first use; None where inotify does not exist."""
        loop = asyncio.get_running_loop()
        hub = _hubs.get(loop)
        if hub is None:
            try:
                from asyncinotify import Inotify  # noqa: PLC0415 (it exists only where inotify does)
            except (ImportError, OSError, AttributeError):
                return None
            try:
                hub = cls(Inotify())
            except OSError:
                return None  # out of inotify instances: poll
            _hubs[loop] = hub
        return hub

    def __init__(self, inotify: Inotify) -> None:
        self._mask = folder_events()
        self._inotify = inotify
        self._watches: dict[Path, InotifyWatch] = {}  # kept alive here: asyncinotify holds them weakly
        self._listeners: dict[Path, list[Listener]] = {}
        self._reader: asyncio.Task[None] | None = None

    def listen(self, folder: Path, listener: Listener) -> None:
        """Call ``listener`` for changes in ``folder`` (raises OSError when it cannot be watched)."""
        if folder not in self._watches:
            self._watches[folder] = self._inotify.add_watch(folder, self._mask)
        self._listeners.setdefault(folder, []).append(listener)
        if self._reader is None or self._reader.done():
            self._reader = asyncio.get_running_loop().create_task(self._read(), name="pitree-inotify")

    def watching(self, folder: Path) -> bool:
        return folder in self._watches

    def unlisten(self, folder: Path, listener: Listener) -> None:
        listeners = self._listeners.get(folder, [])
        if listener in listeners:
            listeners.remove(listener)
        if listeners:
            return
        self._listeners.pop(folder, None)
        watch = self._watches.pop(folder, None)
        if watch is not None:
            with contextlib.suppress(OSError, ValueError):
                self._inotify.rm_watch(watch)
        if not self._listeners and self._reader is not None:
            self._reader.cancel()
            self._reader = None

    async def _read(self) -> None:
        from asyncinotify import Mask  # noqa: PLC0415 (it exists only where inotify does)

        async for event in self._inotify:
            if Mask.Q_OVERFLOW in event.mask:
                # Events were lost: everyone looks again.
                for watched, listeners in list(self._listeners.items()):
                    for listener in list(listeners):
                        listener(watched, None)
                continue
            watch = event.watch
            if watch is None:
                continue
            folder = watch.path
            if Mask.IGNORED in event.mask or Mask.DELETE_SELF in event.mask or Mask.MOVE_SELF in event.mask:
                # The folder itself went away: forget the watch (a listener may make a new one).
                self._watches.pop(folder, None)
            name = str(event.name) if event.name is not None else None
            for listener in list(self._listeners.get(folder, ())):
                listener(folder, name)


_hubs: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Hub] = weakref.WeakKeyDictionary()


class _FolderWatch(Watch):
    """Wake-ups from inotify for some folders, filtered by ``accept(folder, name)``."""

    def __init__(self, hub: _Hub, folders: list[Path], accept: Callable[[Path, str | None], bool]) -> None:
        self._hub = hub
        self._accept = accept
        self._event = asyncio.Event()
        self._folders: list[Path] = []
        self._closed = False
        try:
            for folder in folders:
                self.add(folder)
        except OSError:
            self.close()
            raise

    def add(self, folder: Path) -> None:
        self._hub.listen(folder, self._on_change)
        self._folders.append(folder)

    def _on_change(self, folder: Path, name: str | None) -> None:
        if self._accept(folder, name):
            self._event.set()

    async def wait(self) -> None:
        await self._event.wait()
        self._event.clear()
        await self._rewatch()

    async def _rewatch(self) -> None:
        """Watch again a folder that went away and came back (its old watch died with it)."""
        for folder in self._folders:
            if not self._hub.watching(folder) and folder.is_dir():
                self._hub.unlisten(folder, self._on_change)
                with contextlib.suppress(OSError):
                    self._hub.listen(folder, self._on_change)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for folder in self._folders:
            self._hub.unlisten(folder, self._on_change)
        self._folders.clear()


class _TreeWatch(_FolderWatch):
    """The sessions root and each of its workspace folders; new workspace folders are watched as they
    appear."""

    def __init__(self, hub: _Hub, root: Path) -> None:
        self._root = root
        folders = [root]
        with contextlib.suppress(OSError):
            folders += sorted(Path(e.path) for e in os.scandir(root) if e.is_dir())
        super().__init__(hub, folders, lambda folder, name: True)

    def _on_change(self, folder: Path, name: str | None) -> None:
        if folder == self._root and name is not None:
            added = self._root / name
            if added not in self._folders and added.is_dir():
                with contextlib.suppress(OSError):
                    self.add(added)
        super()._on_change(folder, name)
