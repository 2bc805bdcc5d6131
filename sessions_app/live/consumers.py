"""The websockets of the pages: a session (``SessionConsumer``) and the session list
(``SessionListConsumer``), each fed by this process's feed.

A session tab says once, when its socket opens, which byte offset of the file its page reflects (its
cursor) and the id of the line that ends there; it then receives what it missed since, followed by
everything new, in file order, each entry once. A dropped socket that comes back says its cursor again
and so catches up exactly, or, when the file is another one now, is told to fetch its page again.

A session that does not exist closes the socket with 4404 *after* accepting it: a refused handshake
reaches the browser as 1006, which htmx's websocket extension retries forever, while it leaves 4xxx
codes alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson
from asgiref.sync import sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings
from django.http import Http404

from ..access.web import has_working_link
from ..channel_layer.health import health
from ..display.dates import ZONE_COOKIE
from ..forms import ListForm
from ..sessionfiles.errors import SessionError
from . import fragments
from .feed import Batch, SessionFeed, feed_for
from .listfeed import ListFeed, Shown, list_feed
from .sockets import Guard, ListGuard, actor_for_list, open_for_socket

NOT_FOUND = 4404
BAD_REQUEST = 4400
TOO_MANY = 4429  # the list sockets one person may hold in this process (PITREE_LIST_SOCKETS_PER_USER)
TRY_AGAIN_LATER = 1013  # the browser reconnects (and resumes from its cursor)
MAX_QUEUED = 500  # messages waiting for a slow socket before it is closed to resume later
MAX_MESSAGE_BYTES = 1 << 20  # the largest message daphne's websocket library (autobahn) sends

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
        """Stop the guard and leave the feed this socket joined, if any."""
        if self.guard is not None:
            await self.guard.stop()
        if self.feed is not None:
            feed, self.feed = self.feed, None
            await feed.leave(self)


class SessionConsumer(_Outbox):
    """One open tab of one session, as its user (or share link) may see it."""

    feed: SessionFeed | None = None
    path: Path | None = None
    guard: Guard | None = None

    async def connect(self) -> None:
        self.sent = 0  # the byte offset this tab's content reflects
        self.epoch = 0
        self.session_id = self.scope["url_route"]["kwargs"]["session_id"]
        await super().connect()
        try:
            view, generation = await sync_to_async(open_for_socket, thread_sensitive=False)(self.scope, self.session_id)
        except (Http404, SessionError):
            await self.close(code=NOT_FOUND)
            return
        self.path = view.path
        self.guard = Guard(view, self.scope, self.end, generation)
        await self.guard.start()

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        """The tab's cursor and the id of the line that ends there, once; anything else is a client bug
        and closes the socket."""
        hello = _hello(text_data)
        if hello is None or self.feed is not None or self.path is None or self.guard is None:
            await self.close(code=BAD_REQUEST)
            return
        cursor, line_id = hello
        if not self.guard.follows:  # a snapshot: nothing it may show ever comes
            self.outbox.put_nowait(fragments.LIVE)
            self.start_pump()
            return
        self.feed = feed_for(self.path, self.session_id)
        try:
            backlog = await self.feed.join(self, cursor, line_id)
        except (OSError, SessionError):
            await self.close(code=NOT_FOUND)
            return
        self.sent = cursor
        if backlog is not None:
            self.epoch = backlog.epoch
            await self._send_batch(backlog)
        # After the pieces of replies in progress that ``join`` queued, and any batch that came meanwhile.
        self.outbox.put_nowait(fragments.LIVE)
        health.listeners.add(self.layer_changed)
        if health.paused:
            self.outbox.put_nowait(fragments.layer_message(True))
        self.start_pump()

    def layer_changed(self, paused: bool) -> None:
        """The channel layer stopped or started answering: the tab says whether live updates from
        other server processes are paused (this process's own go on, through the file)."""
        self.deliver(fragments.layer_message(paused))

    async def leave(self) -> None:
        health.listeners.discard(self.layer_changed)
        await super().leave()

    async def send_item(self, item: Batch | str) -> None:
        if isinstance(item, str):
            shown = item if self.guard is None else await self.guard.shown(item)
            # A reply's text so far rendered past the limit is not shown growing: its entry comes
            # from the file when it is done.
            if shown is not None and fits(shown):
                await self.send(text_data=shown)
        else:
            await self._send_batch(item)

    async def _send_batch(self, batch: Batch) -> None:
        if batch.epoch != self.epoch:
            # The file was replaced: offsets start again, and this batch says so first.
            self.epoch, self.sent = batch.epoch, 0
        due = batch.after(self.sent)
        if due is not None and self.guard is not None:
            due = await self.guard.batch(due, self.sent)
        if due is None:
            return
        if not fits(due.text()):  # a long message, highlighted: the tab fetches its page instead
            due = replace(due, resync=True, _text=None, _offering={})
        await self.send(text_data=due.text())
        # After a resync the tab fetches a page at least this far along, and skips what it has.
        self.sent = due.end if due.resync else max(self.sent, due.end)


class SessionListConsumer(_Outbox):
    """One open session list: ``{"q": search, "page": n, "resume": bool}`` once, then ``{"t": "live"}``
    and listings as the folder changes; with ``"notify": true`` (the sidebar, which fetches its own
    list), ``{"t": "list"}`` without a listing."""

    feed: ListFeed | None = None
    guard: ListGuard | None = None
    holder = ""  # whom this socket counts for among the list sockets open (``_held``)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        hello = _list_hello(text_data)
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
        resume = _flag(text_data, "resume")
        if _flag(text_data, "notify"):  # told that the folder changed, not what it lists
            await self.feed.notify(self, send_now=resume)
        else:
            zone = self.scope.get("cookies", {}).get(ZONE_COOKIE, "")
            await self.feed.join(self, actor, hello._replace(zone=zone), send_now=resume)
        self.outbox.put_nowait(fragments.LIVE)
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


class NoSuchSocket(AsyncWebsocketConsumer):
    """Any websocket path that names no socket of the app (``/ws/x/``, or a session id no URL can
    carry): accepted and closed with 4404, as an unknown session is, instead of reaching Channels'
    router, which answers a path it cannot route with a 500 and a logged traceback."""

    channel_layer_alias = "pitree-no-layer"

    async def connect(self) -> None:
        await self.accept()
        await self.close(code=NOT_FOUND)


def _hello(text: str | None) -> tuple[int, str | None] | None:
    """A session tab's first message: its cursor and the id of the line that ends there (None, or no
    ``id``, for a page that does not say it); None when malformed."""
    message = _object(text)
    cursor, line_id = message.get("cursor"), message.get("id")
    if type(cursor) is not int or cursor < 0 or not (line_id is None or isinstance(line_id, str)):
        return None
    return cursor, line_id


def _list_hello(text: str | None) -> Shown | None:
    """A list tab's first message: its search, page and workspace, checked as the list page checks its
    query (``ListForm``: a search of at most 500 characters, a page from 1 to 1,000,000, absent or null
    for the first, a workspace's folder name, absent for all); None when malformed (not a string, a
    number that is no whole number in range)."""
    message = _object(text)
    query, page, workspace = message.get("q"), message.get("page"), message.get("workspace", "")
    if not isinstance(query, str) or isinstance(page, bool) or not isinstance(workspace, str):
        return None
    form = ListForm({"q": query, "page": "" if page is None else page, "workspace": workspace})
    if not form.is_valid():
        return None
    asked = form.cleaned_data
    return Shown(asked["q"].strip(), asked["page"] or 1, asked["workspace"])


def _flag(text: str | None, name: str) -> bool:
    """Whether ``name`` of a JSON object message is ``true``."""
    return _object(text).get(name) is True


def _object(text: str | None) -> dict[str, Any]:
    """A message as the JSON object it should be (empty when it is not one)."""
    with contextlib.suppress(orjson.JSONDecodeError, TypeError):
        message: Any = orjson.loads(text or "")
        if isinstance(message, dict):
            return message
    return {}
