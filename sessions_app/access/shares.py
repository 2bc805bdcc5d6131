"""Sharing a session: making a share, opening a link, revoking.

A link's token is shown once, when it is made; the database keeps its SHA-256 only. A revoked or
expired share answers 404 from the next request on (``Share.active``), and its open sockets ask again
what they may receive (``changes.py``), in this process and, with Redis, in the others.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from ..models import Share, new_token, token_hash
from ..sessionfiles.cursor import cursor_of
from .grants import Role
from .scoped import SessionView, prefix_digest

LIVE, BRANCH, SNAPSHOT = "live", "branch", "snapshot"
# Each kind in one line: what its reader sees (what they may do is the role's).
MODES = [
    (LIVE, "The whole session: every branch, followed live as it grows."),
    (BRANCH, "One branch: the path to the entry and what grows below it, live; the other branches stay hidden."),
    (SNAPSHOT, "A snapshot: the path to the entry as it is now; nothing written later shows."),
]


class ShareError(Exception):
    """A share that cannot be made (the message says why; ``field``: the form field it is about)."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class Made:
    share: Share
    token: str | None  # a link's token: shown once, never stored


def make_share(
    view: SessionView,
    by: Any,
    *,
    role: str,
    mode: str,
    entry_id: str = "",
    user: Any = None,
    team: Any = None,
    link: bool = False,
    expires_at: datetime | None = None,
) -> Made:
    """Share the session ``view`` shows (its grant must allow sharing) with a user, a team or a link."""
    if view.grant.role is not Role.MEMBER or view.grant.scope is not None:
        raise ShareError("Only the session's workspace members share it.")
    if sum([user is not None, team is not None, link]) != 1:
        raise ShareError("Share with one user, one team, or by link.")
    if role not in (Share.VIEWER, Share.COLLABORATOR):
        raise ShareError(f"Unknown role {role!r}.")
    if expires_at is not None and expires_at <= timezone.now():
        raise ShareError("The expiry is in the past.")
    share = Share(session_id=view.session_id, role=role, user=user, team=team, created_by=by, expires_at=expires_at)
    if mode != LIVE:
        view.refresh()
        if view.index.read_only:
            raise ShareError("A session in an older format is shared whole; fork it to share a branch of it.", "mode")
        if not entry_id:
            raise ShareError("Pick the entry the branch or snapshot goes to.", "entry")
        if view.index.row(entry_id) is None:
            raise ShareError(f"This session has no entry {entry_id!r}: pick one from the list.", "entry")
        share.entry_id = entry_id
        if mode == BRANCH:
            share.branch_only = True
        elif mode == SNAPSHOT:
            if role == Share.COLLABORATOR:
                raise ShareError("A snapshot does not change: share it with viewers.", "role")
            share.snapshot_offset = cursor_of(view.full.index)
            share.snapshot_digest = prefix_digest(view.path, share.snapshot_offset)
        else:
            raise ShareError(f"Unknown kind of share {mode!r}.")
    token = None
    if link:
        token = new_token()
        share.token_hash = token_hash(token)
    share.save()
    return Made(share, token)


def open_link(token: str) -> Share | None:
    """The share a link's token opens, while it is neither revoked nor expired."""
    return Share.active().filter(token_hash=token_hash(token)).first()


def revoke(share: Share) -> None:
    """End ``share`` now; a share revoked already keeps the time it was revoked at, however many
    requests revoke it at once (the row is locked while it is read and written)."""
    with transaction.atomic():
        locked = Share.objects.select_for_update().filter(pk=share.pk).first()
        if locked is None:  # deleted meanwhile: nothing left to end
            return
        if locked.revoked_at is None:
            locked.revoked_at = timezone.now()
            locked.save(update_fields=["revoked_at"])
    share.revoked_at = locked.revoked_at
