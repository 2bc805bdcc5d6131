"""The session list's partials and their context, as one actor may see the list: the list page and
the sidebar render them (``views.pages``), and so does the list's push when the folder changes
(``live.listfeed``), so the page and its push share one context and one rendering."""

from __future__ import annotations

import hashlib
import itertools
import time
from typing import Any

from django.core.cache import caches
from django.core.paginator import Paginator
from django.http import HttpRequest
from django.template.loader import render_to_string

from ..access.grants import Access
from ..access.listing import visible_sessions
from ..services.lookup import catalog
from ..sessionfiles.catalog import Catalog, SessionInfo

LIST_PAGE_SIZE = 50
GROUPS_TEMPLATE = "sessions_app/partials/_session_groups.html"


def list_context(query: str, page_number: int | None, access: Access, *, from_start: bool = False) -> dict[str, Any]:
    """The listing's context, as ``access`` may see it: the page's, and the push's when the folder
    changes (live/listfeed.py). ``from_start``: the rows of every page up to ``page_number``, which
    stays the page whose next one the listing offers."""
    cat = catalog()
    infos = visible_sessions(access, cat.sessions())
    if query:
        needle = query.casefold()
        infos = [i for i in infos if needle in (i.name or "").casefold() or needle in i.first_message.casefold()]
    rows, generation = _list_rows(cat, infos, query)
    page = Paginator(rows, LIST_PAGE_SIZE).get_page(page_number)
    groups: dict[str, list[tuple[SessionInfo, int]]] = {}
    for cwd, item in rows[: page.end_index()] if from_start else page:
        groups.setdefault(cwd, []).append(item)
    problems = sorted(cat.problems.items()) if access.actor.sees_everything else []
    # What the listing partials show, as one key: the rows (their generation), the page, the search and
    # the reports; their ages are in minutes.
    shown = (generation, page.number, from_start, query, tuple((str(path), why) for path, why in problems))
    return {"groups": list(groups.items()), "page": page, "query": query, "problems": problems, "shown": shown}


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


# Recent lists' rows and their generation, by search, with the listing they came from (the catalog
# hands out the same SessionInfo objects while no file changed): nesting forks and grouping thousands
# of sessions cost more than the rest of the list page.
_rows: dict[str, tuple[list[SessionInfo], list[tuple[str, tuple[SessionInfo, int]]], int]] = {}
_generations = itertools.count(1)


def _list_rows(
    cat: Catalog, infos: list[SessionInfo], query: str
) -> tuple[list[tuple[str, tuple[SessionInfo, int]]], int]:
    """(workspace, (session, fork depth)) in display order: workspaces by name, forks under parents;
    and a number that changes whenever the rows do."""
    known, rows, generation = _rows.get(query, ([], [], 0))
    if infos and len(known) == len(infos) and all(a is b for a, b in zip(known, infos)):
        return rows, generation
    by_workspace: dict[str, list[tuple[SessionInfo, int]]] = {}
    for info, depth in cat.forest(infos):
        by_workspace.setdefault(info.cwd or "(no workspace)", []).append((info, depth))
    rows = [(cwd, item) for cwd, items in sorted(by_workspace.items()) for item in items]
    generation = next(_generations)
    while len(_rows) >= 16:
        _rows.pop(next(iter(_rows)), None)
    _rows[query] = (infos, rows, generation)
    return rows, generation
