"""What the session page shows about access, for one actor: the lineage they may see (the parent and
the forks they may open are links; the forks they may not open are told only by who made them and
when, so the owner learns that a viewer forked, not what the fork holds; a parent they may not open is
not mentioned), who started the session, and the name its download gets."""

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
class HiddenFork:
    """A fork the actor may not open: who made it through the app (None: someone with a link, or
    pi or the command line), and when."""

    by: str | None
    at: datetime | None


def page_context(session: SessionFile, parent: SessionInfo | None, forks: list[SessionInfo]) -> dict[str, Any]:
    """``parent``, ``forks`` (those the actor may open), ``forks_elsewhere`` (the others, as
    ``HiddenFork``), ``created_by`` (who made this file through the app) and ``download_name``."""
    access = session.access if isinstance(session, SessionView) else None
    if access is not None:
        if parent is not None and access.grant(parent.id, parent.path) is None:
            parent = None
        visible = [fork for fork in forks if access.grant(fork.id, fork.path) is not None]
        hidden = [fork for fork in forks if access.grant(fork.id, fork.path) is None]
    else:
        visible, hidden = forks, []
    made = creators([session.session_id, *(fork.id for fork in hidden)])
    elsewhere = []
    for fork in hidden:
        row = made.get(fork.id)
        elsewhere.append(HiddenFork(row.user.get_username() if row and row.user else None, row.at if row else None))
    mine = made.get(session.session_id)
    return {
        "parent": parent,
        "forks": visible,
        "forks_elsewhere": elsewhere,
        "created_by": mine.user.get_username() if mine and mine.user else None,
        "download_name": download_name(session, None, "jsonl"),
    }
