"""A thousand slow clients against a server whose process may open 1,024 files (a common ``ulimit -n``),
today's next to the baseline's (``git merge-base HEAD main``, or ``$PITREE_BENCH_BASELINE``).

Each slow client opens a connection, sends the start of a request and nothing more (as a client
sending a byte every ten seconds would look). For each server, side by side: ``PROBES`` ordinary
requests from another address (the sign-in page, one at a time, each allowed ``WAIT`` seconds): alone,
then beside 1,000 slow connections from one address, then beside 1,000 from ten addresses (a hundred
each); how many slow connections the server kept, and how many were still open ``DEADLINE + 5`` seconds
later (``PITREE_REQUEST_SECONDS`` is ``DEADLINE`` for both, which the baseline does not read).

Target: today, every ordinary request answered beside the slow clients.
"""

from __future__ import annotations

import contextlib
import resource
import socket
import sys
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C
import _servers

SLOW = 1000
PROBES = 20
WAIT = 5.0
DEADLINE = 10
FILES = 1024


def main() -> int:
    report = C.Report(
        "slow_clients", f"{SLOW:,} slow clients, a server limited to {FILES:,} files: ordinary requests beside them"
    )
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 4 * SLOW)), hard))  # this process holds them
    sessions = Path(C.BENCH_DIR) / "slow-clients-sessions"
    sessions.mkdir(parents=True, exist_ok=True)
    answered: dict[str, dict[str, tuple[int, float]]] = {}
    for label, tree in _servers.trees():
        env = {"PITREE_REQUEST_SECONDS": str(DEADLINE)}
        with _servers.serving(tree, sessions, files=FILES, **env) as server:
            rows = answered[label] = {}
            rows["alone"] = _probe(server)
            for name, addresses in (
                ("1 address", ["127.0.0.2"]),
                ("10 addresses", [f"127.0.0.{n}" for n in range(3, 13)]),
            ):
                slow = _open(server, addresses)
                try:
                    kept = sum(_open_still(sock) for sock in slow)
                    rows[f"beside {SLOW:,} slow, {name}"] = _probe(server)
                    time.sleep(DEADLINE + 5)
                    left = sum(_open_still(sock) for sock in slow)
                finally:
                    for sock in slow:
                        sock.close()
                report.line(
                    f"{label}: {name}: the server kept {kept:,} of {SLOW:,}; {left:,} still open {DEADLINE + 5} s later"
                )
    report.line()
    labels = list(answered)
    report.line(
        f"{'ordinary requests (answered of ' + str(PROBES) + ', median time)':<52}"
        + "".join(f"{label:>24}" for label in labels)
    )
    for row in answered[labels[0]]:
        cells = "".join(
            f"{f'{ok}/{PROBES}, {C.fmt_time(median)}':>24}" for ok, median in (answered[label][row] for label in labels)
        )
        report.line(f"{row:<52}{cells}")
    worst = min(ok for ok, _ in answered["today"].values())
    report.figure(
        "ordinary requests answered beside 1,000 slow clients, today",
        f"{worst}/{PROBES}",
        f"{PROBES}/{PROBES}",
        worst == PROBES,
    )
    if len(labels) > 1:
        report.figure(f"the same, {labels[1]}", f"{min(ok for ok, _ in answered[labels[1]].values())}/{PROBES}")
    return report.finish()


def _open(server: _servers.Server, addresses: list[str]) -> list[socket.socket]:
    opened = []
    for number in range(SLOW):
        sock = socket.socket()
        sock.bind((addresses[number % len(addresses)], 0))
        sock.settimeout(10)
        try:
            sock.connect(("127.0.0.1", server.port))
            sock.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        except OSError:
            pass
        opened.append(sock)
    time.sleep(1)
    return opened


def _open_still(sock: socket.socket) -> bool:
    """Whether the server has neither closed nor answered this connection."""
    sock.setblocking(False)
    try:
        sock.recv(1, socket.MSG_PEEK)  # the end (b"") or the start of an answer (408)
    except BlockingIOError:
        return True
    except OSError:
        pass
    return False


def _probe(server: _servers.Server) -> tuple[int, float]:
    """How many of PROBES ordinary requests were answered within WAIT seconds, and their median time."""
    times = []
    for _ in range(PROBES):
        start = time.monotonic()
        with (
            contextlib.suppress(OSError),
            urllib.request.urlopen(server.url + "/accounts/login/", timeout=WAIT) as response,
        ):
            response.read()
            times.append(time.monotonic() - start)
    return len(times), C.median(times) if times else float("nan")


if __name__ == "__main__":
    sys.exit(main())
