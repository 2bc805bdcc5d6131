"""The session list's websocket: new sessions, renames and activity reach open list tabs."""

from __future__ import annotations

import asyncio
import re

import pytest
from channels.testing import WebsocketCommunicator
from support.pushes import parse

from pitree_web.asgi import application
from sessions_app.live import listfeed
from sessions_app.sessionfiles.fork import create_session
from sessions_app.sessionfiles.store import SessionFile

LINEAR = "01-linear"
TREE = "02-tree-branches"
ORIGIN = (b"origin", b"http://testserver")
HOST = (b"host", b"testserver")


async def _list_tab(hello: dict, cookie: tuple[bytes, bytes]) -> WebsocketCommunicator:
    tab = WebsocketCommunicator(application, "/ws/sessions/", headers=[ORIGIN, HOST, cookie])
    connected, _ = await tab.connect(timeout=10)
    assert connected
    await tab.send_json_to(hello)
    if "q" in hello:
        while not parse(await tab.receive_from(timeout=10)).live:
            pass
    return tab


async def _listing(tab: WebsocketCommunicator, contains: str) -> str:
    """The next listing swapped into the list that holds ``contains`` (its sidebar fetches its own too)."""
    while True:
        message = parse(await tab.receive_from(timeout=10))
        listing = message.by_id("session-groups")
        assert listing is not None and listing.style == "innerHTML" and "sidebar" in message.todo
        if contains in message.raw:
            return message.raw


async def test_a_new_session_and_a_rename_show_in_the_list(sessions, watch_mode, owner_cookie) -> None:
    sessions.copy(LINEAR)
    tab = await _list_tab({"q": "", "resume": False}, owner_cookie)
    try:
        created = create_session(sessions.root, "/home/bob/elsewhere", name="Brand new session", fsync=False)
        html = await _listing(tab, "Brand new session")
        assert '<span title="/home/bob/elsewhere">bob/elsewhere</span>' in html and "Todo API endpoints" in html
        assert html.index("Brand new session") < html.index("Todo API endpoints")  # newest first
        SessionFile(created.path, fsync=False).rename("Renamed <right> away")
        html = await _listing(tab, "Renamed &lt;right&gt; away")
        assert "Brand new session" not in html
    finally:
        await tab.disconnect()


async def test_a_search_tab_gets_its_own_listing(sessions, watch_mode, owner_cookie) -> None:
    sessions.copy(LINEAR)
    everything = await _list_tab({"q": "", "resume": False}, owner_cookie)
    search = await _list_tab({"q": "validates", "resume": False}, owner_cookie)
    try:
        sessions.copy(TREE)  # its first message: "Write a function that validates todo titles"
        assert "Title validation experiments" in await _listing(search, "Title validation")
        html = await _listing(everything, "Title validation")
        assert "Todo API endpoints" in html
    finally:
        await everything.disconnect()
        await search.disconnect()


async def test_a_tab_that_asks_only_to_be_told_gets_no_listing(sessions, watch_mode, owner_cookie, monkeypatch) -> None:
    """The sidebar fetches its own list: its socket is told that the folder changed, and no listing is
    rendered for it."""
    rendered: list[str] = []
    real = listfeed.render_listing
    monkeypatch.setattr(listfeed, "render_listing", lambda *args: rendered.append("listing") or real(*args))
    sessions.copy(LINEAR)
    tab = await _list_tab({"q": "", "resume": False, "notify": True}, owner_cookie)
    try:
        create_session(sessions.root, "/home/bob/elsewhere", name="Brand new session", fsync=False)
        told = parse(await tab.receive_from(timeout=10))
        assert told.todo == ["sidebar"] and told.swaps == []
        assert rendered == []
    finally:
        await tab.disconnect()


async def test_a_reconnecting_list_tab_gets_the_listing_at_once(sessions, watch_mode, owner_cookie) -> None:
    sessions.copy(LINEAR)
    tab = WebsocketCommunicator(application, "/ws/sessions/", headers=[ORIGIN, HOST, owner_cookie])
    await tab.connect(timeout=10)
    await tab.send_json_to({"q": "", "resume": True})
    try:
        assert "Todo API endpoints" in await _listing(tab, "")
        assert parse(await tab.receive_from(timeout=10)).live
    finally:
        await tab.disconnect()


