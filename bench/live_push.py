"""From an append to every open tab: latency of the push path, N = 1, 10, 100 and 1,000 websocket
clients, today's code and the baseline commit's side by side in one run.

pitree runs under daphne in a process of its own (today's tree, then the baseline's: ``_baseline.source_tree``,
by default where this branch left ``main``); this process holds N real websocket clients (loopback, the
``websockets`` library, one event loop), each joined to the same session with the page's protocol,
standing where the file's position is, so that what is appended there continues every tab's branch.
Each round appends one line and timestamps its arrival at every client:

- **app writes**: the line is written by the server process itself (a label set through the HTTP form
  post, as a browser does); the clock starts before the request is sent;
- **external writes**: the line is appended by this process through its own ``SessionFile`` (another
  program writing the file, as pi or the command line do); the clock starts before the append.

Rounds run one after the other (the next starts when every client has the line). Afterwards each client
must have received every line exactly once, in file order: ``lost`` and ``duplicated`` count the
exceptions. Files are watched with inotify; today's external writes are also measured with stat
polling (``PITREE_WATCH=poll``).

A client knows a line arrived by what its protocol says of it: the baseline's JSON batches list their
entries; today's HTML messages name, in ``#tab-state``, the last line the tab's page reflects (each
tab's message is decided and assembled for it, out of fragments rendered once per batch).

Then app writes at N = 100 and 1,000 with today's server and the one of where this branch left ``main``
(``_servers.trees``) running at once, blocks of half the rounds alternating ABBA, their p99 ratio
printed (``--side-by-side``: only these).

Targets: app writes p99 ≤ 60 ms at N = 100 and ≤ 500 ms at N = 1,000, 0 lost, 0 duplicated.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import shutil
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _accounts
import _baseline
import _common as C
import _servers

from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles.store import SessionFile

SAMPLE = C.ROOT / "sessions_app" / "samples" / "pi" / "01-linear.jsonl"
SESSION_ID = "019cadd4-5bfc-74dd-b0a5-3da46bf1f75f"
ROUNDS = {1: 40, 10: 40, 100: 40, 1000: 10}
TIMEOUT = 60.0
STATE = re.compile(r'data-cursor-id="([^"]*)"')


class Client:
    """One websocket tab: arrival times of every line it is told of."""

    def __init__(self, socket: Any, html: bool) -> None:
        self.socket = socket
        self.html = html
        self.arrivals: dict[str, list[float]] = {}
        self.order: list[str] = []
        self.got = asyncio.Event()

    async def read(self) -> None:
        async for raw in self.socket:
            now = time.perf_counter()
            for line in self._lines(raw):
                self.arrivals.setdefault(line, []).append(now)
                self.order.append(line)
                self.got.set()

    def _lines(self, raw: str | bytes) -> list[str]:
        text = raw if isinstance(raw, str) else raw.decode()
        if self.html:
            return STATE.findall(text)
        message = json.loads(text)
        return [entry["id"] for entry in message["entries"]] if message.get("t") == "batch" else []


async def _connect(server: str, cookie: str, path: Path, html: bool) -> Client:
    from websockets.asyncio.client import connect
    from websockets.typing import Origin

    socket = await connect(
        f"{server.replace('http', 'ws')}/ws/s/{SESSION_ID}/",
        origin=Origin(server),
        additional_headers={"Cookie": cookie},
        open_timeout=TIMEOUT,
        max_queue=None,
    )
    cursor = path.stat().st_size
    if html:
        leaf = SessionFile(path, fsync=False).leaf_id
        await socket.send(json.dumps({"v": 1, "cursor": cursor, "at": leaf, "notes": "none"}))
        while "do=live" not in str(await socket.recv()):
            pass
    else:
        await socket.send(json.dumps({"cursor": cursor}))
        while json.loads(await socket.recv()) != {"t": "live"}:
            pass
    return Client(socket, html)


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


async def _measure(server: str, cookie: str, path: Path, clients: int, kind: str, html: bool) -> dict[str, Any]:
    tabs = [await _connect(server, cookie, path, html) for _ in range(clients)]
    readers = [asyncio.create_task(tab.read()) for tab in tabs]
    writer = AppWriter(server, cookie) if kind == "app" else None
    latencies: list[float] = []
    written: list[str] = []
    try:
        for _ in range(ROUNDS[clients]):
            for tab in tabs:
                tab.got.clear()
            if writer is not None:
                started = await asyncio.to_thread(writer.write)
            else:
                started = _external_write(path)
            entry = _last_id(path)
            written.append(entry)
            for tab in tabs:
                while entry not in tab.arrivals:
                    await asyncio.wait_for(tab.got.wait(), TIMEOUT)
                    tab.got.clear()
                latencies.append(tab.arrivals[entry][0] - started)
        # A last line written and awaited: anything sent twice would have come before it.
        _external_write(path)
        sentinel = _last_id(path)
        for tab in tabs:
            while sentinel not in tab.arrivals:
                await asyncio.wait_for(tab.got.wait(), TIMEOUT)
                tab.got.clear()
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
        "latencies": latencies,
        "median": C.median(latencies),
        "p99": C.pct(latencies, 99),
        "lost": lost,
        "duplicated": duplicated,
        "out_of_order": out_of_order,
    }


async def _run(
    report: C.Report, name: str, code: Path, html: bool, watch: str, rows: list[tuple[str, int]]
) -> dict[tuple[str, int], dict[str, Any]]:
    root = Path(tempfile.mkdtemp(prefix="pitree-live-"))
    folder = root / "--bench--"
    folder.mkdir()
    path = folder / f"2026-03-02T09-15-03-000Z_{SESSION_ID}.jsonl"
    shutil.copy(SAMPLE, path)
    results: dict[tuple[str, int], dict[str, Any]] = {}
    with _servers.serving(
        code, root, PITREE_DEBUG="0", PITREE_WATCH=watch, PITREE_CONNECTIONS_PER_ADDRESS="5000"
    ) as server:
        url, cookie = server.url, server.cookie
        await _measure(url, cookie, path, 1, "external", html)  # warm-up: imports, template loading, first feed
        for kind, clients in rows:
            result = await _measure(url, cookie, path, clients, kind, html)
            results[(kind, clients)] = result
            report.line(
                f"{name:14} {watch:5} {kind:8} N={clients:<4}  median {C.fmt_time(result['median']):>8}  "
                f"p99 {C.fmt_time(result['p99']):>8}  lost {result['lost']}  duplicated {result['duplicated']}  "
                f"out of order {result['out_of_order']}"
            )
    shutil.rmtree(root, ignore_errors=True)
    return results


async def _side_by_side(
    report: C.Report, trees: list[tuple[str, Path]], clients: int
) -> dict[str, list[dict[str, Any]]]:
    """App writes to ``clients`` tabs, each tree's server running at once: blocks of half the rounds
    alternate between them (ABBA); each tree's results, whose latencies are pooled."""
    found: dict[str, list[dict[str, Any]]] = {name: [] for name, _ in trees}
    rounds = ROUNDS[clients]
    ROUNDS[clients] = max(1, rounds // 2)
    try:
        with contextlib.ExitStack() as stack:
            served: list[tuple[str, _servers.Server, Path]] = []
            for name, tree in trees:
                root = Path(tempfile.mkdtemp(prefix="pitree-live-"))
                stack.callback(shutil.rmtree, root, ignore_errors=True)
                folder = root / "--bench--"
                folder.mkdir()
                path = folder / f"2026-03-02T09-15-03-000Z_{SESSION_ID}.jsonl"
                shutil.copy(SAMPLE, path)
                serving = _servers.serving(tree, root, PITREE_DEBUG="0", PITREE_CONNECTIONS_PER_ADDRESS="5000")
                server = stack.enter_context(serving)
                await _measure(server.url, server.cookie, path, 1, "external", True)  # warm-up
                served.append((name, server, path))
            for order in (served, served[::-1]):
                for name, server, path in order:
                    found[name].append(await _measure(server.url, server.cookie, path, clients, "app", True))
    finally:
        ROUNDS[clients] = rounds
    for name, results in found.items():
        latencies = _pooled(results)
        report.line(
            f"{name:22} app N={clients:<4} (side by side)  median {C.fmt_time(C.median(latencies)):>8}  "
            f"p99 {C.fmt_time(C.pct(latencies, 99)):>8}"
        )
    return found


def _pooled(results: list[dict[str, Any]]) -> list[float]:
    return [latency for result in results for latency in result["latencies"]]


ROWS = [(kind, n) for kind in ("app", "external") for n in (1, 10, 100, 1000)]
# The baseline is the last code whose push was JSON for the browser to apply (main just before the
# consumer came to render each tab's fragments), whatever the branch measured.
JSON_PUSH = "c11f2f6^1"


def main() -> int:
    """Every row; with ``--side-by-side``, only today's app writes next to where the branch left main's."""
    report = C.Report("live_push", "Push latency: append → received by N websocket clients (daphne, loopback)")
    report.line("rounds per row: " + ", ".join(f"N={n}: {r}" for n, r in ROUNDS.items()))
    report.line("each row's latencies pool every client of every round")
    only_paired = "--side-by-side" in sys.argv[1:]
    now: dict[tuple[str, int], dict[str, Any]] = {}
    before: dict[tuple[str, int], dict[str, Any]] = {}
    polling: dict[tuple[str, int], dict[str, Any]] = {}
    if not only_paired:
        now = asyncio.run(_run(report, "now (HTML)", C.ROOT, True, "auto", ROWS))
        base = _baseline.source_tree(JSON_PUSH)
        if base is not None:
            sha, code = base
            before = asyncio.run(_run(report, f"{sha} (JSON)", code, False, "auto", ROWS))
        polling = asyncio.run(_run(report, "now (HTML)", C.ROOT, True, "poll", [("external", 100)]))
    trees = _servers.trees()  # today's and where this branch left main, both rendering HTML
    paired = {n: asyncio.run(_side_by_side(report, trees, n)) for n in (100, 1000)} if len(trees) > 1 else {}

    if now:
        app100, app1000 = now[("app", 100)], now[("app", 1000)]
        report.figure("app writes, N=100: p99", C.fmt_time(app100["p99"]), "≤ 60 ms", app100["p99"] <= 0.060)
        report.figure("app writes, N=1000: p99", C.fmt_time(app1000["p99"]), "≤ 500 ms", app1000["p99"] <= 0.500)
        report.figure("app writes, N=100: median", C.fmt_time(app100["median"]))
        ext100 = now[("external", 100)]
        report.figure(
            "external writes (inotify), N=100: p99", C.fmt_time(ext100["p99"]), "≤ 250 ms", ext100["p99"] <= 0.25
        )
    if before:
        for kind, clients in (("app", 100), ("app", 1000), ("external", 100), ("external", 1000)):
            ratio = now[(kind, clients)]["p99"] / before[(kind, clients)]["p99"]
            report.figure(f"{kind} writes p99, N={clients}: HTML / baseline JSON", f"{ratio:.2f}×")
    for clients, found in paired.items():
        today, baseline = _pooled(found[trees[0][0]]), _pooled(found[trees[1][0]])
        report.figure(f"app writes p99, N={clients}, side by side: today", C.fmt_time(C.pct(today, 99)))
        ratio = C.pct(today, 99) / C.pct(baseline, 99)
        report.line(f"app writes p99, N={clients}, side by side: today / {trees[1][0]} {ratio:.2f}×")
        report.figure(f"app writes p99, N={clients}: today / {trees[1][0]}, side by side", f"{ratio:.2f}×")
    if polling:
        poll100 = polling[("external", 100)]
        report.figure(
            "external writes (polling), N=100: p99", C.fmt_time(poll100["p99"]), "≤ 1 s", poll100["p99"] <= 1.0
        )
    every = [*now.values(), *polling.values(), *(r for found in paired.values() for r in found[trees[0][0]])]
    lost = sum(r["lost"] for r in every)
    duplicated = sum(r["duplicated"] + r["out_of_order"] for r in every)
    report.figure("entries lost, all rows of today's code", str(lost), "0", lost == 0)
    report.figure("entries duplicated or out of order, all rows of today's code", str(duplicated), "0", duplicated == 0)
    return report.finish()


if __name__ == "__main__":
    sys.exit(main())
