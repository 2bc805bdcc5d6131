"""pitree served by daphne in a process of its own, from this checkout or a baseline's tree
(``_baseline.source_tree``), so that a benchmark can time both servers side by side: each with a scratch
database, the owner signed in, and optionally a limit on its open files (``ulimit -n``)."""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import _accounts
import _baseline
import _common as C


@dataclass
class Server:
    url: str
    port: int
    process: subprocess.Popen[bytes]
    cookie: str  # the owner's signed-in session (``Cookie`` header value)

    def status_kb(self, field: str) -> int:
        """A ``kB`` figure of the server process (VmRSS, VmHWM)."""
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
        raise KeyError(field)

    def reset_peak(self) -> None:
        """Start the peak resident memory (VmHWM) again from what is resident now."""
        Path(f"/proc/{self.process.pid}/clear_refs").write_text("5")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def serving(tree: Path, sessions: Path, *, files: int | None = None, **env: str) -> Iterator[Server]:
    """pitree from ``tree`` (a checkout) serving ``sessions`` until the block ends."""
    port = free_port()
    environment = {
        **{name: value for name, value in os.environ.items() if not name.startswith("PITREE_")},
        "DJANGO_SETTINGS_MODULE": "pitree_web.settings",
        "PYTHONPATH": str(tree),
        "PITREE_SESSIONS_DIR": str(sessions),
        "PITREE_FSYNC": "0",
        **env,
    }
    link = _accounts.prepare_server_env(environment, tree)
    command = [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), "pitree_web.asgi:application"]
    process = subprocess.Popen(command, cwd=tree, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if files is not None:  # at once, long before the server has imported enough to open many
        resource.prlimit(process.pid, resource.RLIMIT_NOFILE, (files, files))
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(url + "/accounts/login/", timeout=2):
                    break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError(f"the server of {tree} did not start") from None
                time.sleep(0.2)
        yield Server(url, port, process, _accounts.session_cookie(url, link))
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def trees() -> list[tuple[str, Path]]:
    """(label, checkout) of today's code and, when git can give it, the baseline's."""
    found = [("today", C.ROOT)]
    baseline = _baseline.source_tree()
    if baseline is not None:
        found.append((f"baseline {baseline[0]}", baseline[1]))
    return found
