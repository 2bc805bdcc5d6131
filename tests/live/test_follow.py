"""The comparison's and the map's socket: the files a page shows, followed through one socket; told,
once a burst of appends is over, that one of them grew, with how far each is read now."""

from __future__ import annotations

import json

import pytest
from channels.testing import WebsocketCommunicator
from support.pushes import Push, parse

from pitree_web.asgi import application
from sessions_app.assistants import OfflineAssistant
from sessions_app.services import replies
from sessions_app.sessionfiles.store import SessionFile

LINEAR = "01-linear"
TREE = "02-tree-branches"
ORIGIN = (b"origin", b"http://testserver")
HOST = (b"host", b"testserver")
TIMEOUT = 10


async def _follow(cookie: tuple[bytes, bytes], hello: object) -> WebsocketCommunicator:
    socket = WebsocketCommunicator(application, "/ws/follow/", headers=[ORIGIN, HOST, cookie])
    assert (await socket.connect(timeout=TIMEOUT))[0]
    await socket.send_to(text_data=json.dumps(hello))
    return socket


def _page(sessions, *keys: str) -> list[dict[str, object]]:
    """What a comparison of these sessions names when its socket opens: each one as it is now."""
    found = []
    for key in keys:
        session = SessionFile(next(sessions.root.glob(f"*/*_{sessions.id(key)}.jsonl")), fsync=False)
        found.append({"session": sessions.id(key), "cursor": sessions.size(session.path), "id": session.index.ids[-1]})
    return found


async def test_a_comparison_is_told_once_when_a_file_it_shows_grew(sessions, watch_mode, owner_cookie) -> None:
    path = sessions.copy(LINEAR)
    sessions.copy(TREE)
    socket = await _follow(owner_cookie, {"follow": _page(sessions, LINEAR, TREE)})
    try:
        assert parse(await socket.receive_from(timeout=TIMEOUT)).live
        first = sessions.append(path, "one")
        second = sessions.append(path, "two")  # a burst: told once
        told: Push = parse(await socket.receive_from(timeout=TIMEOUT))
        assert told.todo == ["grew"]
        state = json.loads(told.by_id("follow-state").attr("data-follow"))
        assert state[0] == {"session": sessions.id(LINEAR), "cursor": sessions.size(path), "id": second["id"]}
        assert state[1]["session"] == sessions.id(TREE)
        assert first["id"] not in told.raw
        assert await socket.receive_nothing(timeout=0.5)
    finally:
        await socket.disconnect()


async def test_a_comparison_back_after_its_file_grew_is_told_at_once(sessions, watch_mode, owner_cookie) -> None:
    path = sessions.copy(LINEAR)
    page = _page(sessions, LINEAR)
    sessions.append(path, "while away")
    socket = await _follow(owner_cookie, {"follow": page})
    try:
        told = parse(await socket.receive_from(timeout=TIMEOUT))
        assert told.todo == ["grew"] and parse(await socket.receive_from(timeout=TIMEOUT)).live
    finally:
        await socket.disconnect()


@pytest.mark.parametrize(
    "hello",
    [{"follow": []}, {"follow": [{"session": 5, "cursor": 0}]}, {"follow": [{"session": "x", "cursor": -1}]}, []],
)
async def test_a_malformed_follow_hello_closes_with_4400(sessions, owner_cookie, hello) -> None:
    socket = await _follow(owner_cookie, hello)
    assert await socket.receive_output(timeout=TIMEOUT) == {"type": "websocket.close", "code": 4400}


async def test_following_a_session_one_may_not_see_closes_with_4404(sessions, owner_cookie) -> None:
    socket = await _follow(owner_cookie, {"follow": [{"session": "no-such-session", "cursor": 0}]})
    assert await socket.receive_output(timeout=TIMEOUT) == {"type": "websocket.close", "code": 4404}


async def test_a_beam_page_gets_the_text_of_the_replies_it_names_and_no_other(sessions, owner_cookie) -> None:
    """A beam's page names its answers being written: each one's text comes as it grows, swapped into
    its placeholder; a reply it does not name (another tab's, elsewhere in the session) sends nothing."""
    path = sessions.copy(LINEAR)
    session = SessionFile(path, fsync=False)
    socket = await _follow(owner_cookie, {"follow": _page(sessions, LINEAR), "replies": ["named"]})
    named = other = None
    try:
        assert parse(await socket.receive_from(timeout=TIMEOUT)).live
        ask = [{"role": "user", "content": "Hello there?"}]
        other = replies.start(session, session.leaf_id, OfflineAssistant(delay=0.01).reply(ask), "other")
        await other.join()
        named = replies.start(session, session.leaf_id, OfflineAssistant(delay=0.01).reply(ask, variant=1), "named")
        await named.join()
        texts = []
        while True:
            push = parse(await socket.receive_from(timeout=TIMEOUT))
            if push.todo == ["grew"]:
                break
            texts.append(push.by_id("reply-named-text").text)
        assert texts and "another canned answer" in texts[-1]  # the named reply's own words (variant 1)
        assert "reply-other" not in "".join(texts)
    finally:
        await socket.disconnect()


async def test_a_follow_hello_naming_malformed_replies_closes_with_4400(sessions, owner_cookie) -> None:
    sessions.copy(LINEAR)
    socket = await _follow(owner_cookie, {"follow": _page(sessions, LINEAR), "replies": ["no spaces!"]})
    assert await socket.receive_output(timeout=TIMEOUT) == {"type": "websocket.close", "code": 4400}
