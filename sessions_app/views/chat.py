"""Writes that need the assistant: send a message, regenerate an answer, stop a reply, compact,
navigate with a summary. They are async views: a reply can take a minute, and under ASGI every sync
view shares one thread, so waiting on a model there would stall every other request. File work runs
in a thread. A reply runs as a task of its own: the view waits for it, but a client that goes away
does not take the reply with it. The core's refusals (unknown ids, read-only files, a failed summary,
stopping a reply that is not running) become answers in ``RefusalMiddleware``.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_POST
from django_htmx.http import reswap, retarget

from ..access.scoped import SessionView, can_write
from ..access.web import open_session
from ..display.entries import preview
from ..forms import CompactForm, MessageForm, NavigateForm, RegenerateForm, TailForkForm
from ..services import chat, pi, replies, summaries
from ..sessionfiles import entries as E
from ..sessionfiles.description import describe
from ..sessionfiles.errors import EntryNotFound, WriteFailed
from ..sessionfiles.tree import latest_position_under
from ..transfer.newfiles import tail_fork_for
from . import pi as pi_views
from .responses import form_error, go_to, is_htmx, moved_to, permalink

MOVED_ON = "sessions_app/partials/_moved_on.html"


@require_POST
async def send(request: HttpRequest, session_id: str) -> HttpResponse:
    """A user message as a child of the entry the tab shows (``parent``), then the assistant's reply
    to it. "Edit & resend" posts here too, with the edited message's parent: a sibling branch. A
    message from a page that missed how the conversation went on after ``parent`` is refused (409),
    with a choice: continue from the latest entry, or send as a new branch here (``MessageForm``); so
    is one that answers an entry whose reply is still being written (by any process, with Redis)."""
    session = await asyncio.to_thread(open_session, request, session_id, write=True, drive=pi.enabled())
    form = MessageForm(request.POST)
    if not form.is_valid():
        return form_error(request, form)
    if pi.enabled():
        try:
            return await pi_views.send(request, session, form)
        except chat.MovedOn as moved:
            return await asyncio.to_thread(_moved_on, request, session, form, moved)
    user = await store_message(request, session, form)
    if isinstance(user, HttpResponse):
        return user
    try:
        reply = await chat.answer(session, user["id"], form.cleaned_data["stream"] or None)
    except WriteFailed as error:
        # The message is stored: the tab stands at it, rather than getting it back as a draft to send twice.
        said = f"Your message is stored, but the reply could not be: {error.why}."
        return await asyncio.to_thread(moved_to, request, session, user["id"], flash=said)
    return await _moved(request, session, await asyncio.to_thread(chat.standing_after, session, reply["id"]))


async def store_message(request: HttpRequest, session: SessionView, form: MessageForm) -> dict[str, Any] | HttpResponse:
    """The user message of a valid ``form``, appended where the tab stands; or the refusal to answer
    with (409), when the conversation went on there since the page was made, the entry it answers is
    gone, or a reply to that entry is still being written."""
    parent = form.cleaned_data["parent"] or None
    cursor = form.cleaned_data["cursor"]
    if parent is not None and not form.cleaned_data["branch"] and await replies.answering(session.session_id, parent):
        # The message would become a sibling of the reply being written (its page shows Stop for it).
        return form_error(
            request,
            "A reply to this message is still being written. Wait for it, or stop it; nothing was sent.",
            status=409,
        )
    check = None if cursor is None or form.cleaned_data["branch"] else chat.unchanged_since(parent, cursor)
    try:
        return await asyncio.to_thread(session.append, E.user_message(form.cleaned_data["text"]), parent, check=check)
    except chat.MovedOn as moved:
        return await asyncio.to_thread(_moved_on, request, session, form, moved)
    except EntryNotFound:
        return form_error(
            request,
            f"The entry this message answers ({parent}) is not in this session any more. "
            "Nothing was sent; reload the page and try again.",
            status=409,
        )


@require_POST
async def regenerate(request: HttpRequest, session_id: str) -> HttpResponse:
    """Another answer to what an assistant entry answered: a sibling of that entry."""
    if pi.enabled():
        return await pi_views.regenerate(request, session_id)
    session = await asyncio.to_thread(open_session, request, session_id, write=True)
    form = RegenerateForm(request.POST)
    if not form.is_valid():
        return form_error(request, form)
    entry = await asyncio.to_thread(session.entry, form.cleaned_data["entry"])
    if session.index.read_only or session.outside:  # refused before a reply is asked for, not when it is stored
        return form_error(request, "This session is read-only; fork it to continue.", status=409)
    if not isinstance(entry.get("parentId"), str):
        return form_error(request, "This answer has nothing before it to answer again.", status=409)
    # Pages offer no Regenerate above a shared branch, but a stale tab or a hand-made post may ask.
    await asyncio.to_thread(session.refuse_outside_branch, entry["parentId"])
    reply = await chat.answer(session, entry["parentId"], form.cleaned_data["stream"] or None)
    return await _moved(request, session, await asyncio.to_thread(chat.standing_after, session, reply["id"]))


@require_POST
async def stop(request: HttpRequest, session_id: str) -> HttpResponse:
    """Stop the reply ``reply`` (from any tab, served by any server process): its text so far is
    stored as ``aborted``, and arrives in the tab that asked for it with the answer to its request. A
    Stop that comes before its reply has started (the page shows Stop as soon as it sends) stops it as
    it starts (``replies.stop``)."""
    if pi.enabled():
        return await pi_views.stop(request, session_id)
    session = await asyncio.to_thread(open_session, request, session_id, write=True)
    reply_id = request.POST.get("reply", "")
    if not replies.REPLY_ID.fullmatch(reply_id):
        return form_error(request, "Say which reply to stop.")
    await replies.stop(session.session_id, reply_id)
    return HttpResponse(status=204)


@require_POST
async def compact(request: HttpRequest, session_id: str) -> HttpResponse:
    """The assistant summarises the branch's history before ``keep_from``; a compaction entry folds it."""
    if pi.enabled():
        return await pi_views.compact(request, session_id)
    session = await asyncio.to_thread(open_session, request, session_id, write=True)
    form = CompactForm(request.POST)
    if not form.is_valid():
        return form_error(request, form)
    at = form.cleaned_data["at"] or session.leaf_id
    await asyncio.to_thread(session.refuse_outside_branch, at)  # before the summary is asked for
    written = await summaries.compact(
        session, at, form.cleaned_data["keep_from"], form.cleaned_data["instructions"] or None
    )
    return await _moved(request, session, written["id"])


