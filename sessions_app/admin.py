"""Django's admin for what pitree keeps: workspaces (who owns which folder), shares, authorship and
sign-in links. Users and teams (groups) are Django's own admin pages."""

from __future__ import annotations

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from .access.shares import revoke
from .models import Authorship, Share, SignInLink, Workspace


@admin.register(Workspace)
class WorkspaceAdmin(admin.ModelAdmin):
    list_display = ("folder", "owner", "team", "personal", "cwd")
    list_filter = ("personal", "team")
    search_fields = ("folder", "cwd", "owner__username", "team__name")


@admin.action(description="Revoke the selected shares")
def revoke_shares(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet[Share]) -> None:
    for share in queryset.filter(revoked_at__isnull=True):
        revoke(share)  # each closes that share's open sockets


@admin.register(Share)
class ShareAdmin(admin.ModelAdmin):
    list_display = (
        "session_id",
        "audience",
        "role",
        "entry_id",
        "branch_only",
        "is_snapshot",
        "expires_at",
        "revoked_at",
    )
    list_filter = ("role", "branch_only")
    search_fields = ("session_id", "user__username", "team__name")
    readonly_fields = ("token_hash", "snapshot_offset", "snapshot_digest")
    actions = (revoke_shares,)


@admin.register(Authorship)
class AuthorshipAdmin(admin.ModelAdmin):
    list_display = ("session_id", "entry_id", "user", "at")
    search_fields = ("session_id", "entry_id", "user__username")


@admin.register(SignInLink)
class SignInLinkAdmin(admin.ModelAdmin):
    list_display = ("user", "created_at", "expires_at", "used_at")
    readonly_fields = ("token_hash",)