async def test_a_session_made_between_the_page_and_its_socket_is_sent_at_once(
    sessions, watch_mode, client, owner_cookie
) -> None:
    """The list page names the listing it shows (``data-listed``): the socket, which watches the folder
    only from its first message on, sends the listing at once when the folder changed in between, and
    nothing when it did not."""
    sessions.copy(LINEAR)
    page = (await asyncio.to_thread(client.get, "/")).content.decode()
    listed = re.search(r'data-listed="([0-9a-f]+)"', page)
    assert listed is not None
    unchanged = WebsocketCommunicator(application, "/ws/sessions/", headers=[ORIGIN, HOST, owner_cookie])
    await unchanged.connect(timeout=10)
    await unchanged.send_json_to({"q": "", "listed": listed.group(1), "resume": False})
    first = parse(await unchanged.receive_from(timeout=10))
    await unchanged.disconnect()
    assert first.live and first.by_id("session-groups") is None
    create_session(sessions.root, "/home/bob/elsewhere", name="Made meanwhile", fsync=False)
    tab = WebsocketCommunicator(application, "/ws/sessions/", headers=[ORIGIN, HOST, owner_cookie])
    await tab.connect(timeout=10)
    await tab.send_json_to({"q": "", "listed": listed.group(1), "resume": False})
    try:
        assert "Todo API endpoints" in await _listing(tab, "Made meanwhile")
        assert parse(await tab.receive_from(timeout=10)).live
    finally:
        await tab.disconnect()


async def test_a_list_hello_without_a_search_closes_with_4400(sessions, owner_cookie) -> None:
    tab = await _list_tab({"cursor": 3}, owner_cookie)
    assert await tab.receive_output(timeout=10) == {"type": "websocket.close", "code": 4400}


async def _refused(hello: str, cookie: tuple[bytes, bytes]) -> dict:
    tab = WebsocketCommunicator(application, "/ws/sessions/", headers=[ORIGIN, HOST, cookie])
    assert (await tab.connect(timeout=10))[0]
    await tab.send_to(text_data=hello)
    return await tab.receive_output(timeout=10)


@pytest.mark.parametrize(
    "hello",
    [
        '{"q": "' + "x" * 100_000 + '"}',  # the list page refuses more than 500 characters (400)
        '{"q": "' + "x" * 501 + '", "page": 1}',
        '{"q": "", "page": 99999999999999999999}',  # a float to JSON readers: no whole page number
        '{"q": "", "page": 1000001}',
        '{"q": "", "page": 0}',
        '{"q": "", "page": 1.5}',
        '{"q": "", "page": true}',
        '{"q": "a\\u0000b"}',
    ],
)
async def test_a_list_hello_the_list_page_would_refuse_closes_with_4400(hello, sessions, owner_cookie) -> None:
    assert await _refused(hello, owner_cookie) == {"type": "websocket.close", "code": 4400}


async def test_a_list_hello_may_leave_the_page_out_or_null(sessions, owner_cookie) -> None:
    for hello in ({"q": " "}, {"q": "", "page": None}, {"q": "x" * 500, "page": 2, "resume": True}):
        tab = await _list_tab(hello, owner_cookie)
        await tab.disconnect()


async def test_one_person_holds_a_bounded_number_of_list_sockets(sessions, owner_cookie, settings) -> None:
    """Each list socket's listing is rendered again at every change of the folder: 300 of them from one
    person made each change cost 300 listings. One more than the limit is closed with 4429 (the page
    says why), and a socket closed makes room again."""
    settings.PITREE_LIST_SOCKETS_PER_USER = 3
    sessions.copy(LINEAR)
    tabs = [await _list_tab({"q": f"search {n}"}, owner_cookie) for n in range(3)]
    try:
        refused = WebsocketCommunicator(application, "/ws/sessions/", headers=[ORIGIN, HOST, owner_cookie])
        assert (await refused.connect(timeout=10))[0]
        await refused.send_json_to({"q": "one more"})
        assert await refused.receive_output(timeout=10) == {"type": "websocket.close", "code": 4429}
        await tabs.pop().disconnect()
        tabs.append(await _list_tab({"q": "room again"}, owner_cookie))
    finally:
        for tab in tabs:
            await tab.disconnect()
