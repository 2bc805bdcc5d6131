"""A session tab's websocket against a real server (daphne in a process of its own), opened as a page
opens it: it says where it stands (its cursor and entry), and is live once a message says so
(``support.pushes``)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

from support.pushes import Push, parse

TIMEOUT = 20


async def open_tab(server: Any, session_id: str, cursor: int, at: str) -> tuple[ClientConnection, list[Push]]:
    """The socket of a page at ``cursor`` standing on ``at``, and the messages that came before it was live."""
    socket = await connect(
        f"{server.ws}/ws/s/{session_id}/",
        origin=server.url,
        open_timeout=TIMEOUT,
        additional_headers={"Cookie": server.cookie},
    )
    await socket.send(json.dumps({"v": 1, "cursor": cursor, "at": at, "notes": "none"}))
    seen: list[Push] = []
    while not (message := parse(await asyncio.wait_for(socket.recv(), TIMEOUT))).live:
        seen.append(message)
    return socket, seen


async def until(socket: ClientConnection, seen: list[Push], accept: Callable[[Push], bool]) -> None:
    """Read messages into ``seen`` until one that ``accept`` takes (or one seen already)."""
    while not any(accept(m) for m in seen):
        seen.append(parse(await asyncio.wait_for(socket.recv(), TIMEOUT)))


async def until_entry(socket: ClientConnection, seen: list[Push], entry_id: str) -> None:
    await until(socket, seen, lambda m: entry_id in m.entries)
