"""A session tab's websocket against a real server (daphne in a process of its own), opened as a page
opens it: it says its cursor, and is live once ``{"t": "live"}`` comes."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

TIMEOUT = 20


async def open_tab(server: Any, session_id: str, cursor: int) -> tuple[ClientConnection, list[dict[str, Any]]]:
    """The socket, and the messages that came before ``{"t": "live"}``."""
    socket = await connect(
        f"{server.ws}/ws/s/{session_id}/",
        origin=server.url,
        open_timeout=TIMEOUT,
        additional_headers={"Cookie": server.cookie},
    )
    await socket.send(json.dumps({"cursor": cursor}))
    seen: list[dict[str, Any]] = []
    while (message := json.loads(await asyncio.wait_for(socket.recv(), TIMEOUT))) != {"t": "live"}:
        seen.append(message)
    return socket, seen


async def until(socket: ClientConnection, seen: list[dict[str, Any]], accept: Any) -> None:
    """Read messages into ``seen`` until one that ``accept`` takes (or one seen already)."""
    while not any(accept(m) for m in seen):
        seen.append(json.loads(await asyncio.wait_for(socket.recv(), TIMEOUT)))


async def until_entry(socket: ClientConnection, seen: list[dict[str, Any]], entry_id: str) -> None:
    await until(socket, seen, lambda m: m["t"] == "batch" and entry_id in [e["id"] for e in m["entries"]])
