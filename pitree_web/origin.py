"""Websockets are accepted only from pages of this very site.

Browsers let any page open a websocket to any server, sending the page's ``Origin``; cookies go along.
So the origin must be the site's own: the same scheme, host **and port** the request came to, as
Django's CSRF check asks of a form post (or one of ``CSRF_TRUSTED_ORIGINS``, for a site reached
through a proxy under another name). Channels' ``AllowedHostsOriginValidator`` compares host names
only: a page on ``http://localhost:9999`` could listen to a server on ``localhost:8000``.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.http.request import split_domain_port, validate_host

_DEFAULT_PORTS = {"http": 80, "https": 443}


def _origin_key(url: str) -> tuple[str, str, int] | None:
    """(scheme, host, port) of an http(s) origin, the port made explicit; None for anything else."""
    try:
        parts = urlsplit(url.strip().lower())
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in _DEFAULT_PORTS or not parts.hostname or parts.path not in ("", "/"):
        return None
    return parts.scheme, parts.hostname, port if port is not None else _DEFAULT_PORTS[parts.scheme]


def _is_secure(scope: dict[str, Any], headers: dict[bytes, bytes]) -> bool:
    """https as the browser sees it: the server's own TLS, or the proxy's header when one is trusted."""
    if scope.get("scheme") in ("https", "wss"):
        return True
    proxy_header = getattr(settings, "SECURE_PROXY_SSL_HEADER", None)
    if not proxy_header:
        return False
    name, value = proxy_header
    sent = headers.get(name.removeprefix("HTTP_").lower().replace("_", "-").encode(), b"")
    return sent.decode("latin-1").split(",")[0].strip() == value


def origin_allowed(scope: dict[str, Any]) -> bool:
    """Whether the websocket request in ``scope`` comes from a page of the site it is addressed to."""
    headers = dict(scope.get("headers", []))
    try:
        origin = headers[b"origin"].decode("latin-1")
        host = headers[b"host"].decode("latin-1")
    except KeyError:
        return False  # no Origin: not a browser page; no Host: no site to compare with
    domain, _ = split_domain_port(host)
    if not domain or not validate_host(domain, settings.ALLOWED_HOSTS):
        return False
    found = _origin_key(origin)
    if found is None:
        return False
    scheme = "https" if _is_secure(scope, headers) else "http"
    if found == _origin_key(f"{scheme}://{host}"):
        return True
    return any(found == _origin_key(trusted) for trusted in settings.CSRF_TRUSTED_ORIGINS)


class SameOriginValidator:
    """ASGI middleware for the websocket router: refuses (HTTP 403 at the handshake) a websocket
    whose ``Origin`` is not the site's own."""

    def __init__(self, application: Any) -> None:
        self.application = application

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        if origin_allowed(scope):
            return await self.application(scope, receive, send)
        return await WebsocketDenier.as_asgi()(scope, receive, send)
