"""Channel-layer calls that no cancellation ever interrupts, and channels read until told to stop.

Why: channels_redis (on redis-py) sometimes swallows a cancellation that arrives in the middle of a
call. ``group_send`` then returns as if nothing had happened and the cancelled task carries on, so a
task waiting for it to end can wait forever (a reply was never stored that way); a cancelled
``receive`` did not always end either. So pitree never cancels a task that may be inside a
channel-layer call:

- sends and group changes go through ``call``: the call runs as a task of its own, and the caller
  waits for it at most ``TIMEOUT`` seconds; the caller may be cancelled meanwhile, the call is not;
- a channel that a task reads in a loop is an ``Inbox``, which ends when it reads the message that
  ``close`` sends to it, never by being cancelled; it joins its groups, joins them again every
  ``GROUP_RENEWAL`` seconds (channel layers forget a group's members after a day, so a tab open
  longer would stop hearing of them) and leaves them when closed;
- every channel of a process has the layer's default name prefix: channels_redis reads all of a
  process's channels under one lock, but each prefix from its own Redis key, so a reader of a channel
  with another prefix holds the lock, waiting on a key nothing arrives at, while messages for the
  others wait (the replies' progress reached no tab of their own process until the reply ended).

Every wait here is bounded, so a Redis that stops answering costs the live view across processes,
never a reply being stored, a tab's own process's pushes, or a server that has to stop: a channel
whose groups could not be joined joins them when the layer answers again, and ``health`` says, once,
that the layer is down, and when it is back.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, TypeVar

from .health import health

log = logging.getLogger(__name__)

T = TypeVar("T")

TIMEOUT = 1.0  # seconds a caller waits for one channel-layer call (a few milliseconds when Redis is well)
CLOSE_WAIT = 0.5  # seconds ``Inbox.close`` waits for its reader to end
RETRY_PAUSE = 1.0  # seconds an inbox waits before reading again after the layer failed
REJOIN_PAUSE = 5.0  # seconds an inbox waits before joining its groups again, when the layer failed
CLOSE = "pitree.inbox.close"  # the message type that ends an inbox's reader
PING = "pitree.inbox.ping"  # what a reader sends itself after the layer failed, to know it answers again
GROUP_RENEWAL = 3600.0  # seconds between an inbox's joins to its groups (members are forgotten after a day)

_calls: set[asyncio.Future[Any]] = set()  # calls still running, kept from the garbage collector


async def call(awaitable: Awaitable[T], timeout: float = TIMEOUT) -> T:
    """The result of a channel-layer call, run as a task of its own that is never cancelled.

    Raises ``TimeoutError`` after ``timeout`` seconds; the call then goes on by itself."""
    task = asyncio.ensure_future(awaitable)
    _calls.add(task)
    task.add_done_callback(_finished)
    done, _ = await asyncio.wait({task}, timeout=timeout)
    if not done:
        error = TimeoutError(f"the channel layer did not answer within {timeout} s")
        health.failed(error)
        raise error
    failure = task.exception()
    if failure is not None:
        health.failed(failure)
        raise failure
    health.answered()
    return task.result()


def _finished(task: asyncio.Future[Any]) -> None:
    _calls.discard(task)
    if not task.cancelled():
        task.exception()  # retrieved: the caller logs it, or gave up waiting and logged that


class Inbox:
    """A channel of its own, member of ``groups``, that one task reads, handing each message to
    ``handle`` in order.

    ``close`` leaves the groups and sends the channel a last message, which ends the reader once it has
    handled what came before: the reader is never cancelled in the middle of a ``receive``."""

    def __init__(
        self, layer: Any, handle: Callable[[dict[str, Any]], Awaitable[None]], name: str, groups: Iterable[str] = ()
    ) -> None:
        self.layer, self.handle, self.name = layer, handle, name
        self.groups = sorted(set(groups))
        self.channel = ""
        self._reader: asyncio.Task[None] | None = None
        self._renewal: asyncio.Task[None] | None = None
        self._closed = False

    async def open(self) -> str:
        """Make the channel (default prefix: see above), start reading it, then join the groups (so
        nothing sent to them after ``open`` returns is missed); returns the channel's name. Raises
        when the layer cannot even make a channel; ``close`` then undoes what was done. Groups it could
        not join (a layer that does not answer) are joined again every ``REJOIN_PAUSE`` seconds until
        it does: what is sent to them meanwhile is missed, and ``health`` says so."""
        self.channel = await call(self.layer.new_channel())
        loop = asyncio.get_running_loop()
        self._reader = loop.create_task(self._read(), name=self.name)
        if self.groups:
            joined = await self._joined()
            self._renewal = loop.create_task(self._renew(joined), name=f"{self.name} renewal")
        return self.channel

    async def _joined(self) -> bool:
        try:
            await call(asyncio.gather(*(self.layer.group_add(group, self.channel) for group in self.groups)))
        except Exception:
            return False  # said once, by ``health``
        return True

    async def _renew(self, joined: bool) -> None:
        while True:
            await asyncio.sleep(GROUP_RENEWAL if joined else REJOIN_PAUSE)
            joined = await self._joined()

    async def _read(self) -> None:
        failed = False
        while True:
            try:
                if failed:  # the layer failed: a message to itself first, which says when it answers again
                    await call(self.layer.send(self.channel, {"type": PING}))
                message = await self.layer.receive(self.channel)
            except Exception as error:
                health.failed(error)  # said once, whatever number of readers meet it
                if self._closed:
                    return  # told to end while the layer did not answer: nothing more will come
                failed = True
                await asyncio.sleep(RETRY_PAUSE)
                continue
            failed = False
            if message.get("type") == PING:
                continue
            if message.get("type") == CLOSE:
                return
            try:
                await self.handle(message)
            except Exception:
                log.exception("%s: a message could not be handled", self.name)

    async def close(self) -> None:
        """Leave the groups and end the reader (bounded: a reader that does not end in time is left to
        end by itself)."""
        self._closed = True
        renewal, self._renewal = self._renewal, None
        if renewal is not None:
            renewal.cancel()  # asleep, or waiting for a ``call``, which goes on by itself
            await asyncio.gather(renewal, return_exceptions=True)
        reader, self._reader = self._reader, None
        if reader is None:
            return
        if self.groups:
            leaving = asyncio.gather(*(self.layer.group_discard(group, self.channel) for group in self.groups))
            try:
                await call(leaving)
            except Exception:
                log.debug("%s: could not leave its groups", self.name, exc_info=True)  # ``health`` said why
        try:
            await call(self.layer.send(self.channel, {"type": CLOSE}))
        except Exception:
            log.debug("%s: could not tell its reader to end", self.name, exc_info=True)
        done, _ = await asyncio.wait({reader}, timeout=CLOSE_WAIT)
        if not done:
            log.warning("%s: its reader did not end within %s s; left to end by itself", self.name, CLOSE_WAIT)
            _calls.add(reader)
            reader.add_done_callback(_finished)
