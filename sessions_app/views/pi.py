"""The writes that need the assistant, when the assistant is pi (``PITREE_ASSISTANT=pi``): the views of
``chat`` and ``actions`` hand them here. pi writes the file (the user's message included); pitree asks
it to, where the tab stands (``services.pi``), and answers the request once pi is done, as it does for
a reply. Only the members of the session's workspace may have pi work (``open_session(drive=True)``):
pi runs commands on the server.
"""

from __future__ import annotations

import asyncio
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django_htmx.http import reswap, retarget

from ..access.scoped import SessionView, can_write
from ..access.web import open_session
from ..display.settings import THINKING_LEVELS, BranchSettings
from ..forms import CompactForm, MessageForm, ModelForm, RegenerateForm, ThinkingForm
from ..services import chat, pi, titles
from ..sessionfiles.description import describe, text_of
from ..sessionfiles.errors import SessionError
from ..sessionfiles.tree import latest_position_under
from .responses import form_error, is_htmx, moved_to

LABEL = "pi"
STEERED = "pi is working: your message was sent to steer it."
ELSEWHERE = "sessions_app/partials/_pi_elsewhere.html"


async def send(request: HttpRequest, session: SessionView, form: MessageForm) -> HttpResponse:
    """pi answers the message under the tab's entry (``parent``); while pi works, the message joins
    its queue instead (``queue``: ``steer`` or ``follow_up``; the answer is 202). The composer's message
    from a tab that had not heard yet that pi works (a second tab, a slow socket) steers pi, as Enter
    would have there, when the tab stands on the branch pi works on: the tab moves on to follow pi's
    turn, told so; from elsewhere it is refused (``PiOnAnotherBranch``), the draft kept. A message from
    a page that missed how the conversation went on raises ``chat.MovedOn``, as ``chat.send`` checks it."""
    text, parent, cursor = form.cleaned_data["text"], form.cleaned_data["parent"] or None, form.cleaned_data["cursor"]
    if form.cleaned_data["queue"]:
        await pi.queue(session, form.cleaned_data["queue"], text)
        return HttpResponse(status=202)
    # Only the composer's message continues where its tab stands (it sends its page's cursor); an edit
    # and a "new branch here" make a sibling on purpose, which pi cannot begin while it works.
    composed = cursor is not None and not form.cleaned_data["branch"]
    moved: chat.MovedOn | None = None
    if composed:
        try:
            await asyncio.to_thread(_unchanged_since, session, parent, cursor)
        except chat.MovedOn as error:
            moved = error
    try:
        outcome = await pi.send(session, text, parent, steer=composed, went_on=moved is not None)
    except pi.PiOnAnotherBranch as error:
        return _elsewhere(request, session, text, str(error))
    if outcome == pi.STEERED:
        return await _moved_below(request, session, parent, note=STEERED)
    if moved is not None and outcome == pi.MOVED_ON:
        raise moved
    return await _turn_ended(request, session, outcome, parent)


async def regenerate(request: HttpRequest, session_id: str) -> HttpResponse:
    """Another answer to the message an answer answered: pi is asked it again, from where it was asked
    (pi answers messages, so the question is written again beside the first)."""
    session = await asyncio.to_thread(open_session, request, session_id, drive=True)
    form = RegenerateForm(request.POST)
    if not form.is_valid():
        return form_error(request, form)
    question = await asyncio.to_thread(_question_of, session, form.cleaned_data["entry"])
    if question is None:
        return form_error(request, "pi answers your messages: only the answer to one of them can be asked again.")
    text, parent = question
    return await _answered(request, session, text, parent)


async def stop(request: HttpRequest, session_id: str) -> HttpResponse:
    """Stop what pi is doing in the session (from any tab, served by any server process)."""
    session = await asyncio.to_thread(open_session, request, session_id, drive=True)
    if not await pi.stop(session):
        return form_error(request, "pi is not working in this session.", status=409)
    return HttpResponse(status=204)


async def compact(request: HttpRequest, session_id: str) -> HttpResponse:
    """pi compacts the branch the tab is on (it chooses what to keep, as its own ``/compact`` does)."""
    session = await asyncio.to_thread(open_session, request, session_id, drive=True)
    form = CompactForm(request.POST)
    if not form.is_valid():
        return form_error(request, form)
    at = form.cleaned_data["at"] or session.leaf_id
    await pi.compact(session, at, form.cleaned_data["instructions"] or None)
    return await _moved_below(request, session, at)


