"""Websockets under a grant: a session's socket (``Guard``) and the session list's (``ListGuard``) ask
the permission function again whenever their grant may have changed (``access/changes.py``: a share
saved or deleted, team membership, a workspace's owner, the user, signing out) and when it expires.
They hear of a change through the channel layer, or, for one made in another process, from the
grants' generation, read for all of the process's sockets before each pushed batch (``generation_now``,
in the thread that reads the batch) and every ``RECHECK`` seconds. A socket whose grant is gone closes
with 4404; one whose grant changed otherwise (narrowed to a branch, say) closes with 1012, which the
browser answers by connecting again, under the grant as it is now, from the cursor it reached. While
the question is asked again nothing is sent.

A feed renders what the file gained once for every tab of the process (``feed.py``). A tab of a
scoped grant takes only the batch's byte range from it and renders that range again from its own view
(``SessionView``, once for every tab of that view), so entries, "‹ 2/3 ›" counts, labels and the header
it receives are those of its view, exactly as its page would render them; a snapshot's tab receives
nothing at all (a snapshot does not change). A reply being written reaches a tab only where it stands,
an entry its view holds. Every tab's entries offer only the tools its reader may use, as its page does.
"""

from __future__ import annotations

import asyncio
import bisect
import logging
import weakref
from collections.abc import Callable
from importlib import import_module
from types import SimpleNamespace
from typing import Any

from channels.layers import get_channel_layer
from django.conf import settings
from django.contrib.auth import get_user
from django.http import Http404
from django.utils import timezone

from ..access import changes
from ..access.changes import CHANGED, browser_group, folder_group, share_group, user_group
from ..access.grants import Access, Actor, Grant, folder_of
from ..access.scoped import SessionView, tools_of
from ..access.web import has_working_link, links_of, open_for
from ..channel_layer.calls import Inbox
from ..sessionfiles.errors import SessionError
from ..sessionfiles.index import SessionIndex
from . import fragments
from .fragments import Batch, Shown

log = logging.getLogger(__name__)

GONE = 4404  # what a socket of a session it may not see is closed with (htmx does not retry it)
AGAIN = 1012  # "service restart": htmx connects again, and the new socket has the grant as it is now
RECHECK = 2.0  # seconds between two reads of the grants' generation while a process has sockets open


def actor_for_socket(scope: dict[str, Any]) -> Actor:
    """The socket's user (its session cookie) and the share links its browser opened, as they were
    when it connected."""
    user = scope.get("user")
    return Actor(user if user is not None and user.is_authenticated else None, links_of(scope.get("session")))


def current_actor(scope: dict[str, Any]) -> Actor:
    """The socket's user and links as its browser's Django session holds them now (read again: the
    user may have signed out, been deactivated or changed their password since it connected)."""
    key = getattr(scope.get("session"), "session_key", None)
    if key is None:
        return Actor()
    stored = import_module(settings.SESSION_ENGINE).SessionStore(key)
    user = get_user(SimpleNamespace(session=stored))  # type: ignore[arg-type]
    return Actor(user if user.is_authenticated else None, links_of(stored))


def open_for_socket(scope: dict[str, Any], session_id: str) -> tuple[SessionView, int]:
    """The session as the socket's user and share links may see it (Http404 otherwise), and the grants'
    generation read before it: a change that moves it later is one the grant may not have seen."""
    generation = changes.generation()
    return open_for(Access(actor_for_socket(scope), settings.PITREE_SESSIONS_DIR), session_id), generation


def actor_for_list(scope: dict[str, Any]) -> tuple[Actor, int]:
    """``actor_for_socket`` for the session list's socket, and the grants' generation read before it."""
    generation = changes.generation()
    return actor_for_socket(scope), generation


