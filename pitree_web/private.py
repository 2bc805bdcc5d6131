"""Private by default: what pitree creates is readable and writable by its owner only.

Session files hold whatever was said in them; the database holds sign-in sessions (a key read from it
signs in as its user: another local user reached ``/admin/`` that way); the search index and the
listing cache hold the sessions' text and names. pitree runs with the umask 077 (set in ``settings``,
which every pitree process loads first), so each file it creates is 0600 and each folder 0700,
whatever umask it was started with; SQLite gives a database's ``-wal`` and ``-shm`` files the
database's own mode.

Files made before (by an older pitree, or copied in) are tightened when the server starts (``tighten``,
called by ``pitree_web.asgi`` under daphne), in one log line naming them: everything under ``var/``
(pitree's own folder), the database, the search index and the listing cache wherever they are
configured, and, in a sessions folder elsewhere (it may be pi's, shared with pi, which keeps its own
modes), only the session files pitree created (authorship records them), never pi's files or folders.
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path

from django.conf import settings
from django.db import DatabaseError

from sessions_app.access.authorship import FILE
from sessions_app.models import Authorship
from sessions_app.sessionfiles.catalog import Catalog
from sessions_app.sessionfiles.listcache import FILE_NAME as LISTING_FILE

log = logging.getLogger(__name__)

UMASK = 0o077
SQLITE_FILES = ("", "-wal", "-shm", "-journal")  # a database and the files SQLite keeps beside it
SHOWN = 5  # paths named in the log line; the others are counted


def tighten() -> list[Path]:
    """Take every permission for others (group and world) off pitree's own files and folders; returns
    what was changed, which one log line names."""
    changed = [path for path in dict.fromkeys(_own()) if _tightened(path)]
    if changed:
        names = ", ".join(str(path) for path in changed[:SHOWN])
        more = f" and {len(changed) - SHOWN:,} more" if len(changed) > SHOWN else ""
        log.warning(
            "pitree: %s files and folders others could read are now their owner's alone: %s%s",
            f"{len(changed):,}",
            names,
            more,
        )
    return changed


def _tightened(path: Path) -> bool:
    try:
        mode = path.lstat().st_mode
        if stat.S_ISLNK(mode) or not mode & 0o077:
            return False  # a link's target is not pitree's to change; this one is private already
        path.chmod(stat.S_IMODE(mode) & ~0o077)
    except OSError:
        return False  # gone meanwhile, or not ours to change
    return True


def _own() -> Iterator[Path]:
    var = settings.VAR_DIR
    yield var
    yield from _tree(var)
    caches = [Path(str(settings.DATABASES["default"]["NAME"])), Path(settings.PITREE_SEARCH_DB)]
    caches.append(Path(settings.PITREE_CACHE_DIR) / LISTING_FILE)
    for database in caches:
        yield from (Path(f"{database}{suffix}") for suffix in SQLITE_FILES)
    sessions = Path(settings.PITREE_SESSIONS_DIR)
    if not sessions.resolve().is_relative_to(Path(var).resolve()):
        yield from _created_by_pitree(sessions)


def _tree(folder: Path) -> Iterator[Path]:
    """Every file and folder under ``folder``, links not followed."""
    for top, folders, files in os.walk(folder):
        for name in (*folders, *files):
            yield Path(top) / name


def _created_by_pitree(root: Path) -> Iterable[Path]:
    """The session files of ``root`` that pitree created (new sessions, forks, uploads)."""
    try:
        created = set(Authorship.objects.filter(entry_id=FILE).values_list("session_id", flat=True))
    except DatabaseError:
        return []  # no database yet (never migrated): nothing was recorded
    if not created:
        return []
    return [info.path for info in Catalog(root).sessions() if info.id in created]
