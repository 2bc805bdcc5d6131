"""Replies being written, each as an asyncio task of its own, in a registry of this process.

Why tasks of their own: the request that asked for a reply may go away (a client that disconnects
cancels its async view) and the reply must still be stored; and Stop may come from any tab, served by
any server process. Only the text of a reply in progress travels outside the file, through the channel
layer; the entry is appended once, when the reply is complete, stopped or failed.

Events for the tabs of a session, sent to its group (``session_group``)::

    {"type": "reply.progress", "reply": <reply id>, "parent": <parent entry id>, "text": <all text so far>,
     "waiting": <whole seconds without news from the model server, once PITREE_REPLY_WAITING_AFTER passed; else 0>}
    {"type": "reply.finished", "reply": <reply id>, "parent": <parent entry id>, "entry": <appended entry id>,
     "stopReason": <stop reason>}

``reply.progress`` comes at the start, at most every ``progress_interval`` while text comes (the first
words after a quiet spell at once, those within the interval after them together, at its end), when a
feed asks for it, when the model server has said nothing for ``PITREE_REPLY_WAITING_AFTER`` seconds
and every ``WAITING_REFRESH`` seconds after that while it still says nothing, and with the final text; ``reply.finished`` after the append (``entry`` is None if
the append itself failed). The whole text travels each time, so a tab that joins late, or is served by
another process, shows everything at the next event.

Each running reply listens on a channel of its own in the session's "replies" group
(``channel_layer.groups.replies_group``), from before its first event on:

- ``{"type": "reply.resend"}``: a feed has just joined the session's group (its first tab of the
  session opened, or opened again): the reply sends its text so far now, rather than with its next
  words, which may be long in coming;
- ``{"type": "reply.stop", "reply": id, "reply_to": channel}``: it answers
  ``{"type": "reply.stopping", "reply": id}`` on ``reply_to``, and stops;
- ``{"type": "reply.then", "reply": id, "entry": {"type", "fields"}, "reply_to": channel}``: a model or
  thinking level (or a label, a name) picked in a tab while this reply was written where the tab
  stands: it goes below the reply, in the write that stores it (``chain``), and the reply answers
  ``{"type": "reply.chained", "reply": id, "chained": bool}`` on ``reply_to`` (False: its write has begun).

With Redis as the channel layer, that reaches the process that runs the reply; in memory, this
process. A Stop may also come before its reply has started (the page shows Stop as soon as it sends):
it is remembered here for a while, and the reply stops as it starts; meanwhile Stop waits, listening
to the session's group, and asks again when the reply's first event shows it started, in this process
or another.

While it runs, a reply is also marked in Django's default cache (``answering``), shared by every
process when ``PITREE_REDIS_URL`` is set: a message sent under the entry it answers is refused in any
process, not only in the one writing it. The mark is a lease, renewed while the reply runs, so a
process that dies leaves it for ``ANSWERING_LEASE`` seconds at most. While that Redis does not answer,
the default cache answers from each process's memory (``pitree_web/cache.py``): each process then
knows its own replies only, as with one process, and the tabs' guard (Stop instead of Send while a
reply streams on their branch) holds for the others.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import re
import secrets
import sys
import time
from pathlib import Path
from typing import Any

from channels.layers import BaseChannelLayer, InMemoryChannelLayer, get_channel_layer
from django.conf import settings
from django.core.cache import cache

from ..assistants import Reply
from ..assistants.base import ABORTED_MESSAGE, RESTART_MESSAGE
from ..channel_layer.calls import Inbox, call
from ..channel_layer.groups import replies_group, session_group
from ..sessionfiles.entries import Draft
from ..sessionfiles.errors import SessionError
from ..sessionfiles.store import Chained, SessionFile
from .journal import Journal

logger = logging.getLogger(__name__)

PROGRESS_INTERVAL = 0.05  # seconds: often enough to look live, rarely enough for long replies and many tabs
# Each piece is the whole text so far, rendered as Markdown by every process's feed (about 2 µs a
# character, highlighted code included) and sent to every tab: a long reply's pieces come further apart,
# so that rendering them costs a small share of a core, however long the reply (a 60 kB one took a core
# whole and lagged seconds behind). Never further apart than PROGRESS_INTERVAL_MAX.
PROGRESS_SECONDS_PER_CHAR = 10e-6
PROGRESS_INTERVAL_MAX = 1.0
STOP_WAIT = 1.0  # seconds Stop waits for the process that runs (or starts) the reply to say it stops it
STOPS_KEPT = 256  # Stops that came before their reply started, remembered for it (the oldest dropped first)
STOP_KEPT_FOR = 60.0  # seconds such a Stop is remembered
SHUTDOWN_GRACE = 1.0  # seconds a server shutting down gives running replies to be stored
WAITING_REFRESH = 5.0  # seconds between two progress events of a reply waiting for its model server
ANSWERING_LEASE = 30.0  # seconds a reply's mark lasts unless renewed (every third of it while it runs)
REPLY_ID = re.compile(r"[A-Za-z0-9_-]{1,40}")

_running: dict[str, RunningReply] = {}
_ended_here: dict[str, None] = {}  # the latest replies this process wrote to their end, oldest first
_early_stops: dict[tuple[str, str], float] = {}  # (session id, reply id) -> when Stop came, oldest first
_hooked: set[int] = set()  # the reactors told to store running replies before they shut down


class ReplyNotRunning(SessionError):
    """Stop named a reply that no server process is writing (unknown, or already finished)."""


class RunningReply:
    """A reply being written: its id, the entry it answers, its text so far (``reply.text``) and model
    (``reply.model``), and the task that writes, stores and announces it.

    One task (``task``) does everything but read the stream, in order: it listens for Stop and for
    feeds asking for its text, announces the reply (only then may the stream begin, so a Stop for a
    reply with text always finds it, and a feed that joins the session's group after the announcement
    has its request heard), sends its progress, appends it the moment the stream ends, then says it
    has finished. It never
    waits for anything unbounded: every channel-layer call is bounded (``channel_layer.calls``), so the append
    never depends on the layer."""

    def __init__(self, session: SessionFile, parent_id: str, reply: Reply, reply_id: str) -> None:
        self.id, self.session_id, self.parent_id, self.reply = reply_id, session.session_id, parent_id, reply
        self.position_then = session.file_position  # moved by the time it ends: it stays moved (``append``)
        # Its text as it streams, for the next start should this process be killed before the append.
        self.journal = Journal(Path(settings.PITREE_JOURNAL_DIR), session, parent_id, self.position_then, reply)
        self.then: list[Chained] | None = []  # written below the reply when it is stored (``chain``); None once it is
        self._changed = asyncio.Event()
        self._ready = asyncio.Event()  # announced, and listening for Stop: the stream may begin
        self._news_at = time.monotonic()  # when the model server last sent text (or the stream began)
        self._told_at = 0.0  # when the tabs were last told that the reply waits (0: not since the news)
        self.task = asyncio.create_task(self._live(session))
        self._stream = asyncio.create_task(self._read())
        # However the stream ends (even cancelled before it began), the announcer wakes to see it.
        self._stream.add_done_callback(lambda _: self._changed.set())

    def stop(self, message: str = ABORTED_MESSAGE) -> None:
        """End the reply now: it is stored as ``aborted`` with the text so far and ``message`` as its
        ``errorMessage`` (no-op once it has ended). Only the assistant's stream is cancelled, never a
        channel-layer call."""
        self.reply.abort_message = message
        self._stream.cancel()

    def chain(self, draft: Chained) -> bool:
        """Write ``draft`` below this reply, in the write that stores it; False once that write began."""
        if self.then is None:
            return False
        self.then.append(draft)
        return True

    async def join(self) -> dict[str, Any]:
        """The appended entry. Shielded: a caller cancelled meanwhile (a client gone) leaves the reply be."""
        return await asyncio.shield(self.task)

    async def _read(self) -> None:
        await self._ready.wait()
        self._news_at = time.monotonic()
        async for text in self.reply:
            self._news_at = time.monotonic()
            self.journal.add(text)
            self._changed.set()

    async def _live(self, session: SessionFile) -> dict[str, Any]:
        layer = get_channel_layer()
        requests = (
            Inbox(layer, self._on_request, f"pitree-reply {self.id}", [replies_group(self.session_id)])
            if layer
            else None
        )
        entry: dict[str, Any] | None = None
        marking = asyncio.create_task(self._keep_marked())
        try:
            if requests is not None:
                await self._listen(requests)
            await self._send(layer, self._progress())
            self._ready.set()
            await self._announce(layer)  # until the stream ends: complete, failed or stopped
            then, self.then = self.then or [], None
            entry = await asyncio.to_thread(
                session.append,
                self.reply.draft(),
                self.parent_id,
                position_then=self.position_then,
                entry_id=self.journal.entry_id,
                then=then,
            )
            return entry
        finally:
            self.then = None
            self.journal.close(stored=entry is not None)
            _running.pop(self.id, None)
            marking.cancel()
            await release(self.session_id, self.parent_id, self.id)
            _ended_here[self.id] = None
            while len(_ended_here) > STOPS_KEPT:
                del _ended_here[next(iter(_ended_here))]
            await self._send(layer, self._progress())  # the last text, for tabs that show the reply elsewhere
            finished = {"entry": entry and entry["id"], "stopReason": self.reply.stop_reason}
            await self._send(layer, {"type": "reply.finished", "reply": self.id, "parent": self.parent_id, **finished})
            if requests is not None:
                await requests.close()

    async def _keep_marked(self) -> None:
        """Mark the reply in the shared cache (``answering``) and renew the mark until cancelled."""
        while True:
            await _mark(self.session_id, self.parent_id, self.id)
            await asyncio.sleep(ANSWERING_LEASE / 3)

    def _progress(self) -> dict[str, Any]:
        quiet = time.monotonic() - self._news_at
        waiting = max(int(quiet), 1) if self._ready.is_set() and quiet >= settings.PITREE_REPLY_WAITING_AFTER else 0
        text = self.reply.text
        return {"type": "reply.progress", "reply": self.id, "parent": self.parent_id, "text": text, "waiting": waiting}

    async def _announce(self, layer: BaseChannelLayer | None) -> None:
        """Progress at most every ``progress_interval`` while the text grows or a feed asks for it;
        returns when the stream ends. The sends are made here, one after another, so no older progress
        can follow a newer one."""
        stream = self._stream
        while True:
            await asyncio.wait({stream}, timeout=progress_interval(len(self.reply.text)))
            with contextlib.suppress(TimeoutError):  # no news: time to say that the reply waits
                await asyncio.wait_for(self._changed.wait(), self._until_waiting_news())
            self._changed.clear()
            if stream.done():
                return
            progress = self._progress()
            await self._send(layer, progress)
            self._told_at = time.monotonic() if progress["waiting"] else 0.0

    def _until_waiting_news(self) -> float:
        """Seconds until the tabs should hear that this reply waits for its model server: once the
        silence passes ``PITREE_REPLY_WAITING_AFTER`` (at once if it passed unsaid, as a busy loop may
        find it), then every ``WAITING_REFRESH`` while it lasts."""
        now = time.monotonic()
        if not self._told_at or self._told_at < self._news_at:
            return max(0.0, self._news_at + settings.PITREE_REPLY_WAITING_AFTER - now)
        return max(0.0, self._told_at + WAITING_REFRESH - now)

    async def _send(self, layer: BaseChannelLayer | None, event: dict[str, Any]) -> None:
        """To the tabs, if there is a channel layer; a layer that fails costs the live view, not the reply."""
        try:
            if layer is not None:
                await call(layer.group_send(session_group(self.session_id), event))
        except Exception:  # the layer's health said it is down, once (channel_layer.health)
            logger.debug("could not send %s of reply %s", event["type"], self.id, exc_info=True)

    async def _listen(self, requests: Inbox) -> None:
        """Requests from any server process (Stop, the text so far) arrive on a channel of this reply's own."""
        try:
            await requests.open()
        except Exception:
            logger.warning("reply %s cannot be stopped from other processes", self.id, exc_info=True)

    async def _on_request(self, message: dict[str, Any]) -> None:
        if message.get("type") == "reply.resend":
            self._changed.set()  # the announcer sends the text so far at its next turn
        elif message.get("type") == "reply.then" and message.get("reply") == self.id:
            entry = message.get("entry")
            chained = isinstance(entry, dict) and self.chain(
                Draft(str(entry.get("type")), dict(entry.get("fields") or {}))
            )
            if isinstance(message.get("reply_to"), str):
                answer = {"type": "reply.chained", "reply": self.id, "chained": chained}
                await call(get_channel_layer().send(message["reply_to"], answer))
        elif message.get("type") == "reply.stop" and message.get("reply") == self.id:
            self.stop()
            if isinstance(message.get("reply_to"), str):
                answer = {"type": "reply.stopping", "reply": self.id}
                await call(get_channel_layer().send(message["reply_to"], answer))


