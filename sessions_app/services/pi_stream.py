"""What pi shows of a turn before it writes it, sent to the session's tabs in every server process, as a
reply's pieces are: through the session's channel-layer group (``channel_layer.groups.session_group``).

The process that runs a session's pi follows its events (``assistants.pi.stream.TurnStream``) and sends
the session's group, in order (``turn`` names the turn: the file's size in bytes when pi was asked it,
the same whichever process runs pi, so that no tab takes a turn for one it saw end):

    {"type": "pi.state", "turn": n, "at": <entry id>, "working": true}
        a turn began, continuing under entry ``at`` (the tab's entry when it was asked);
    {"type": "pi.progress", "turn": n, "at": <entry id>, "stream": {"message": …, "running": […]}, "since": bytes}
        what is in flight (``TurnStream.snapshot``): at most every ``replies.progress_interval`` while it
        changes (further apart as it grows, so that rendering it costs every process little): the first
        change after a quiet spell at once, those within the interval after it together, at its end; a
        change that leaves nothing in flight only if it lasts the interval (the turn's end usually follows);
        ``since``: the file's size when pi began the message it streams (None: no message yet, or the
        file could not be read). pi writes a message before it says the message ended, so a progress
        made just before may reach a feed after the file has it: the feed knows it by the file having
        grown past ``since``, and leaves that message to the file's batch;
    {"type": "pi.state", "turn": n, "at": <entry id>, "working": true, "silent": seconds}
        no news from pi for that long (a model that stalls, a command that hangs);
    {"type": "pi.state", "turn": n, "at": <entry id>, "working": false, "ending": "done"|"aborted"|"ended"}
        the turn ended ("ended": pi itself ended before it was done); no progress comes before it, what
        was in flight being in the file by then.

A feed that starts mid-turn asks the session's replies for their text so far (``reply.resend``): the
process running pi hears it too, and sends the turn's state and progress again.

What pi writes reaches the tabs by the file, like any writer's lines (docs/architecture.md §6).
"""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path
from typing import Any

from channels.layers import get_channel_layer

from ..assistants.pi.driver import ABORTED, DONE, ENDED, PiDriver
from ..assistants.pi.stream import TurnStream
from ..channel_layer.calls import call
from ..channel_layer.groups import session_group
from .replies import progress_interval

log = logging.getLogger(__name__)


class Broadcast:
    """One driver's turns, told to its session's group. Sends are made by one task, in order."""

    def __init__(self, driver: PiDriver, session_id: str) -> None:
        self.driver, self.session_id, self.group = driver, session_id, session_group(session_id)
        self.stream = TurnStream()
        self.turn = 0
        self.working = False
        self.since: int | None = None  # the file's size when the message being streamed began
        self._outbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._changed = asyncio.Event()
        self._sender: asyncio.Task[None] | None = None
        self._pacer: asyncio.Task[None] | None = None

    def take(self, record: dict[str, Any]) -> None:
        """A record of the driver's (its listener)."""
        kind = record.get("type")
        if kind == "agent_start" and not self.working:
            self.working, self.turn = True, self.driver.turn_from
            self._send({"working": True})
        streaming = self.stream.message is not None
        changed = self.stream.take(record)
        if not streaming and self.stream.message is not None:
            # A message begins: pi wrote every one before it (each as it ended), none of it yet.
            self.since = _size(self.driver.path)
        if kind == "pitree_silent" and self.working:
            self._send({"working": True, "silent": record.get("seconds")})
        elif kind == "agent_settled" or (kind == "pitree_exit" and self.working):
            ending = ENDED if kind == "pitree_exit" else ABORTED if record.get("aborted") else DONE
            # No last progress: what was in flight is written by now (or lost with pi), and the end
            # told next takes the turn off the tabs. A progress of nothing sent first would be rendered
            # by every process's feed, as a turn waiting under pi's last line, just as that line's
            # batch goes to the tabs, and taken away again at once.
            self.working = False
            self._changed.set()  # the pacer, waiting for a change, sees the turn is over
            self._send({"working": False, "ending": ending})
        elif changed and self.working:
            self._changed.set()
            self._start_pacer()

    def resend(self) -> None:
        """What the turn shows so far, again: a feed that started mid-turn missed it."""
        if self.working:
            self._send({"working": True})
            if not self.stream.empty:
                self._post(self._progress())

    def _state(self, fields: dict[str, Any]) -> dict[str, Any]:
        return {"type": "pi.state", "turn": self.turn, "at": self.driver.turn_at, **fields}

    def _send(self, fields: dict[str, Any]) -> None:
        self._post(self._state(fields))

    def _progress(self) -> dict[str, Any]:
        stream, since = self.stream.snapshot(), self.since
        return {"type": "pi.progress", "turn": self.turn, "at": self.driver.turn_at, "stream": stream, "since": since}

    def _post(self, message: dict[str, Any]) -> None:
        self._outbox.put_nowait(message)
        if self._sender is None or self._sender.done():
            self._sender = asyncio.ensure_future(self._send_all())

    def _start_pacer(self) -> None:
        if self._pacer is None or self._pacer.done():
            self._pacer = asyncio.ensure_future(self._pace())

    async def _pace(self) -> None:
        """Progress at most every ``progress_interval`` while the turn's stream changes: a change that
        finds the pacer waiting goes at once (unless it leaves nothing in flight); those during its
        sleep, together when it wakes."""
        while self.working:
            await self._changed.wait()
            self._changed.clear()
            if self.stream.empty and await self._changes_within(progress_interval(0)):
                # Nothing in flight: a message that just ended is followed at once by the next one, a
                # tool's run or the turn's end. Told at once, it would be rendered by every feed as a
                # turn waiting under whatever line is last by then (the title given after the turn), and
                # taken away again; told only if it lasts, it shows pi waiting on its model. What came
                # meanwhile (the next message's first piece) goes at once instead.
                continue
            if not self.working:
                return
            self._post(self._progress())
            await asyncio.sleep(progress_interval(self.stream.size))

    async def _changes_within(self, seconds: float) -> bool:
        """Whether the stream changed (or the turn ended) within ``seconds``."""
        try:
            await asyncio.wait_for(self._changed.wait(), seconds)
        except TimeoutError:
            return False
        return True

    async def _send_all(self) -> None:
        layer = get_channel_layer()
        while not self._outbox.empty():
            message = self._outbox.get_nowait()
            if layer is None:
                continue
            try:
                await call(layer.group_send(self.group, message))
            except Exception:
                log.warning("pi (%s): could not tell the tabs %s", self.driver.name, message["type"], exc_info=True)


def _size(path: Path) -> int | None:
    try:
        return os.stat(path).st_size
    except OSError:
        return None
