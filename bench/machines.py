"""Two machines' worth of pitree on this one: two daphne processes serving one sessions folder with one
PostgreSQL and one Redis, as the README's recipe for two machines sets them up (each process with
caches of its own: the listing and the search index).

- **Page throughput**: ``CLIENTS`` keep-alive clients (one load generator process, ``_loadgen.py``) load
  the 1,000-entry session page of ``load.py``'s folder through one process, then the same clients
  spread over both, in alternating rounds; the figure is the median ratio two / one. A third setup,
  one process as ``./scripts/run`` starts it (SQLite, no Redis), on the same folder, shows what
  PostgreSQL costs a page. Each server's CPU use during a round is printed: a process uses about one
  core at most (Python's lock), so two need a free core each besides PostgreSQL and the load generator.
- **Push to ``TABS`` tabs**, half on each process, all on one session: each round writes one line and
  times its arrival at every tab. A tab has "received" the line when a message it got holds the line's
  marker text (a label's or a message's words), whatever the message's format. Two kinds of writes:
  *app* (a label set through the first process's form, as a browser does) and *external* (appended by
  this process through ``SessionFile``, as pi, the command line or a third machine does).

Targets: throughput two / one ≥ 1.8×; push p99 ≤ 500 ms with 1,000 tabs, every tab served.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the suite's daphne, PostgreSQL, Redis
import _common as C
import live_push
import load
from _tabs import Tab, close_tabs, cpu_seconds, deliver, open_tab
from support.daphne import Daphne, launch_daphne
from support.postgres import postgres_server
from support.redisserver import redis_server

from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles.store import SessionFile

HERE = Path(__file__).resolve().parent
CLIENTS, SECONDS, ROUNDS = load.CLIENTS, load.SECONDS, load.ROUNDS  # load.py's load, on each setup
TABS = 1000
PUSH_ROUNDS = 30
SAMPLE = C.ROOT / "sessions_app" / "samples" / "pi" / "01-linear.jsonl"
PUSHED_ID = live_push.SESSION_ID  # sample 01-linear's session, labelled as live_push.py labels it


def start_servers(folder: Path, scratch: Path, database: str, redis: str) -> tuple[Daphne, Daphne, Daphne]:
    """The two machines, and for comparison one process as ``./scripts/run`` starts it (SQLite, no
    Redis), all serving ``folder``."""
    # Every tab comes from this one address, as from a proxy in front of the machines.
    env = {
        "PITREE_SESSIONS_DIR": str(folder),
        "PITREE_FSYNC": "0",
        "PITREE_DEBUG": "0",
        "PITREE_CONNECTIONS_PER_ADDRESS": str(10 * TABS),
    }
    shared = {
        "PITREE_DATABASE_URL": database,
        "PITREE_REDIS_URL": redis,
        "PITREE_SECRET_KEY": secrets.token_urlsafe(40),
    }
    for name in ("one", "two", "alone"):
        (scratch / name).mkdir()
    first = launch_daphne({**env, **shared}, scratch / "one" / "daphne.log")
    second = launch_daphne({**env, **shared}, scratch / "two" / "daphne.log", site=first)
    return first, second, launch_daphne(env, scratch / "alone" / "daphne.log")


# --------------------------------------------------------------------------------------- throughput


def _load(urls: list[str], seconds: float, cookie: str) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, str(HERE / "_loadgen.py"), ",".join(urls), str(CLIENTS), str(seconds), cookie],
        capture_output=True,
        text=True,
        check=True,
    )
    return dict(json.loads(out.stdout))


def throughput(report: C.Report, servers: tuple[Daphne, Daphne], alone: Daphne, session_id: str) -> float:
    pages = [f"{server.url}/s/{session_id}/" for server in servers]
    setups = {
        "one process": (pages[:1], servers[0].cookie),
        "two processes": (pages, servers[0].cookie),
        "one, SQLite": ([f"{alone.url}/s/{session_id}/"], alone.cookie),
    }
    for urls, cookie in setups.values():
        _load(urls, 2.0, cookie)  # warm-up: caches filled, code paths imported
    watched = [*servers, alone]
    runs: dict[str, list[float]] = {name: [] for name in setups}
    cpu_per_page: dict[str, list[float]] = {name: [] for name in setups}
    errors = 0
    for round_no in range(ROUNDS):
        order = list(setups.items()) if round_no % 2 == 0 else list(reversed(setups.items()))
        for name, (urls, cookie) in order:
            before = [cpu_seconds(server.process.pid) for server in watched]
            started = time.perf_counter()
            result = _load(urls, SECONDS, cookie)
            elapsed = time.perf_counter() - started
            cores = [(cpu_seconds(s.process.pid) - b) / elapsed for s, b in zip(watched, before)]
            runs[name].append(result["rps"])
            cpu_per_page[name].append(sum(cores) / result["rps"])
            errors += result["error_count"]
            report.line(
                f"round {round_no + 1} {name:<13} {result['rps']:7.1f} pages/s  p50 {C.fmt_time(result['p50']):>8}  "
                f"p99 {C.fmt_time(result['p99']):>8}  cores used: {' + '.join(f'{c:.2f}' for c in cores if c > 0.01)}"
                f"  errors {result['error_count']}"
            )
    for name, values in runs.items():
        report.figure(f"session page through {name}", f"{C.median(values):.0f} pages/s")
    sqlite = C.median([pg / lite for pg, lite in zip(runs["one process"], runs["one, SQLite"])])
    report.figure("one process on PostgreSQL / on SQLite", f"{sqlite:.2f}×")
    # What a page costs the servers' CPU, whichever way they are set up: when it is the same for two
    # processes as for one, pages per second grow with the cores the processes are given.
    cost = C.median([two / one for one, two in zip(cpu_per_page["one process"], cpu_per_page["two processes"])])
    report.figure("servers' CPU per page, two processes / one", f"{cost:.2f}×")
    ratio = C.median([two / one for one, two in zip(runs["one process"], runs["two processes"])])
    report.figure("page throughput, two processes / one", f"{ratio:.2f}×", "≥ 1.8×", ratio >= 1.8 and not errors)
    return ratio


# --------------------------------------------------------------------------------------------- push


async def _open_tabs(report: C.Report, servers: tuple[Daphne, Daphne], path: Path) -> list[Tab]:
    """``TABS`` live tabs, half on each server, opened fifty at a time, as a crowd opening a page would.
    A tab whose socket the server closed (one whose channel-layer calls timed out while hundreds opened
    at once) connects again, as the browser does, until a line written reaches every tab."""
    tabs: list[Tab] = []
    for start in range(0, TABS, 50):
        batch = [open_tab(servers[n % 2], PUSHED_ID, path) for n in range(start, min(TABS, start + 50))]
        tabs += await asyncio.gather(*batch)
    for attempt in range(1, 6):
        _, lost = await deliver(tabs, lambda marker: _external_write(path, marker), timeout=10.0)
        report.line(f"opening: a line written reached {TABS - lost} of {TABS} tabs (attempt {attempt})")
        if not lost:
            return tabs
        for n, tab in enumerate(tabs):
            if tab.reader.done() or not tab.seen:
                await tab.socket.close()
                tabs[n] = await open_tab(tab.server, PUSHED_ID, path)
    raise RuntimeError("some tabs never received a line")


def _external_write(path: Path, marker: str) -> float:
    started = time.perf_counter()
    SessionFile(path, fsync=False).append(E.user_message(f"an external write {marker}"))
    return started


async def push(report: C.Report, servers: tuple[Daphne, Daphne], path: Path) -> None:
    tabs = await _open_tabs(report, servers, path)
    try:
        writer = live_push.AppWriter(servers[0].url, servers[0].cookie)
        worst = 0.0
        for kind, write in (
            ("app", writer.write),
            ("external", lambda marker: _external_write(path, marker)),
        ):
            latencies: list[float] = []
            lost = 0
            before = [cpu_seconds(server.process.pid) for server in servers]
            started = time.perf_counter()
            for _ in range(PUSH_ROUNDS):
                got, missed = await deliver(tabs, write)
                latencies += got
                lost += missed
            elapsed = time.perf_counter() - started
            cores = [(cpu_seconds(s.process.pid) - b) / elapsed for s, b in zip(servers, before)]
            p99 = C.pct(latencies, 99) if latencies else float("inf")
            worst = max(worst, p99)
            report.line(
                f"{kind:8} writes: median {C.fmt_time(C.median(latencies)):>8}  p99 {C.fmt_time(p99):>8}  "
                f"lost {lost}  cores used: {cores[0]:.2f} + {cores[1]:.2f}"
            )
            report.figure(f"push to {TABS} tabs over two processes, {kind} writes: p99", C.fmt_time(p99))
            report.figure(f"push, {kind} writes: tabs that missed a line", str(lost), "0", lost == 0)
        report.figure(f"push to {TABS} tabs over two processes: worst p99", C.fmt_time(worst), "≤ 500 ms", worst <= 0.5)
    finally:
        await close_tabs(tabs)


def main() -> int:
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # stopped (timeout): servers stop too
    report = C.Report("machines", "Two daphne processes, one PostgreSQL, one Redis, one sessions folder")
    folder, session_id = load.session_folder()
    (folder / "--bench-push--").mkdir()
    path = folder / "--bench-push--" / f"2026-03-02T09-15-03-000Z_{PUSHED_ID}.jsonl"
    shutil.copy(SAMPLE, path)
    scratch = Path(tempfile.mkdtemp(prefix="pitree-machines-"))
    try:
        with ExitStack() as stack:
            database = stack.enter_context(postgres_server())
            redis = stack.enter_context(redis_server(scratch))
            *servers, alone = start_servers(folder, scratch, database, redis)
            for server in (*servers, alone):
                stack.callback(server.stop)
            first, second = servers
            try:
                throughput(report, (first, second), alone, session_id)
                report.line()
                asyncio.run(push(report, (first, second), path))
            except BaseException:
                for server in (*servers, alone):
                    print(f"--- {server.url}'s log, its end:\n{server.log_tail(3000)}", file=sys.stderr)
                raise
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        shutil.rmtree(scratch, ignore_errors=True)
    return report.finish()


if __name__ == "__main__":
    sys.exit(main())
