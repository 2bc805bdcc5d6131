"""Asking several models at once (``services.beam``) from the composer, stopping all of a beam's
answers, and a fused answer that reads them. Each answers with the comparison page of the beam
(``compare.beam_url``), where the answers stream side by side and one is picked to continue.
"""

from __future__ import annotations

import asyncio
import contextlib

from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_POST

from ..access.web import open_session
from ..assistants import get_assistant
from ..forms import REPLY_ID, BeamForm, FuseForm
from ..services import beam, chat, pi, replies
from .chat import store_message
from .compare import beam_url
from .responses import form_error, go_to


@require_POST
async def ask(request: HttpRequest, session_id: str) -> HttpResponse:
    """The composer's message, stored once, and answered by each model picked (``ask``, 2 to 4, the
    same one as often as it should answer): the tab goes to the beam's page."""
    session = await asyncio.to_thread(open_session, request, session_id, write=True)
    if pi.enabled():
        return form_error(request, "With pi at the wheel, one model answers at a time; nothing was sent.", status=409)
    form = BeamForm(request.POST)
    if not form.is_valid():
        return form_error(request, form)
    models = form.cleaned_data["ask"]
    offered, problem = await chat.offered_models(get_assistant())
    unknown = sorted({model for model in models if model not in offered})
    if unknown:
        said = f"Not a model this server offers: {', '.join(unknown)}. Nothing was sent."
        return form_error(request, f"{said} {problem}".strip())
    user = await store_message(request, session, form)
    if isinstance(user, HttpResponse):
        return user
    answers = await beam.start(session, user["id"], models)
    return go_to(request, beam_url(session.session_id, user["id"], answers))


@require_POST
async def stop_all(request: HttpRequest, session_id: str) -> HttpResponse:
    """Stop each reply named (``reply``, the beam's answers still being written); one that has ended
    meanwhile is left as it was stored."""
    session = await asyncio.to_thread(open_session, request, session_id, write=True)
    named = request.POST.getlist("reply")
    if not named or len(named) > beam.MAX_ANSWERS + 1 or not all(REPLY_ID.fullmatch(reply) for reply in named):
        return form_error(request, "Say which replies to stop.")
    for reply in named:
        with contextlib.suppress(replies.ReplyNotRunning):
            await replies.stop(session.session_id, reply)
    return HttpResponse(status=204)


@require_POST
async def fuse(request: HttpRequest, session_id: str) -> HttpResponse:
    """One more answer to the beam's message, reading its stored answers (``answer``): it joins the
    beam's page as a column of its own. ``beam`` carries the page's answers, kept in its URL."""
    session = await asyncio.to_thread(open_session, request, session_id, write=True)
    form = FuseForm(request.POST)
    if not form.is_valid():
        return form_error(request, form)
    data = form.cleaned_data
    shown = [found for ref in request.POST.getlist("beam") if (found := beam.Answer.parse(ref)) is not None]
    if len(shown) > beam.MAX_ANSWERS:
        return form_error(request, f"This beam has its {beam.MAX_ANSWERS + 1} columns already.", status=409)
    offered, problem = await chat.offered_models(get_assistant())
    if data["model"] not in offered:
        return form_error(request, f"Not a model this server offers: {data['model']}. {problem}".strip())
    try:
        fused = await beam.fuse(session, data["prompt"], data["answer"], data["model"])
    except beam.BeamRefused as refused:
        return form_error(request, str(refused), status=409)
    return go_to(request, beam_url(session.session_id, data["prompt"], [*shown, fused]))