async def pickers(session: SessionView, position: int | None, current: BranchSettings) -> dict[str, Any]:
    """What the composer's pickers show: pi's models (``provider/id``, as pi's configuration names
    them) to those who may have pi work; the branch's model and level to anyone."""
    branch_model = f"{current.provider}/{current.model}" if current.model else ""
    models, problem = [], ""
    drives = can_write(session) and session.grant.can_drive
    if drives:
        try:
            models = [_name(model) for model in await pi.models(session)]
        except SessionError as error:
            problem = f"pi's models could not be listed: {error}"
    chosen = branch_model if branch_model in models else (models[0] if models else branch_model)
    return {
        "session_id": session.session_id,
        "position": session.index.ids[position] if position is not None else "",
        "read_only": not drives,
        "assistant": {"label": LABEL, "server": "runs on this server", "provider": "", "model": chosen},
        "models": models if chosen in models or not chosen else [chosen, *models],
        "chosen": chosen,
        "elsewhere": "",
        "levels": THINKING_LEVELS,
        "level": current.thinking_level,
        "problem": problem,
    }


async def set_model(request: HttpRequest, session_id: str) -> HttpResponse:
    """pi switches to one of its models from the tab's position on (pi writes the ``model_change``)."""
    session = await asyncio.to_thread(open_session, request, session_id, drive=True)
    form = ModelForm(request.POST)
    if not form.is_valid():
        return form_error(request, form)
    chosen = form.cleaned_data["model"]
    offered = {_name(model): model for model in await pi.models(session)}
    if chosen not in offered:
        return form_error(request, f"pi has no model {chosen!r}; nothing was changed.")
    at = form.cleaned_data["at"] or session.leaf_id
    await pi.set_model(session, str(offered[chosen]["provider"]), str(offered[chosen]["id"]), at)
    return await _moved_below(request, session, at)


async def set_thinking(request: HttpRequest, session_id: str) -> HttpResponse:
    """pi thinks at another level from the tab's position on (pi writes the ``thinking_level_change``)."""
    session = await asyncio.to_thread(open_session, request, session_id, drive=True)
    form = ThinkingForm(request.POST)
    if not form.is_valid():
        return form_error(request, form)
    at = form.cleaned_data["at"] or session.leaf_id
    await pi.set_thinking_level(session, form.cleaned_data["level"], at)
    return await _moved_below(request, session, at)


def _elsewhere(request: HttpRequest, session: SessionView, text: str, error: str) -> HttpResponse:
    """Nothing was sent: pi works on another branch. Said next to the composer (whose draft stays in its
    box) with a Stop for pi, or as a page of its own without htmx (409)."""
    context = {"session_id": session.session_id, "error": error, "text": text}
    if not is_htmx(request):
        return render(request, "sessions_app/nothing_sent.html", {**context, "refusal": ELSEWHERE}, status=409)
    response = render(request, ELSEWHERE, {**context, "htmx": True}, status=409)
    return reswap(retarget(response, "#flash"), "innerHTML")


def _name(model: dict[str, Any]) -> str:
    return f"{model.get('provider')}/{model.get('id')}"


def _unchanged_since(session: SessionView, parent: str | None, cursor: int) -> None:
    """``chat.unchanged_since``'s check, on the file as it is now (pi, not pitree, will write)."""
    session.refresh()
    chat.unchanged_since(parent, cursor)(session.index)


def _question_of(session: SessionView, answer_id: str) -> tuple[str, str | None] | None:
    """The text of the user message an answer answers, and where that message was written."""
    question = session.entry(answer_id).get("parentId")
    if not isinstance(question, str):
        return None
    entry = session.entry(question)
    described = describe(entry)
    if described.kind != "user":
        return None
    parent = entry.get("parentId")
    return text_of(described.parts, "\n"), parent if isinstance(parent, str) else None


async def _answered(request: HttpRequest, session: SessionView, text: str, at: str | None) -> HttpResponse:
    return await _turn_ended(request, session, await pi.answer(session, text, at), at)


async def _turn_ended(request: HttpRequest, session: SessionView, ending: str, at: str | None) -> HttpResponse:
    if ending == pi.ENDED:
        return form_error(
            request,
            "pi ended before it was done (the server's log says why). What it wrote is kept; a new message"
            " starts it again.",
            status=502,
        )
    return await _moved_below(request, session, at, title=ending == pi.DONE)


async def _moved_below(
    request: HttpRequest, session: SessionView, at: str | None, note: str = "", *, title: bool = False
) -> HttpResponse:
    """The tab moves to where pi left the branch it continued (what pi wrote last under ``at``), or,
    while pi writes it, to where pi is now. After a turn pi finished (``title``), an untitled session
    gets its title there (``titles.title_below``), and the tab stands on it."""

    def position() -> str | None:
        session.refresh()
        index = session.index
        if at is None or index.row(at) is None:
            where = session.leaf_id
        else:
            where = index.ids[latest_position_under(index, session.row_of(at))]
        titled = titles.title_below(session, where) if title and where is not None else None
        return titled or where

    return await asyncio.to_thread(moved_to, request, session, await asyncio.to_thread(position), note=note)
