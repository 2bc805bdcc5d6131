"""How a view answers, for htmx and for plain browsers alike (through django-htmx's helpers).

A write answered to htmx gets the re-rendered transcript and the new URL to push; a plain form post
gets a redirect to the permalink of where the tab now stands. A refused request says why: in the
page's flash area for htmx, as a page of its own otherwise.
"""

from __future__ import annotations

from typing import cast

from django.forms import Form
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django_htmx.http import HttpResponseClientRedirect, push_url, reswap, retarget, trigger_client_event
from django_htmx.middleware import HtmxDetails

from ..converters import reverse_entry
from ..forms import MessageForm
from ..partials.transcript import transcript_context
from ..sessionfiles.store import SessionFile

MOVED_EVENT = "pitree:moved"


class HtmxHttpRequest(HttpRequest):
    """A request that went through ``HtmxMiddleware``."""

    htmx: HtmxDetails


def is_htmx(request: HttpRequest) -> bool:
    return bool(cast(HtmxHttpRequest, request).htmx)


def permalink(session: SessionFile, entry_id: str | None) -> str:
    """The URL of the session at ``entry_id`` (the session's own URL when the position is the start,
    or for the rare id no URL can carry: see ``converters.usable_id``)."""
    url = None if entry_id is None else reverse_entry("sessions:entry", session.session_id, entry_id)
    return url or reverse("sessions:session", args=[session.session_id])


def moved_to(
    request: HttpRequest,
    session: SessionFile,
    position_id: str | None,
    *,
    form: MessageForm | None = None,
    status: int = 200,
    flash: str = "",
    note: str = "",
) -> HttpResponse:
    """Show the tab at ``position_id``: transcript fragment + pushed URL for htmx, else a redirect.
    ``flash``: what went wrong on the way, said next to the composer; ``note``: what happened that the
    tab did not ask for, said there too."""
    url = permalink(session, position_id)
    if not is_htmx(request):
        return redirect(url)
    position = session.index.row(position_id) if position_id else None
    context = {**transcript_context(session, position, form), "flash": [flash] if flash else [], "note": note}
    response = render(request, "sessions_app/partials/_transcript.html", context, status=status)
    # A tab at the session's own URL follows the session: it keeps that URL while it stands where the
    # file does, so a reload shows what others added since. Elsewhere the URL pins what the tab shows.
    push_url(response, False if _follows(request, session) and position_id == session.leaf_id else url)
    return trigger_client_event(response, MOVED_EVENT, after="swap")


def _follows(request: HttpRequest, session: SessionFile) -> bool:
    current = cast(HtmxHttpRequest, request).htmx.current_url_abs_path or ""
    return current.split("?", 1)[0] == reverse("sessions:session", args=[session.session_id])


def form_error(request: HttpRequest, form: Form | str, *, status: int = 422) -> HttpResponse:
    """A refused request: nothing was written; say why where the user acted. A query string names
    the parameter at fault (``depth: Enter a whole number.``)."""
    errors = [form] if isinstance(form, str) else _messages(form, named=request.method == "GET")
    if not is_htmx(request):
        title = "This request cannot be answered" if request.method == "GET" else "Nothing was written"
        return render(request, "sessions_app/error.html", {"title": title, "errors": errors}, status=status)
    response = render(request, "sessions_app/partials/_form_errors.html", {"errors": errors}, status=status)
    return reswap(retarget(response, "#flash"), "innerHTML")


def _messages(form: Form, *, named: bool) -> list[str]:
    return [f"{field}: {error}" if named else str(error) for field, errors in form.errors.items() for error in errors]


def go_to(request: HttpRequest, url: str) -> HttpResponse:
    """A full navigation, to another session (a new session, a fork)."""
    if is_htmx(request):
        return HttpResponseClientRedirect(url)
    return redirect(url)
