"""The websockets of the pages: a session (``SessionConsumer``), the session list
(``SessionListConsumer``) and the pages that follow sessions without showing them live, the comparison
and the map (``FollowConsumer``), each fed by this process's feeds.

A session tab tells its socket where its page is when the socket opens and after every move it makes
(``live/tabs.py``): the consumer keeps that, decides what the tab should see of each batch and of each
reply being written, and sends it as HTML for htmx to swap in. A dropped socket that comes back says
its cursor again and so catches up exactly, or, when the file is another one now, is told to fetch its
page again.

A session that does not exist closes the socket with 4404 *after* accepting it: a refused handshake
reaches the browser as 1006, which htmx's websocket extension retries forever, while it leaves 4xxx
codes alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from asgiref.sync import sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings
from django.http import Http404
from django.template.loader import render_to_string

from ..access.web import has_working_link
from ..channel_layer.health import health
from ..converters import usable_id
from ..display.dates import ZONE_COOKIE
from ..forms import REPLY_ID, ListForm
from ..sessionfiles.errors import SessionError
from ..sessionfiles.index import SessionIndex
from .feed import Batch, Gone, Piece, SessionFeed, feed_for
from .fragments import reply_text
from .listfeed import ListFeed, Shown, list_feed
from .sockets import Guard, ListGuard, actor_for_list, open_for_socket
from .tabs import NOTES, Hello, Tab, head

NOT_FOUND = 4404
BAD_REQUEST = 4400
TOO_MANY = 4429  # the list sockets one person may hold in this process (PITREE_LIST_SOCKETS_PER_USER)
TRY_AGAIN_LATER = 1013  # the browser reconnects (and resumes from its cursor)
MAX_QUEUED = 500  # messages waiting for a slow socket before it is closed to resume later
MAX_MESSAGE_BYTES = 1 << 20  # the largest message daphne's websocket library (autobahn) sends
MAX_FOLLOWED = 8  # sessions a comparison or map follows (a comparison shows at most four branches)
MAX_REPLIES_SHOWN = 64  # reply placeholders a hello may name (a page shows the few that answer its entry)
LIVE = head(None, ["live"])
GONE = "This session's file is gone: live updates stopped."
NOT_AVAILABLE = "This session is not available to you any more: live updates stopped."

log = logging.getLogger(__name__)


def fits(text: str) -> bool:
    """Whether ``text`` can go as one websocket message (UTF-8 is at most 4 bytes a character, so a
    short text is not encoded to tell)."""
    return len(text) * 4 <= MAX_MESSAGE_BYTES or len(text.encode()) <= MAX_MESSAGE_BYTES


class _Outbox(AsyncWebsocketConsumer):
    """Messages from a feed, sent in the order they came, without ever blocking the feed."""

    # A tab receives everything from its feed, nothing from a channel of its own: naming a layer that
    # is not configured gives the socket none (one Redis listener fewer per open tab).
    channel_layer_alias = "pitree-no-layer"

    outbox: asyncio.Queue[Any]
    pump: asyncio.Task[None] | None = None
    feed: SessionFeed | ListFeed | None = None  # set once the socket joined one (subclasses say which)
    guard: Guard | ListGuard | None = None
    listed: ListFeed | None = None  # the list feed telling it that the sessions folder changed

    async def connect(self) -> None:
        self.outbox = asyncio.Queue()
        await self.accept()

    def deliver(self, item: Any) -> None:
        if self.outbox.qsize() >= MAX_QUEUED:
            # The browser does not keep up: let it reconnect and catch up, rather than hold an ever
            # longer queue in memory.
            self.end(TRY_AGAIN_LATER)
            return
        self.outbox.put_nowait(item)

    def end(self, code: int) -> None:
        asyncio.get_running_loop().create_task(self.close(code=code))

    def start_pump(self) -> None:
        self.pump = asyncio.get_running_loop().create_task(self._pump())

    async def _pump(self) -> None:
        try:
            while True:
                await self.send_item(await self.outbox.get())
        except Exception:
            # A socket that can send no more must not stay open and silent, its tab believing itself
            # live: closed, the tab connects again and catches up from its cursor.
            log.exception("a websocket message could not be sent")
            await self.close(code=TRY_AGAIN_LATER)

    async def send_item(self, item: Any) -> None:
        await self.send(text_data=item)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        """The socket's whole life. Whether it closes or the server stops (daphne cancels every
        connection on SIGTERM and waits for them), the tasks it started end before it does: a task left
        pending at exit is destroyed during interpreter shutdown, which has crashed CPython here."""
        try:
            await super().__call__(scope, receive, send)
        finally:
            if self.pump is not None:
                self.pump.cancel()
                await asyncio.gather(self.pump, return_exceptions=True)
            await self.leave()

    async def leave(self) -> None:
        """Stop the guard and leave the feeds this socket joined, if any."""
        if self.guard is not None:
            await self.guard.stop()
        if self.listed is not None:
            listed, self.listed = self.listed, None
            await listed.leave(self)
        if self.feed is not None:
            feed, self.feed = self.feed, None
            await feed.leave(self)


@dataclass(frozen=True)
class _Moved:
    """The tab's page is another one now (``Hello``); ``backlog``: what its first page missed."""

    hello: Hello
    first: bool = False
    backlog: Batch | None = None


