"""The session websocket on the real ASGI application: joining, refusals, pushes of lines others
append, exactly-once delivery, and resuming from a cursor."""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from channels.testing import WebsocketCommunicator

from pitree_web.asgi import application
from sessions_app.live.consumers import MAX_MESSAGE_BYTES
from sessions_app.live.feed import running_feeds

LINEAR = "01-linear"
TREE = "02-tree-branches"
REPO = Path(__file__).resolve().parents[2]


async def test_unknown_session_is_closed_with_4404_after_the_handshake(open_tab) -> None:
    tab = await open_tab("no-such-session")
    closed = await tab.ws.receive_output(timeout=10)
    assert closed == {"type": "websocket.close", "code": 4404}


@pytest.mark.parametrize("path", ["/ws/x/", "/ws/", "/ws/s/a%20b/", "/ws/s/..%2F..%2Fetc/", "/ws/s/x/y/", "/s/x/"])
async def test_a_path_that_names_no_socket_is_closed_with_4404(path: str, caplog, transactional_db) -> None:
    """Signed in or not: an unroutable path must not end in a 500 with a traceback in the log."""
    communicator = WebsocketCommunicator(
        application, path, headers=[(b"origin", b"http://testserver"), (b"host", b"testserver")]
    )
    connected, _ = await communicator.connect(timeout=10)
    assert connected
    assert await communicator.receive_output(timeout=10) == {"type": "websocket.close", "code": 4404}
    await communicator.disconnect()
    assert not [record for record in caplog.records if record.levelno >= logging.ERROR]


@pytest.mark.parametrize(
    "hello", ["not json", '{"cursor": -1}', '{"cursor": "12"}', '{"cursor": true}', "[]", '{"cursor": 0, "id": 5}']
)
async def test_a_malformed_hello_closes_with_4400(open_tab, sessions, hello) -> None:
    sessions.copy(LINEAR)
    tab = await open_tab(sessions.id(LINEAR), hello=hello)
    assert await tab.ws.receive_output(timeout=10) == {"type": "websocket.close", "code": 4400}


async def test_a_socket_without_origin_is_refused(sessions) -> None:
    sessions.copy(LINEAR)
    communicator = WebsocketCommunicator(application, f"/ws/s/{sessions.id(LINEAR)}/")
    connected, _ = await communicator.connect(timeout=10)
    assert not connected


async def test_an_entry_appended_by_another_writer_reaches_the_tab_rendered(open_tab, sessions) -> None:
    path = sessions.copy(LINEAR)
    tab = await open_tab(sessions.id(LINEAR), sessions.size(path))
    written = sessions.append(path, "Also add *pagination*.")
    batch = (await tab.until_entry(written["id"]))[-1]
    assert batch["from"] < batch["to"] == sessions.size(path)
    (entry,) = batch["entries"]
    assert entry["id"] == written["id"] and entry["parent"] == "db26dc72" and entry["node"]
    assert entry["end"] == sessions.size(path)
    assert f'id="entry-{written["id"]}"' in entry["html"] and "Also add *pagination*." in entry["html"]
    assert "is-position" in entry["html"]  # the entry is where a tab that follows it now stands
    assert batch["leaf"] == written["id"]
    assert batch["tree"] is True
    assert 'id="session-meta"' in batch["head"] and "8 messages" in batch["head"]
    assert batch["title"] == "Todo API endpoints  review"


async def test_an_entry_too_large_for_one_message_makes_the_tab_fetch_its_page_and_it_stays_live(
    open_tab, sessions, caplog
) -> None:
    """Escaped, text renders to several times its size (and is carried twice, for Copy): past the
    largest websocket message, the tab is told to fetch its page instead, and the next entry still
    comes as a batch."""
    path = sessions.copy(LINEAR)
    tab = await open_tab(sessions.id(LINEAR), sessions.size(path))
    big = sessions.append(path, "Here it is: " + "<&>" * 50_000)
    told = (await tab.until(lambda m: m["t"] in ("resync", "batch")))[-1]
    assert told == {"t": "resync", "epoch": 0, "replaced": False}  # the same file: its own position again
    small = sessions.append(path, "thanks")
    batch = (await tab.until_entry(small["id"]))[-1]
    assert [entry["id"] for entry in batch["entries"]] == [small["id"]] and big["id"] not in tab.entry_ids()
    assert len(orjson.dumps(batch)) < MAX_MESSAGE_BYTES
    assert not [record for record in caplog.records if record.levelno >= logging.ERROR]


