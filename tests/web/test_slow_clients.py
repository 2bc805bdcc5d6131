"""Slow and numerous clients against a real daphne: a request whose headers or body trickle in is cut
at its deadline (408), a websocket is not; one address cannot take every connection, and a thousand
slow connections leave other people's requests answered, with the common limit of 1,024 files."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import resource
import socket
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.daphne import Daphne, launch_daphne
from websockets.asyncio.client import connect

pytestmark = pytest.mark.processes  # the tests start servers of their own (tests/support/tiers.py)

SLOW = 1000


@pytest.fixture(scope="module")
def _running() -> Iterator[dict[str, Daphne]]:
    """The server the last test started, by its settings; stopped at the module's end."""
    running: dict[str, Daphne] = {}
    yield running
    for started in running.values():
        started.stop()


@pytest.fixture
def server(_running: dict[str, Daphne], tmp_path: Path, request: pytest.FixtureRequest) -> Daphne:
    """A server with the test's settings: the one the test before started when it asked for the same (each
    test's connections end with it, and a server keeps nothing of them), else a new one, the other stopped."""
    options = getattr(request, "param", {})
    key = json.dumps(options, sort_keys=True)
    if key not in _running:
        for started in _running.values():
            started.stop()
        _running.clear()
        env = {"PITREE_SESSIONS_DIR": str(tmp_path / "sessions"), **options.get("env", {})}
        _running[key] = launch_daphne(env, tmp_path / "daphne.log", files=options.get("files"))
    return _running[key]


def _answer(sock: socket.socket, seconds: float) -> tuple[bytes, float]:
    """What the server sends until it closes the connection, and after how long."""
    start = time.monotonic()
    sock.settimeout(seconds)
    data = b""
    with contextlib.suppress(TimeoutError, ConnectionResetError):
        while chunk := sock.recv(4096):
            data += chunk
    return data, time.monotonic() - start


def _trickle(server: Daphne, head: bytes, seconds: float) -> tuple[bytes, float]:
    """Send ``head``, then a byte every 0.2 s (a header's or the body's), until the server answers."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
        sock.sendall(head)
        start = time.monotonic()
        sock.settimeout(0.2)
        while time.monotonic() - start < seconds:
            try:
                sock.sendall(b"x")
                if sock.recv(4096, socket.MSG_PEEK):
                    break
            except TimeoutError:
                continue
            except OSError:
                break
        data, _ = _answer(sock, 5)
        return data, time.monotonic() - start


def _ok(server: Daphne) -> float:
    """Seconds a plain request from 127.0.0.1 takes to answer 200."""
    start = time.monotonic()
    with urllib.request.urlopen(server.url + "/accounts/login/", timeout=20) as response:
        assert response.status == 200
        response.read()
    return time.monotonic() - start


@pytest.mark.parametrize("server", [{"env": {"PITREE_REQUEST_SECONDS": "2"}}], indirect=True)
def test_headers_that_trickle_in_are_cut_at_the_deadline(server: Daphne) -> None:
    """A byte every 0.2 s kept Twisted's idle timer from ever firing: the connection stayed forever."""
    data, seconds = _trickle(server, b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ", 20)
    assert data.startswith(b"HTTP/1.1 408 Request Timeout") and seconds < 10


@pytest.mark.parametrize("server", [{"env": {"PITREE_REQUEST_SECONDS": "2"}}], indirect=True)
def test_a_body_that_trickles_in_is_cut_at_the_deadline(server: Daphne) -> None:
    head = b"POST /accounts/login/ HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n\r\n"
    data, seconds = _trickle(server, head, 20)
    assert data.startswith(b"HTTP/1.1 408 Request Timeout") and seconds < 10


@pytest.mark.parametrize("server", [{"env": {"PITREE_REQUEST_SECONDS": "2"}}], indirect=True)
def test_an_idle_connection_after_an_answer_gets_the_same_deadline(server: Daphne) -> None:
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
        sock.sendall(b"GET /accounts/login/ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        data, seconds = _answer(sock, 15)
    assert data.startswith(b"HTTP/1.1 200") and b"HTTP/1.1 408 Request Timeout" in data and seconds < 10


@pytest.mark.parametrize("server", [{"env": {"PITREE_REQUEST_SECONDS": "1"}}], indirect=True)
async def test_a_websocket_outlives_the_deadline(server: Daphne) -> None:
    async with connect(
        f"{server.ws}/ws/sessions/", origin=server.url, additional_headers={"Cookie": server.cookie}, open_timeout=20
    ) as socket_:
        await asyncio.sleep(3)
        await asyncio.wait_for(await socket_.ping(), 10)  # still open, still answering


def _raise_own_file_limit(needed: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < needed:
        pytest.fail(f"this test opens {SLOW:,} sockets itself, and its hard file limit is {hard}: raise it")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, needed), hard))


def _slow_connections(server: Daphne, addresses: list[str]) -> tuple[list[socket.socket], int]:
    """``SLOW`` connections spread over ``addresses``, each sending the start of a request and no more;
    returns them and how many the server closed at once."""
    opened = []
    for number in range(SLOW):
        sock = socket.socket()
        sock.bind((addresses[number % len(addresses)], 0))
        sock.settimeout(10)
        sock.connect(("127.0.0.1", server.port))
        with contextlib.suppress(OSError):
            sock.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        opened.append(sock)
    time.sleep(1)
    closed = 0
    for sock in opened:
        sock.setblocking(False)
        try:
            closed += sock.recv(1, socket.MSG_PEEK) == b""
        except BlockingIOError:
            pass
        except OSError:
            closed += 1
    return opened, closed


@pytest.mark.parametrize("server", [{"files": 1024}], indirect=True)
def test_one_address_cannot_take_the_connections_of_everyone_else(server: Daphne) -> None:
    """With the common limit of 1,024 files, a thousand slow connections from one address refused all
    service: now that address holds 128 at most, the others are closed at once, and requests from
    elsewhere are answered."""
    _raise_own_file_limit(SLOW + 200)
    slow, closed = _slow_connections(server, ["127.0.0.2"])
    try:
        assert max(_ok(server) for _ in range(5)) < 10
        assert closed >= SLOW - 128
    finally:
        for sock in slow:
            sock.close()


@pytest.mark.parametrize("server", [{"env": {"PITREE_REQUEST_SECONDS": "5"}}], indirect=True)
def test_a_thousand_slow_connections_from_many_addresses_leave_others_answered(server: Daphne) -> None:
    """Ten addresses, a hundred slow connections each (under the limit per address): the server holds
    them (it raised its own file limit to the hard one), answers others meanwhile, and lets each go at
    its deadline."""
    _raise_own_file_limit(SLOW + 200)
    if resource.getrlimit(resource.RLIMIT_NOFILE)[1] < 4 * SLOW:
        pytest.fail("the server needs room for a thousand connections and its files: raise the hard file limit")
    slow, closed = _slow_connections(server, [f"127.0.0.{number}" for number in range(2, 12)])
    try:
        assert closed == 0
        assert max(_ok(server) for _ in range(5)) < 10
        time.sleep(8)  # past the deadline: each slow connection was answered 408 and closed
        answered = [_answer(sock, 5)[0] for sock in slow[:50]]
        assert all(data.startswith(b"HTTP/1.1 408") for data in answered)
    finally:
        for sock in slow:
            sock.close()
    assert os.path.exists(f"/proc/{server.process.pid}")
