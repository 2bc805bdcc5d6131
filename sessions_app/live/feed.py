"""The push path of one server process: file → watcher → this process's tabs.

Each process that has tabs open on a session runs one ``SessionFeed`` for that file, however many tabs
there are, and stops it when the last one closes. The feed watches the file (``watch.py``), reads only
the complete lines appended since it last looked, renders them once (``fragments.py``) and hands the
result to each of its tabs. An entry written by this app, by the command line, by pi or by another
server process takes this same road: writers never notify anyone.

Why file events do not travel through the channel layer: every process that has tabs of a file runs
its own feed, and each feed sees every line, so anything a feed sent to a shared group would reach
each tab once per process. A feed therefore delivers to its own process's tabs only, directly (a
per-process group would do the same at the price of a round trip through Redis, and a channel layer
drops messages for a full channel, which would lose entries). Replies being written are the one thing
that is not in the file yet: the reply task sends them to the session's group in the channel layer,
which spans processes; each feed listens on that group once, with a channel of its own, renders what
arrives once and hands it to its tabs. So every tab receives each entry exactly once, from its own
process's feed, and each piece of a reply once, from the group.

The feed reads the file through a ``SessionFile`` of its own, not the views' cached one: its
``refresh()`` then returns exactly the rows this feed has not pushed yet, and the views' reads and
refreshes never race with the feed's.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import logging
import os
import weakref
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from channels.layers import get_channel_layer
from django.conf import settings

from ..channel_layer.calls import Inbox, call
from ..channel_layer.groups import replies_group, session_group
from ..sessionfiles.cursor import cursor_of, reflects
from ..sessionfiles.errors import SessionError
from ..sessionfiles.index import SessionIndex
from ..sessionfiles.store import SessionFile
from . import fragments
from .sockets import caught_up, generation_now, watched
from .watch import Watch, watch_file

log = logging.getLogger(__name__)

MAX_PATCH_ROWS = 300  # more new lines than this at once: tabs fetch the page again instead
ENDED_KEPT = 256  # replies remembered as ended, to drop their late pieces


class Tab(Protocol):
    """What a feed needs of an open tab (the websocket consumer)."""

    def deliver(self, item: Batch | Piece | Gone) -> None:
        """Queue something to send; never blocks (the tab sends in its own order, in its own time)."""


Batch = fragments.Batch
Piece = fragments.Piece


class Gone:
    """The session's file cannot be read any more: its tabs say so and close."""


@dataclass
class _PiTurn:
    """What of pi's turn a feed shows its tabs: the reply of the entry pi continues under."""

    turn: tuple[Any, Any]  # pi's turn number, and the entry it was asked at
    parent: str | None
    reply: str
    stream: dict[str, Any] = field(default_factory=dict)
    silent: Any = None


