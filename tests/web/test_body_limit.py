"""Request bodies over the limit are refused by a real daphne process before they are buffered: the
server's peak memory does not follow an 800 MB upload, announced or chunked, and the client still
reads the 413."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

pytestmark = pytest.mark.processes  # a daphne process

MAX_MESSAGE = 10_000
LIMIT = 3 * MAX_MESSAGE + 64 * 1024  # settings.PITREE_MAX_BODY_BYTES for that message size
HUGE = 800 * 1024 * 1024
CHUNK = b"x" * (1 << 20)


@pytest.fixture(scope="module")
def server(start_daphne, tmp_path_factory):
    root: Path = tmp_path_factory.mktemp("bodylimit")
    return start_daphne(
        {"PITREE_SESSIONS_DIR": str(root), "PITREE_MAX_MESSAGE_BYTES": str(MAX_MESSAGE), "PITREE_FSYNC": "0"}
    )


def _post(server, headers: list[str], body_parts) -> bytes:
    """Send a raw POST (headers, then every part of the body), then read the whole answer."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=60) as sock:
        head = [
            "POST /new/ HTTP/1.1",
            "Host: 127.0.0.1",
            "Connection: close",
            "Content-Type: application/x-www-form-urlencoded",
        ]
        head += headers
        sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode())
        for part in body_parts:
            sock.sendall(part)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return answer


def _fixed(size: int):
    sent = 0
    while sent < size:
        part = CHUNK[: min(len(CHUNK), size - sent)]
        sent += len(part)
        yield part


def _chunked(size: int):
    for part in _fixed(size):
        yield b"%x\r\n%s\r\n" % (len(part), part)
    yield b"0\r\n\r\n"


def test_an_800_mb_post_is_refused_without_growing_the_server(server) -> None:
    before = server.memory_kb("VmHWM")
    answer = _post(server, [f"Content-Length: {HUGE}"], _fixed(HUGE))
    assert answer.startswith(b"HTTP/1.1 413 ")
    assert b"at most 10,000 bytes" in answer
    chunked = _post(server, ["Transfer-Encoding: chunked"], _chunked(HUGE))
    assert chunked.startswith(b"HTTP/1.1 413 ")
    grown = server.memory_kb("VmHWM") - before
    assert grown < 8 * 1024, f"the server's peak memory grew by {grown} kB"


def test_a_refused_body_is_never_invited_with_100_continue(server) -> None:
    answer = _post(server, [f"Content-Length: {LIMIT + 1}", "Expect: 100-continue"], [])
    assert answer.startswith(b"HTTP/1.1 413 ") and b"100 Continue" not in answer


def test_htmx_requests_get_the_reason_where_the_user_acted(server) -> None:
    answer = _post(server, [f"Content-Length: {LIMIT + 1}", "HX-Request: true"], _fixed(LIMIT + 1))
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413 ") and b"HX-Retarget: #flash" in head
    assert body.startswith(b'<div class="flash flash--error"')


def test_bodies_within_the_limit_reach_django(server) -> None:
    # No CSRF token: Django itself answers (403), which shows the body went through.
    assert _post(server, [f"Content-Length: {LIMIT}"], _fixed(LIMIT)).startswith(b"HTTP/1.1 403 ")
    assert _post(server, ["Transfer-Encoding: chunked"], _chunked(LIMIT)).startswith(b"HTTP/1.1 403 ")
    assert _post(server, ["Transfer-Encoding: chunked"], _chunked(LIMIT + 1)).startswith(b"HTTP/1.1 413 ")
