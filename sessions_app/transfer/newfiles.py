"""New session files made for an actor: a new session, or a fork of the branch it sees. Each goes where
the actor may write (a fork of a session in someone else's workspace goes into the actor's own), and
the app remembers who made it."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.exceptions import PermissionDenied

from ..access.authorship import FILE, record
from ..access.grants import Access, folder_of
from ..access.scoped import SessionView
from ..access.workspaces import may_create_in, personal_workspace
from ..services.lookup import catalog
from ..sessionfiles.fork import create_session, fork_session
from ..sessionfiles.store import SessionFile


def new_session_for(access: Access, cwd: str, name: str | None) -> SessionFile:
    """A new session in ``cwd``'s folder, when it is one of the actor's workspaces."""
    if not may_create_in(access, cwd):
        raise PermissionDenied("You may start sessions only in your own or your teams' workspaces.")
    created = create_session(catalog().root, cwd, name=name, fsync=settings.PITREE_FSYNC)
    created_by(access, created.session_id)
    return created


def fork_for(view: SessionView, entry_id: str | None) -> SessionFile:
    """Fork the branch through ``entry_id`` of what ``view`` shows: next to the session when the actor
    may write its workspace, else into the actor's own workspace (its ``parentSession`` still names the
    source, so both sides see the lineage)."""
    access = view.access
    root = catalog().root
    into: tuple[Path, str] | None = None
    if access is not None and not access.may_write_folder(folder_of(view.path, root)):
        if not access.actor.signed_in:
            raise PermissionDenied("Sign in to fork: a fork goes into your own workspace.")
        into = (root, personal_workspace(access.actor.user).cwd)
    forked = fork_session(view, entry_id, fsync=settings.PITREE_FSYNC, into=into)
    if access is not None:
        created_by(access, forked.session_id)
    return forked


def created_by(access: Access, session_id: str) -> None:
    """Remember who made a new session file (uploads too); a link holder has no account to name."""
    if access.actor.signed_in:
        record(session_id, FILE, access.actor.user)