@dataclass(frozen=True)
class _Scrolled:
    top: str | None


class SessionConsumer(_Outbox):
    """One open tab of one session, as its user (or share link) may see it: where the tab stands
    (``tab``), and what it is sent as the file grows."""

    feed: SessionFeed | None = None
    path: Path | None = None
    guard: Guard | None = None
    tab: Tab | None = None

    async def connect(self) -> None:
        self.epoch = 0
        self.session_id = self.scope["url_route"]["kwargs"]["session_id"]
        await super().connect()
        try:
            view, generation = await sync_to_async(open_for_socket, thread_sensitive=False)(self.scope, self.session_id)
        except (Http404, SessionError):
            # The page was loaded, so it offered what its reader could do then (a share revoked since,
            # the session gone): it is told, as an open socket is, that nothing of that stands.
            await self._closed(NOT_FOUND, NOT_AVAILABLE)
            return
        self.path = view.path
        self.guard = Guard(view, self.scope, self.end, generation)
        await self.guard.start()

    def end(self, code: int) -> None:
        """Close the socket; a tab whose session is not available any more (4404) is told so first, and
        its composer or reader's note goes (it offered to follow live, to send, to fork)."""
        asyncio.get_running_loop().create_task(self._closed(code, NOT_AVAILABLE if code == NOT_FOUND else ""))

    async def _closed(self, code: int, note: str) -> None:
        if note == NOT_AVAILABLE:
            await self.send(text_data=_flash(note) + render_to_string("sessions_app/partials/_access_ended.html"))
        elif note:
            await self.send(text_data=_flash(note))
        await self.close(code=code)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        """Where the tab's page is (``Hello``): when the socket opens, and after every move of the tab;
        or only the oldest entry of its path it has loaded now. Anything else is a client bug and
        closes the socket."""
        message = _object(text_data)
        if self.tab is not None and message.keys() == {"top"} and _entry_id(message["top"]):
            self.outbox.put_nowait(_Scrolled(message["top"] or None))
            return
        hello = _hello(message)
        if hello is None or self.path is None or self.guard is None:
            await self.close(code=BAD_REQUEST)
            return
        if self.tab is not None:
            self.outbox.put_nowait(_Moved(hello))
            return
        self.tab = Tab(self.session_id, self.guard.tools)
        if hello.sidebar:
            self.listed = list_feed()
            await self.listed.notify(self, send_now=_flag(message, "resume"))
        if not self.guard.follows:  # a snapshot: nothing it may show ever comes
            self.tab.view = hello.view
            self.outbox.put_nowait(LIVE)
            self.start_pump()
            return
        self.feed = feed_for(self.path, self.session_id)
        try:
            backlog = await self.feed.join(self, hello.cursor, hello.line_id)
        except (OSError, SessionError):
            await self.close(code=NOT_FOUND)
            return
        self.outbox.put_nowait(_Moved(hello, first=True, backlog=backlog))
        self.start_pump()

    async def send_item(self, item: Any) -> None:
        if isinstance(item, str):  # the sessions folder changed, or caught up
            await self.send(text_data=item)
        elif isinstance(item, Gone):
            await self._closed(NOT_FOUND, GONE)
        elif self.tab is None or self.guard is None or not await self.guard.settled():
            return
        elif self.feed is None:  # a snapshot's tab moved: still nothing to show
            self.tab.view = item.hello.view if isinstance(item, _Moved) else self.tab.view
        elif isinstance(item, _Moved):
            await self._moved(item)
        elif isinstance(item, _Scrolled):
            self.tab.scrolled(item.top, await self._index())
        elif isinstance(item, Piece):
            if not await self.guard.sees(item.parent):
                return
            message = self.tab.take_piece(item)
            if message is not None and fits(message):
                # A reply's text so far rendered past the limit is not shown growing: its entry comes
                # from the file when it is done.
                await self.send(text_data=message)
        else:
            await self._send_batch(item)

    async def _moved(self, moved: _Moved) -> None:
        assert self.tab is not None and self.feed is not None
        hello = moved.hello
        if hello.view < self.tab.view:
            return  # said before a later move: the tab is not on that page any more
        backlog = moved.backlog if moved.first else await self.feed.catch_up(hello.cursor, hello.line_id)
        await self.send(text_data=self.tab.move(hello, await self._index(), self.feed.running(), self.feed.ended()))
        if backlog is not None:
            self.epoch = backlog.epoch
            await self._send_batch(backlog)
        if moved.first:  # after what the first page missed, and any batch that came meanwhile
            self.outbox.put_nowait(LIVE)
            health.listeners.add(self.layer_changed)
            if health.paused:
                self.outbox.put_nowait(_layer_note(True))

    def layer_changed(self, paused: bool) -> None:
        """The channel layer stopped or started answering: the tab says whether live updates from
        other server processes are paused (this process's own go on, through the file)."""
        self.deliver(_layer_note(paused))

    async def leave(self) -> None:
        health.listeners.discard(self.layer_changed)
        await super().leave()

    async def _send_batch(self, batch: Batch) -> None:
        assert self.tab is not None and self.guard is not None and self.feed is not None
        if batch.epoch != self.epoch:
            # The file was replaced: offsets start again, and this batch says so first.
            self.epoch, self.tab.sent = batch.epoch, 0
        shown = None if batch.resync else await self.guard.shown(batch)
        message = self.tab.take(batch, shown, self.feed.running())
        if message is None:
            return
        if not fits(message):  # a long message, highlighted: the tab fetches its page instead
            message = self.tab.resync()
        await self.send(text_data=message)

    async def _index(self) -> SessionIndex:
        """The file as this tab's view of it holds it (a share's part of it, read up to date)."""
        assert self.guard is not None and self.feed is not None
        if self.guard.view.grant.whole:
            return self.feed.index
        return await self.guard.view_index()


