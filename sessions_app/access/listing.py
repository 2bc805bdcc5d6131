"""Listings as one actor may see them: the session list, the search, the command line's ``ls``.

A session shared in part is listed as its view shows it (its title, count and labels from the entries
the grant sees), so a listing tells no more than the session page would.
"""

from __future__ import annotations

from django.conf import settings

from ..search.results import Visible
from ..sessionfiles.catalog import SessionInfo, session_info
from ..sessionfiles.errors import SessionError
from ..sessionfiles.store import SessionFile
from .grants import Access, Grant
from .scoped import SessionView


def visible_sessions(access: Access, infos: list[SessionInfo]) -> list[SessionInfo]:
    """The sessions of ``infos`` the actor may see, in the same order, each as the actor sees it."""
    if access.actor.sees_everything:
        return infos  # the listing itself: its rows are then known again by identity (views.pages)
    return [info for info, _ in _visible(access, infos)]


def search_scope(access: Access, infos: list[SessionInfo]) -> Visible | None:
    """What a search may show the actor: None for everything (an owner), else the sessions they see and,
    for those seen in part, the entries they see."""
    if access.actor.sees_everything:
        return None
    sessions: list[SessionInfo] = []
    entries: dict[str, frozenset[str]] = {}
    for info, view in _visible(access, infos, keep_views=True):
        sessions.append(info)
        if view is not None:
            index = view.index
            entries[str(info.path)] = frozenset(index.ids[row] for row in range(len(index)) if index.is_node(row))
    return Visible(sessions, entries)


def _visible(
    access: Access, infos: list[SessionInfo], *, keep_views: bool = False
) -> list[tuple[SessionInfo, SessionView | None]]:
    if access.actor.sees_everything:
        return [(info, None) for info in infos]
    found: list[tuple[SessionInfo, SessionView | None]] = []
    for info in infos:
        grant = access.grant(info.id, info.path)
        if grant is None:
            continue
        if grant.whole:
            found.append((info, None))
            continue
        view = _view(info, grant, access)
        if view is not None:
            found.append((session_info(view), view if keep_views else None))
    return found


def _view(info: SessionInfo, grant: Grant, access: Access) -> SessionView | None:
    try:
        full = SessionFile.open(info.path, max_line_bytes=settings.PITREE_MAX_LINE_BYTES)
        return SessionView(full, grant, access=access)
    except (SessionError, OSError):
        return None  # gone or unreadable since it was listed: as the catalog skips such files
