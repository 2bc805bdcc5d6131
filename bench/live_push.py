"""From an append to every open tab: latency of the push path, N = 1, 10, 100 websocket clients.

pitree runs under daphne in a process of its own; this process holds N real websocket clients
(loopback, the ``websockets`` library, one event loop), each joined to the same session with the page's
protocol. Each round appends one line and timestamps its arrival at every client:

- **app writes**: the line is written by the server process itself (a label set through the HTTP form
  post, as a browser does); the clock starts before the request is sent;
- **external writes**: the line is appended by this process through its own ``SessionFile`` (another
  program writing the file, as pi or the command line do); the clock starts before the append.

Rounds run one after the other (the next starts when every client has the line). Afterwards each client
must have received every line exactly once, in file order: ``lost`` and ``duplicated`` count the
exceptions. Files are watched with inotify; the external writes are also measured with stat polling
(``PITREE_WATCH=poll``).

Targets: p99 ≤ 100 ms at N = 100 for app writes, 0 lost, 0 duplicated. The ratio N=100 / N=1 shows how
the cost grows with the number of tabs (the batch is rendered once, then sent N times).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _accounts
import _common as C

from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles.store import SessionFile

SAMPLE = C.ROOT / "sessions_app" / "samples" / "pi" / "01-linear.jsonl"
SESSION_ID = "019cadd4-5bfc-74dd-b0a5-3da46bf1f75f"
ROUNDS = 40
CLIENTS = (1, 10, 100)
TIMEOUT = 30.0


class Client:
    """One websocket tab: arrival times of every entry it receives."""

    def __init__(self, socket: Any) -> None:
        self.socket = socket
        self.arrivals: dict[str, list[float]] = {}
        self.order: list[str] = []
        self.got = asyncio.Event()

    async def read(self) -> None:
        async for raw in self.socket:
            now = time.perf_counter()
            message = json.loads(raw)
            if message.get("t") != "batch":
                continue
            for entry in message["entries"]:
                self.arrivals.setdefault(entry["id"], []).append(now)
                self.order.append(entry["id"])
            self.got.set()


async def _connect(server: str, cookie: str, cursor: int) -> Client:
    from websockets.asyncio.client import connect
    from websockets.typing import Origin

    socket = await connect(
        f"{server.replace('http', 'ws')}/ws/s/{SESSION_ID}/",
        origin=Origin(server),
        additional_headers={"Cookie": cookie},
        open_timeout=TIMEOUT,
        max_queue=None,
    )
    await socket.send(json.dumps({"cursor": cursor}))
    while json.loads(await socket.recv()) != {"t": "live"}:
        pass
    return Client(socket)


class AppWriter:
    """Sets a label through the app's form post, as a browser would (cookie and CSRF token first)."""

    def __init__(self, server: str, cookie: str) -> None:
        self.server = server
        self.opener = _accounts.signed_in_opener(cookie)
        page = self.opener.open(f"{server}/s/{SESSION_ID}/", timeout=TIMEOUT).read().decode()
        found = re.search(r'"x-csrftoken": "([^"]+)"', page)
        assert found is not None
        self.token = found.group(1)
        self.count = 0

    def write(self, label: str = "") -> float:
        """Set the label (by default ``round N``); returns when the clock started."""
        self.count += 1
        body = urllib.parse.urlencode({"entry": "358d8704", "label": label or f"round {self.count}"}).encode()
        request = urllib.request.Request(
            f"{self.server}/s/{SESSION_ID}/label/",
            data=body,
            headers={"X-CSRFToken": self.token, "HX-Request": "true"},
        )
        started = time.perf_counter()
        with self.opener.open(request, timeout=TIMEOUT) as response:
            assert response.status == 200
        return started


def _external_write(path: Path) -> float:
    started = time.perf_counter()
    SessionFile(path, fsync=False).append(E.user_message("an external write"))
    return started


def _last_id(path: Path) -> str:
    return str(json.loads(path.read_bytes().splitlines()[-1])["id"])