class _Revocable:
    """A socket that asks again what it may receive when told its grant may have changed, and closes
    (``end(code)``) when the answer says so. Subclasses say how to ask (``_ask``)."""

    def __init__(self, scope: dict[str, Any], end: Callable[[int], None], generation: int) -> None:
        self.scope = scope
        self._end = end
        self.generation = generation  # the grants' generation its grant is known to be as of
        self.ended = False
        self._inbox: Inbox | None = None  # where "a grant may have changed" arrives, from any process
        self._asking: asyncio.Task[None] | None = None

    def groups(self) -> list[str]:
        """The channel-layer groups whose changes may concern this socket."""
        actor = actor_for_socket(self.scope)
        key = getattr(self.scope.get("session"), "session_key", None)
        return [*([user_group(actor.user.pk)] if actor.signed_in else []), *([browser_group(key)] if key else [])]

    async def listen(self) -> None:
        """Follow the grants' generation with the process's other sockets (``recheck``), and join the
        groups on a channel read until ``stop`` tells it to end: never cancelled inside a channel-layer
        call, and with the layer's default prefix (``channel_layer/calls.py`` says why)."""
        _Rechecks.current().add(self)
        layer = get_channel_layer()
        groups = self.groups()
        if layer is None or not groups:
            return
        self._inbox = Inbox(layer, self._on_event, "pitree-grant", groups)
        await self._inbox.open()
        # A change told through the layer before the groups were joined reached nobody here, yet counts
        # as told (``told_here``): one made since the grant was read is asked about now, whoever told it.
        joined = await asyncio.to_thread(changes.generation)
        if joined != self.generation:
            self.generation = joined
            self.ask_again()

    async def _on_event(self, event: dict[str, Any]) -> None:
        if self.ended or event.get("type") != CHANGED:
            return
        if event.get("ended"):
            self.end(GONE)
        else:
            self.ask_again()

    def catch_up(self, generation: int) -> None:
        """The grants' generation is ``generation`` now: ask again unless every change since the one
        the socket knows of was told to this process's sockets through the channel layer."""
        seen, self.generation = self.generation, generation
        if seen != generation and not changes.told_here(seen, generation):
            self.ask_again()

    def ask_again(self) -> None:
        """Ask the permission function again (what is sent meanwhile waits for the answer)."""
        if self._asking is None or self._asking.done():
            self._asking = asyncio.get_running_loop().create_task(self._asked())

    async def _asked(self) -> None:
        try:
            await self._ask()
        except Exception:  # no answer (the database is away, say): connect again, which asks afresh
            log.exception("could not ask again what a socket may receive")
            self.end(AGAIN)

    async def _ask(self) -> None:
        raise NotImplementedError

    async def settled(self) -> bool:
        """Whether the socket may still be sent something (once any question in progress is answered)."""
        if self._asking is not None:
            await asyncio.shield(self._asking)
        return not self.ended

    def end(self, code: int) -> None:
        if not self.ended:
            self.ended = True
            self._end(code)

    async def stop(self) -> None:
        await _Rechecks.current().discard(self)
        asking, self._asking = self._asking, None
        if asking is not None:
            asking.cancel()  # a question to the database in a thread, never a channel-layer call
            await asyncio.gather(asking, return_exceptions=True)
        inbox, self._inbox = self._inbox, None
        if inbox is not None:
            await inbox.close()


class Guard(_Revocable):
    """What a socket of ``view`` may receive, and when it must close."""

    def __init__(self, view: SessionView, scope: dict[str, Any], end: Callable[[int], None], generation: int) -> None:
        super().__init__(scope, end, generation)
        self.view = view
        self.tools = tools_of(view)  # the entry tools its pushes offer, as its page does
        self._timer: asyncio.TimerHandle | None = None

    @property
    def follows(self) -> bool:
        """Whether the tab is pushed what the file gains (not for a snapshot)."""
        scope = self.view.grant.scope
        return scope is None or not scope.snapshot

    def groups(self) -> list[str]:
        grant, folder = self.view.grant, folder_of(self.view.path, settings.PITREE_SESSIONS_DIR)
        return [
            *super().groups(),
            *([share_group(grant.share_id)] if grant.share_id is not None else []),
            *([folder_group(folder)] if folder is not None else []),
        ]

    async def start(self) -> None:
        self._arm(self.view.grant)
        await self.listen()

    def _arm(self, grant: Grant) -> None:
        """Ask again when the grant expires (a timer that fires early finds it unchanged and is set again)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if grant.expires_at is not None:
            delay = max(0.0, (grant.expires_at - timezone.now()).total_seconds())
            self._timer = asyncio.get_running_loop().call_later(delay, self.ask_again)

    async def _ask(self) -> None:
        now = await asyncio.to_thread(self._grant_now)
        held = self.view.grant
        if now is None:
            self.end(GONE)
        elif now == held:
            self._arm(held)
        elif (now.role, now.scope, now.share_id) == (held.role, held.scope, held.share_id):
            self.view.grant = now  # only its expiry moved
            self._arm(now)
        else:
            self.end(AGAIN)

    def _grant_now(self) -> Grant | None:
        access = Access(current_actor(self.scope), settings.PITREE_SESSIONS_DIR)
        try:
            return open_for(access, self.view.session_id).grant
        except (Http404, SessionError, OSError):
            return None

    async def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        await super().stop()

    async def shown(self, batch: Batch) -> Shown | None:
        """``batch`` as this socket's view of the file shows it (None: it holds nothing the socket may
        see, not even that something was written), once any question about its grant is answered. A
        share's view renders the batch's range again, once for every socket with the same view."""
        if self.view.grant.whole:
            return batch.whole
        key = self.view.view_key
        rendering = batch.views.get(key)
        if rendering is None:
            rendering = batch.views[key] = asyncio.ensure_future(asyncio.to_thread(self._render, batch))
        found: Shown | None = await asyncio.shield(rendering)
        return found

    def _render(self, batch: Batch) -> Shown | None:
        view = self.view
        view.refresh()
        index = view.index
        first = bisect.bisect_left(index.offsets, batch.start, 0, len(index))
        rows = [row for row in range(first, len(index)) if index.offsets[row] < batch.end]
        return fragments.render_shown(view, rows) if rows else None

    async def sees(self, entry_id: str | None) -> bool:
        """Whether the socket's view holds ``entry_id`` (what a reply being written answers): a reply
        elsewhere than its view does not exist for it, not even as a notice that one started."""
        if self.view.grant.whole:
            return True
        if entry_id is None:
            return False
        if self.view.index.row(entry_id) is None:
            await asyncio.to_thread(self.view.refresh)
        return self.view.index.row(entry_id) is not None

    async def view_index(self) -> SessionIndex:
        """The socket's view of the file, read up to date."""
        await asyncio.to_thread(self.view.refresh)
        return self.view.index