def _flash(text: str) -> str:
    return head(None) + render_to_string("sessions_app/partials/_flash_note.html", {"text": text})


def _layer_note(paused: bool) -> str:
    return head(None) + render_to_string("sessions_app/partials/_layer_note.html", {"paused": paused, "oob": True})


class SessionListConsumer(_Outbox):
    """One open session list: ``{"q": search, "page": n, "listed": digest, "resume": bool}`` once, then
    the listing as the folder changes (``#session-groups``, swapped whole); with ``"notify": true`` (the
    sidebar of a page without a socket of its own, which fetches its own list), only that the folder
    changed."""

    feed: ListFeed | None = None
    guard: ListGuard | None = None
    holder = ""  # whom this socket counts for among the list sockets open (``_held``)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        message = _object(text_data)
        hello = _list_hello(message)
        if hello is None or self.feed is not None:
            await self.close(code=BAD_REQUEST)
            return
        actor, generation = await sync_to_async(actor_for_list, thread_sensitive=False)(self.scope)
        if not actor.signed_in and not await sync_to_async(has_working_link, thread_sensitive=False)(actor.links):
            await self.close(code=NOT_FOUND)  # as the list page sends such a browser to sign in
            return
        # Each list socket's listing is rendered again at every change of the folder: 300 from one
        # person, each with a search of its own, made every change cost 300 listings.
        session_key = getattr(self.scope.get("session"), "session_key", "")
        holder = f"user {actor.user.pk}" if actor.signed_in else f"browser {session_key}"
        if _held[holder] >= settings.PITREE_LIST_SOCKETS_PER_USER:
            await self.close(code=TOO_MANY)
            return
        _held[holder] += 1
        self.holder = holder
        self.guard = ListGuard(actor, self.scope, self.end, generation)
        await self.guard.listen()
        self.feed = list_feed()
        resume = _flag(message, "resume")
        if _flag(message, "notify"):  # told that the folder changed, not what it lists
            await self.feed.notify(self, send_now=resume)
        else:
            zone = self.scope.get("cookies", {}).get(ZONE_COOKIE, "")
            listed = message.get("listed")
            await self.feed.join(
                self,
                actor,
                hello._replace(zone=zone),
                send_now=resume,
                listed=listed if isinstance(listed, str) else None,
            )
        self.outbox.put_nowait(LIVE)
        self.start_pump()

    async def send_item(self, item: str) -> None:
        if self.guard is None or await self.guard.passes():
            await self.send(text_data=item)

    async def leave(self) -> None:
        if self.holder:
            _held[self.holder] -= 1
            if not _held[self.holder]:
                del _held[self.holder]
            self.holder = ""
        await super().leave()


