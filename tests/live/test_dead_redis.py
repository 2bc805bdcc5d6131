"""Redis dies under a server of several (``PITREE_REDIS_URL``): only what crosses processes is lost
until it is back. A tab's socket stays open and a new one opens (they closed with 1011), what is
appended to the file still arrives (the push needs no Redis), the tab says that live updates from other
servers are paused, and says it no more once Redis answers again; the pages keep answering."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from support import accounts
from support.redisserver import redis_server, shut_down
from support.tabs import open_tab, until, until_entry

pytestmark = pytest.mark.processes  # the tests start servers of their own (tests/support/tiers.py)

LINEAR = "01-linear"
LEAF = "db26dc72"  # 01-linear's position
TIMEOUT = 30


def _paused(paused: bool) -> Any:
    """A message that says whether live updates from other servers are paused."""
    return lambda m: m.by_id("layer-note") is not None and ("are paused" in m.text_of("layer-note")) == paused


def _page(server: Any, path: str) -> int:
    with accounts.signed_in_opener(server.cookie).open(server.url + path, timeout=TIMEOUT) as response:
        return int(response.status)


async def test_a_dead_redis_costs_only_what_crosses_processes(sessions, daphne, tmp_path: Path) -> None:
    path = sessions.copy(LINEAR)
    sid = sessions.id(LINEAR)
    with redis_server(tmp_path) as url:
        server = daphne(sessions.root, PITREE_REDIS_URL=url)
        tab, seen = await open_tab(server, sid, sessions.size(path), LEAF)
        port = shut_down(url)
    try:
        # Redis is gone. The tab is told once its process finds out, and stays open.
        await until(tab, seen, _paused(True))
        written = sessions.append(path, "appended while Redis is down")
        await until_entry(tab, seen, written["id"])
        later, early = await open_tab(server, sid, sessions.size(path), LEAF)  # a tab opened now opens
        await until(later, early, _paused(True))
        assert await asyncio.to_thread(_page, server, f"/s/{sid}/") == 200
        assert await asyncio.to_thread(_page, server, "/search/?q=endpoints") == 200
        with redis_server(tmp_path, port):
            for socket, messages in ((tab, seen), (later, early)):
                await until(socket, messages, _paused(False))
            again = sessions.append(path, "appended once Redis is back")
            await until_entry(tab, seen, again["id"])
        await later.close()
    finally:
        await tab.close()
