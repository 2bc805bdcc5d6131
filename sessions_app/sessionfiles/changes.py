"""What changed in some folders since the last look, from inotify, without a thread and without blocking.

A sessions folder of thousands of files costs a ``stat`` per file to list; a listing asked for on every
page view would pay that each time although nothing changed. The kernel already knows: an inotify
watch on a folder reports every file in it created, written, renamed, deleted or touched. Reading the
inotify descriptor when a listing is wanted (non-blocking: nothing pending costs one ``read``) tells
exactly which names to look at again, so an unchanged folder lists in constant time.

inotify only hears this machine's writes: on a network filesystem another machine's appends raise no
event, so ``sees_every_change`` answers no there and callers scan as before.
"""

from __future__ import annotations

import contextlib
import os
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from asyncinotify import Event, Inotify, Mask
    from asyncinotify import Watch as InotifyWatch

# Filesystems whose changes may come from another machine, which local inotify never hears about.
NETWORK_FILESYSTEMS = frozenset(
    {
        *("nfs", "nfs4", "cifs", "smb3", "smbfs", "ceph", "9p", "afs", "lustre", "glusterfs", "gpfs", "ncpfs"),
        *("fuse.sshfs", "fuse.rclone", "fuse.s3fs", "fuse.gcsfuse", "fuse.glusterfs", "fuse.cephfs", "davfs"),
    }
)


def filesystem_type(path: str | os.PathLike[str]) -> str:
    """The type of the filesystem holding ``path`` (from /proc/self/mountinfo; "" when unknown)."""
    try:
        target = os.path.realpath(path)
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as mounts:
            lines = mounts.read().splitlines()
    except OSError:
        return ""
    best, kind = "", ""
    for line in lines:
        fields = line.split()
        if " - " not in line or len(fields) < 5:
            continue
        mount_point = fields[4].replace("\\040", " ")
        inside = target == mount_point or target.startswith(mount_point.rstrip("/") + "/")
        if inside and len(mount_point) >= len(best):
            best = mount_point
            kind = line.split(" - ", 1)[1].split()[0]
    return kind


def folder_events() -> Mask:
    """What a folder watch listens for: a file in it written, touched, created, deleted or renamed, and
    the folder itself going away (asyncinotify is imported here: it exists only where inotify does)."""
    from asyncinotify import Mask  # noqa: PLC0415

    in_it = Mask.MODIFY | Mask.ATTRIB | Mask.CLOSE_WRITE | Mask.CREATE | Mask.DELETE | Mask.MOVED_FROM | Mask.MOVED_TO
    return in_it | Mask.DELETE_SELF | Mask.MOVE_SELF | Mask.ONLYDIR


def sees_every_change(path: str | os.PathLike[str]) -> bool:
    """Whether inotify on this machine hears every write under ``path`` (not on network filesystems)."""
    return filesystem_type(path) not in NETWORK_FILESYSTEMS


class FolderChanges:
    """Names changed in watched folders since the last ``take()``.

    ``take()`` returns ``{folder: {names}}`` (an empty dict: nothing changed), or None when what changed
    is not known — events were lost (the kernel's queue overflowed), a watched folder itself went away,
    or the inotify descriptor failed — so the caller looks at everything again and watches anew with
    ``watch``. Once the descriptor has failed, ``take()`` answers None and ``watch`` False for good: the
    caller looks at everything every time, as without inotify."""

    @classmethod
    def open(cls) -> FolderChanges | None:
        """A new instance; None where inotify is missing or this user is out of inotify instances."""
        try:
            from asyncinotify import Inotify  # noqa: PLC0415 (it exists only where inotify does)

            return cls(Inotify(sync_timeout=0))
        except (ImportError, OSError, AttributeError):
            return None

    def __init__(self, inotify: Inotify) -> None:
        from asyncinotify import Mask  # noqa: PLC0415 (it exists only where inotify does)

        self._mask = folder_events()
        self._overflow = Mask.Q_OVERFLOW
        self._gone = Mask.IGNORED | Mask.DELETE_SELF | Mask.MOVE_SELF
        self._inotify = inotify
        self._watches: dict[str, InotifyWatch] = {}  # kept alive here: asyncinotify holds them weakly
        self._lock = threading.Lock()
        self._dead = False  # the descriptor failed: nothing it says, or stops saying, can be trusted

    def watch(self, folder: str) -> bool:
        """Watch ``folder`` (again); False when it cannot be watched (gone, not a folder, no watches left)."""
        with self._lock:
            self._unwatch(folder)
            if self._dead:
                return False
            try:
                self._watches[folder] = self._inotify.add_watch(folder, self._mask)
            except (OSError, ValueError):  # ValueError: the instance was closed
                return False
            return True

    def forget(self, folder: str) -> None:
        """Stop watching ``folder``."""
        with self._lock:
            self._unwatch(folder)

    def _unwatch(self, folder: str) -> None:
        """Remove ``folder``'s watch, if any (the lock held)."""
        watch = self._watches.pop(folder, None)
        if watch is not None:
            with contextlib.suppress(OSError, ValueError):
                self._inotify.rm_watch(watch)

    def take(self) -> dict[str, set[str]] | None:
        changed: dict[str, set[str]] = {}
        known = True
        with self._lock:
            if self._dead:
                return None
            watching = {id(watch): folder for folder, watch in self._watches.items()}
            try:
                events = list(iter(self._read, None))
            except (OSError, ValueError):  # the descriptor failed (ValueError: the instance was closed)
                self._dead = True
                self._watches.clear()
                return None
            for event in events:
                if event.mask & self._overflow:
                    known = False
                    continue
                watch = event.watch
                folder = None if watch is None else watching.get(id(watch))
                if folder is None:
                    continue  # a watch given up already (its last events, IGNORED among them)
                if event.mask & self._gone:
                    self._watches.pop(folder, None)
                    known = False
                elif event.name is not None:
                    changed.setdefault(folder, set()).add(str(event.name))
        return changed if known else None

    def _read(self) -> Event | None:
        try:
            return self._inotify.sync_get()
        except BlockingIOError:
            return None

    def close(self) -> None:
        with self._lock:
            self._watches.clear()
            self._inotify.close()