def progress_interval(chars: int) -> float:
    """Seconds between two pieces of a reply whose text is ``chars`` long (see PROGRESS_SECONDS_PER_CHAR)."""
    return min(max(PROGRESS_INTERVAL, chars * PROGRESS_SECONDS_PER_CHAR), PROGRESS_INTERVAL_MAX)


async def claim(session_id: str, parent_id: str, reply_id: str | None) -> str:
    """The id a reply to ``parent_id`` will have (``start``), marked as being written from now on: a
    reply needs its context read and its model chosen before it starts, and every process must refuse
    a message under ``parent_id`` meanwhile (``answering``). ``release`` it if the reply never starts."""
    reply_id = _usable(reply_id)
    await _mark(session_id, parent_id, reply_id)
    return reply_id


async def release(session_id: str, parent_id: str, reply_id: str) -> None:
    """Remove a reply's mark, unless another reply to the same entry (a regeneration) marked it since."""
    key = _answering_key(session_id, parent_id)
    if await _shared(cache.get, key) == reply_id:
        await _shared(cache.delete, key)


def _usable(reply_id: str | None) -> str:
    """``reply_id`` (the browser's, to find its placeholder) unless it is malformed or taken."""
    if not reply_id or not REPLY_ID.fullmatch(reply_id) or reply_id in _running:
        return secrets.token_hex(9)
    return reply_id


