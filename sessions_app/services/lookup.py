"""From a URL's session id to an open session file, through the catalog (ids are never joined onto
a path, so a hostile id cannot reach a file outside the sessions folder)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from django.conf import settings
from django.http import Http404

from ..sessionfiles.catalog import AmbiguousId, Catalog, UnknownSession
from ..sessionfiles.store import SessionFile


@lru_cache(maxsize=4)
def _catalog_for(root: Path, max_line_bytes: int, cache_folder: Path, watch: bool) -> Catalog:
    return Catalog(root, max_line_bytes=max_line_bytes, cache_folder=cache_folder, watch=watch)


def catalog() -> Catalog:
    """The catalog of the configured sessions folder (one per folder, so its caches are shared); its
    listing is remembered in PITREE_CACHE_DIR across restarts, and inotify tells it which files changed
    since its last look (unless ``PITREE_WATCH=poll``)."""
    return _catalog_for(
        Path(settings.PITREE_SESSIONS_DIR),
        settings.PITREE_MAX_LINE_BYTES,
        settings.PITREE_CACHE_DIR,
        settings.PITREE_WATCH != "poll",
    )


def open_session(session_id: str) -> SessionFile:
    """The session with this id, up to date; 404 when there is none (or the id is held twice).

    A file named for this id that is not a readable session raises NotASession (from ``locate``) with
    the reason, so the user learns why it does not open instead of seeing "not found"."""
    try:
        path = catalog().locate(session_id)
    except (UnknownSession, AmbiguousId) as error:
        raise Http404(str(error)) from None
    return SessionFile.open(path, fsync=settings.PITREE_FSYNC, max_line_bytes=settings.PITREE_MAX_LINE_BYTES)


def entry_row(session: SessionFile, entry_id: str) -> int:
    """The row of an entry of ``session``; 404 for ids that are not its entries."""
    row = session.index.row(entry_id)
    if row is None:
        raise Http404(f"Entry {entry_id} not found in this session")
    return row
