"""Sign-in and CSRF cookies over https only, decided per request: secure unless the request came over
plain http straight from this machine.

Where the server listens does not say how people reach it (daphne started by hand, behind a proxy, on
every interface), and a setting read once at start-up cannot tell: the request can. A browser on the
same machine (``./scripts/run``'s http://127.0.0.1:8000) gets plain cookies, since not every browser
keeps a secure cookie from plain http even there (Chromium does for 127.0.0.1 and localhost; others
do not); any other request gets secure ones, so a plain-http address on a network cannot sign anyone
in. A request that came through a proxy (it says whom it forwards for) counts as one from elsewhere.
``PITREE_SECURE_COOKIES`` set either way, and ``PITREE_DEBUG``, turn the decision off (settings.py).
"""

from __future__ import annotations

import ipaddress

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.utils.deprecation import MiddlewareMixin

_FORWARDED = ("HTTP_X_FORWARDED_FOR", "HTTP_FORWARDED", "HTTP_X_REAL_IP")


def from_this_machine_over_http(request: HttpRequest) -> bool:
    """Whether ``request`` is plain http from a loopback address, not forwarded by a proxy."""
    if request.is_secure() or any(request.META.get(header) for header in _FORWARDED):
        return False
    try:
        return ipaddress.ip_address(str(request.META.get("REMOTE_ADDR", ""))).is_loopback
    except ValueError:
        return False


class SecureCookiesMiddleware(MiddlewareMixin):
    """Marks the session and CSRF cookies secure unless the request is plain http from this machine
    (while ``PITREE_SECURE_COOKIES_AUTO``). Placed before the middlewares that set them, so that it
    sees their cookies on the way out."""

    def process_response(self, request: HttpRequest, response: HttpResponse) -> HttpResponse:
        if settings.PITREE_SECURE_COOKIES_AUTO and not from_this_machine_over_http(request):
            for name in (settings.SESSION_COOKIE_NAME, settings.CSRF_COOKIE_NAME):
                if name in response.cookies:
                    response.cookies[name]["secure"] = True
        return response
