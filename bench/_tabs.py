"""Open tabs as a benchmark holds them, and what a server process uses, for ``machines.py`` and
``capacity.py``.

A tab is a real websocket client (the ``websockets`` library) that says what it has shown (the page's
hello) and then only reads. It has "received" a line when a message it got holds the line's marker
text (a label's or a message's words), whatever the message's format, so the figures measure what a
tab receives, not how the push protocol spells it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

TIMEOUT = 60.0


def cpu_seconds(pid: int) -> float:
    """User and system CPU time a process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def status_kb(pid: int, field: str) -> int:
    """A ``kB`` (or count) field of a process's /proc status: VmRSS, Threads …"""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


class Tab:
    """One websocket tab: when it first received a message holding each marker it waits for."""

    def __init__(self, server: Any, session_id: str, socket: Any) -> None:
        self.server, self.session_id, self.socket = server, session_id, socket
        self.seen: dict[str, float] = {}
        self.waiting: set[str] = set()
        self.got = asyncio.Event()
        self.retries = 0  # handshakes refused before this one was accepted
        self.reader = asyncio.create_task(self.read())

    async def read(self) -> None:
        with contextlib.suppress(Exception):  # a socket the server closed: the tab connects again
            async for raw in self.socket:
                now = time.perf_counter()
                text = raw if isinstance(raw, str) else raw.decode(errors="replace")
                for marker in [m for m in self.waiting if m in text]:
                    self.seen[marker] = now
                    self.waiting.discard(marker)
                    self.got.set()


async def connect(url: str, cookie: str, session_id: str) -> Any:
    """The websocket of a tab of ``session_id`` on the server at ``url`` (``http://…``), signed in with
    ``cookie``; it reads as fast as messages come, whatever their size."""
    from websockets.asyncio.client import connect as open_socket
    from websockets.typing import Origin

    return await open_socket(
        f"{url.replace('http', 'ws', 1)}/ws/s/{session_id}/",
        origin=Origin(url),
        additional_headers={"Cookie": cookie},
        open_timeout=TIMEOUT,
        max_queue=None,
        max_size=None,
    )


async def open_tab(server: Any, session_id: str, path: Path, attempts: int = 10) -> Tab:
    """A tab of ``session_id`` (the file ``path``) on ``server`` (tests/support/daphne.py's ``Daphne``),
    signed in as its owner, that has shown the whole path to the file's position and stands there, as a
    page opened on it does: the lines written below that position are the tab's to show. A socket
    refused as it opens is tried again a second later, as the browser does (``Tab.retries`` counts them)."""
    from websockets.exceptions import InvalidHandshake

    from sessions_app.sessionfiles.store import SessionFile

    cursor = path.stat().st_size
    session = SessionFile(path, fsync=False)
    at = session.leaf_id or ""
    rows = session.path_rows()
    top = session.index.ids[rows[0]] if rows else ""  # the page shows the whole (short) path

    retries = 0
    while True:
        try:
            socket = await connect(server.url, server.cookie, session_id)
            break
        except (InvalidHandshake, OSError):
            retries += 1
            if retries == attempts:
                raise
            await asyncio.sleep(1.0)
    # The page's hello (what it has shown so far): the one part of the protocol a tab must speak. Its
    # ``top`` says the page holds the path from its root: a label set on an entry of it is the tab's to show.
    await socket.send(json.dumps({"v": 1, "cursor": cursor, "at": at, "top": top, "notes": "none"}))
    tab = Tab(server, session_id, socket)
    tab.retries = retries
    return tab


async def close_tabs(tabs: list[Tab]) -> None:
    for tab in tabs:
        await tab.socket.close()
    await asyncio.gather(*(tab.reader for tab in tabs), return_exceptions=True)


async def deliver(tabs: list[Tab], write: Callable[[str], float], timeout: float = TIMEOUT) -> tuple[list[float], int]:
    """``write(marker)`` (it returns when its clock started), then wait until every tab received the
    marker: the latencies, and how many tabs never got it within ``timeout``."""
    marker = f"probe{secrets.token_hex(6)}"
    for tab in tabs:
        tab.waiting.add(marker)
        tab.got.clear()
    started = await asyncio.to_thread(write, marker)
    deadline = time.perf_counter() + timeout
    for tab in tabs:
        while marker not in tab.seen and time.perf_counter() < deadline:
            try:
                await asyncio.wait_for(tab.got.wait(), max(0.01, deadline - time.perf_counter()))
            except TimeoutError:
                break
            tab.got.clear()
    lost = sum(1 for tab in tabs if marker not in tab.seen)
    for tab in tabs:
        tab.waiting.discard(marker)
    return [tab.seen[marker] - started for tab in tabs if marker in tab.seen], lost
