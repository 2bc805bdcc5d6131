"""Jumps in a long session: the entries below a jump's page as the reader scrolls down, and the jump
to a date. The jump links themselves are plain links to the session page (``?show=``)."""

from __future__ import annotations

from datetime import tzinfo
from typing import Any
from urllib.parse import quote

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_GET

from ..access.scoped import tools_of, trunk_of
from ..access.web import open_session
from ..converters import reverse_entry, usable_id
from ..display.dates import ZONE_COOKIE, reader_zone
from ..display.jumps import Jump, jumps, nearest_to_date
from ..display.transcript import window_page
from ..forms import JumpDateForm, NewerForm, PositionForm
from ..services.lookup import entry_row
from ..sessionfiles.catalog import session_info
from ..sessionfiles.store import SessionFile
from ..sessionfiles.tree import path
from .responses import form_error, is_htmx


@require_GET
def newer_entries(request: HttpRequest, session_id: str) -> HttpResponse:
    """The page of path entries after ``?after=`` on the path to ``?until=`` (the tab's position)."""
    session = open_session(request, session_id)
    form = NewerForm(request.GET)
    if not form.is_valid():
        return form_error(request, form, status=400)
    after, until = entry_row(session, form.cleaned_data["after"]), entry_row(session, form.cleaned_data["until"])
    branch = path(session.index, until)
    if after not in branch or after == until:
        raise Http404("Nothing newer on this branch")
    page = window_page(session, branch, branch.index(after) + 1, until)
    page.older_than = None  # what is older is on the page already
    context = {"session_id": session.session_id, "page": page, "tools": tools_of(session), "trunk": trunk_of(session)}
    return render(request, "sessions_app/partials/_older.html", context)


@require_GET
def jump_places(request: HttpRequest, session_id: str) -> HttpResponse:
    """The "Jump to" menu for the tab at ``?at=`` (empty: the file's leaf): in the top bar's menu, or a
    page of its own without JS."""
    session = open_session(request, session_id)
    form = PositionForm(request.GET)
    if not form.is_valid():
        return form_error(request, form, status=400)
    position, branch = _branch(session, form.cleaned_data["at"])
    context = {
        "session_id": session.session_id,
        "info": session_info(session),
        "jumps": jump_menu(session, position, branch, reader_zone(request.COOKIES.get(ZONE_COOKIE))),
    }
    template = "sessions_app/partials/_jump_links.html" if is_htmx(request) else "sessions_app/jumps.html"
    return render(request, template, context)


@require_GET
def jump_to_date(request: HttpRequest, session_id: str) -> HttpResponse:
    """The tab's branch from the entry nearest ``?date=`` on (a permalink to that page)."""
    session = open_session(request, session_id)
    form = JumpDateForm(request.GET)
    if not form.is_valid():
        return form_error(request, form, status=400)
    at = form.cleaned_data["at"]
    branch = [row for row in _branch(session, at)[1] if session.index.types[row] != "label"]  # those shown
    if not branch:
        return redirect("sessions:session", session.session_id)
    zone = reader_zone(request.COOKIES.get(ZONE_COOKIE))  # the day the reader's calendar says
    target = session.index.ids[branch[nearest_to_date(session.index, branch, form.cleaned_data["date"], zone)]]
    url = jump_url(session.session_id, at or None, target)
    if url is None:
        raise Http404("That entry cannot be linked to")
    return redirect(url)


def _branch(session: SessionFile, at: str) -> tuple[int | None, list[int]]:
    """The tab's position (``at``; empty: the file's leaf) and its path, root first."""
    position = entry_row(session, at) if at else session.index.leaf_row
    return position, path(session.index, position)


def jump_menu(session: SessionFile, position: int | None, branch: list[int], zone: tzinfo) -> dict[str, Any]:
    """The "Jump to" menu of the tab at ``position`` (``branch``: its path, root first): links to the
    start, each compaction (at its time in the reader's ``zone``) and each labelled entry of the
    branch, and where the date box goes."""
    index = session.index
    at = index.ids[position] if position is not None and position != index.leaf_row else None
    found = jumps(index, branch, zone)

    def link(jump: Jump) -> tuple[str, str] | None:
        url = jump_url(session.session_id, at, jump.entry_id)
        return (url, jump.text) if url else None

    return {
        "at": at or "",
        "start": jump_url(session.session_id, at, found.start) if found.start else None,
        "compactions": [shown for jump in found.compactions if (shown := link(jump))],
        "labels": [shown for jump in found.labels if (shown := link(jump))],
    }


def jump_url(session_id: str, at: str | None, target: str) -> str | None:
    """The session page at ``at`` (None: the file's leaf) starting at ``target``, scrolled to it; None
    for an id no URL can carry."""
    base = reverse_entry("sessions:entry", session_id, at) if at else reverse("sessions:session", args=[session_id])
    if base is None or not usable_id(target):
        return None
    return f"{base}?{urlencode({'show': target})}#entry-{quote(target, safe='')}"