def start(session: SessionFile, parent_id: str, reply: Reply, reply_id: str | None = None) -> RunningReply:
    """Write ``reply`` in a task of its own and append it as a child of ``parent_id`` when it ends."""
    reply_id = _usable(reply_id)
    _running[reply_id] = new = RunningReply(session, parent_id, reply, reply_id)
    if _stopped_before(new.session_id, reply_id):
        new.stop()  # stored as ``aborted`` without text, as any reply stopped before its first words
    _stop_replies_on_server_shutdown()
    return new


def running(session_id: str) -> list[RunningReply]:
    """The replies this process is writing in a session (for a tab that opens meanwhile)."""
    return [reply for reply in _running.values() if reply.session_id == session_id]


async def answering(session_id: str, parent_id: str) -> bool:
    """Whether a reply to ``parent_id`` is being written: by this process, or, as the shared cache says
    (Redis), by another."""
    if any(reply.parent_id == parent_id for reply in running(session_id)):
        return True
    return await _shared(cache.get, _answering_key(session_id, parent_id)) is not None


async def _mark(session_id: str, parent_id: str, reply_id: str) -> None:
    await _shared(cache.set, _answering_key(session_id, parent_id), reply_id, ANSWERING_LEASE)


def _answering_key(session_id: str, parent_id: str) -> str:
    # Entry ids may be 1,024 characters of anything: cache keys are short and plain.
    digest = hashlib.sha256(f"{session_id}\n{parent_id}".encode("utf-8", "surrogatepass")).hexdigest()
    return f"pitree-answering:{digest}"