class SessionFeed:
    """Everything this process does for the open tabs of one session file."""

    def __init__(self, path: Path, session_id: str) -> None:
        self.path = path
        self.session_id = session_id
        self.tabs: set[Tab] = set()
        self.replies: dict[str, Piece] = {}  # reply id -> its latest piece, for tabs that come to its parent
        self._session: SessionFile | None = None
        self._epoch = 0
        self._offset = 0  # bytes of the file pushed to tabs so far
        self._lock = asyncio.Lock()  # one look at the file at a time (pulls and joins)
        self._tasks: list[asyncio.Task[None]] = []
        self._inbox: Inbox | None = None  # this feed's channel in the session's group (replies being written)
        self._ended: dict[str, None] = {}  # the latest replies seen ending, oldest first
        self._joining = 0  # tabs between ``join`` and being taken in: the feed must not stop under them
        self._pi: _PiTurn | None = None  # pi's turn as tabs are shown it
        self._pi_ended: tuple[Any, Any] | None = None  # the last of pi's turns seen ending

    # ------------------------------------------------------------------ tabs

    async def join(self, tab: Tab, cursor: int, line_id: str | None = None) -> Batch | None:
        """Add a tab whose page reflects the file up to byte ``cursor``, where its line ``line_id`` ends
        (None: not said); returns what it missed since.

        Under the lock no pull can run between taking the tab in and reading its backlog: what the
        backlog covers ends exactly where the next pushed batch starts, so nothing falls between and
        nothing comes twice."""
        self._joining += 1
        try:
            async with self._lock:
                if self._session is None:
                    await self._start()
                else:
                    await self._pull()
                self.tabs.add(tab)
                return await asyncio.to_thread(self._backlog, cursor, line_id)
        finally:
            self._joining -= 1

    async def catch_up(self, cursor: int, line_id: str | None) -> Batch | None:
        """What a tab already taken in missed since ``cursor`` (its page is another one now: it moved).
        Under the lock, after a look at the file, as ``join``: what follows comes as batches."""
        async with self._lock:
            await self._pull()
            return await asyncio.to_thread(self._backlog, cursor, line_id)

    @property
    def index(self) -> SessionIndex:
        """The file as this feed has read it (what its batches were cut from)."""
        assert self._session is not None
        return self._session.index

    def running(self) -> list[Piece]:
        """The latest piece of each reply being written."""
        return list(self.replies.values())

    def ended(self) -> list[str]:
        """The replies seen ending lately (``ENDED_KEPT``)."""
        return list(self._ended)

    async def leave(self, tab: Tab) -> None:
        self.tabs.discard(tab)
        if not self.tabs and not self._joining:
            await self._stop()

    def _broadcast(self, item: Batch | Piece | Gone) -> None:
        for tab in list(self.tabs):
            tab.deliver(item)

    # ------------------------------------------------------------------ the file

    async def _start(self) -> None:
        watch = await watch_file(self.path)  # made before the first look, so no change falls between
        try:
            self._session = await asyncio.to_thread(
                SessionFile, self.path, fsync=False, max_line_bytes=settings.PITREE_MAX_LINE_BYTES
            )
            self._inbox = await self._listen()
        except BaseException:
            watch.close()
            raise
        self._offset = cursor_of(self._session.index)
        loop = asyncio.get_running_loop()
        self._tasks = [loop.create_task(self._follow(watch), name=f"pitree-feed {self.path.name}")]

    async def _follow(self, watch: Watch) -> None:
        try:
            while True:
                await watch.wait()
                async with self._lock:
                    await self._pull()
        finally:
            watch.close()

    async def _pull(self) -> None:
        """Read what was appended, render it once, hand it to every tab (called under the lock)."""
        try:
            batch, generation = await asyncio.to_thread(self._read_checked, watched())
        except (OSError, SessionError) as error:
            log.info("live: %s cannot be read any more: %s", self.path, error)
            self._broadcast(Gone())
            return
        if batch is not None:
            caught_up(generation)  # a grant changed in another process holds the batch back from its tabs
            self._broadcast(batch)

    def _read_checked(self, check: bool) -> tuple[Batch | None, int | None]:
        """What was appended, and, when something was, the grants' generation read after it (in the same
        thread: every hop to a thread and back costs the push a turn of the event loop, and more when
        other threads hold Python's lock)."""
        batch = self._read()
        return batch, generation_now() if batch is not None and check else None

    def _read(self) -> Batch | None:
        session = self._session
        assert session is not None
        before = session.index
        rows = session.refresh()
        index = session.index
        if (rows and rows[0] < len(before)) or index.header is not before.header:
            # Loaded again from scratch: the file was replaced or rewritten, or its new lines changed
            # earlier entries (a reused id, a parent that was missing). A patch cannot say that.
            self._epoch += 1
            self._offset = cursor_of(index)
            return fragments.resync(self._epoch, self._offset, replaced=True)
        if not rows:
            return None
        start, end = self._offset, cursor_of(index)
        self._offset = end
        if len(rows) > MAX_PATCH_ROWS:
            return fragments.resync(self._epoch, end)
        return fragments.render_batch(session, rows, start, end, self._epoch)

    def _backlog(self, cursor: int, line_id: str | None) -> Batch | None:
        session = self._session
        assert session is not None
        index = session.index
        if not self._same_file(index, cursor, line_id):
            return fragments.resync(self._epoch, self._offset, replaced=True)
        if cursor == self._offset:
            return None  # nothing missed
        rows = list(range(bisect.bisect_left(index.offsets, cursor, 0, len(index)), len(index)))
        if len(rows) > MAX_PATCH_ROWS:
            return fragments.resync(self._epoch, self._offset)
        return fragments.render_batch(session, rows, cursor, self._offset, self._epoch)

    def _same_file(self, index: SessionIndex, cursor: int, line_id: str | None) -> bool:
        """Whether a tab's cursor counts in the file as it is now. The feed notices a file replaced or
        rewritten only while it reads it: one that changed while no tab of this process had it open
        (the feed stopped), or before this tab's socket came back, is told by the line the tab names.
        A cursor beyond the file's end comes from another version of it, whatever the tab says."""
        if cursor > self._offset:
            return False
        return line_id is None or reflects(index, cursor, line_id)

    # ------------------------------------------------------------------ replies being written

    async def _listen(self) -> Inbox | None:
        """Join the session's group with a channel of this feed's own (before any tab is taken in, so a
        tab that joins mid-reply misses no piece of it), then ask the replies being written for their
        text so far: what they sent before the feed joined reached nobody here, and their next words
        may be long in coming."""
        layer = get_channel_layer()
        if layer is None:
            return None
        inbox = Inbox(layer, self._relay, f"pitree-relay {self.path.name}", [session_group(self.session_id)])
        try:
            await inbox.open()
        except BaseException:
            await inbox.close()
            raise
        try:
            await call(layer.group_send(replies_group(self.session_id), {"type": "reply.resend"}))
        except Exception:
            log.warning("live: could not ask the replies of %s for their text so far", self.path, exc_info=True)
        return inbox

    async def _relay(self, event: dict[str, Any]) -> None:
        """Render a piece of a reply being written once, and hand it to every tab."""
        if event.get("type") in ("pi.state", "pi.progress"):
            async with self._lock:
                # What pi wrote before it said this is pushed first: the message it streams now hangs
                # under the file's last entry (pi writes each message whole before the next begins).
                # Most of pi's news comes with the file unchanged: a stat then spares the read.
                with contextlib.suppress(OSError):
                    if os.stat(self.path).st_size != self._offset:
                        await self._pull()
                if self._session is not None:
                    for pi_piece in await asyncio.to_thread(self._render_pi_event, event):
                        if self._note_reply(pi_piece):
                            self._broadcast(pi_piece)
            return
        piece = await asyncio.to_thread(self._render_reply_event, event)
        if piece is not None and self._note_reply(piece):
            self._broadcast(piece)

    def _render_reply_event(self, event: dict[str, object]) -> Piece | None:
        kind, reply, parent = event.get("type"), event.get("reply"), event.get("parent")
        if not isinstance(reply, str):
            return None
        parent = parent if isinstance(parent, str) else None
        if kind == "reply.progress":
            text, waiting = event.get("text"), event.get("waiting")
            text = text if isinstance(text, str) else ""
            waiting = waiting if isinstance(waiting, int) and not isinstance(waiting, bool) else 0
            return fragments.render_piece(self.session_id, reply, parent, text, waiting)
        if kind == "reply.finished":
            entry = event.get("entry")
            return fragments.ended_piece(reply, parent, entry if isinstance(entry, str) else None)
        return None

    def _note_reply(self, piece: Piece) -> bool:
        """Keep the latest piece of each reply in progress, for tabs that come to where it answers.
        False for a piece that comes after its reply's end (a send that timed out and went through
        late): it is dropped, or tabs would show a reply that has ended."""
        if piece.ended:
            self.replies.pop(piece.reply, None)
            self._ended[piece.reply] = None
            if len(self._ended) > ENDED_KEPT:
                del self._ended[next(iter(self._ended))]
            return True
        if piece.reply in self._ended:
            return False
        self.replies[piece.reply] = piece
        return True

    def _render_pi_event(self, event: dict[str, Any]) -> list[Piece]:
        """pi's turn (``services.pi_stream``) as replies being written: one per entry it continues
        under, the previous one ended when pi has written another line (its tabs moved onto that line
        with the batch that brought it, which took the previous one's place away)."""
        session = self._session
        assert session is not None
        index = session.index
        row = len(index) - 1
        while row >= 0 and not index.is_node(row):
            row -= 1
        parent = index.ids[row] if row >= 0 else None
        turn = (event.get("turn"), event.get("at"))
        ending = event.get("type") == "pi.state" and not event.get("working")
        stream, since = event.get("stream"), event.get("since")
        written = (
            isinstance(stream, dict)
            and stream.get("message") is not None
            and isinstance(since, int)
            and since < self._offset
        )
        if written and isinstance(stream, dict):
            # Made before pi said the message ended, after it wrote it: the batch just pushed shows it,
            # and a placeholder under it holding the same text would show it twice.
            stream = {**stream, "message": None}
        pieces: list[Piece] = []
        previous = self._pi
        if previous is not None and (ending or previous.turn != turn or previous.parent != parent):
            pieces.append(fragments.ended_piece(previous.reply, previous.parent, None))
            self._pi = None
        if ending:
            self._pi_ended = turn
            return pieces
        if turn == self._pi_ended:
            return pieces  # a late piece of a turn that has ended
        if written and self._pi is None and stream == {"message": None, "running": []}:
            return pieces  # nothing in flight but that message: pi's next news places the turn
        if self._pi is None:
            kept = previous.stream if previous is not None and previous.turn == turn else {}
            self._pi = _PiTurn(turn, parent, f"pi{event.get('turn')}-{row + 1}", kept)
        current = self._pi
        if event.get("type") == "pi.progress" and isinstance(stream, dict):
            current.stream = stream
        else:
            current.silent = event.get("silent")
        pieces.append(fragments.pi_turn_piece(self.session_id, current.reply, parent, current.stream, current.silent))
        return pieces

    async def _stop(self) -> None:
        """Stop watching (the last tab left); returns once the feed's tasks have ended. The tasks
        cancelled here never wait inside a channel-layer call; the group's reader is ended by a
        message, within a bounded time."""
        _forget(self)
        tasks, self._tasks = self._tasks, []
        inbox, self._inbox = self._inbox, None
        for task in tasks:
            task.cancel()
        if inbox is not None:
            await inbox.close()  # the group left, the reader ended by a message (``channel_layer.calls``)
        await asyncio.gather(*tasks, return_exceptions=True)
        self._session = None
        self.replies.clear()
        self._pi = None


# --------------------------------------------------------------------------------- the registry

_feeds: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[Path, SessionFeed]] = weakref.WeakKeyDictionary()


def feed_for(path: Path, session_id: str) -> SessionFeed:
    """This process's feed of a session file (one per file and event loop)."""
    feeds = _feeds.setdefault(asyncio.get_running_loop(), {})
    key = Path(path).absolute()
    feed = feeds.get(key)
    if feed is None:
        feed = feeds[key] = SessionFeed(key, session_id)
    return feed


def running_feeds() -> Iterable[SessionFeed]:
    """The feeds of the running loop (tests look at them)."""
    return list(_feeds.get(asyncio.get_running_loop(), {}).values())


def _forget(feed: SessionFeed) -> None:
    with contextlib.suppress(RuntimeError):
        feeds = _feeds.get(asyncio.get_running_loop(), {})
        if feeds.get(feed.path) is feed:
            del feeds[feed.path]
