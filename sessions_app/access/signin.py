"""One-time sign-in links, as Jupyter prints its token URL: what ``./scripts/run`` shows the first owner,
and what ``manage.py accounts sign-in-link USER`` mints for anyone. Stored hashed, single use, expiring."""

from __future__ import annotations

import getpass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils import timezone

from ..models import SignInLink, new_token, token_hash

DEFAULT_OWNER = "owner"


def mint(user: Any, hours: int | None = None) -> str:
    """A new one-time sign-in token for ``user`` (its path: ``link_path``)."""
    token = new_token()
    lifetime = timedelta(hours=hours or settings.PITREE_SIGNIN_LINK_HOURS)
    SignInLink.objects.create(user=user, token_hash=token_hash(token), expires_at=timezone.now() + lifetime)
    return token


def link_path(token: str) -> str:
    return reverse("accounts:once", args=[token])


def redeem(token: str) -> Any:
    """The active user a token signs in, once; None for an unknown, used or expired token."""
    now = timezone.now()
    with transaction.atomic():
        found = SignInLink.objects.filter(token_hash=token_hash(token), used_at__isnull=True, expires_at__gt=now)
        link = found.select_related("user").first()
        # Conditional on still being unused: two requests with one token sign in one of them.
        if link is None or not SignInLink.objects.filter(pk=link.pk, used_at__isnull=True).update(used_at=now):
            return None
    return link.user if link.user.is_active else None


def first_owner() -> str | None:
    """When no account exists yet: make the owner (a superuser who signs in by link; a password can be
    set once signed in) and return a one-time token for them. None when accounts exist."""
    User = get_user_model()
    try:
        with transaction.atomic():
            if User.objects.exists():
                return None
            owner = User.objects.create_superuser(username=_owner_name(), email="", password=None)
    except IntegrityError:  # another machine's first start made the owner meanwhile (PostgreSQL)
        return None
    return mint(owner)


def _owner_name() -> str:
    try:
        name = getpass.getuser()
    except (KeyError, OSError):  # no name for this uid (a container)
        return DEFAULT_OWNER
    return name if name and name != "root" and name.isidentifier() else DEFAULT_OWNER
