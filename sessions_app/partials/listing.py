"""The session list's partials and their context, as one actor may see the list: the list page and
the sidebar render them (``views.pages``), and so does the list's push when the folder changes
(``live.listfeed``), so the page and its push share one context and one rendering."""

from __future__ import annotations

import hashlib
import itertools
import time
from datetime import UTC, datetime, tzinfo
from typing import Any

from django.core.cache import caches
from django.core.paginator import Paginator
from django.http import HttpRequest
from django.template.loader import render_to_string

from ..access.grants import Access
from ..access.listing import visible_sessions
from ..access.workspaces import workspace_cwds
from ..display.dates import when_group, zone_name
from ..services.lookup import catalog
from ..sessionfiles.catalog import Catalog, SessionInfo
from ..sessionfiles.fork import encode_cwd

LIST_PAGE_SIZE = 50
GROUPS_TEMPLATE = "sessions_app/partials/_session_groups.html"

Row = tuple[SessionInfo, int]  # a session and how deep it is nested under the one it was forked from


def list_context(
    query: str,
    page_number: int | None,
    access: Access,
    *,
    from_start: bool = False,
    workspace: str = "",
    zone: tzinfo = UTC,
) -> dict[str, Any]:
    """The listing's context, as ``access`` may see it: the page's, and the push's when the folder
    changes (live/listfeed.py). Newest first, in groups by last activity as read in ``zone`` (Today,
    Yesterday, …); ``workspace`` (a folder's name) keeps that workspace's sessions only. ``from_start``:
    the rows of every page up to ``page_number``, which stays the page whose next one the listing
    offers."""
    cat = catalog()
    infos = visible_sessions(access, cat.sessions())
    workspaces = _workspaces(infos)
    if workspace:
        infos = [i for i in infos if i.path.parent.name == workspace]
    if query:
        needle = query.casefold()
        infos = [i for i in infos if needle in (i.name or "").casefold() or needle in i.first_message.casefold()]
    rows, newest, generation = _list_rows(cat, infos, (query, workspace))
    page = Paginator(rows, LIST_PAGE_SIZE).get_page(page_number)
    first = 0 if from_start or not rows else page.start_index() - 1
    today = datetime.now(zone).date()
    groups: dict[str, list[Row]] = {}
    for number in range(first, page.end_index()):
        groups.setdefault(when_group(newest[number], today, zone), []).append(rows[number])
    # A page that goes on with the previous page's group does not name it again (the sidebar shows pages
    # one under the other).
    continued = 0 < first < len(rows) and when_group(newest[first - 1], today, zone) == next(iter(groups), None)
    problems = sorted(cat.problems.items()) if access.actor.sees_everything else []
    # What the listing partials show, as one key: the rows (their generation), the page, the search, the
    # reports, and the reader's day and zone; their ages are in minutes.
    shown = (
        generation,
        page.number,
        from_start,
        query,
        workspace,
        tuple(workspaces),
        zone_name(zone),
        today,
        tuple((str(path), why) for path, why in problems),
    )
    return {
        "groups": list(groups.items()),
        "continued": continued,
        "page": page,
        "query": query,
        "workspace": workspace,
        "workspaces": workspaces,
        "where": dict(workspaces),
        "problems": problems,
        "shown": shown,
    }


def _workspaces(infos: list[SessionInfo]) -> list[tuple[str, str]]:
    """The workspaces ``infos`` are in, as (folder name, working directory), by working directory. A
    session's workspace is its folder, as in pi's layout (an upload keeps the ``cwd`` its header
    names, wherever it was put); a folder is named by the working directory its owner's workspace
    records, else by the newest header naming a directory of that folder (pi's folder names are
    lossy), else by its newest session's."""
    newest: dict[str, tuple[int, str]] = {}
    agreeing: dict[str, tuple[int, str]] = {}
    for info in infos:
        folder = info.path.parent.name
        for found in (newest, agreeing) if encode_cwd(info.cwd) == folder else (newest,):
            known = found.get(folder)
            if known is None or info.modified_ms > known[0]:
                found[folder] = (info.modified_ms, info.cwd or folder)
    named = {folder: agreeing.get(folder, known)[1] for folder, known in newest.items()}
    named.update(workspace_cwds(named))
    return sorted(named.items(), key=lambda item: (item[1], item[0]))


def listing_html(template: str, context: dict[str, Any], request: HttpRequest | None = None) -> str:
    """A listing partial (``list_context``'s; a partial building links from the request's query string
    is given the ``request``), rendered once per listing state and minute and kept in the
    ``fragments`` cache: the list page, the sidebar and the list's push show the same rows again and
    again while the folder does not change."""
    asked = request.GET.urlencode() if request is not None else None
    key = repr((template, context["shown"], int(time.time() // 60), asked))
    key = "listing:" + hashlib.blake2b(key.encode()).hexdigest()
    cache = caches["fragments"]
    html = cache.get(key)
    if html is None:
        html = render_to_string(template, context, request=request)
        cache.set(key, html)
    return html


def listing_digest(html: str) -> str:
    """A short name for a listing as rendered: the list page names the one it shows, so that its socket
    is sent the listing when the folder changed between the page and the socket's first look."""
    return hashlib.blake2b(html.encode(), digest_size=8).hexdigest()


# Recent lists' rows, the newest activity of the tree each row is nested in, and their generation, by
# search, with the listing they came from (the catalog hands out the same SessionInfo objects while no
# file changed): nesting forks and sorting thousands of sessions cost more than the rest of the list page.
_rows: dict[tuple[str, str], tuple[list[SessionInfo], list[Row], list[int], int]] = {}
_generations = itertools.count(1)


def _list_rows(cat: Catalog, infos: list[SessionInfo], asked: tuple[str, str]) -> tuple[list[Row], list[int], int]:
    """(session, fork depth) in display order, newest first (forks under the session they came from:
    a tree is as new as its newest session, as in pi's picker); the newest activity of each row's tree;
    and a number that changes whenever the rows do."""
    known, rows, newest, generation = _rows.get(asked, ([], [], [], 0))
    if infos and len(known) == len(infos) and all(a is b for a, b in zip(known, infos)):
        return rows, newest, generation
    rows = cat.forest(infos)
    newest = [info.modified_ms for info, _ in rows]
    start = 0  # the first row of the tree being measured: a row of depth 0 starts the next one
    for number in range(1, len(rows) + 1):
        if number == len(rows) or rows[number][1] == 0:
            newest[start:number] = [max(newest[start:number])] * (number - start)
            start = number
    generation = next(_generations)
    while len(_rows) >= 16:
        _rows.pop(next(iter(_rows)), None)
    _rows[asked] = (infos, rows, newest, generation)
    return rows, newest, generation
