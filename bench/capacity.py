"""What one server process holds, measured: the figures docs/architecture.md's capacity model rests on.

One daphne process on PostgreSQL and Redis (as each of the README's two machines runs it) serves
``SESSIONS`` sessions (sample 01-linear under fresh ids) in ``FOLDERS`` workspace folders:

- **open tabs**: ``TABS`` tabs, ``TABS / SESSIONS`` a session: what each costs the process (resident
  memory, file descriptors), what the process holds for them (threads, inotify watches, PostgreSQL
  connections) and what they cost Redis (memory; each tab's socket joins channel-layer groups of its
  own, so that a change to its grant reaches it);
- **pushes**: one line appended to one session (its tabs' p99), then one line to every session at once
  (the time until every tab has its line: how many tab deliveries a second one process makes);
- **replies streaming at once**: ``REPLIES`` replies of the offline responder written at the same time,
  each in a session of its own with one tab: the CPU they cost while they stream, per reply;
- **watching by polling** (``PITREE_WATCH=poll``, what a network filesystem gets): a second process with
  a tab on each session, idle: the CPU its ``os.stat`` polling costs per watched file (on local disk;
  over NFS each look is also a round trip to the file server, which this machine cannot show).

A tab has received a line when a message it got holds the line's marker text (``_tabs.py``).
"""

from __future__ import annotations

import asyncio
import functools
import json
import re
import secrets
import shutil
import signal
import sys
import tempfile
import time
import urllib.parse
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the suite's daphne, PostgreSQL, Redis
import _accounts
import _common as C
from _tabs import Tab, close_tabs, cpu_seconds, deliver, open_tab, status_kb
from support.daphne import Daphne, launch_daphne
from support.postgres import postgres_server
from support.redisserver import redis_server

from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles.store import SessionFile

SAMPLE = C.ROOT / "sessions_app" / "samples" / "pi" / "01-linear.jsonl"
SESSIONS = 100
FOLDERS = 10
TABS = 1000
REPLIES = (1, 10, 30)
IDLE_SECONDS = 10.0


def make_sessions(root: Path) -> list[tuple[str, Path]]:
    """``SESSIONS`` copies of sample 01-linear under fresh ids, spread over ``FOLDERS`` folders."""
    lines = SAMPLE.read_bytes().split(b"\n")
    made = []
    for n in range(SESSIONS):
        session_id = str(uuid.uuid4())
        header = json.loads(lines[0])
        header["id"] = session_id
        folder = root / f"--srv-team-{n % FOLDERS}--"
        folder.mkdir(exist_ok=True)
        path = folder / f"2026-03-02T09-15-03-000Z_{session_id}.jsonl"
        path.write_bytes(b"\n".join([json.dumps(header).encode(), *lines[1:]]))
        made.append((session_id, path))
    return made


def inotify_watches(pid: int) -> int:
    """Watches of every inotify instance the process holds (lines ``inotify wd:`` of its fds' fdinfo)."""
    count = 0
    for info in Path(f"/proc/{pid}/fdinfo").iterdir():
        try:
            count += info.read_text().count("inotify wd:")
        except OSError:
            continue
    return count


def open_fds(pid: int) -> int:
    return len(list(Path(f"/proc/{pid}/fd").iterdir()))


def redis_memory(url: str) -> tuple[int, int]:
    """Bytes Redis uses, and its number of keys."""
    import redis

    client = redis.Redis.from_url(url)
    try:
        return int(client.info("memory")["used_memory"]), int(client.dbsize())
    finally:
        client.close()


def postgres_connections(url: str) -> int:
    import psycopg

    with psycopg.connect(url) as connection:
        row = connection.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()").fetchone()
    assert row is not None
    return int(row[0]) - 1  # not this one


def process_figures(server: Daphne, database: str, redis: str) -> dict[str, float]:
    pid = server.process.pid
    memory, keys = redis_memory(redis)
    return {
        "rss_kb": status_kb(pid, "VmRSS"),
        "threads": status_kb(pid, "Threads"),
        "fds": open_fds(pid),
        "watches": inotify_watches(pid),
        "connections": postgres_connections(database),
        "redis_bytes": memory,
        "redis_keys": keys,
    }


async def open_tabs(server: Daphne, sessions: list[tuple[str, Path]], count: int) -> tuple[list[Tab], int]:
    """``count`` tabs spread evenly over ``sessions``, opened fifty at a time, each checked live (a line
    written reaches it); one whose socket was closed while hundreds opened connects again, as a
    browser does. The tabs, and how many times one connected again."""
    tabs: list[Tab] = []
    for start in range(0, count, 50):
        batch = []
        for n in range(start, min(count, start + 50)):
            session_id, path = sessions[n % len(sessions)]
            batch.append(open_tab(server, session_id, path))
        tabs += await asyncio.gather(*batch)
    paths = dict(sessions)
    again = 0
    for _ in range(5):
        _, missing = await everywhere(tabs, sessions, timeout=15)
        if not missing:
            return tabs, again
        again += len(missing)
        for tab in missing:
            await tab.socket.close()
            tabs[tabs.index(tab)] = await open_tab(server, tab.session_id, paths[tab.session_id])
    raise RuntimeError("some tabs never received a line")


