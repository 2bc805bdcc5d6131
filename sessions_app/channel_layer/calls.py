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

Every wait here is bounded, so a Redis that stops answering costs the live view, never a reply being
stored or a server that has to stop.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")

TIMEOUT = 1.0  # seconds a caller waits for one channel-layer call (a few milliseconds when Redis is well)
CLOSE_WAIT = 0.5  # seconds ``Inbox.close`` waits for its reader to end
RETRY_PAUSE = 1.0  # seconds an inbox waits before reading again after the layer failed
CLOSE = "pitree.inbox.close"  # the message type that ends an inbox's reader
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
        raise TimeoutError(f"the channel layer did not answer within {timeout} s")
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

    async def open(self) -> str:
        """Make the channel (default prefix: see above), start reading it, then join the groups (so
        nothing sent to them after ``open`` returns is missed); returns the channel's name. Raises
        when the layer does not answer; ``close`` then undoes what was done."""
        self.channel = await call(self.layer.new_channel())
        loop = asyncio.get_running_loop()
        self._reader = loop.create_task(self._read(), name=self.name)
        if self.groups:
            await self._join()
            self._renewal = loop.create_task(self._renew(), name=f"{self.name} renewal")
        return self.channel

    async def _join(self) -> None:
        await call(asyncio.gather(*(self.layer.group_add(group, self.channel) for group in self.groups)))

    async def _renew(self) -> None:
        while True:
            await asyncio.sleep(GROUP_RENEWAL)
            try:
                await self._join()
            except Exception:
                log.warning("%s: could not join its groups again", self.name, exc_info=True)

    async def _read(self) -> None:
        while True:
            try:
                message = await self.layer.receive(self.channel)
            except Exception:
                log.warning(
                    "%s: the channel layer failed; reading again in %s s", self.name, RETRY_PAUSE, exc_info=True
                )
                await asyncio.sleep(RETRY_PAUSE)
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
                log.warning("%s: could not leave its groups", self.name, exc_info=True)
        try:
            await call(self.layer.send(self.channel, {"type": CLOSE}))
        except Exception:
            log.warning("%s: could not tell its reader to end", self.name, exc_info=True)
        done, _ = await asyncio.wait({reader}, timeout=CLOSE_WAIT)
        if not done:
            log.warning("%s: its reader did not end within %s s; left to end by itself", self.name, CLOSE_WAIT)
            _calls.add(reader)
            reader.add_done_callback(_finished)
