"""Writes that annotate, set up or open another file: label, rename, the model and thinking level,
fork, new session.

Every one is an append through the store (``SessionFile``); nothing else touches the file. Bad input
is refused before anything is written: form errors here, the core's refusals (unknown ids, read-only
files) by ``RefusalMiddleware``.
"""

from __future__ import annotations

import asyncio

from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string
from django.views.decorators.http import require_POST

from ..access.web import access_of, open_session
from ..assistants import AssistantError, get_assistant
from ..forms import ForkForm, LabelForm, ModelForm, NewSessionForm, RenameForm, ThinkingForm
from ..services import pi
from ..sessionfiles import entries as E
from ..sessionfiles.catalog import session_info
from ..transfer.newfiles import fork_for, new_session_for
from . import pi as pi_views
from .responses import form_error, go_to, is_htmx, moved_to, permalink


@require_POST
def label(request: HttpRequest, session_id: str) -> HttpResponse:
    """Set or clear (empty text) the label of an entry; the label line follows the tab's position."""
    session = open_session(request, session_id, write=True)
    form = LabelForm(request.POST)
    if not form.is_valid():
        return form_error(request, form)
    at = form.cleaned_data["at"] or session.leaf_id
    written = session.set_label(form.cleaned_data["entry"], form.cleaned_data["label"].strip() or None, at)
    return moved_to(request, session, written["id"])


@require_POST
def rename(request: HttpRequest, session_id: str) -> HttpResponse:
    """Name the session (empty clears the name)."""
    session = open_session(request, session_id, write=True)
    form = RenameForm(request.POST)
    if not form.is_valid():
        return form_error(request, form)
    written = session.rename(form.cleaned_data["name"], form.cleaned_data["at"] or session.leaf_id)
    response = moved_to(request, session, written["id"])
    if is_htmx(request):
        # The title is in the page's header, outside the transcript: it goes along out of band, so the
        # tab that renamed sees it at once, socket or not, and keeps its draft and scroll position.
        title = {"info": session_info(session), "oob": True}
        response.write(render_to_string("sessions_app/partials/_session_title.html", title, request))
    return response


@require_POST
async def set_model(request: HttpRequest, session_id: str) -> HttpResponse:
    """Answer with another of the backend's models from the tab's position on: pi's ``model_change``
    entry (the backend's provider and the model's id), which the session context reads when the next
    reply is asked for. Async: the backend is asked which models it has."""
    if pi.enabled():
        return await pi_views.set_model(request, session_id)
    session = await asyncio.to_thread(open_session, request, session_id, write=True)
    form = ModelForm(request.POST)
    if not form.is_valid():
        return form_error(request, form)
    assistant = get_assistant()
    try:
        models = await assistant.models()
    except AssistantError as error:
        return form_error(request, f"The model list could not be fetched, so nothing was changed: {error}", status=409)
    model = form.cleaned_data["model"]
    if model not in models:
        return form_error(request, f"There is no model {model!r} to answer with here; nothing was changed.")
    at = form.cleaned_data["at"] or session.leaf_id
    written = await asyncio.to_thread(session.append, E.model_change(assistant.provider, model), at)
    return await asyncio.to_thread(moved_to, request, session, written["id"])


@require_POST
async def set_thinking(request: HttpRequest, session_id: str) -> HttpResponse:
    """Set the thinking level from the tab's position on: pi's ``thinking_level_change`` entry. (Async
    for pi's sake, which is asked to set it.)"""
    if pi.enabled():
        return await pi_views.set_thinking(request, session_id)
    return await asyncio.to_thread(_set_thinking, request, session_id)


def _set_thinking(request: HttpRequest, session_id: str) -> HttpResponse:
    session = open_session(request, session_id, write=True)
    form = ThinkingForm(request.POST)
    if not form.is_valid():
        return form_error(request, form)
    at = form.cleaned_data["at"] or session.leaf_id
    written = session.append(E.thinking_level_change(form.cleaned_data["level"]), at)
    return moved_to(request, session, written["id"])


@require_POST
def fork(request: HttpRequest, session_id: str) -> HttpResponse:
    """Copy the branch ending at an entry into a new session file and open it: next to the session for
    its workspace's members, in the forker's own workspace for anyone it is shared with."""
    session = open_session(request, session_id)
    form = ForkForm(request.POST)
    if not form.is_valid():
        return form_error(request, form)
    forked = fork_for(session, form.cleaned_data["entry"])
    return go_to(request, permalink(forked, None))


@require_POST
def new_session(request: HttpRequest) -> HttpResponse:
    """Start an empty session in a workspace (pi's folder layout under the sessions root)."""
    form = NewSessionForm(request.POST)
    if not form.is_valid():
        return form_error(request, form)
    try:
        created = new_session_for(access_of(request), form.cleaned_data["cwd"], form.cleaned_data["name"] or None)
    except OSError as error:
        return form_error(request, f"The session file could not be created: {error.strerror}.", status=409)
    return go_to(request, permalink(created, None))
