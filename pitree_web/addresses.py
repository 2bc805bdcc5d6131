"""The address a request came from, as the guessing limits count it (django-axes' failed sign-ins,
django-ratelimit's opened links and failed sign-ins per address).

Directly, that is the connection's peer (``REMOTE_ADDR``). Behind a TLS proxy (``PITREE_BEHIND_TLS_PROXY``)
the peer is the proxy, and every visitor would share one count: the address is then the last one of
``X-Forwarded-For``, the one the proxy itself added (nginx: ``proxy_set_header X-Forwarded-For
$proxy_add_x_forwarded_for``, or ``$remote_addr``); those before it are whatever the client sent, and
are never trusted.
"""

from __future__ import annotations

import ipaddress

from django.conf import settings
from django.http import HttpRequest


def client_address(request: HttpRequest) -> str:
    """The visitor's address (the peer's, when a proxy says nothing usable)."""
    peer = str(request.META.get("REMOTE_ADDR") or "")
    if settings.PITREE_BEHIND_TLS_PROXY:
        forwarded = str(request.META.get("HTTP_X_FORWARDED_FOR") or "").rsplit(",", 1)[-1].strip()
        try:
            return str(ipaddress.ip_address(forwarded))
        except ValueError:
            pass
    return peer
