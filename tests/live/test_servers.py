"""Real daphne processes: several of them sharing a Redis channel layer and one sessions folder, and
a quick stop on SIGTERM with live sockets open. Replies stream at a tenth of a second a chunk or slower
where it matters: the hangs channels_redis caused showed only when a reply's sends and reads overlapped
its being written (sessions_app/channel_layer/calls.py)."""

from __future__ import annotations

import asyncio
import json
import signal
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

import pytest
from support import accounts
from support.pushes import Push
from support.tabs import open_tab, until, until_entry
from websockets.asyncio.client import connect

pytestmark = pytest.mark.processes  # daphne processes sharing a redis-server

LINEAR = "01-linear"
TIMEOUT = 20


def _entries(seen: list[Push]) -> list[str]:
    return [entry for m in seen for entry in m.entries]


def _post(server: Any, session_id: str, action: str, fields: dict[str, str]) -> int:
    """A browser's form post (``send``, ``stop``…), made over HTTP: the page for the CSRF token, then the post."""
    opener, request = accounts.form_post(server.url, server.cookie, session_id, action, fields, TIMEOUT)
    with opener.open(request, timeout=TIMEOUT) as response:
        return int(response.status)


def _send_through(server: Any, session_id: str, text: str, parent: str, stream: str) -> int:
    return _post(server, session_id, "send", {"text": text, "parent": parent, "stream": stream})


def _growing(reply: str) -> Any:
    """Whether a message shows the reply with text in it (the first piece, sent before any text, has none)."""
    return lambda m: (reply in m.placeholders or m.by_id(f"reply-{reply}-text")) and "Offline responder" in m.raw


def _ended(reply: str) -> Any:
    """Whether a message takes the reply's placeholder away (its entry came, or nothing was stored)."""
    return lambda m: (gone := m.by_id(f"reply-{reply}")) is not None and gone.style == "delete"


async def test_two_processes_share_a_reply_and_each_tab_gets_each_entry_once(
    sessions, daphne, redis_url, settings
) -> None:
    path = sessions.copy(LINEAR)
    sid = sessions.id(LINEAR)
    first = daphne(sessions.root, PITREE_REDIS_URL=redis_url)
    second = daphne(sessions.root, PITREE_REDIS_URL=redis_url)
    cursor = sessions.size(path)
    tabs = [await open_tab(server, sid, cursor, "db26dc72") for server in (first, second, second)]
    try:
        # The reply is written by the first process; its pieces must reach the second one's tabs too.
        status = await asyncio.to_thread(_send_through, first, sid, "Across processes?", "db26dc72", "tok1")
        assert status == 200
        user, reply = [json.loads(line) for line in path.read_bytes().splitlines()[-2:]]
        assert user["parentId"] == "db26dc72" and reply["parentId"] == user["id"]
        for socket, seen in tabs:
            # Its entry (through the file) takes the place of the reply grown (through Redis). Then a last
            # line: anything sent twice would have come before it.
            await until_entry(socket, seen, reply["id"])
        sentinel = sessions.append(path, "sentinel")
        for socket, seen in tabs:
            await until_entry(socket, seen, sentinel["id"])
            assert _entries(seen) == [user["id"], reply["id"], sentinel["id"]]  # each entry once, in order
            # The reply's pieces crossed processes through Redis: every tab saw it grow, then end.
            assert [m.placeholders for m in seen if m.placeholders] == [["tok1"]]
            assert any(_growing("tok1")(m) for m in seen)
            assert len([m for m in seen if _ended("tok1")(m)]) == 1  # once per tab
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
    tabs = [await open_tab(first, sid, cursor, "db26dc72"), await open_tab(second, sid, cursor, "db26dc72")]
    try:
        sending = asyncio.create_task(asyncio.to_thread(_send_through, first, sid, "Slowly?", "db26dc72", "slow1"))
        await until(*tabs[1], _growing("slow1"))  # written by the first process, growing in the second's tab
        asked = json.loads(path.read_bytes().splitlines()[-1])["id"]  # where a page opened now stands
        late = await open_tab(second, sid, sessions.size(path), asked)
        assert not sending.done()
        assert any(_growing("slow1")(m) for m in late[1])  # joined with the text so far
        tabs.append(late)
        assert await sending == 200
        user, reply = [json.loads(line) for line in path.read_bytes().splitlines()[-2:]]
        assert user["id"] == asked and reply["parentId"] == user["id"] and reply["message"]["stopReason"] == "stop"
        sentinel = sessions.append(path, "sentinel")
        for index, (socket, seen) in enumerate(tabs):
            await until_entry(socket, seen, sentinel["id"])
            expected = [reply["id"], sentinel["id"]] if index == 2 else [user["id"], reply["id"], sentinel["id"]]
            assert _entries(seen) == expected  # each entry once, in order
            assert len([m for m in seen if _ended("slow1")(m)]) == 1
    finally:
        for socket, _ in tabs:
            await socket.close()