async def everywhere(tabs: list[Tab], sessions: list[tuple[str, Path]], timeout: float) -> tuple[float, list[Tab]]:
    """One line appended to every session at once: the time until every tab had its own, and the tabs
    that did not within ``timeout``."""
    marker = f"probe{secrets.token_hex(6)}"
    for tab in tabs:
        tab.waiting.add(marker)
    started = time.perf_counter()
    for _, path in sessions:
        SessionFile(path, fsync=False).append(E.user_message(f"everyone at once {marker}"))
    while any(marker not in tab.seen for tab in tabs) and time.perf_counter() - started < timeout:
        await asyncio.sleep(0.01)
    missing = [tab for tab in tabs if marker not in tab.seen]
    for tab in tabs:
        tab.waiting.discard(marker)
    return max(tab.seen.get(marker, started) for tab in tabs) - started, missing


def _append(path: Path, marker: str) -> float:
    started = time.perf_counter()
    SessionFile(path, fsync=False).append(E.user_message(f"a line from elsewhere {marker}"))
    return started


async def tabs_and_pushes(report: C.Report, server: Daphne, database: str, redis: str, sessions: list[Any]) -> None:
    bare = process_figures(server, database, redis)
    tabs, again = await open_tabs(server, sessions, TABS)
    refused = sum(tab.retries for tab in tabs)
    report.line(
        f"{TABS} tabs opened fifty at a time: {refused} handshakes refused and tried again, {again} sockets "
        "closed as they opened and connected again"
    )
    try:
        full = process_figures(server, database, redis)
        per_tab = {name: (full[name] - bare[name]) / TABS for name in full}
        report.line(
            f"{TABS} tabs on {SESSIONS} sessions in {FOLDERS} folders: resident memory {bare['rss_kb'] / 1024:.0f} → "
            f"{full['rss_kb'] / 1024:.0f} MB, threads {bare['threads']:.0f} → {full['threads']:.0f}, open files "
            f"{bare['fds']:.0f} → {full['fds']:.0f}, inotify watches {bare['watches']:.0f} → {full['watches']:.0f}, "
            f"PostgreSQL connections {bare['connections']:.0f} → {full['connections']:.0f}, Redis "
            f"{bare['redis_bytes'] / 1e6:.1f} → {full['redis_bytes'] / 1e6:.1f} MB ({bare['redis_keys']:.0f} → "
            f"{full['redis_keys']:.0f} keys)"
        )
        report.figure("memory per open tab (resident, the process)", f"{per_tab['rss_kb']:.0f} kB")
        report.figure("open files per tab", f"{per_tab['fds']:.2f}")
        report.figure(f"inotify watches for {SESSIONS} sessions in {FOLDERS} folders", f"{full['watches']:.0f}")
        report.figure("threads of a process with 1,000 tabs", f"{full['threads']:.0f}")
        report.figure("PostgreSQL connections of a process with 1,000 tabs", f"{full['connections']:.0f}")
        report.figure("Redis memory per open tab", f"{per_tab['redis_bytes'] / 1024:.1f} kB")

        session_id, path = sessions[0]
        of_one = [tab for tab in tabs if tab.session_id == session_id]
        latencies: list[float] = []
        for _ in range(20):
            got, _ = await deliver(of_one, functools.partial(_append, path))
            latencies += got
        report.figure(
            f"push to the {len(of_one)} tabs of one session, {TABS} tabs open: p99", C.fmt_time(C.pct(latencies, 99))
        )

        # One line in every session at once: how fast one process serves all its tabs.
        before = cpu_seconds(server.process.pid)
        took, missing = await everywhere(tabs, sessions, timeout=120)
        cores = (cpu_seconds(server.process.pid) - before) / took
        report.line(
            f"a line in each of the {SESSIONS} sessions at once: every one of the {TABS} tabs had it after "
            f"{C.fmt_time(took)} ({TABS / took:.0f} tab deliveries a second, {cores:.2f} cores used; "
            f"{len(missing)} missed)"
        )
        report.figure("tab deliveries a second, one process (a line in every session at once)", f"{TABS / took:.0f}")
    finally:
        await close_tabs(tabs)


