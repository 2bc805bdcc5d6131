"""Who is asking (``Actor``), what they may do with one session (``Grant``), and the one function that
answers it (``Access.grant``).

An ``Access`` is built once per request (or socket, or command) and asked per session; it reads the
database at most twice (the folders the actor is a member of, the shares that reach them), whatever
number of sessions it answers for, so a listing of thousands costs the same two queries.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime
from enum import IntEnum
from functools import cached_property
from pathlib import Path
from typing import Any

from django.db.models import Q

from ..models import Share, Workspace


class Role(IntEnum):
    VIEWER = 1  # reads, follows live, forks into their own workspace
    COLLABORATOR = 2  # also writes in the same file
    MEMBER = 3  # a member of the session's workspace, or a superuser: also shares


@dataclass(frozen=True)
class Scope:
    """Part of a session: the path to ``entry_id`` and what grows below it (``snapshot_offset`` None),
    or the path to ``entry_id`` as the file's first ``snapshot_offset`` bytes held it (a snapshot)."""

    entry_id: str
    snapshot_offset: int | None = None
    snapshot_digest: str = ""  # SHA-256 of those bytes when shared

    @property
    def snapshot(self) -> bool:
        return self.snapshot_offset is not None


@dataclass(frozen=True)
class Grant:
    """What one actor may do with one session."""

    role: Role
    scope: Scope | None = None  # None: the whole session, live
    share_id: int | None = None  # the share it comes from (closing its sockets when it is revoked)
    expires_at: datetime | None = None

    @property
    def can_write(self) -> bool:
        return self.role >= Role.COLLABORATOR and (self.scope is None or not self.scope.snapshot)

    @property
    def can_drive(self) -> bool:
        """Whether the actor may have pi work in the session: pi runs commands on the server, so only
        those who may write the session's folder (its workspace's members), never a share."""
        return self.role is Role.MEMBER

    @property
    def can_share(self) -> bool:
        return self.role is Role.MEMBER

    @property
    def whole(self) -> bool:
        return self.scope is None


FULL = Grant(Role.MEMBER)


@dataclass(frozen=True)
class Actor:
    """Who asks: a user (None when anonymous) and the link shares this browser opened; or the command
    line's unrestricted local owner."""

    user: Any = None  # a User; Any because django-stubs types AUTH_USER_MODEL loosely
    links: frozenset[int] = field(default_factory=frozenset)
    unrestricted: bool = False

    @classmethod
    def local_owner(cls) -> Actor:
        return cls(unrestricted=True)

    @property
    def signed_in(self) -> bool:
        return self.user is not None and bool(self.user.is_authenticated) and bool(self.user.is_active)

    @property
    def sees_everything(self) -> bool:
        return self.unrestricted or (self.signed_in and bool(self.user.is_superuser))

    @property
    def key(self) -> str:
        """Actors with this key see the same sessions (a listing rendered for one serves the others)."""
        if self.sees_everything:
            return "all"
        user = f"u{self.user.pk}" if self.signed_in else "anon"
        return user + "".join(f":l{link}" for link in sorted(self.links))


def folder_of(path: Path | str, root: Path | str) -> str | None:
    """The workspace folder holding a session file: the sub-folder of ``root`` it sits in; None for a
    file directly in the root (or anywhere else), which is nobody's."""
    parent = os.path.dirname(os.path.abspath(path))
    if os.path.dirname(parent) != os.path.abspath(root):
        return None
    return os.path.basename(parent)


class Access:
    """What one actor may see and do under one sessions root."""

    def __init__(self, actor: Actor, root: Path | str) -> None:
        self.actor = actor
        self.root = Path(root)

    # ------------------------------------------------------------------ the permission function

    def grant(self, session_id: str, path: Path | str) -> Grant | None:
        """What the actor may do with the session ``session_id`` stored at ``path``; None: nothing (it
        is then answered as if it did not exist)."""
        if self.actor.sees_everything:
            return FULL
        folder = folder_of(path, self.root)
        if folder is not None and folder in self.member_folders:
            return FULL
        return self._shared.get(session_id)

    def may_write_folder(self, folder: str | None) -> bool:
        """Whether new sessions (created, forked, uploaded) may go into ``folder``."""
        if self.actor.sees_everything:
            return True
        return folder is not None and folder in self.member_folders

    # ------------------------------------------------------------------ what it reads

    @cached_property
    def member_folders(self) -> frozenset[str]:
        """The workspace folders the actor owns, alone or with a team."""
        if not self.actor.signed_in:
            return frozenset()
        user = self.actor.user
        rows = Workspace.objects.filter(Q(owner=user) | Q(team__in=user.groups.all())).values_list("folder", flat=True)
        return frozenset(rows)

    @cached_property
    def _shared(self) -> dict[str, Grant]:
        """The best grant each session is shared with the actor by (whole before scoped, collaborator
        before viewer, the newest share among equals)."""
        audience = Q(pk__in=self.actor.links, token_hash__isnull=False) if self.actor.links else Q(pk__in=[])
        if self.actor.signed_in:
            user = self.actor.user
            audience |= Q(user=user) | Q(team__in=user.groups.all())
        best: dict[str, tuple[tuple[bool, int, int], Grant]] = {}
        for share in Share.active().filter(audience):
            grant = grant_of(share)
            rank = (grant.whole, int(grant.role), share.pk)
            held = best.get(share.session_id)
            if held is None or rank > held[0]:
                best[share.session_id] = (rank, grant)
        return {session_id: grant for session_id, (_, grant) in best.items()}


def grant_of(share: Share) -> Grant:
    """What a share gives."""
    scope = None
    if share.snapshot_offset is not None:
        scope = Scope(share.entry_id, share.snapshot_offset, share.snapshot_digest)
    elif share.branch_only:
        scope = Scope(share.entry_id)
    role = Role.COLLABORATOR if share.role == Share.COLLABORATOR else Role.VIEWER
    return Grant(role, scope, share.pk, share.expires_at)
