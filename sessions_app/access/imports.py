"""Imports as an actor: into one of their workspaces (their own unless they name another they may
write), each new session recorded as theirs, and a conversation whose session was moved elsewhere
appended to there only when they may write it."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.exceptions import PermissionDenied

from ..imports.run import CREATED, Progress, Report, import_export
from ..sessionfiles.catalog import Catalog
from ..sessionfiles.errors import SessionError
from .authorship import FILE, record
from .grants import Access
from .workspaces import may_create_in


def import_for(
    access: Access, path: Path, cwd: str, catalog: Catalog, *, name: str | None = None, progress: Progress | None = None
) -> Report:
    """Import the export at ``path`` into the workspace ``cwd`` (``ExportError`` refuses it whole)."""
    if not may_create_in(access, cwd):
        raise PermissionDenied("You may import only into your own or your teams' workspaces.")
    elsewhere = {info.id: info.path for info in catalog.sessions()}

    def locate(session_id: str, own: Path) -> Path | None:
        if own.exists():
            return own
        found = elsewhere.get(session_id)
        if found is None:
            return None
        grant = access.grant(session_id, Path(found))
        if grant is None or not grant.can_write:
            raise SessionError("an earlier import of this conversation was moved where you may not write")
        return Path(found)

    report = import_export(
        path,
        root=catalog.root,
        cwd=cwd,
        fsync=settings.PITREE_FSYNC,
        name=name,
        max_bytes=settings.PITREE_MAX_IMPORT_BYTES,
        progress=progress,
        locate=locate,
    )
    if access.actor.signed_in:
        for outcome in report.outcomes:
            if outcome.status == CREATED:
                record(outcome.session_id, FILE, access.actor.user)
    return report