class Sender:
    """Sends a message through the server's form, as a browser does, and waits for its reply."""

    def __init__(self, server: Daphne, session_id: str) -> None:
        self.server, self.session_id = server, session_id
        self.opener = _accounts.signed_in_opener(server.cookie)
        page = self.opener.open(f"{server.url}/s/{session_id}/", timeout=60).read().decode()
        token = re.search(r'"x-csrftoken": "([^"]+)"', page)
        leaf = re.search(r'data-position="([^"]+)"', page)
        assert token is not None and leaf is not None
        self.token, self.leaf = token.group(1), leaf.group(1)

    def send(self, text: str) -> None:
        body = urllib.parse.urlencode({"text": text, "parent": self.leaf}).encode()
        request = urllib.request.Request(
            f"{self.server.url}/s/{self.session_id}/send/",
            data=body,
            headers={"X-CSRFToken": self.token, "HX-Request": "true"},
        )
        with self.opener.open(request, timeout=120) as response:
            assert response.status == 200, response.status


async def replies_at_once(report: C.Report, server: Daphne, sessions: list[tuple[str, Path]]) -> None:
    for count in REPLIES:
        chosen = sessions[:count]
        tabs = [await open_tab(server, session_id, path) for session_id, path in chosen]
        senders = [await asyncio.to_thread(Sender, server, session_id) for session_id, _ in chosen]
        markers = [f"probe{secrets.token_hex(6)}" for _ in chosen]
        for tab, marker in zip(tabs, markers):
            tab.waiting.add(marker)  # the reply quotes the message: its words reach the tab while it is written
        try:
            before = cpu_seconds(server.process.pid)
            started = time.perf_counter()
            with ThreadPoolExecutor(max_workers=count) as threads:  # every send at once (to_thread's pool is small)
                loop = asyncio.get_running_loop()
                await asyncio.gather(*(loop.run_in_executor(threads, s.send, m) for s, m in zip(senders, markers)))
            elapsed = time.perf_counter() - started
            cores = (cpu_seconds(server.process.pid) - before) / elapsed
            streamed = sum(marker in tab.seen for tab, marker in zip(tabs, markers))
            report.line(
                f"{count:3} replies at once: all stored after {C.fmt_time(elapsed)}, {cores:.2f} cores used "
                f"({cores / count:.3f} a reply), {streamed} of {count} tabs saw theirs being written"
            )
            report.figure(f"CPU while {count} replies stream at once, per reply", f"{cores / count:.3f} cores")
        finally:
            await close_tabs(tabs)


async def polling(report: C.Report, server: Daphne, sessions: list[tuple[str, Path]]) -> None:
    tabs, _ = await open_tabs(server, sessions, len(sessions))
    try:
        before = cpu_seconds(server.process.pid)
        await asyncio.sleep(IDLE_SECONDS)
        cores = (cpu_seconds(server.process.pid) - before) / IDLE_SECONDS
        report.line(
            f"{len(sessions)} sessions watched by polling, idle: {cores:.3f} cores "
            f"({cores / len(sessions) * 1e3:.2f} ms of CPU a second per watched file, local disk)"
        )
        report.figure("polling (PITREE_WATCH=poll), CPU per watched file", f"{cores / len(sessions) * 1e6:.0f} µs/s")
    finally:
        await close_tabs(tabs)


def main() -> int:
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # stopped (timeout): servers stop too
    report = C.Report("capacity", "What one process holds: tabs, sessions watched, pushes, replies, polling")
    root = Path(tempfile.mkdtemp(prefix="pitree-capacity-"))
    try:
        with ExitStack() as stack:
            database = stack.enter_context(postgres_server())
            redis = stack.enter_context(redis_server(root))
            folder = root / "sessions"
            folder.mkdir()
            sessions = make_sessions(folder)
            env = {
                "PITREE_SESSIONS_DIR": str(folder),
                "PITREE_FSYNC": "0",
                "PITREE_DEBUG": "0",
                "PITREE_DATABASE_URL": database,
                "PITREE_REDIS_URL": redis,
                "PITREE_SECRET_KEY": secrets.token_urlsafe(40),
                "PITREE_OFFLINE_DELAY": "0.1",
                # Every tab comes from this one address, as from a proxy in front of the server.
                "PITREE_CONNECTIONS_PER_ADDRESS": str(10 * TABS),
            }
            (root / "inotify").mkdir()
            (root / "poll").mkdir()
            server = launch_daphne(env, root / "inotify" / "daphne.log")
            stack.callback(server.stop)
            poller = launch_daphne({**env, "PITREE_WATCH": "poll"}, root / "poll" / "daphne.log", site=server)
            stack.callback(poller.stop)
            try:
                asyncio.run(tabs_and_pushes(report, server, database, redis, sessions))
                asyncio.run(replies_at_once(report, server, sessions))
                asyncio.run(polling(report, poller, sessions))
            except BaseException:
                for each in (server, poller):
                    print(f"--- {each.url}'s log, its end:\n{each.log_tail(3000)}", file=sys.stderr)
                raise
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return report.finish()


if __name__ == "__main__":
    sys.exit(main())
