"""A redis-server of a test's own (Debian's package; ./scripts/test installs it), on a free port."""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.daphne import free_port


@contextlib.contextmanager
def redis_server(folder: Path, port: int | None = None) -> Iterator[str]:
    """Start redis-server (nothing saved to disk) and yield its URL; stop it afterwards. On ``port``
    (a Redis started again where the servers look for it), else on a free one."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.fail("no redis-server: run ./scripts/test (it installs it) or apt-get install redis-server")
    port = port or free_port()
    arguments = ["--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", str(folder)]
    process = subprocess.Popen([binary, *arguments], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
                sock.sendall(b"PING\r\n")
                if sock.recv(16).startswith(b"+PONG"):
                    break
            if time.monotonic() > deadline or process.poll() is not None:
                pytest.fail("redis-server did not start")
            time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        process.wait(timeout=10)


def shut_down(url: str) -> int:
    """Stop the redis-server at ``url`` at once, as a crash would (nothing saved); returns its port, to
    start one again there."""
    port = int(url.rsplit(":", 1)[1].partition("/")[0])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(b"SHUTDOWN NOSAVE\r\n")
        sock.recv(64)
    return port