async def _shared(method: Any, *args: Any) -> Any:
    """``method(*args)`` of the default cache, in a worker thread: with Redis, a network call."""
    return await asyncio.to_thread(method, *args)


async def stop(session_id: str, reply_id: str) -> dict[str, Any] | None:
    """Stop a reply of this session, which is then stored as ``aborted`` with its text so far.

    Returns the stored entry when the reply ran in this process, None when it was stopped elsewhere or
    as it started (``STOP_WAIT``); raises ``ReplyNotRunning`` (nothing is written) when no process runs
    it. A reply that starts in this process after that still stops, for ``STOP_KEPT_FOR`` seconds: the
    Stop of a page that has just sent comes before the request that starts the reply does its work.
    """
    found = _running.get(reply_id)
    if found is not None and found.session_id == session_id:
        found.stop()
        return await found.join()
    _remember_stop(session_id, reply_id)
    layer = get_channel_layer()
    if layer is not None and await _stopped_anywhere(layer, session_id, reply_id):
        return None
    raise ReplyNotRunning(f"No reply {reply_id} is being written in this session: it may have just ended.")


async def chain(session_id: str, parent_id: str | None, draft: Draft, reply_id: str | None = None) -> bool:
    """Write ``draft`` below the reply being written to ``parent_id``, in the write that stores it, so
    that a tab's pick while a reply streams where it stands applies from the next message on and never
    starts a branch beside that reply. The reply is this process's, or ``reply_id`` (the one the tab
    shows) in any process, asked through the replies group as Stop asks. True when a reply took it;
    False when none is being written there (any more): the caller writes it now, and once the reply
    that was being written is stored, so that the write, following the tab, goes below it."""
    found = next((reply for reply in running(session_id) if reply.parent_id == parent_id), None)
    if found is None and reply_id is not None:
        found = _running.get(reply_id)
    if found is not None and found.session_id == session_id:
        if found.chain(draft):
            return True
        with contextlib.suppress(Exception):  # however it ended, the draft is written after it
            await found.join()  # being stored: the draft follows it
        return False
    layer = get_channel_layer()
    if reply_id is None or layer is None or reply_id in _ended_here or isinstance(layer, InMemoryChannelLayer):
        return False  # a reply written here ended, or every reply is written here
    return await _chained_elsewhere(layer, session_id, reply_id, draft)


