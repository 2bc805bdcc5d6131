"""Claude Code's projects folder (``PITREE_CLAUDE_PROJECTS``) as a read-only source of sessions: a
server process follows it (``imports.mirror``), its mirror kept in ``PITREE_CACHE_DIR/claude-code``
and linked into the sessions folder as ``--claude-code--`` (a folder nobody owns: superusers see it
until it is assigned, as any agent's folder). Through the link it is read-only, and a fork of one of
its sessions goes into the forker's workspace: that is how one continues in pi's format.

Every server process starts a follower, and one of them writes the mirror: the others wait on the
mirror's lock and the first of them to get it takes over when that process ends. Several writers
would lose nothing (each write goes through the store) but would each read every changed Claude Code
file again."""

from __future__ import annotations

import fcntl
import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings

from ..imports.mirror import Mirror

LINK = "--claude-code--"
POLL_SECONDS = 0.5  # between two looks at the projects folder's files (a stat each)

log = logging.getLogger(__name__)


def mirror_folder() -> Path:
    return Path(settings.PITREE_CACHE_DIR) / "claude-code"


def is_mirrored(path: Path) -> bool:
    """Whether a session file is Claude Code's, as followed here."""
    return path.parent.name == LINK


def start() -> Mirror | None:
    """Follow the projects folder in a thread of this process, when the setting names one."""
    projects = settings.PITREE_CLAUDE_PROJECTS
    if projects is None:
        return None
    folder = mirror_folder()
    folder.mkdir(parents=True, exist_ok=True)
    link = Path(settings.PITREE_SESSIONS_DIR) / LINK
    if not link.is_symlink() and not link.exists():
        link.symlink_to(folder.absolute(), target_is_directory=True)
    elif not link.is_symlink() or link.resolve() != folder.resolve():
        log.warning("%s is not the link to Claude Code's sessions pitree makes: not following %s", link, projects)
        return None
    mirror = Mirror(Path(projects), folder, fsync=settings.PITREE_FSYNC)
    threading.Thread(target=_follow, args=(mirror,), name="pitree-claude-code", daemon=True).start()
    return mirror


@contextmanager
def one_follower(folder: Path) -> Iterator[None]:
    """Hold the mirror's lock: wait while another process of this machine follows into ``folder``.

    The lock is ``flock``'s, so the kernel releases it when its process ends, however it ends."""
    with (folder / ".follower.lock").open("a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log.info("another process follows Claude Code's sessions into %s: this one takes over if it ends", folder)
            fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _follow(mirror: Mirror) -> None:
    with one_follower(mirror.folder):
        _look_on(mirror)


def _look_on(mirror: Mirror) -> None:
    while True:
        try:
            mirror.look()
        except Exception:  # one bad look must not end the following: the next one may do
            log.exception("following Claude Code's sessions in %s", mirror.projects)
        time.sleep(POLL_SECONDS)
