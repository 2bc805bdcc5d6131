"""pitree served by daphne in a child process, as ``./scripts/run`` serves it: the one launcher the
web, live and browser tests share. Each server has a database of its own with the owner signed in
(``server.cookie``), or shares another's (``site``), as processes serving one site do:
the same SQLite file, or the same PostgreSQL database (``PITREE_DATABASE_URL``)."""

from __future__ import annotations

import os
import resource
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from support import accounts

REPO = Path(__file__).resolve().parents[2]
START_SECONDS = 30


@dataclass
class Daphne:
    url: str  # http://127.0.0.1:PORT (no trailing slash)
    port: int
    process: subprocess.Popen[bytes]
    log: Path
    cookie: str = ""  # the owner's signed-in session (``Cookie`` header value)
    env: dict[str, str] = field(default_factory=dict)  # its environment (``manage.py`` commands for it use it too)

    @property
    def ws(self) -> str:
        return self.url.replace("http://", "ws://")

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


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def launch_daphne(
    env: dict[str, str], log: Path, *, site: Daphne | None = None, port: int | None = None, files: int | None = None
) -> Daphne:
    """Start daphne with ``env`` on top of this process's environment and wait until ``/`` answers; on
    ``port`` (a server started again where its pages are open), else on a free one; with ``files``,
    the process may open that many files at most (``ulimit -n``, soft and hard).

    ``PITREE_ALLOWED_HOSTS`` is dropped so the defaults (127.0.0.1, localhost) apply; the server runs in
    a session of its own, so a test's Ctrl+C does not reach it before its SIGTERM does."""
    port = port or free_port()
    full_env = {**os.environ, "DJANGO_SETTINGS_MODULE": "pitree_web.settings", "PYTHONUNBUFFERED": "1", **env}
    full_env.pop("PITREE_ALLOWED_HOSTS", None)
    # Caches beside the log unless a test names them: test servers never write the project's var/.
    full_env.setdefault("PITREE_CACHE_DIR", str(log.parent / "cache"))
    full_env.setdefault("PITREE_SEARCH_DB", str(log.parent / "cache" / "search.sqlite3"))
    if site is None:
        link = accounts.prepare(full_env, log.parent)
    elif site.env.get("PITREE_DATABASE_URL"):
        full_env["PITREE_DATABASE_URL"] = site.env["PITREE_DATABASE_URL"]
    else:
        full_env["PITREE_DB"] = site.env["PITREE_DB"]
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), "pitree_web.asgi:application"],
            cwd=REPO,
            env=full_env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    if files is not None:  # set at once, long before the server has imported enough to open many
        resource.prlimit(process.pid, resource.RLIMIT_NOFILE, (files, files))
    server = Daphne(url=f"http://127.0.0.1:{port}", port=port, process=process, log=log, env=full_env)
    deadline = time.monotonic() + START_SECONDS
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"daphne exited with {process.returncode}:\n{server.log_tail()}")
        try:
            with urllib.request.urlopen(server.url + "/", timeout=2) as response:
                if response.status == 200:
                    server.cookie = site.cookie if site is not None else accounts.session_cookie(server.url, link)
                    return server
        except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
            pass
        if time.monotonic() > deadline:
            server.stop()
            raise RuntimeError(f"daphne did not answer on {server.url} within {START_SECONDS} s:\n{server.log_tail()}")
        time.sleep(0.1)