@require_POST
async def tail_fork(request: HttpRequest, session_id: str) -> HttpResponse:
    """Fork only the branch's last turns into a new session, the assistant's summary of the history
    before them in its place, and open it (a long session's current state, to hand on)."""
    session = await asyncio.to_thread(open_session, request, session_id)
    form = TailForkForm(request.POST)
    if not form.is_valid():
        return form_error(request, form)
    forked = await tail_fork_for(session, form.cleaned_data["entry"], form.cleaned_data["turns"])
    return go_to(request, permalink(forked, None))


@require_POST
async def navigate(request: HttpRequest, session_id: str) -> HttpResponse:
    """Switch branch (``mode=branch``: resume where that sibling branch was last left) or jump to an
    entry (``mode=exact``). The move is persisted as a ``leaf`` entry, only when the position changes;
    with ``summarize``, a summary of the branch left behind is written at the new position instead."""
    session = await asyncio.to_thread(open_session, request, session_id)
    form = NavigateForm(request.POST)
    if not form.is_valid():
        return form_error(request, form)
    target = form.cleaned_data["to"] or None
    left = form.cleaned_data["at"] or session.leaf_id
    if target is not None and form.cleaned_data["mode"] == "branch":
        target = await asyncio.to_thread(_resumed, session, target)
    if can_write(session):  # a viewer moves the tab only, the file's position stays
        if form.cleaned_data["summarize"]:
            if pi.enabled():
                return form_error(
                    request, "With pi, a move cannot summarize the branch left; nothing was moved.", status=409
                )
            written = await summaries.summarize_abandoned_branch(
                session, left, target, check=lambda: session.refuse_outside_branch(target)
            )
            if written is not None:
                return await _moved(request, session, written["id"])
        # While pi writes the file, the tab moves and the file's position waits for the next move.
        with contextlib.suppress(pi.PiWorking):
            await asyncio.to_thread(session.navigate, target)
    return await _moved(request, session, target)


def _resumed(session: SessionView, entry_id: str) -> str:
    """Where the branch of ``entry_id`` was last left: its whole subtree is walked (in a worker thread)."""
    return session.index.ids[latest_position_under(session.index, session.row_of(entry_id))]


def _moved_on(request: HttpRequest, session: Any, form: MessageForm, moved: chat.MovedOn) -> HttpResponse:
    """Nothing was sent: say how the conversation went on, keep the draft, offer both ways on (409).
    To htmx, next to the composer (whose draft stays in its box); otherwise as a page with both forms."""
    latest = session.entry(moved.latest)
    context = {
        "session_id": session.session_id,
        "latest": moved.latest,
        "latest_label": _label(latest),
        "cursor": moved.cursor,
        "parent": form.cleaned_data["parent"],
        "text": form.cleaned_data["text"],
    }
    if not is_htmx(request):
        return render(request, "sessions_app/nothing_sent.html", {**context, "refusal": MOVED_ON}, status=409)
    response = render(request, MOVED_ON, {**context, "htmx": True}, status=409)
    return reswap(retarget(response, "#flash"), "innerHTML")


def _label(entry: dict[str, Any]) -> str:
    """The entry to continue from, as the choice names it: who wrote it and how it begins."""
    described = describe(entry)
    who = {"user": "a message: ", "assistant": "an answer: "}.get(described.kind, "")
    words = preview(entry, 60)
    return f"{who}“{words}”" if words else f"{who}{described.type}"


async def _moved(request: HttpRequest, session: Any, position: str | None) -> HttpResponse:
    return await asyncio.to_thread(moved_to, request, session, position)
