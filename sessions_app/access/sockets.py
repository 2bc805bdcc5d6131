"""A session's websocket under a grant (``Guard``): it closes when the share that opened it is revoked,
deleted or expires, and a tab that sees part of a session receives only that part.

A feed renders what the file gained once for every tab of the process (``live/feed.py``). A tab of a
scoped grant takes only the batch's byte range from it and renders that range again from its own view
(``SessionView``), so entries, "‹ 2/3 ›" counts, labels and the header it receives are those of its
view, exactly as its page would render them; a snapshot's tab receives nothing at all (a snapshot does
not change). Replies being written reach it only when they answer an entry it sees.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
from collections.abc import Callable
from typing import Any

import orjson
from channels.layers import get_channel_layer
from django.conf import settings
from django.utils import timezone

from ..live import fragments
from ..live.fragments import Batch
from .grants import Access, Actor
from .scoped import SessionView
from .shares import CLOSED, share_group
from .web import links_of, open_for

GONE = 4404  # what a socket of a session it may not see is closed with (htmx does not retry it)


def actor_for_socket(scope: dict[str, Any]) -> Actor:
    """The socket's user (its session cookie) and the share links its browser opened."""
    user = scope.get("user")
    return Actor(user if user is not None and user.is_authenticated else None, links_of(scope.get("session")))


def open_for_socket(scope: dict[str, Any], session_id: str) -> SessionView:
    """The session as the socket's user and share links may see it; Http404 otherwise."""
    return open_for(Access(actor_for_socket(scope), settings.PITREE_SESSIONS_DIR), session_id)


class Guard:
    """What a socket of ``view`` may receive, and when it must close (``end(code)``)."""

    def __init__(self, view: SessionView, end: Callable[[int], None]) -> None:
        self.view = view
        self.end = end
        self._tasks: list[asyncio.Task[None]] = []
        self._timer: asyncio.TimerHandle | None = None

    @property
    def follows(self) -> bool:
        """Whether the tab is pushed what the file gains (not for a snapshot)."""
        scope = self.view.grant.scope
        return scope is None or not scope.snapshot

    async def start(self) -> None:
        grant = self.view.grant
        loop = asyncio.get_running_loop()
        if grant.expires_at is not None:
            delay = max(0.0, (grant.expires_at - timezone.now()).total_seconds())
            self._timer = loop.call_later(delay, self.end, GONE)
        layer = get_channel_layer()
        if grant.share_id is not None and layer is not None:
            channel = await layer.new_channel()  # the default prefix, as every channel of a process (live/layer.py)
            await layer.group_add(share_group(grant.share_id), channel)
            self._tasks.append(loop.create_task(self._watch(layer, channel, grant.share_id)))

    async def _watch(self, layer: Any, channel: str, share_id: int) -> None:
        try:
            while True:
                event = await layer.receive(channel)
                if event.get("type") == CLOSED:
                    self.end(GONE)
                    return
        finally:
            with contextlib.suppress(Exception):
                await asyncio.shield(layer.group_discard(share_group(share_id), channel))

    async def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def batch(self, batch: Batch, sent: int) -> Batch | None:
        """``batch`` (already cut to what the tab lacks, after ``sent`` bytes) as this tab may see it;
        None when it holds nothing the tab may see (not even that something was written)."""
        if self.view.grant.whole or batch.resync:
            return batch
        return await asyncio.to_thread(self._render, batch, sent)

    def _render(self, batch: Batch, sent: int) -> Batch | None:
        view = self.view
        view.refresh()
        index = view.index
        first = bisect.bisect_left(index.offsets, max(sent, batch.start), 0, len(index))
        rows = [row for row in range(first, len(index)) if index.offsets[row] < batch.end]
        return fragments.render_batch(view, rows, batch.start, batch.end, batch.epoch) if rows else None

    async def passes(self, message: str) -> bool:
        """Whether a reply piece may reach the tab: it answers an entry the view holds."""
        if self.view.grant.whole or not message.startswith('{"t":"reply"'):
            return True
        parent = orjson.loads(message).get("parent")
        if not isinstance(parent, str):
            return False
        if self.view.index.row(parent) is None:
            await asyncio.to_thread(self.view.refresh)
        return self.view.index.row(parent) is not None
