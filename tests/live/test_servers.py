"""Real daphne processes: several of them sharing a Redis channel layer and one sessions folder, and
a quick stop on SIGTERM with live sockets open. Replies stream at a tenth of a second a chunk or slower
where it matters: the hangs channels_redis caused showed only when a reply's sends and reads overlapped
its being written (sessions_app/channel_layer/calls.py)."""

from __future__ import annotations

import asyncio
import json
import signal
import time
from typing import Any

import pytest
from support import accounts
from support.tabs import open_tab, until, until_entry
from websockets.asyncio.client import connect

pytestmark = pytest.mark.processes  # daphne processes sharing a redis-server

LINEAR = "01-linear"
TIMEOUT = 20


def _entries(seen: list[dict[str, Any]]) -> list[str]:
    return [e["id"] for m in seen if m["t"] == "batch" for e in m["entries"]]


def _post(server: Any, session_id: str, action: str, fields: dict[str, str]) -> int:
    """A browser's form post (``send``, ``stop``…), made over HTTP: the page for the CSRF token, then the post."""
    opener, request = accounts.form_post(server.url, server.cookie, session_id, action, fields, TIMEOUT)
    with opener.open(request, timeout=TIMEOUT) as response:
        return int(response.status)


def _send_through(server: Any, session_id: str, text: str, parent: str, stream: str) -> int:
    return _post(server, session_id, "send", {"text": text, "parent": parent, "stream": stream})


def _growing(message: dict[str, Any]) -> bool:
    """A piece of the reply with text in it (the first piece, sent before any text, has none)."""
    return message["t"] == "reply" and "Offline responder" in message["html"]


async def test_two_processes_share_a_reply_and_each_tab_gets_each_entry_once(
    sessions, daphne, redis_url, settings
) -> None:
    path = sessions.copy(LINEAR)
    sid = sessions.id(LINEAR)
    first = daphne(sessions.root, PITREE_REDIS_URL=redis_url)
    second = daphne(sessions.root, PITREE_REDIS_URL=redis_url)
    cursor = sessions.size(path)
    tabs = [
        await open_tab(first, sid, cursor),
        await open_tab(second, sid, cursor),
        await open_tab(second, sid, cursor),
    ]
    try:
        # The reply is written by the first process; its pieces must reach the second one's tabs too.
        status = await asyncio.to_thread(_send_through, first, sid, "Across processes?", "db26dc72", "tok1")
        assert status == 200
        user, reply = [json.loads(line) for line in path.read_bytes().splitlines()[-2:]]
        assert user["parentId"] == "db26dc72" and reply["parentId"] == user["id"]
        for socket, seen in tabs:
            # The end of the reply (through Redis) and its entry (through the file) take different roads:
            # either may come first. Then a last line: anything sent twice would have come before it.
            await until(socket, seen, lambda m: m["t"] == "reply-end")
        sentinel = sessions.append(path, "sentinel")
        for socket, seen in tabs:
            await until_entry(socket, seen, sentinel["id"])
            assert _entries(seen) == [user["id"], reply["id"], sentinel["id"]]  # each entry once, in order
            pieces = [m for m in seen if m["t"] == "reply"]
            # The reply's pieces crossed processes through Redis: every tab saw it grow, then end.
            assert pieces and all(m["reply"] == "tok1" and m["parent"] == user["id"] for m in pieces)
            assert "Offline responder" in pieces[-1]["html"]
            ends = [m for m in seen if m["t"] == "reply-end"]
            assert ends == [{"t": "reply-end", "reply": "tok1", "entry": reply["id"]}]  # once per tab
    finally:
        for socket, _ in tabs:
            await socket.close()


SLOW = "0.12"  # seconds a chunk: the reply is still being written while the test acts


