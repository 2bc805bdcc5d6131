"""The session websocket accepts only pages of the site it is addressed to: same scheme, host and port
(or a trusted origin), checked on the real ASGI application."""

from __future__ import annotations

import pytest
from channels.testing import WebsocketCommunicator

from pitree_web.asgi import application


async def _connects(path: str, headers: list[tuple[bytes, bytes]], scheme: str = "ws") -> bool:
    communicator = WebsocketCommunicator(application, path, headers=headers)
    communicator.scope["scheme"] = scheme
    connected, _ = await communicator.connect()
    await communicator.disconnect()
    return connected


def _headers(origin: str | None, host: str = "localhost:8000") -> list[tuple[bytes, bytes]]:
    headers = [(b"host", host.encode())]
    if origin is not None:
        headers.append((b"origin", origin.encode()))
    return headers


@pytest.fixture
def path(pi, transactional_db) -> str:
    """A session's socket path (its consumer reads who connects from the database)."""
    return f"/ws/s/{pi.id('01-linear')}/"


@pytest.mark.parametrize(
    ("origin", "host", "accepted"),
    [
        ("http://localhost:8000", "localhost:8000", True),
        ("http://127.0.0.1:8000", "127.0.0.1:8000", True),
        ("http://LOCALHOST:8000", "localhost:8000", True),
        ("http://localhost", "localhost", True),  # default port on both sides
        ("http://localhost:80", "localhost", True),
        ("http://localhost:9999", "localhost:8000", False),  # same host, another port
        ("https://localhost:8000", "localhost:8000", False),  # another scheme
        ("http://127.0.0.1:8000", "localhost:8000", False),  # another host name
        ("http://evil.example:8000", "localhost:8000", False),
        ("http://localhost:8000", "evil.example:8000", False),  # a host not in ALLOWED_HOSTS
        ("null", "localhost:8000", False),
        ("http://localhost:8000/path", "localhost:8000", False),
        (None, "localhost:8000", False),  # no Origin: not a page of this site
    ],
)
async def test_origin_must_be_the_sites_own(path, origin, host, accepted) -> None:
    assert await _connects(path, _headers(origin, host)) is accepted


async def test_https_is_recognised_from_the_server_and_from_a_trusted_proxy(path, settings) -> None:
    assert await _connects(path, _headers("https://localhost:8000"), scheme="wss")
    assert not await _connects(path, [*_headers("https://localhost:8000"), (b"x-forwarded-proto", b"https")])
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    assert await _connects(path, [*_headers("https://localhost:8000"), (b"x-forwarded-proto", b"https")])
    assert not await _connects(path, [*_headers("http://localhost:8000"), (b"x-forwarded-proto", b"https")])


async def test_trusted_origins_are_accepted_exactly(path, settings) -> None:
    settings.CSRF_TRUSTED_ORIGINS = ["https://pitree.example"]
    assert await _connects(path, _headers("https://pitree.example"))
    assert not await _connects(path, _headers("https://pitree.example:8443"))
    assert not await _connects(path, _headers("http://pitree.example"))
