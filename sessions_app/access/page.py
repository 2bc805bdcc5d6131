"""What the session page shows about access, for one actor: the lineage they may see and who started
the session.

Lineage tells no more than the sessions it names would: the parent and the forks appear as the actor
sees them (a parent shared with them in part is titled as their share shows it, and where the fork
parts from it is an entry of that share; a parent they may not open is not mentioned), and who forked
the session, and when, is told to the members of its workspace only, so its owners learn that a viewer
forked even where the fork is not theirs to open, while a reader of a share learns of no fork they
cannot open themselves.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..sessionfiles.catalog import SessionInfo
from ..sessionfiles.errors import SessionError
from ..sessionfiles.fork import fork_point
from ..sessionfiles.store import SessionFile
from .authorship import creators
from .listing import visible_sessions
from .scoped import SessionView


@dataclass(frozen=True)
class ForkNote:
    """Who forked this session through the app (None: someone with a link, or pi or the command line),
    when, and the fork's id when the actor may open it (None otherwise: a fork in another workspace)."""

    by: str | None
    at: datetime | None
    opens: str | None


def page_context(session: SessionFile, parent: SessionInfo | None, forks: list[SessionInfo]) -> dict[str, Any]:
    """``parent`` and ``forks`` (those the actor may open, as they see them), ``forked_at`` (the last
    entry this session shares with its parent), ``fork_notes`` (for the workspace's members: every
    fork, as ``ForkNote``) and ``created_by`` (who made this file through the app)."""
    access = session.access if isinstance(session, SessionView) else None
    if access is not None:
        parent = next(iter(visible_sessions(access, [parent])), None) if parent is not None else None
        shown = visible_sessions(access, forks)
    else:
        shown = forks
    opens = {fork.id for fork in shown}
    members = not isinstance(session, SessionView) or session.grant.can_share
    made = creators([session.session_id, *(fork.id for fork in forks)] if members else [session.session_id])
    notes = []
    for fork in forks if members else []:
        row = made.get(fork.id)
        if row is not None or fork.id not in opens:
            by = row.user.get_username() if row and row.user else None
            notes.append(ForkNote(by, row.at if row else None, fork.url_id if fork.id in opens else None))
    mine = made.get(session.session_id)
    return {
        "parent": parent,
        "forked_at": _forked_at(session, parent) if parent is not None else None,
        "forks": shown,
        "fork_notes": notes,
        "created_by": mine.user.get_username() if mine and mine.user else None,
    }


def _forked_at(session: SessionFile, parent: SessionInfo) -> str | None:
    """Where this fork and the session it came from part, in the parent as the actor sees it (None when
    it cannot be read)."""
    try:
        source = SessionFile.open(parent.path)
    except (OSError, SessionError):
        return None
    if isinstance(session, SessionView) and session.access is not None:
        grant = session.access.grant(parent.id, parent.path)
        if grant is None:
            return None
        source = SessionView(source, grant, access=session.access)
    return fork_point(session, source)