async def _chained_elsewhere(layer: BaseChannelLayer, session_id: str, reply_id: str, draft: Draft) -> bool:
    """Ask the process writing ``reply_id`` to chain ``draft`` below it. When that reply's write has
    begun, wait (``STOP_WAIT``) for it to be stored; False then, and when no process answered."""
    answered = asyncio.Event()
    chained = stored = False

    async def on_message(message: dict[str, Any]) -> None:
        nonlocal chained, stored
        if message.get("reply") != reply_id:
            return
        if message.get("type") == "reply.chained":
            chained = message.get("chained") is True
            answered.set()
        elif message.get("type") == "reply.finished":
            stored = True
            answered.set()

    inbox = Inbox(layer, on_message, f"pitree-then {reply_id}", [session_group(session_id)])
    try:
        await inbox.open()
        entry = {"type": draft.type, "fields": dict(draft.fields)}
        request = {"type": "reply.then", "reply": reply_id, "entry": entry, "reply_to": inbox.channel}
        await call(layer.group_send(replies_group(session_id), request))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(answered.wait(), STOP_WAIT)
            if not chained and not stored:  # its write has begun: it is stored within moments
                answered.clear()
                await asyncio.wait_for(answered.wait(), STOP_WAIT)
    except Exception:
        logger.warning("could not ask other processes to write below reply %s", reply_id, exc_info=True)
    finally:
        await inbox.close()
    return chained