async def test_a_slow_reply_streams_across_processes_and_a_tab_opened_midway_on_the_other_joins_it(
    sessions, daphne, redis_url
) -> None:
    path = sessions.copy(LINEAR)
    sid = sessions.id(LINEAR)
    first = daphne(sessions.root, PITREE_REDIS_URL=redis_url, PITREE_OFFLINE_DELAY=SLOW)
    second = daphne(sessions.root, PITREE_REDIS_URL=redis_url, PITREE_OFFLINE_DELAY=SLOW)
    cursor = sessions.size(path)
    tabs = [await open_tab(first, sid, cursor), await open_tab(second, sid, cursor)]
    try:
        sending = asyncio.create_task(asyncio.to_thread(_send_through, first, sid, "Slowly?", "db26dc72", "slow1"))
        await until(*tabs[1], _growing)  # written by the first process, growing in the second's tab
        late = await open_tab(second, sid, sessions.size(path))
        assert not sending.done()
        assert any(_growing(m) and m["reply"] == "slow1" for m in late[1])  # joined with the text so far
        tabs.append(late)
        assert await sending == 200
        user, reply = [json.loads(line) for line in path.read_bytes().splitlines()[-2:]]
        assert reply["parentId"] == user["id"] and reply["message"]["stopReason"] == "stop"
        for socket, seen in tabs:
            await until(socket, seen, lambda m: m["t"] == "reply-end")
        sentinel = sessions.append(path, "sentinel")
        for index, (socket, seen) in enumerate(tabs):
            await until_entry(socket, seen, sentinel["id"])
            expected = [reply["id"], sentinel["id"]] if index == 2 else [user["id"], reply["id"], sentinel["id"]]
            assert _entries(seen) == expected  # each entry once, in order
            assert [m for m in seen if m["t"] == "reply-end"] == [
                {"t": "reply-end", "reply": "slow1", "entry": reply["id"]}
            ]
    finally:
        for socket, _ in tabs:
            await socket.close()


async def test_stop_in_one_process_stops_the_reply_another_process_writes(sessions, daphne, redis_url) -> None:
    path = sessions.copy(LINEAR)
    sid = sessions.id(LINEAR)
    first = daphne(sessions.root, PITREE_REDIS_URL=redis_url, PITREE_OFFLINE_DELAY=SLOW)
    second = daphne(sessions.root, PITREE_REDIS_URL=redis_url, PITREE_OFFLINE_DELAY=SLOW)
    socket, seen = await open_tab(second, sid, sessions.size(path))
    try:
        sending = asyncio.create_task(asyncio.to_thread(_send_through, first, sid, "Stop me", "db26dc72", "stop1"))
        await until(socket, seen, _growing)
        assert await asyncio.to_thread(_post, second, sid, "stop", {"reply": "stop1"}) == 204
        assert await sending == 200  # the request that asked for the reply gets it, stopped
        reply = json.loads(path.read_bytes().splitlines()[-1])
        assert reply["message"]["stopReason"] == "aborted" and reply["message"]["content"][0]["text"]
        await until(socket, seen, lambda m: m["t"] == "reply-end")
        assert [m for m in seen if m["t"] == "reply-end"] == [
            {"t": "reply-end", "reply": "stop1", "entry": reply["id"]}
        ]
    finally:
        await socket.close()


@pytest.mark.parametrize("mode", ["auto", "poll"])
async def test_sigterm_stops_a_server_with_live_tabs_within_two_seconds(sessions, daphne, mode) -> None:
    path = sessions.copy(LINEAR)
    sid = sessions.id(LINEAR)
    server = daphne(sessions.root, PITREE_WATCH=mode)
    tabs = [await open_tab(server, sid, sessions.size(path)) for _ in range(3)]
    lister = await connect(
        f"{server.ws}/ws/sessions/",
        origin=server.url,
        open_timeout=TIMEOUT,
        additional_headers={"Cookie": server.cookie},
    )
    await lister.send(json.dumps({"q": "", "resume": False}))
    written = sessions.append(path, "so that the feeds are busy")
    for socket, seen in tabs:
        await until_entry(socket, seen, written["id"])
    started = time.monotonic()
    server.process.send_signal(signal.SIGTERM)
    code = await asyncio.to_thread(server.process.wait, 10)
    elapsed = time.monotonic() - started
    assert elapsed < 2, f"daphne took {elapsed:.2f} s to stop:\n{server.log_tail()}"
    assert code == 0, server.log_tail()
