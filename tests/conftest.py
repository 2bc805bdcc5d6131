"""Fixtures shared by every test folder, and the Hypothesis profiles.

Hypothesis runs the quick ``ci`` profile unless ``HYPOTHESIS_PROFILE=thorough`` asks for many more
examples (see README, "Tests").
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings
from support import accounts

REPO = Path(__file__).resolve().parents[1]

hypothesis_settings.register_profile("ci", max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
hypothesis_settings.register_profile("thorough", max_examples=1000, deadline=None)
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


# --- accounts: the existing suites act as the instance's owner ------------------------------------


@pytest.fixture
def owner(django_user_model, transactional_db):
    """The instance's owner (a superuser), as ``./scripts/run`` makes on the first start. The database is
    transactional: views, sockets and reply tasks read it from threads of their own."""
    return django_user_model.objects.create_superuser("owner", password=None)


@pytest.fixture
def client(client, owner):
    """pytest-django's test client, signed in as the owner."""
    client.force_login(owner)
    return client


@pytest.fixture
def async_client(async_client, owner):
    """pytest-django's async test client, signed in as the owner."""
    async_client.force_login(owner)
    return async_client


@pytest.fixture
def sign_in(owner):
    """``sign_in(client)``: a test client a test made itself, signed in as the owner."""

    def signed_in(client):
        client.force_login(owner)
        return client

    return signed_in


@pytest.fixture
def owner_session(client, settings) -> tuple[str, str]:
    """The owner's signed-in session cookie, (name, value)."""
    name = settings.SESSION_COOKIE_NAME
    return name, client.cookies[name].value


@pytest.fixture
def owner_cookie(owner_session) -> tuple[bytes, bytes]:
    """A ``Cookie`` header of the owner's signed-in session (for websockets)."""
    return (b"cookie", "=".join(owner_session).encode())


@pytest.fixture
def sessions_dir(tmp_path: Path, settings) -> Path:
    """An empty sessions folder that settings.PITREE_SESSIONS_DIR points at for one test."""
    path = tmp_path / "sessions"
    path.mkdir()
    settings.PITREE_SESSIONS_DIR = path
    return path


# --- a real server ---------------------------------------------------------------------------------


@dataclass
class Daphne:
    """pitree served by daphne in a child process, as ``./scripts/run`` serves it."""

    url: str  # http://127.0.0.1:PORT (no trailing slash)
    port: int
    process: subprocess.Popen[bytes]
    log: Path
    cookie: str = ""  # the owner's signed-in session (``Cookie`` header value)
    env: dict[str, str] = field(default_factory=dict)  # its environment (``manage.py`` commands for it use it too)

    def log_tail(self, chars: int = 4000) -> str:
        try:
            return self.log.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def memory_kb(self, field: str = "VmHWM") -> int:
        """A ``kB`` figure of the server process (VmHWM: its peak resident memory so far)."""
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
        raise KeyError(field)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def start_daphne(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[dict[str, str]], Daphne]]:
    """Start pitree under daphne with extra environment variables; every server stops at the end."""
    started: list[Daphne] = []

    def start(env: dict[str, str]) -> Daphne:
        """The server has a database of its own, with the owner signed in (``server.cookie``)."""
        log = tmp_path_factory.mktemp("daphne") / "daphne.log"
        port = _free_port()
        full_env = {**os.environ, "DJANGO_SETTINGS_MODULE": "pitree_web.settings", "PYTHONUNBUFFERED": "1", **env}
        full_env.pop("PITREE_ALLOWED_HOSTS", None)
        link = accounts.prepare(full_env, log.parent)
        with open(log, "wb") as out:
            process = subprocess.Popen(
                [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), "pitree_web.asgi:application"],
                cwd=REPO,
                env=full_env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        server = Daphne(url=f"http://127.0.0.1:{port}", port=port, process=process, log=log, env=full_env)
        started.append(server)
        deadline = time.monotonic() + 30
        while True:
            if process.poll() is not None:
                pytest.fail(f"daphne exited with {process.returncode}:\n{server.log_tail()}")
            try:
                with urllib.request.urlopen(server.url + "/", timeout=2) as response:
                    if response.status == 200:
                        server.cookie = accounts.session_cookie(server.url, link)
                        return server
            except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"daphne did not answer on {server.url} within 30 s:\n{server.log_tail()}")
            time.sleep(0.1)

    yield start
    for server in started:
        server.stop()