_held: Counter[str] = Counter()  # list sockets open in this process, by person


class FollowConsumer(_Outbox):
    """The comparison's or the map's socket: the sessions it shows, followed (``{"follow": [{"session",
    "cursor", "id"}, …]}`` once, as the page rendered them), each through a feed and a guard as a
    session tab's; told, a quiet moment after a burst of appends, that one of them grew (the page
    fetches what it shows again, keeping what its reader opened there), with how far each file is read
    now, in ``#follow-state``, which the page names when it connects again.

    A beam's page (several answers written at once) names its answers being written too (``"replies":
    [reply id, …]``): their text is swapped into their placeholders as it grows, as a session tab's
    reply is, rendered once by the feed for every tab."""

    QUIET = 0.25  # seconds: an agent's burst of appends is told once

    followed: list[_Followed]
    replies: frozenset[str] = frozenset()
    _telling: asyncio.TimerHandle | None = None

    async def connect(self) -> None:
        self.followed = []
        await super().connect()

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        wanted = _follow_hello(text_data)
        replies = _object(text_data).get("replies", [])
        if wanted is None or self.followed or not _replies(replies):
            await self.close(code=BAD_REQUEST)
            return
        self.replies = frozenset(replies)
        grew = False
        for session_id, cursor, line_id in wanted:
            try:
                view, generation = await sync_to_async(open_for_socket, thread_sensitive=False)(self.scope, session_id)
            except (Http404, SessionError):
                await self.close(code=NOT_FOUND)
                return
            followed = _Followed(self, session_id, Guard(view, self.scope, self.end, generation), (cursor, line_id))
            self.followed.append(followed)
            await followed.guard.start()
            if not followed.guard.follows:
                continue
            followed.feed = feed_for(view.path, session_id)
            try:
                backlog = await followed.feed.join(followed, cursor, line_id)
            except (OSError, SessionError):
                await self.close(code=NOT_FOUND)
                return
            grew = grew or (backlog is not None and await followed.grew(backlog))
            for piece in followed.feed.running():  # the text so far of the replies it shows
                followed.deliver(piece)
        if grew:
            self.outbox.put_nowait(self._told())
        self.outbox.put_nowait(LIVE)
        self.start_pump()

    async def send_item(self, item: Any) -> None:
        if isinstance(item, str):
            await self.send(text_data=item)
        elif isinstance(item, tuple):
            followed, found = item
            if isinstance(found, Gone):
                await self.close(code=NOT_FOUND)
            elif isinstance(found, Batch) and await followed.grew(found):
                self._tell()
            elif isinstance(found, Piece) and not found.ended and await followed.shows(found):
                message = head(None) + reply_text(found.reply, found.text)
                if fits(message):  # past the limit, the entry comes from the file when it is done
                    await self.send(text_data=message)

    def _tell(self) -> None:
        """Say that a file grew, once a burst of appends is over."""
        if self._telling is not None:
            self._telling.cancel()
        self._telling = asyncio.get_running_loop().call_later(self.QUIET, lambda: self.deliver(self._told()))

    def _told(self) -> str:
        state = [{"session": f.session_id, "cursor": f.mark[0], "id": f.mark[1]} for f in self.followed]
        html = render_to_string(
            "sessions_app/partials/_follow_state.html", {"follow": orjson.dumps(state).decode(), "oob": True}
        )
        return head(None, ["grew"]) + html

    async def leave(self) -> None:
        if self._telling is not None:
            self._telling.cancel()
        for followed in self.followed:
            await followed.guard.stop()
            if followed.feed is not None:
                feed, followed.feed = followed.feed, None
                await feed.leave(followed)
        await super().leave()


class _Followed:
    """One session a ``FollowConsumer`` follows: its feed hands batches to it as to a tab."""

    def __init__(self, consumer: FollowConsumer, session_id: str, guard: Guard, mark: tuple[int, str | None]) -> None:
        self.consumer, self.session_id, self.guard, self.mark = consumer, session_id, guard, mark
        self.feed: SessionFeed | None = None

    def deliver(self, item: Any) -> None:
        # Of the replies being written (not in the file yet), only those the page shows.
        if not isinstance(item, Piece) or item.reply in self.consumer.replies:
            self.consumer.deliver((self, item))

    async def shows(self, piece: Piece) -> bool:
        """Whether the page's reader may see this reply being written (where it answers)."""
        return await self.guard.settled() and await self.guard.sees(piece.parent)

    async def grew(self, batch: Batch) -> bool:
        """Whether ``batch`` holds anything the page's reader may see (and how far the file is read now)."""
        if not await self.guard.settled():
            return False
        if batch.resync:
            self.mark = (0, None)  # another file, or much more of it: the page is made again from it
            return True
        shown = await self.guard.shown(batch)
        lines = [] if shown is None else [line for line in shown.lines if line.end > self.mark[0]]
        if lines:
            self.mark = (lines[-1].end, lines[-1].id)
        return bool(lines)


