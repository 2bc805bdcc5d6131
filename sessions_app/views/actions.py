"""Writes that annotate, set up or open another file: label, rename, the model and thinking level,
fork, new session. Annotations go where the tab stands, never beside a reply being written there
(``services.annotations``); async, as they may wait for that reply to be stored.

Every one is an append through the store (``SessionFile``); nothing else touches the file. Bad input
is refused before anything is written: form errors here, the core's refusals (unknown ids, read-only
files) by ``RefusalMiddleware``.
"""

from __future__ import annotations

import asyncio

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.loader import render_to_string
from django.views.decorators.http import require_POST

from ..access.scoped import SessionView
from ..access.web import access_of, open_session
from ..access.workspaces import default_cwd
from ..assistants import AssistantError, get_assistant
from ..forms import AnnotationForm, ForkForm, LabelForm, ModelForm, NewSessionForm, RenameForm, ThinkingForm
from ..services import pi
from ..services.annotations import annotate
from ..sessionfiles import entries as E
from ..sessionfiles.catalog import session_info
from ..sessionfiles.entries import Draft
from ..transfer.newfiles import fork_for, new_session_for
from . import pi as pi_views
from .responses import form_error, go_to, is_htmx, moved_to, permalink


@require_POST
async def label(request: HttpRequest, session_id: str) -> HttpResponse:
    """Set or clear (empty text) the label of an entry; the label line goes where the tab stands."""
    session = await asyncio.to_thread(open_session, request, session_id, write=True)
    form = LabelForm(request.POST)
    if not form.is_valid():
        return form_error(request, form)
    target = form.cleaned_data["entry"]
    await asyncio.to_thread(session.row_of, target)
    draft = E.label(target, form.cleaned_data["label"].strip() or None)
    return await _annotated(request, session, form, draft)


@require_POST
async def rename(request: HttpRequest, session_id: str) -> HttpResponse:
    """Name the session (empty clears the name)."""
    session = await asyncio.to_thread(open_session, request, session_id, write=True)
    form = RenameForm(request.POST)
    if not form.is_valid():
        return form_error(request, form)
    response = await _annotated(request, session, form, E.session_info(form.cleaned_data["name"]))
    if is_htmx(request) and response.status_code == 200:
        # The title is in the page's header, outside the transcript: it goes along out of band, so the
        # tab that renamed sees it at once, socket or not, and keeps its draft and scroll position.
        title = {"info": await asyncio.to_thread(session_info, session), "oob": True}
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
    return await _annotated(request, session, form, E.model_change(assistant.provider, model))


@require_POST
async def set_thinking(request: HttpRequest, session_id: str) -> HttpResponse:
    """Set the thinking level from the tab's position on: pi's ``thinking_level_change`` entry."""
    if pi.enabled():
        return await pi_views.set_thinking(request, session_id)
    session = await asyncio.to_thread(open_session, request, session_id, write=True)
    form = ThinkingForm(request.POST)
    if not form.is_valid():
        return form_error(request, form)
    return await _annotated(request, session, form, E.thinking_level_change(form.cleaned_data["level"]))


async def _annotated(request: HttpRequest, session: SessionView, form: AnnotationForm, draft: Draft) -> HttpResponse:
    """Write ``draft`` where the tab stands (``annotations``) and show the tab there. Taken by the reply
    being written there, it is written when that reply is stored, below it: the tab stays as it is
    (204; the page's own picker shows the choice meanwhile), its socket shows both when they come."""
    at = form.cleaned_data["at"] or None
    written = await annotate(session, draft, at, form.cleaned_data["cursor"], form.cleaned_data["reply"] or None)
    if written is None:
        return HttpResponse(status=204) if is_htmx(request) else redirect(permalink(session, at))
    return await asyncio.to_thread(moved_to, request, session, written["id"])


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
    """Start an empty session in a workspace (pi's folder layout under the sessions root): the one named,
    or the reader's own (*New chat* names none)."""
    form = NewSessionForm(request.POST)
    if not form.is_valid():
        return form_error(request, form)
    access = access_of(request)
    cwd = form.cleaned_data["cwd"] or default_cwd(access)
    try:
        created = new_session_for(access, cwd, form.cleaned_data["name"] or None)
    except OSError as error:
        return form_error(request, f"The session file could not be created: {error.strerror}.", status=409)
    return go_to(request, permalink(created, None))
