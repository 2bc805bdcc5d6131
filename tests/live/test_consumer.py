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
    """A page's socket that finds no session it may see is told so in the words a revoked reader gets
    (they say nothing of whether the session exists), then closed with 4404."""
    tab = await open_tab("no-such-session")
    told = await tab.ws.receive_output(timeout=10)
    assert told["type"] == "websocket.send" and "not available to you any more" in told["text"]
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
    "hello",
    [
        "not json",
        '{"cursor": -1}',
        '{"cursor": "12"}',
        '{"cursor": true}',
        "[]",
        '{"cursor": 0, "id": 5}',
        '{"cursor": 0, "at": 5}',
        '{"cursor": 0, "v": -1}',
        '{"cursor": 0, "notes": "elsewhere"}',
        '{"cursor": 0, "replies": ["a b"]}',
    ],
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
    push = (await tab.until_entry(written["id"]))[-1]
    (entry,) = push.appended
    assert dict(entry.attributes)["id"] == f"entry-{written['id']}" and "Also add *pagination*." in str(entry)
    # The entry continues the tab's branch: the tab stands on it now, its page reflects the whole file.
    assert push.state["position"] == written["id"] and push.state["cursor"] == str(sessions.size(path))
    assert push.state["cursor-id"] == written["id"]
    assert "tree" in push.todo  # the tree panel fetches itself again
    assert "8 messages" in push.by_id("session-meta").text
    assert push.by_id("session-title").text == "Todo API endpoints review"
    assert "csrfmiddlewaretoken" not in push.raw  # nobody's token: htmx sends it as a header


async def test_an_entry_too_large_for_one_message_makes_the_tab_fetch_its_page_and_it_stays_live(
    open_tab, sessions, caplog
) -> None:
    """Escaped, text renders to several times its size (and is carried twice, for Copy): past the
    largest websocket message, the tab is told to fetch its page instead, and the next entry still
    comes as a batch."""
    path = sessions.copy(LINEAR)
    tab = await open_tab(sessions.id(LINEAR), sessions.size(path))
    big = sessions.append(path, "Here it is: " + "<&>" * 50_000)
    told = (await tab.until(lambda m: m.resync is not None or m.entries))[-1]
    assert told.resync is not None and told.entries == []
    # The same file: its own position again (where it stands now), at its own address.
    assert told.resync.attr("hx-get") == f"/s/{sessions.id(LINEAR)}/e/{big['id']}/"
    assert told.resync.attr("hx-replace-url") is None
    await tab.move(at=big["id"], cursor=sessions.size(path), id=big["id"])  # the page it fetched
    small = sessions.append(path, "thanks")
    push = (await tab.until_entry(small["id"]))[-1]
    assert push.entries == [small["id"]] and big["id"] not in tab.entry_ids()
    assert len(push.raw.encode()) < MAX_MESSAGE_BYTES
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
    cursors = [int(m.state["cursor"]) for m in tab.received if m.state]
    assert cursors == sorted(cursors) and cursors[-1] == sessions.size(path)


async def test_resume_from_a_cursor_sends_exactly_what_was_missed(open_tab, sessions) -> None:
    path = sessions.copy(LINEAR)
    cursor = sessions.size(path)
    missed = [sessions.append(path, f"while away {i}")["id"] for i in range(3)]
    tab = await open_tab(sessions.id(LINEAR), cursor)
    assert tab.received[-1].live
    (backlog,) = [m for m in tab.received if m.entries]
    assert backlog.entries == missed and backlog.state["cursor"] == str(sessions.size(path))
    after = sessions.append(path, "after the resume")["id"]
    await tab.until_entry(after)
    assert tab.entry_ids() == [*missed, after]


async def test_a_tab_that_is_up_to_date_gets_no_backlog(open_tab, sessions) -> None:
    path = sessions.copy(LINEAR)
    tab = await open_tab(sessions.id(LINEAR), sessions.size(path))
    assert not [m for m in tab.received if m.entries or m.resync] and tab.received[-1].live  # its page as it is
    assert tab.state["cursor"] == str(sessions.size(path))
    new = sessions.append(path, "only this")["id"]
    first = await tab.next()
    assert first.entries == [new]


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
    ids = [entry for m in messages for entry in m.entries]
    assert ids[-1] == reply["id"] and len(ids) == 2 and len(set(ids)) == 2
    user = next(m for m in messages if ids[0] in m.entries)
    assert "Hello from a tab" in str(user.appended[0])


async def test_a_tab_that_moves_is_sent_what_its_new_page_lacks_and_nothing_for_the_page_it_left(
    open_tab, sessions
) -> None:
    """Every move of the tab (a branch switched, a page answered) names the page it has now: the socket
    answers from that page's cursor, for the entry it stands on, under the move's number."""
    path = sessions.copy(TREE)
    tab = await open_tab(sessions.id(TREE), sessions.size(path))  # at 750a4556, the first branch's end
    cursor = sessions.size(path)
    other = sessions.append(path, "on the other branch", parent="de4f0d3a")["id"]
    await tab.until_state(cursor=str(sessions.size(path)))
    assert other not in tab.entry_ids()  # not where the tab stands
    await tab.move(at="de4f0d3a", cursor=cursor, top="de4f0d3a")  # its page rendered before ``other``
    push = (await tab.until_entry(other))[-1]
    assert push.view == 2 and push.state["position"] == other
    mine = sessions.append(path, "further", parent=other)["id"]
    push = (await tab.until_entry(mine))[-1]
    assert push.view == 2 and tab.entry_ids() == [other, mine]


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


async def test_a_move_said_before_a_later_one_is_not_taken_for_where_the_tab_is(open_tab, sessions) -> None:
    """Moves are counted by the tab: one that reaches the socket after a later one (held while the socket
    was down) does not put the socket back on a page the tab has left."""
    path = sessions.copy(TREE)
    tab = await open_tab(sessions.id(TREE), sessions.size(path))  # v=1, at 750a4556
    await tab.move(at="de4f0d3a", v=3)
    await tab.until(lambda m: m.view == 3)
    await tab.ws.send_json_to({**tab.hello, "v": 2, "at": "750a4556"})
    mine = sessions.append(path, "on the branch the tab moved to", parent="de4f0d3a")["id"]
    push = (await tab.until_entry(mine))[-1]
    assert push.view == 3 and not [m for m in tab.received if m.view == 2]