def _remember_stop(session_id: str, reply_id: str) -> None:
    """Keep a Stop that found no reply, for ``start`` (at most ``STOPS_KEPT``, none older than
    ``STOP_KEPT_FOR``)."""
    now = time.monotonic()
    _early_stops.pop((session_id, reply_id), None)  # to the end: the newest
    _early_stops[(session_id, reply_id)] = now
    for key, when in list(_early_stops.items()):
        if len(_early_stops) <= STOPS_KEPT and now - when <= STOP_KEPT_FOR:
            break
        del _early_stops[key]


def _stopped_before(session_id: str, reply_id: str) -> bool:
    """Whether a Stop for this reply came before it started (and is forgotten now that it starts)."""
    when = _early_stops.pop((session_id, reply_id), None)
    return when is not None and time.monotonic() - when <= STOP_KEPT_FOR


async def _stopped_anywhere(layer: BaseChannelLayer, session_id: str, reply_id: str) -> bool:
    """Ask every process to stop the reply; True when, within ``STOP_WAIT``, one said it runs it, or it
    started meanwhile and ended stopped. Listening to the session's group tells of a reply that starts
    after the request went out (its first progress): it is asked again, since it listens by then."""
    stopped = asyncio.Event()
    asked_again = False

    async def on_message(message: dict[str, Any]) -> None:
        nonlocal asked_again
        kind = message.get("type")
        if message.get("reply") != reply_id or stopped.is_set():
            return
        if kind == "reply.stopping" or (kind == "reply.finished" and message.get("stopReason") == "aborted"):
            stopped.set()
        elif kind == "reply.progress" and not asked_again:
            asked_again = True
            await ask()

    async def ask() -> None:
        request = {"type": "reply.stop", "reply": reply_id, "reply_to": inbox.channel}
        await call(layer.group_send(replies_group(session_id), request))

    inbox = Inbox(layer, on_message, f"pitree-stop {reply_id}", [session_group(session_id)])
    try:
        await inbox.open()
        await ask()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stopped.wait(), STOP_WAIT)
    except Exception:
        logger.warning("could not ask other processes to stop reply %s", reply_id, exc_info=True)
    finally:
        await inbox.close()
    return stopped.is_set()


async def shutdown(grace: float = SHUTDOWN_GRACE) -> None:
    """Stop every reply running here and give them ``grace`` seconds to be stored as aborted, saying
    that the server restarted (the user did not stop them)."""
    stopping = list(_running.values())
    for reply in stopping:
        reply.stop(RESTART_MESSAGE)
    if stopping:
        await asyncio.wait([reply.task for reply in stopping], timeout=grace)


def _stop_replies_on_server_shutdown() -> None:
    """Under daphne, SIGTERM (or Ctrl+C) stops Twisted's reactor, which first runs its "before shutdown"
    triggers and waits for the Deferreds they return (daphne cancels its requests that way too): the
    moment to store running replies, while the event loop still runs. Registered once, when a reply
    first starts; other servers (and tests) have no running reactor and get no hook."""
    reactor: Any = sys.modules.get("twisted.internet.reactor")
    if reactor is None or not getattr(reactor, "running", False) or id(reactor) in _hooked:
        return
    from twisted.internet.defer import Deferred  # noqa: PLC0415 (loaded where daphne runs, not everywhere)

    reactor.addSystemEventTrigger("before", "shutdown", lambda: Deferred.fromFuture(asyncio.ensure_future(shutdown())))
    _hooked.add(id(reactor))
