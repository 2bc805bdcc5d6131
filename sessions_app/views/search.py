"""``/search/?q=…[&session=…][&page=…]``: the entries of every session (every branch) matching a query,
best first, 20 a page, each leading to its entry's permalink. htmx asks for the results alone as the
user types, with the words saying what was found for the live region above them (``oob``: it stays in
the page, so a screen reader reads its new text); without JavaScript the form loads the whole page."""

from __future__ import annotations

import asyncio
import os
from functools import lru_cache
from pathlib import Path
from typing import cast

from django import forms
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET
from django.views.decorators.vary import vary_on_headers

from ..access.listing import search_scope
from ..access.web import access_of
from ..converters import SessionIdConverter
from ..search.index import SearchIndex, SearchUnavailable
from ..search.results import search
from ..services.lookup import catalog
from .busy import few_at_once
from .responses import HtmxHttpRequest

MAX_QUERY_CHARS = 500
MAX_PAGE = 500  # 10,000 results: far enough for anyone paging by hand, and OFFSET stays cheap


class SearchForm(forms.Form):
    q = forms.CharField(max_length=MAX_QUERY_CHARS, required=False)
    session = forms.RegexField(
        rf"^{SessionIdConverter.regex}$", required=False, error_messages={"invalid": "Not a session id."}
    )
    page = forms.IntegerField(min_value=1, max_value=MAX_PAGE, required=False)


@lru_cache(maxsize=4)
def _index_at(path: Path) -> SearchIndex:
    return SearchIndex(path)


def search_index() -> SearchIndex:
    """The index at ``PITREE_SEARCH_DB`` (one object per file: it keeps a connection per thread)."""
    return _index_at(Path(settings.PITREE_SEARCH_DB))


def _name(path: str) -> str:
    """A file's name as a page can show it (a name that is not UTF-8 gets U+FFFD)."""
    return os.fsencode(os.path.basename(path)).decode("utf-8", "replace")


@require_GET
@vary_on_headers("HX-Request")  # the same URL answers htmx with the results alone
@few_at_once
async def search_page(request: HttpRequest) -> HttpResponse:
    """Async, its work in a thread of its own: a search over a large folder takes a while, and every
    sync view shares one thread, which it would hold meanwhile."""
    return await asyncio.to_thread(_search_page, request)


def _search_page(request: HttpRequest) -> HttpResponse:
    form = SearchForm(request.GET)
    context: dict[str, object] = {"form": form, "query": request.GET.get("q", "")[:MAX_QUERY_CHARS]}
    status = 200
    if not form.is_valid():
        context["errors"] = [f"{name}: {error}" for name, errors in form.errors.items() for error in errors]
        status = 400
    else:
        data = form.cleaned_data
        try:
            access = access_of(request)
            context["results"] = results = search(
                search_index(),
                catalog(),
                data["q"],
                session=data["session"] or None,
                page=data["page"] or 1,
                visible=lambda infos: search_scope(access, infos),
            )
        except SearchUnavailable as error:
            context["errors"] = [str(error)]
            status = 503
        else:
            if results.catch_up is not None and access.actor.sees_everything:  # as the list's problems
                context["not_searched"] = [(_name(path), why) for path, why in sorted(results.catch_up.failed.items())]
    htmx = cast(HtmxHttpRequest, request).htmx
    partial = bool(htmx) and not htmx.history_restore_request
    context["oob"] = partial
    template = "sessions_app/partials/_search_results.html" if partial else "sessions_app/search.html"
    return render(request, template, context, status=status)