class NoSuchSocket(AsyncWebsocketConsumer):
    """Any websocket path that names no socket of the app (``/ws/x/``, or a session id no URL can
    carry): accepted and closed with 4404, as an unknown session is, instead of reaching Channels'
    router, which answers a path it cannot route with a 500 and a logged traceback."""

    channel_layer_alias = "pitree-no-layer"

    async def connect(self) -> None:
        await self.accept()
        await self.close(code=NOT_FOUND)


def _hello(message: dict[str, Any]) -> Hello | None:
    """Where a session tab's page is (``live/tabs.py``): ``{"v": its move, "cursor": byte offset, "id":
    the line that ends there, "at": the entry it stands on, "top": the oldest entry of its path on the
    page, "notes", "replies": the replies being written it shows, "asked": those it asked for and has
    no answer for yet, "sidebar": whether it has the sessions sidebar}``; None when malformed. ``id`` may be missing or null: a page that does not say
    it is caught up from its cursor alone."""
    view, cursor, line_id = message.get("v", 0), message.get("cursor"), message.get("id")
    at, top, notes = message.get("at"), message.get("top"), message.get("notes", "none")
    replies, asked, sidebar = message.get("replies", []), message.get("asked", []), message.get("sidebar", False)
    if (
        type(view) is not int
        or type(cursor) is not int
        or min(view, cursor) < 0
        or not (line_id is None or isinstance(line_id, str))
        or not (_entry_id(at) and _entry_id(top))
        or notes not in NOTES
        or not _replies(replies)
        or not _replies(asked)
        or not isinstance(sidebar, bool)
    ):
        return None
    return Hello(view, at or None, cursor, line_id, top or None, notes, tuple(replies), tuple(asked), sidebar)


def _replies(value: Any) -> bool:
    """Whether a message names replies as it should: a short list of reply ids."""
    return (
        isinstance(value, list)
        and len(value) <= MAX_REPLIES_SHOWN
        and all(isinstance(reply, str) and REPLY_ID.fullmatch(reply) for reply in value)
    )


def _entry_id(value: Any) -> bool:
    """Whether a message names an entry as it should: an id a URL can carry, or none (null or empty)."""
    return value is None or value == "" or (isinstance(value, str) and usable_id(value))


def _follow_hello(text: str | None) -> list[tuple[str, int, str | None]] | None:
    """The sessions a comparison or map follows, as its page rendered them (at most ``MAX_FOLLOWED``):
    each one's id, cursor, and the id of the line that ends there; None when malformed."""
    wanted = _object(text).get("follow")
    if not isinstance(wanted, list) or not 0 < len(wanted) <= MAX_FOLLOWED:
        return None
    found = []
    for item in wanted:
        session_id, cursor, line_id = (
            (item.get(k) for k in ("session", "cursor", "id")) if isinstance(item, dict) else (None,) * 3
        )
        if not isinstance(session_id, str) or type(cursor) is not int or cursor < 0:
            return None
        if not (line_id is None or isinstance(line_id, str)):
            return None
        found.append((session_id, cursor, line_id))
    return found


def _list_hello(message: dict[str, Any]) -> Shown | None:
    """A list tab's first message: its search, page and workspace, checked as the list page checks its
    query (``ListForm``: a search of at most 500 characters, a page from 1 to 1,000,000, absent or null
    for the first, a workspace's folder name, absent for all); None when malformed (not a string, a
    number that is no whole number in range)."""
    query, page, workspace = message.get("q"), message.get("page"), message.get("workspace", "")
    if not isinstance(query, str) or isinstance(page, bool) or not isinstance(workspace, str):
        return None
    form = ListForm({"q": query, "page": "" if page is None else page, "workspace": workspace})
    if not form.is_valid():
        return None
    asked = form.cleaned_data
    return Shown(asked["q"].strip(), asked["page"] or 1, asked["workspace"])


def _flag(message: dict[str, Any], name: str) -> bool:
    """Whether ``name`` of a message is ``true``."""
    return message.get(name) is True


def _object(text: str | None) -> dict[str, Any]:
    """A message as the JSON object it should be (empty when it is not one)."""
    with contextlib.suppress(orjson.JSONDecodeError, TypeError):
        message: Any = orjson.loads(text or "")
        if isinstance(message, dict):
            return message
    return {}
