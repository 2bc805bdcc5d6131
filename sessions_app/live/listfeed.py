"""The session list, live: new sessions, renames and activity show in open list tabs.

One ``ListFeed`` per process watches the sessions folder (``watch.watch_tree``) while list tabs are
open. Changes come in bursts (a reply is a few lines, pi writes tool results quickly), so the feed
waits ``SETTLE`` seconds after a wake-up before it looks, then renders the listing once per distinct
search, page and set of visible sessions among its tabs (``Actor.key``: every superuser sees the same)
— the same partial the page includes — and hands it to them. A listing is the whole state, not a patch:
a tab that reconnects just receives the current one. A tab that only wants to know *that* the folder
changed (the app shell's sidebar, which fetches its own list then) gets ``CHANGED``, and no listing is
rendered for it.
"""

from __future__ import annotations

import asyncio
import weakref
from pathlib import Path
from typing import NamedTuple, Protocol

from django.conf import settings

from ..access.grants import Access, Actor
from ..display.dates import reader_zone
from ..partials.listing import GROUPS_TEMPLATE, list_context, listing_digest, listing_html
from .watch import Watch, watch_tree

SETTLE = 0.3  # seconds: one look for a burst of changes
# What a tab that asked for no listing is told: the sidebar fetches its own list (``live/tabs.py`` says
# what the comment at the start of a message means).
CHANGED = "<!--pitree do=sidebar-->"


class Shown(NamedTuple):
    """What a list tab shows: its search, page and workspace (a folder's name, or empty for all), in the
    reader's time zone (as the browser names it: the list is grouped by the reader's days)."""

    query: str
    page: int
    workspace: str = ""
    zone: str = ""


class ListTab(Protocol):
    def deliver(self, item: str) -> None: ...


class ListFeed:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.tabs: dict[ListTab, tuple[Actor, Shown]] = {}  # tab -> who looks, and what at
        self.notified: set[ListTab] = set()  # tabs told only that something changed
        self._task: asyncio.Task[None] | None = None
        self._starting = asyncio.Lock()  # one watch made at a time: tabs joining at once share it

    async def join(
        self, tab: ListTab, actor: Actor, shown: Shown, *, send_now: bool, listed: str | None = None
    ) -> None:
        """Add a tab of ``actor`` showing the listing ``shown``, and send it the current listing: with
        ``send_now`` (a tab that reconnects may have missed changes), or when it differs from the one
        its page showed (``listed``, its digest: the folder changed before this feed watched it)."""
        self.tabs[tab] = (actor, shown)
        await self._watch()
        if send_now or listed is not None:
            html = await asyncio.to_thread(render_listing, actor, shown)
            if send_now or listing_digest(html) != listed:
                tab.deliver(_message(html))

    async def notify(self, tab: ListTab, *, send_now: bool) -> None:
        """Add a tab told ``CHANGED`` whenever the folder changed (at once too, with ``send_now``)."""
        self.notified.add(tab)
        await self._watch()
        if send_now:
            tab.deliver(CHANGED)

    async def _watch(self) -> None:
        """Follow the folder, unless this feed does already: the watch is made before the tab is sent
        what the folder holds, so no change falls between."""
        async with self._starting:
            if self._task is None:
                watch = await watch_tree(self.root)
                self._task = asyncio.get_running_loop().create_task(self._follow(watch), name="pitree-list")

    async def leave(self, tab: ListTab) -> None:
        self.tabs.pop(tab, None)
        self.notified.discard(tab)
        if not self.tabs and not self.notified and self._task is not None:
            _forget(self)
            task, self._task = self._task, None
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def _follow(self, watch: Watch) -> None:
        try:
            while True:
                await watch.wait()
                await asyncio.sleep(SETTLE)
                wanted = {(actor.key, shown): (actor, shown) for actor, shown in self.tabs.values()}
                listings = {
                    key: _message(await asyncio.to_thread(render_listing, *asked)) for key, asked in wanted.items()
                }
                for tab, (actor, shown) in list(self.tabs.items()):
                    listing = listings.get((actor.key, shown))
                    if listing is not None:
                        tab.deliver(listing)
                for tab in list(self.notified):
                    tab.deliver(CHANGED)
        finally:
            watch.close()


def render_listing(actor: Actor, shown: Shown) -> str:
    """The listing partial ``shown``, as the page renders it for ``actor`` (whose access is read afresh:
    a share made or revoked since shows)."""
    access = Access(actor, settings.PITREE_SESSIONS_DIR)
    context = list_context(
        shown.query, shown.page, access, workspace=shown.workspace, zone=reader_zone(shown.zone or None)
    )
    return listing_html(GROUPS_TEMPLATE, context)


def _message(html: str) -> str:
    """A listing as pushed: swapped whole into the list, whose sidebar fetches its own list too."""
    return CHANGED + '<div id="session-groups" hx-swap-oob="innerHTML">' + html + "</div>"


_feeds: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[Path, ListFeed]] = weakref.WeakKeyDictionary()


def list_feed() -> ListFeed:
    """This process's feed of the configured sessions folder."""
    root = Path(settings.PITREE_SESSIONS_DIR).absolute()
    feeds = _feeds.setdefault(asyncio.get_running_loop(), {})
    feed = feeds.get(root)
    if feed is None:
        feed = feeds[root] = ListFeed(root)
    return feed


def _forget(feed: ListFeed) -> None:
    feeds = _feeds.get(asyncio.get_running_loop(), {})
    if feeds.get(feed.root) is feed:
        del feeds[feed.root]
