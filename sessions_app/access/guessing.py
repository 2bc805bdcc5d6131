"""Password spraying: failed sign-ins counted per address, whatever the user name.

django-axes locks out a user name at one address after ``PITREE_SIGNIN_ATTEMPTS`` failures (guessing
one person's password). Trying one password on many user names from one address never trips that, so
failures are also counted per address alone (django-ratelimit, in the default cache: shared with
Redis), with a higher limit, ``PITREE_SIGNIN_ADDRESS_ATTEMPTS`` per cool-off period, since several
people may sign in from one address. Past it, every sign-in from that address is refused for a
while, through the admin's sign-in page too: the check is an authentication backend of its own.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.signals import user_login_failed
from django.core.exceptions import PermissionDenied
from django.dispatch import receiver
from django.http import HttpRequest
from django_ratelimit.core import get_usage

GROUP = "pitree-signin-failures"


def _rate(group: str, request: HttpRequest) -> str:
    return f"{settings.PITREE_SIGNIN_ADDRESS_ATTEMPTS}/{int(settings.AXES_COOLOFF_TIME.total_seconds() // 60)}m"


def address_locked_out(request: HttpRequest) -> bool:
    """Whether sign-ins from the request's address failed too often lately."""
    usage = get_usage(request, group=GROUP, key="ip", rate=_rate, increment=False)
    return usage is not None and usage["count"] >= usage["limit"]


@receiver(user_login_failed)
def _count_failure(sender: Any, credentials: dict[str, Any], request: HttpRequest | None = None, **_: Any) -> None:
    if request is not None:
        get_usage(request, group=GROUP, key="ip", rate=_rate, increment=True)


class AddressLimitBackend:
    """Refuses every sign-in from an address that failed too often (the backends after it are not
    asked); authenticates nobody itself. No ``get_user``: a signed-in session never names it as the
    backend to load its user with (Django's test client picks the first backend that has one)."""

    def authenticate(self, request: HttpRequest | None, **credentials: Any) -> None:
        if request is not None and address_locked_out(request):
            raise PermissionDenied("Too many failed sign-ins from this address.")
