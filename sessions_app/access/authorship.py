"""Who wrote an entry (or created a file) through the app: recorded after the write, read on hover.

The entry is in the file before its author is in the database: a failed record loses a name on
hover, never an entry, so it is logged and the write stands.
"""

from __future__ import annotations

import logging
from typing import Any

from django.db import DatabaseError

from ..models import Authorship

log = logging.getLogger(__name__)

FILE = ""  # the entry id that stands for the file itself (created, forked or uploaded)


def record(session_id: str, entry_id: str, user: Any) -> None:
    """Note that ``user`` (None: someone holding a share link) wrote ``entry_id`` of ``session_id``."""
    try:
        Authorship.objects.get_or_create(session_id=session_id, entry_id=entry_id, defaults={"user": user})
    except DatabaseError:
        log.exception("authorship of %s/%s not recorded", session_id, entry_id)


def author_of(session_id: str, entry_id: str) -> Authorship | None:
    return Authorship.objects.select_related("user").filter(session_id=session_id, entry_id=entry_id).first()


def creators(session_ids: list[str]) -> dict[str, Authorship]:
    """Who created each of these sessions through the app (those made otherwise are missing)."""
    rows = Authorship.objects.select_related("user").filter(session_id__in=session_ids, entry_id=FILE)
    return {row.session_id: row for row in rows}
