"""New session files made for an actor: a new session, a fork of the branch it sees, or a fork of its
last turns after a summary of the rest. Each goes where
the actor may write (a fork of a session in someone else's workspace goes into the actor's own), and
the app remembers who made it."""

from __future__ import annotations

import asyncio
from pathlib import Path

from django.conf import settings
from django.core.exceptions import PermissionDenied

from ..access.authorship import FILE, record
from ..access.grants import Access, folder_of
from ..access.scoped import SessionView
from ..access.workspaces import default_cwd, may_create_in, personal_workspace
from ..services import summaries
from ..services.lookup import catalog
from ..services.titles import branch_name
from ..sessionfiles.context import build_session_context, estimate_tokens
from ..sessionfiles.fork import create_session, fork_session, tail_fork
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
    source, so both sides see the lineage). It is named as a branch of its source ("Branch · …")."""
    name = branch_name(view, entry_id)
    forked = fork_session(view, entry_id, fsync=settings.PITREE_FSYNC, into=_fork_target(view), name=name)
    if view.access is not None:
        created_by(view.access, forked.session_id)
    return forked


async def tail_fork_for(view: SessionView, entry_id: str | None, turns: int, summary: str | None = None) -> SessionFile:
    """Fork only the last ``turns`` turns of the branch through ``entry_id``, the history before them
    folded into a summary (the assistant writes it unless ``summary`` is given), where ``fork_for``
    puts a fork."""
    into = await asyncio.to_thread(_fork_target, view)
    if summary is None:
        written = await summaries.summarize_before_tail(view, entry_id, turns)
    else:
        path = await asyncio.to_thread(view.path_entries, entry_id)
        written = summaries.Summary(summary, estimate_tokens(build_session_context(path).messages), None)
    forked = await asyncio.to_thread(
        tail_fork,
        view,
        entry_id,
        turns,
        written.text,
        written.tokens_before,
        usage=written.usage,
        fsync=settings.PITREE_FSYNC,
        into=into,
        name=await asyncio.to_thread(branch_name, view, entry_id),
    )
    if view.access is not None:
        await asyncio.to_thread(created_by, view.access, forked.session_id)
    return forked


def _fork_target(view: SessionView) -> tuple[Path, str] | None:
    """Where a fork of ``view`` goes: next to it (None) when the actor may write its workspace, else
    into the actor's own workspace (``format.md`` §7.2)."""
    access = view.access
    root = catalog().root
    if view.outside:  # seen through a link out of the sessions folder (Claude Code's): nothing is written there
        return root, default_cwd(access) if access is not None else settings.PITREE_DEFAULT_CWD
    if access is None or access.may_write_folder(folder_of(view.path, root)):
        return None
    if not access.actor.signed_in:
        raise PermissionDenied("Sign in to fork: a fork goes into your own workspace.")
    return root, personal_workspace(access.actor.user).cwd


def created_by(access: Access, session_id: str) -> None:
    """Remember who made a new session file (uploads too); a link holder has no account to name."""
    if access.actor.signed_in:
        record(session_id, FILE, access.actor.user)