@pytest.mark.processes
async def test_the_command_line_append_reaches_every_tab_once(open_tab, sessions) -> None:
    path = sessions.copy(LINEAR)
    tabs = [await open_tab(sessions.id(LINEAR), sessions.size(path)) for _ in range(3)]
    env = {**os.environ, "PITREE_SESSIONS_DIR": str(sessions.root), "PITREE_FSYNC": "0"}
    done = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "manage.py", "pitree", "append", str(path), "--role", "user", "--text", "from the CLI"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    cli_id = done.stdout.strip()
    sentinel = sessions.append(path, "sentinel")
    for tab in tabs:
        await tab.until_entry(sentinel["id"])
        assert tab.entry_ids() == [cli_id, sentinel["id"]]


async def test_many_appends_arrive_once_each_in_file_order(open_tab, sessions) -> None:
    path = sessions.copy(LINEAR)
    tab = await open_tab(sessions.id(LINEAR), sessions.size(path))
    written = []
    for i in range(40):
        written.append(sessions.append(path, f"message {i}")["id"])
        if i % 7 == 0:
            await asyncio.sleep(0)  # let the feed look now and then: batches of different sizes
    await tab.until_entry(written[-1])
    assert tab.entry_ids() == written
    ends = [e["end"] for m in tab.received if m["t"] == "batch" for e in m["entries"]]
    assert ends == sorted(ends) and ends[-1] == sessions.size(path)


async def test_resume_from_a_cursor_sends_exactly_what_was_missed(open_tab, sessions) -> None:
    path = sessions.copy(LINEAR)
    cursor = sessions.size(path)
    missed = [sessions.append(path, f"while away {i}")["id"] for i in range(3)]
    tab = await open_tab(sessions.id(LINEAR), cursor)
    backlog, ready = tab.received
    assert ready == {"t": "live"}
    assert backlog["t"] == "batch" and backlog["from"] == cursor and backlog["to"] == sessions.size(path)
    assert [e["id"] for e in backlog["entries"]] == missed
    after = sessions.append(path, "after the resume")["id"]
    await tab.until_entry(after)
    assert tab.entry_ids() == [*missed, after]


async def test_a_tab_that_is_up_to_date_gets_no_backlog(open_tab, sessions) -> None:
    path = sessions.copy(LINEAR)
    tab = await open_tab(sessions.id(LINEAR), sessions.size(path))
    assert tab.received == [{"t": "live"}]
    new = sessions.append(path, "only this")["id"]
    first = await tab.next()
    assert [e["id"] for e in first["entries"]] == [new]


async def test_tabs_joining_while_others_write_each_get_every_entry_once(open_tab, sessions) -> None:
    """Joins race with appends: each tab's page reflects the file at some moment (its cursor); it must
    receive exactly the entries after that moment, once each, in file order."""
    path = sessions.copy(LINEAR)
    expected: list[tuple[object, list[str]]] = []
    writes: list[tuple[int, str]] = []  # (end offset, id)
    for round_ in range(6):
        cursor = sessions.size(path)
        tab = await open_tab(sessions.id(LINEAR), cursor)
        expected.append((tab, []))
        for i in range(3):
            entry = sessions.append(path, f"round {round_} message {i}")
            writes.append((sessions.size(path), entry["id"]))
        for _ in range(round_ % 3):
            await asyncio.sleep(0)
    sentinel = sessions.append(path, "sentinel")["id"]
    for tab, _ in expected:
        await tab.until_entry(sentinel)
    for index, (tab, _) in enumerate(expected):
        cursor_round = index
        wanted = [entry_id for n, (_, entry_id) in enumerate(writes) if n >= cursor_round * 3] + [sentinel]
        assert tab.entry_ids() == wanted


async def test_the_app_s_own_writes_arrive_through_the_file(open_tab, sessions, async_client) -> None:
    path = sessions.copy(LINEAR)
    tab = await open_tab(sessions.id(LINEAR), sessions.size(path))
    response = await async_client.post(
        f"/s/{sessions.id(LINEAR)}/send/",
        {"text": "Hello from a tab", "parent": "db26dc72"},
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 200
    reply = orjson.loads(path.read_bytes().splitlines()[-1])
    messages = await tab.until_entry(reply["id"])
    ids = [e["id"] for m in messages if m["t"] == "batch" for e in m["entries"]]
    assert ids[-1] == reply["id"] and len(ids) == 2 and len(set(ids)) == 2
    user = next(e for m in messages if m["t"] == "batch" for e in m["entries"] if e["id"] == ids[0])
    assert user["parent"] == "db26dc72" and "Hello from a tab" in user["html"]


async def test_one_feed_per_file_that_stops_with_the_last_tab(open_tab, sessions) -> None:
    path = sessions.copy(LINEAR)
    first = await open_tab(sessions.id(LINEAR), sessions.size(path))
    second = await open_tab(sessions.id(LINEAR), sessions.size(path))
    new = sessions.append(path, "hello")["id"]
    await first.until_entry(new)
    await second.until_entry(new)
    assert len(list(running_feeds())) == 1
    await first.ws.disconnect()
    assert len(list(running_feeds())) == 1
    await second.ws.disconnect()
    assert list(running_feeds()) == []