async def test_stop_in_one_process_stops_the_reply_another_process_writes(sessions, daphne, redis_url) -> None:
    path = sessions.copy(LINEAR)
    sid = sessions.id(LINEAR)
    first = daphne(sessions.root, PITREE_REDIS_URL=redis_url, PITREE_OFFLINE_DELAY=SLOW)
    second = daphne(sessions.root, PITREE_REDIS_URL=redis_url, PITREE_OFFLINE_DELAY=SLOW)
    socket, seen = await open_tab(second, sid, sessions.size(path), "db26dc72")
    try:
        sending = asyncio.create_task(asyncio.to_thread(_send_through, first, sid, "Stop me", "db26dc72", "stop1"))
        await until(socket, seen, _growing("stop1"))
        assert await asyncio.to_thread(_post, second, sid, "stop", {"reply": "stop1"}) == 204
        assert await sending == 200  # the request that asked for the reply gets it, stopped
        reply = json.loads(path.read_bytes().splitlines()[-1])
        assert reply["message"]["stopReason"] == "aborted" and reply["message"]["content"][0]["text"]
        await until_entry(socket, seen, reply["id"])
        assert len([m for m in seen if _ended("stop1")(m)]) == 1
    finally:
        await socket.close()


async def test_a_message_under_an_entry_another_process_is_answering_is_refused(sessions, daphne, redis_url) -> None:
    """The refusal a process gives for its own replies (two user messages in a row would follow), given
    by every process while any writes the reply: the reply's mark is in Redis."""
    path = sessions.copy(LINEAR)
    sid = sessions.id(LINEAR)
    first = daphne(sessions.root, PITREE_REDIS_URL=redis_url, PITREE_OFFLINE_DELAY=SLOW)
    second = daphne(sessions.root, PITREE_REDIS_URL=redis_url, PITREE_OFFLINE_DELAY=SLOW)
    socket, seen = await open_tab(second, sid, sessions.size(path), "db26dc72")
    try:
        sending = asyncio.create_task(asyncio.to_thread(_send_through, first, sid, "Busy?", "db26dc72", "busy1"))
        await until(socket, seen, _growing("busy1"))  # the reply is marked before it starts
    finally:
        await socket.close()
    user = json.loads(path.read_bytes().splitlines()[-1])
    assert user["message"]["content"] == "Busy?"
    before = path.read_bytes()
    with pytest.raises(urllib.error.HTTPError) as refused:
        await asyncio.to_thread(_send_through, second, sid, "Me too", user["id"], "busy2")
    assert refused.value.code == 409
    assert "still being written" in refused.value.read().decode()
    assert not sending.done() and path.read_bytes() == before  # nothing written by the refused send
    assert await sending == 200
    # Once the reply is stored, the same message goes through on the second process.
    reply = json.loads(path.read_bytes().splitlines()[-1])
    assert reply["parentId"] == user["id"] and reply["message"]["role"] == "assistant"
    assert await asyncio.to_thread(_send_through, second, sid, "Me too", reply["id"], "busy3") == 200


async def test_a_crowd_of_tabs_opening_at_once_all_go_live_with_redis(sessions, daphne, redis_url) -> None:
    """Each socket joins its channel-layer groups as it opens (to hear of grant changes): sixty tabs
    opening together make a few hundred joins at once (a restart's reconnections, many more), which
    took more Redis connections than redis-py's pool gives a process, and the joins past them failed."""
    path = sessions.copy(LINEAR)
    sid = sessions.id(LINEAR)
    server = daphne(sessions.root, PITREE_REDIS_URL=redis_url)
    tabs = await asyncio.gather(*(open_tab(server, sid, sessions.size(path), "db26dc72") for _ in range(60)))
    try:
        written = sessions.append(path, "to everyone")
        for socket, seen in tabs:
            await until_entry(socket, seen, written["id"])
    finally:
        for socket, _ in tabs:
            await socket.close()


@pytest.mark.parametrize("mode", ["auto", "poll"])
async def test_sigterm_stops_a_server_with_live_tabs_within_two_seconds(sessions, daphne, mode) -> None:
    path = sessions.copy(LINEAR)
    sid = sessions.id(LINEAR)
    server = daphne(sessions.root, PITREE_WATCH=mode)
    tabs = [await open_tab(server, sid, sessions.size(path), "db26dc72") for _ in range(3)]
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
