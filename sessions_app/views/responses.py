"""How a write answers: htmx gets the re-rendered transcript (and the new URL to push), a plain form
post gets a redirect to the permalink of where the tab now stands."""

from __future__ import annotations

from urllib.parse import urlsplit

from django.forms import Form
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import NoReverseMatch, reverse

from ..forms import MessageForm
from ..sessionfiles.store import SessionFile

MOVED_EVENT = "pitree:moved"


def is_htmx(request: HttpRequest) -> bool:
    return request.headers.get("HX-Request") == "true"


def permalink(session: SessionFile, entry_id: str | None) -> str:
    """The URL of the session at ``entry_id`` (the session's own URL when the position is the start)."""
    if entry_id is not None:
        try:
            return reverse("sessions:entry", args=[session.session_id, entry_id])
        except NoReverseMatch:
            pass  # an id holding "/" has no URL of its own; the session's URL opens at its leaf
    return reverse("sessions:session", args=[session.session_id])


def moved_to(
    request: HttpRequest,
    session: SessionFile,
    position_id: str | None,
    *,
    form: MessageForm | None = None,
    status: int = 200,
) -> HttpResponse:
    """Show the tab at ``position_id``: transcript fragment + pushed URL for htmx, else a redirect."""
    from .pages import transcript_context

    url = permalink(session, position_id)
    if not is_htmx(request):
        return redirect(url)
    position = session.index.row(position_id) if position_id else None
    response = render(
        request, "sessions_app/partials/_transcript.html", transcript_context(session, position, form), status=status
    )
    # A tab at the session's own URL follows the session: it keeps that URL while it stands where the
    # file does, so a reload shows what others added since. Elsewhere the URL pins what the tab shows.
    response["HX-Push-Url"] = "false" if _follows(request, session) and position_id == session.leaf_id else url
    response["HX-Trigger-After-Swap"] = MOVED_EVENT
    return response


def _follows(request: HttpRequest, session: SessionFile) -> bool:
    current = urlsplit(request.headers.get("HX-Current-URL", "")).path
    return current == reverse("sessions:session", args=[session.session_id])


def form_error(request: HttpRequest, form: Form | str, *, status: int = 422) -> HttpResponse:
    """A rejected write: nothing was written; say why where the user acted."""
    errors = [form] if isinstance(form, str) else [str(e) for errs in form.errors.values() for e in errs]
    if not is_htmx(request):
        return render(
            request, "sessions_app/error.html", {"title": "Nothing was written", "errors": errors}, status=status
        )
    response = render(request, "sessions_app/partials/_form_errors.html", {"errors": errors}, status=status)
    response["HX-Retarget"] = "#flash"
    response["HX-Reswap"] = "innerHTML"
    return response


def go_to(request: HttpRequest, url: str) -> HttpResponse:
    """A full navigation (a new session, a fork, a rename that changes the page header)."""
    if is_htmx(request):
        response = HttpResponse(status=204)
        response["HX-Redirect"] = url
        return response
    return redirect(url)
