"""What the database keeps: who owns which workspace folder, what is shared with whom, who wrote what
through the app, one-time sign-in links, and a count of the changes to grants (for the open sockets of
every process). Never an entry: the session files stay the only copy of every one, and nothing here
changes what pi reads.

Teams are Django's ``Group``: membership, the admin pages and the management of both come with it, and
a team needs nothing a group lacks.
"""

from __future__ import annotations

import hashlib
import secrets

from django.conf import settings
from django.contrib.auth.models import Group
from django.db import models
from django.db.models import Q
from django.utils import timezone

TOKEN_BYTES = 32  # 256 bits: unguessable, so a plain SHA-256 of it is enough to store


def new_token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


def token_hash(token: str) -> str:
    """What is stored of a token: its SHA-256 (a stolen database holds no usable link)."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


class Workspace(models.Model):
    """One ``--<encoded cwd>--`` folder of the sessions root, owned by one user or one team, whose
    members see and write every session in it. A folder without a row is nobody's: only superusers
    see what it holds, until it is assigned."""

    folder = models.CharField(max_length=255, unique=True, help_text="the folder's name under the sessions root")
    cwd = models.CharField(
        max_length=4096, blank=True, help_text="working directory recorded in sessions created here from the browser"
    )
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="workspaces"
    )
    team = models.ForeignKey(Group, null=True, blank=True, on_delete=models.CASCADE, related_name="workspaces")
    personal = models.BooleanField(default=False, help_text="the owner's default workspace")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = (
            models.CheckConstraint(
                condition=Q(owner__isnull=False, team__isnull=True) | Q(owner__isnull=True, team__isnull=False),
                name="workspace_one_owner",
            ),
            models.UniqueConstraint(fields=["owner"], condition=Q(personal=True), name="one_personal_workspace"),
        )

    def __str__(self) -> str:
        return f"{self.folder} ({self.owner_name})"

    @property
    def owner_name(self) -> str:
        if self.owner is not None:
            return self.owner.get_username()
        return f"team {self.team.name}" if self.team is not None else "nobody"


class Share(models.Model):
    """A session shared with a user, a team, or whoever holds a link.

    A share is live (the whole session as it grows), or scoped at ``entry_id``: ``branch_only`` keeps the
    path to that entry and what grows below it; a snapshot (``snapshot_offset`` set) keeps the path to
    that entry as the file's first ``snapshot_offset`` bytes held it, so nothing written later (entries,
    labels, names) is ever shown."""

    VIEWER = "viewer"
    COLLABORATOR = "collaborator"
    ROLES = ((VIEWER, "viewer: reads, follows, forks"), (COLLABORATOR, "collaborator: also writes"))

    session_id = models.CharField(max_length=128, db_index=True)
    role = models.CharField(max_length=16, choices=ROLES, default=VIEWER)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="shares_received"
    )
    team = models.ForeignKey(Group, null=True, blank=True, on_delete=models.CASCADE, related_name="shares_received")
    token_hash = models.CharField(max_length=64, null=True, blank=True, unique=True, editable=False)
    entry_id = models.CharField(max_length=1024, blank=True, help_text="the entry a scoped share is anchored at")
    branch_only = models.BooleanField(default=False)
    snapshot_offset = models.BigIntegerField(null=True, blank=True, editable=False)
    snapshot_digest = models.CharField(max_length=64, blank=True, editable=False)  # SHA-256 of those bytes
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="shares_made")
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = (
            models.CheckConstraint(
                condition=(
                    Q(user__isnull=False, team__isnull=True, token_hash__isnull=True)
                    | Q(user__isnull=True, team__isnull=False, token_hash__isnull=True)
                    | Q(user__isnull=True, team__isnull=True, token_hash__isnull=False)
                ),
                name="share_one_audience",
            ),
            models.CheckConstraint(
                condition=Q(snapshot_offset__isnull=True) | (~Q(entry_id="") & ~Q(role="collaborator")),
                name="snapshot_viewer_at_entry",
            ),
            models.CheckConstraint(condition=Q(branch_only=False) | ~Q(entry_id=""), name="branch_at_entry"),
        )

    def __str__(self) -> str:
        return f"{self.session_id} → {self.audience} ({self.role})"

    @property
    def audience(self) -> str:
        if self.user is not None:
            return self.user.get_username()
        if self.team is not None:
            return f"team {self.team.name}"
        return "link"

    @property
    def is_snapshot(self) -> bool:
        return self.snapshot_offset is not None

    @classmethod
    def active(cls) -> models.QuerySet[Share]:
        """Shares that grant something now: not revoked, not expired."""
        now = timezone.now()
        return cls.objects.filter(revoked_at__isnull=True).filter(Q(expires_at__isnull=True) | Q(expires_at__gt=now))


class Authorship(models.Model):
    """Who wrote an entry through the app, and when (``entry_id`` "" stands for the file itself: who
    created, forked or uploaded it). Entries pi or the command line wrote have none."""

    session_id = models.CharField(max_length=128)
    entry_id = models.CharField(max_length=1024, blank=True)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = (models.UniqueConstraint(fields=["session_id", "entry_id"], name="one_author_per_entry"),)

    def __str__(self) -> str:
        return f"{self.session_id}/{self.entry_id or '(file)'} by {self.user}"


class SignInLink(models.Model):
    """A one-time sign-in link (what ``./scripts/run`` prints for the first owner): single use,
    expiring, stored hashed."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    token_hash = models.CharField(max_length=64, unique=True, editable=False)
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"sign-in link for {self.user}"


class GrantGeneration(models.Model):
    """One row counting the changes that may change what an open socket is granted (``access.changes``).
    Every server process reads it now and then and has its sockets ask again when it moved: a change
    made in another process (``manage.py accounts``, a shell) reaches them without a channel layer
    spanning the processes."""

    value = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return f"grant generation {self.value}"