async def _measure(server: str, cookie: str, path: Path, clients: int, kind: str) -> dict[str, Any]:
    tabs = [await _connect(server, cookie, path.stat().st_size) for _ in range(clients)]
    readers = [asyncio.create_task(tab.read()) for tab in tabs]
    writer = AppWriter(server, cookie) if kind == "app" else None
    latencies: list[float] = []
    written: list[str] = []
    try:
        for _ in range(ROUNDS):
            for tab in tabs:
                tab.got.clear()
            if writer is not None:
                started = await asyncio.to_thread(writer.write)
            else:
                started = _external_write(path)
            entry = _last_id(path)
            written.append(entry)
            deadline = time.perf_counter() + TIMEOUT
            for tab in tabs:
                while entry not in tab.arrivals and time.perf_counter() < deadline:
                    await asyncio.wait_for(tab.got.wait(), TIMEOUT)
                    tab.got.clear()
                latencies.append(tab.arrivals[entry][0] - started)
        # A last line written and awaited: anything sent twice would have come before it.
        sentinel_started = _external_write(path)
        sentinel = _last_id(path)
        for tab in tabs:
            while sentinel not in tab.arrivals:
                await asyncio.wait_for(tab.got.wait(), TIMEOUT)
                tab.got.clear()
        del sentinel_started
        expected = [*written, sentinel]
        lost = sum(1 for tab in tabs for entry in expected if entry not in tab.arrivals)
        duplicated = sum(len(times) - 1 for tab in tabs for times in tab.arrivals.values())
        out_of_order = sum(1 for tab in tabs if tab.order != expected)
    finally:
        for tab in tabs:
            await tab.socket.close()
        for reader in readers:
            reader.cancel()
        await asyncio.gather(*readers, return_exceptions=True)
    return {
        "median": C.median(latencies),
        "p99": C.pct(latencies, 99),
        "lost": lost,
        "duplicated": duplicated,
        "out_of_order": out_of_order,
    }


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _start_server(root: Path, watch: str) -> tuple[subprocess.Popen[bytes], str, str]:
    """Start the server; returns it, its URL and a signed-in session's ``Cookie`` header value."""
    port = _free_port()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "pitree_web.settings",
        "PITREE_SESSIONS_DIR": str(root),
        "PITREE_FSYNC": "0",
        "PITREE_DEBUG": "0",
        "PITREE_WATCH": watch,
    }
    env.pop("PITREE_REDIS_URL", None)
    link = _accounts.prepare_server_env(env)
    process = subprocess.Popen(
        [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), "pitree_web.asgi:application"],
        cwd=C.ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url + "/", timeout=2):
                return process, url, _accounts.session_cookie(url, link)
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise SystemExit("daphne did not start")


async def _run(report: C.Report, root: Path, path: Path, watch: str, kinds: tuple[str, ...]) -> dict[tuple, dict]:
    process, url, cookie = _start_server(root, watch)
    results: dict[tuple, dict] = {}
    try:
        await _measure(url, cookie, path, 1, "external")  # warm-up: imports, template loading, first feed
        for kind in kinds:
            for clients in CLIENTS:
                result = await _measure(url, cookie, path, clients, kind)
                results[(kind, clients)] = result
                report.line(
                    f"{watch:7} {kind:8} N={clients:<3}  median {C.fmt_time(result['median']):>8}  "
                    f"p99 {C.fmt_time(result['p99']):>8}  lost {result['lost']}  duplicated {result['duplicated']}  "
                    f"out of order {result['out_of_order']}"
                )
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=10)
    return results


def main() -> int:
    report = C.Report("live_push", "Push latency: append → received by N websocket clients (daphne, loopback)")
    root = Path(tempfile.mkdtemp(prefix="pitree-live-"))
    try:
        folder = root / "--bench--"
        folder.mkdir()
        path = folder / f"2026-03-02T09-15-03-000Z_{SESSION_ID}.jsonl"
        shutil.copy(SAMPLE, path)
        report.line(f"{ROUNDS} rounds per row; each row's latencies pool every client of every round")
        inotify = asyncio.run(_run(report, root, path, "auto", ("app", "external")))
        polling = asyncio.run(_run(report, root, path, "poll", ("external",)))
    finally:
        shutil.rmtree(root, ignore_errors=True)

    app100, app1 = inotify[("app", 100)], inotify[("app", 1)]
    report.figure("app writes, N=100: p99", C.fmt_time(app100["p99"]), "≤ 100 ms", app100["p99"] <= 0.100)
    report.figure("app writes, N=100: median", C.fmt_time(app100["median"]))
    report.figure("app writes: p99 ratio N=100 / N=1", f"{app100['p99'] / app1['p99']:.1f}×")
    ext100, ext1 = inotify[("external", 100)], inotify[("external", 1)]
    report.figure("external writes (inotify), N=100: p99", C.fmt_time(ext100["p99"]), "≤ 250 ms", ext100["p99"] <= 0.25)
    report.figure("external writes (inotify): p99 ratio N=100 / N=1", f"{ext100['p99'] / ext1['p99']:.1f}×")
    report.line()
    report.line(
        f"ratio N=100 / N=1: app writes p99 {app100['p99'] / app1['p99']:.1f}×, median "
        f"{app100['median'] / app1['median']:.1f}×; external writes p99 {ext100['p99'] / ext1['p99']:.1f}×, "
        f"median {ext100['median'] / ext1['median']:.1f}×"
    )
    poll100 = polling[("external", 100)]
    report.figure("external writes (polling), N=100: p99", C.fmt_time(poll100["p99"]), "≤ 1 s", poll100["p99"] <= 1.0)
    every = [*inotify.values(), *polling.values()]
    lost = sum(r["lost"] for r in every)
    duplicated = sum(r["duplicated"] + r["out_of_order"] for r in every)
    report.figure("entries lost, all rows", str(lost), "0", lost == 0)
    report.figure("entries duplicated or out of order, all rows", str(duplicated), "0", duplicated == 0)
    return report.finish()


if __name__ == "__main__":
    sys.exit(main())
