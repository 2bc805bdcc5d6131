"""What the session page shows about access, for one actor: the lineage they may see (the parent and
the forks they may open are links; every fork is told by who made it and when, so the owner learns
that a viewer forked even where the fork is not theirs to open; a parent they may not open is not
mentioned), who started the session, and the name its download gets."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..sessionfiles.catalog import SessionInfo
from ..sessionfiles.store import SessionFile
from .authorship import creators
from .scoped import SessionView
from .transfer import download_name


@dataclass(frozen=True)
class ForkNote:
    """Who forked this session through the app (None: someone with a link, or pi or the command line),
    when, and the fork's id when the actor may open it (None otherwise: a fork in another workspace)."""

    by: str | None
    at: datetime | None
    opens: str | None


def page_context(session: SessionFile, parent: SessionInfo | None, forks: list[SessionInfo]) -> dict[str, Any]:
    """``parent`` and ``forks`` (those the actor may open), ``fork_notes`` (every fork, as ``ForkNote``:
    the owner learns who forked even where they may not look), ``created_by`` (who made this file
    through the app) and ``download_name``."""
    access = session.access if isinstance(session, SessionView) else None
    if access is not None and parent is not None and access.grant(parent.id, parent.path) is None:
        parent = None
    opens = {fork.id for fork in forks if access is None or access.grant(fork.id, fork.path) is not None}
    made = creators([session.session_id, *(fork.id for fork in forks)])
    notes = []
    for fork in forks:
        row = made.get(fork.id)
        if row is not None or fork.id not in opens:
            by = row.user.get_username() if row and row.user else None
            notes.append(ForkNote(by, row.at if row else None, fork.url_id if fork.id in opens else None))
    mine = made.get(session.session_id)
    return {
        "parent": parent,
        "forks": [fork for fork in forks if fork.id in opens],
        "fork_notes": notes,
        "created_by": mine.user.get_username() if mine and mine.user else None,
        "download_name": download_name(session, None, "jsonl"),
    }