class ListGuard(_Revocable):
    """The session list's socket: open while its browser has a user or a link that works; connected
    again when who it is changed (another user, other links), so the listing follows."""

    def __init__(self, actor: Actor, scope: dict[str, Any], end: Callable[[int], None], generation: int) -> None:
        super().__init__(scope, end, generation)
        self.actor = actor

    def groups(self) -> list[str]:
        return [*super().groups(), *(share_group(link) for link in sorted(self.actor.links))]

    async def _ask(self) -> None:
        now = await asyncio.to_thread(current_actor, self.scope)
        if not now.signed_in and not await asyncio.to_thread(has_working_link, now.links):
            self.end(GONE)
        elif now.key != self.actor.key:
            self.end(AGAIN)

    async def passes(self) -> bool:
        return await self.settled()


# ------------------------------------------------------------------- changes made in other processes


async def recheck() -> None:
    """Read the grants' generation once for every socket of this process: each socket whose grant may
    have changed since asks again, and what it is sent waits for the answer."""
    if watched():
        caught_up(await asyncio.to_thread(generation_now))


def watched() -> bool:
    """Whether this process has sockets that follow the grants' generation."""
    return bool(_Rechecks.current().guards)


def generation_now() -> int | None:
    """The grants' generation, read in a thread of the caller's (a feed reads it in the thread that reads
    its file, before it pushes a batch: one hop to a thread fewer on the push path). None: the database
    did not answer, which leaves the sockets as they are (the next read tries again; the channel
    layer's notices still come)."""
    try:
        return changes.generation()
    except Exception:
        log.warning("could not read the grants' generation", exc_info=True)
        return None


def caught_up(generation: int | None) -> None:
    """The process's sockets follow ``generation`` (read by ``generation_now``)."""
    if generation is not None:
        for guard in list(_Rechecks.current().guards):
            guard.catch_up(generation)


class _Rechecks:
    """The open sockets of one event loop, and the timer that has them ``recheck`` every ``RECHECK``
    seconds while there are any (for sockets that are sent no batch: replies being written, the list)."""

    @classmethod
    def current(cls) -> _Rechecks:
        loop = asyncio.get_running_loop()
        found = _rechecks.get(loop)
        if found is None:
            found = _rechecks[loop] = cls()
        return found

    def __init__(self) -> None:
        self.guards: dict[_Revocable, None] = {}
        self._timer: asyncio.Task[None] | None = None

    def add(self, guard: _Revocable) -> None:
        self.guards[guard] = None
        if self._timer is None:
            self._timer = asyncio.get_running_loop().create_task(self._every(), name="pitree-recheck")

    async def discard(self, guard: _Revocable) -> None:
        """Forget ``guard``; the last one stops the timer, and waits for it (a task left pending at
        exit crashed CPython: ``consumers`` says more)."""
        self.guards.pop(guard, None)
        if not self.guards and self._timer is not None:
            timer, self._timer = self._timer, None
            timer.cancel()  # asleep, or waiting for a database read in a thread
            await asyncio.gather(timer, return_exceptions=True)

    async def _every(self) -> None:
        while True:
            await asyncio.sleep(RECHECK)
            await recheck()


_rechecks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Rechecks] = weakref.WeakKeyDictionary()
