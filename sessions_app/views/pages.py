"""Read-only views: the session list, a session at a position, and the fragments a page loads later
(older entries, folded history, large blocks, raw lines, the tree panel)."""

from __future__ import annotations

import asyncio
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET

from ..access.page import page_context
from ..access.past import PastView
from ..access.scoped import SessionView, can_write, may_fork, tools_of, trunk_of
from ..access.web import access_of, open_session
from ..access.workspaces import default_cwd, writable
from ..assistants import get_assistant
from ..display.dates import ZONE_COOKIE, reader_zone
from ..display.entries import Block, content_blocks, present
from ..display.settings import THINKING_LEVELS, branch_settings
from ..display.transcript import resumed_at, transcript_page
from ..display.treepanel import FILTERS, earlier_rows, run_rows, tree_rows
from ..forms import (
    BEAM_PICKERS,
    EntryActionsForm,
    EntryPageForm,
    ListForm,
    NewSessionForm,
    OlderForm,
    PositionForm,
    SidebarForm,
    TravelForm,
    TreeFilterForm,
    TreePanelForm,
    TreeRunForm,
)
from ..partials.listing import GROUPS_TEMPLATE, list_context, listing_digest, listing_html
from ..partials.transcript import transcript_context
from ..services import pi
from ..services.chat import chosen_model, offered_models
from ..services.lookup import catalog, entry_row
from ..sessionfiles.catalog import session_info
from ..sessionfiles.description import describe, written_text
from ..sessionfiles.index import NO_PARENT
from ..sessionfiles.past import last_line, line_at
from ..sessionfiles.store import SessionFile
from ..sessionfiles.tree import ancestors, latest_position_under
from ..transfer.downloads import download_name
from . import pi as pi_views
from .responses import form_error, is_htmx

WORKSPACE_COOKIE = "pitree_workspace"


@require_GET
def session_list(request: HttpRequest) -> HttpResponse:
    """Sessions newest first, grouped by last activity in the reader's time zone, forks nested under
    their parent, filtered by ``?q=`` and ``?workspace=``, a page of ``LIST_PAGE_SIZE`` at a time
    (``?page=``) so a folder of thousands renders as fast as a few."""
    form = ListForm(request.GET)
    if not form.is_valid():
        return form_error(request, form, status=400)
    access = access_of(request)
    asked = form.cleaned_data
    zone = reader_zone(request.COOKIES.get(ZONE_COOKIE))
    context = list_context(asked["q"].strip(), asked["page"], access, workspace=asked["workspace"], zone=zone)
    context["new_form"] = NewSessionForm(initial={"cwd": default_cwd(access)})
    context["writable_workspaces"] = writable(access)
    context["listing"] = listing_html(GROUPS_TEMPLATE, context)
    context["listed"] = listing_digest(context["listing"])
    return render(request, "sessions_app/list.html", context)


@require_GET
def sidebar(request: HttpRequest) -> HttpResponse:
    """The app shell's list of sessions, a page at a time (the next one loads when scrolled to):
    the session list's search and grouping, with the session the page shows marked."""
    form = SidebarForm(request.GET)
    if not form.is_valid():
        return form_error(request, form, status=400)
    asked = form.cleaned_data
    through = asked["through"]
    # The workspace chosen is kept for every page's sidebar: asked for, or as last chosen.
    chosen = "workspace" in request.GET
    workspace = asked["workspace"] if chosen else _kept_workspace(request)
    context = list_context(
        asked["q"].strip(),
        through or asked["page"],
        access_of(request),
        from_start=bool(through),
        workspace=workspace,
        zone=reader_zone(request.COOKIES.get(ZONE_COOKIE)),
    )
    context["current"] = form.cleaned_data["current"]
    context["first_page"] = bool(through) or context["page"].number == 1
    response = HttpResponse(listing_html("sessions_app/partials/_sidebar_list.html", context, request))
    if chosen:
        response.set_cookie(WORKSPACE_COOKIE, workspace, max_age=365 * 24 * 3600, samesite="Lax", httponly=True)
    return response


def _kept_workspace(request: HttpRequest) -> str:
    """The sidebar's workspace as last chosen in this browser, when it still names a folder a form
    accepts (the cookie is the client's to write)."""
    form = ListForm({"workspace": request.COOKIES.get(WORKSPACE_COOKIE, "")})
    return form.cleaned_data["workspace"] if form.is_valid() else ""


@require_GET
def session_page(request: HttpRequest, session_id: str, entry_id: str | None = None) -> HttpResponse:
    """A session at the file's leaf, or at ``entry_id`` (a permalink to that branch state), or with
    ``?resume=1`` on ``entry_id``'s branch where it was last left (``resumed_at``)."""
    session = open_session(request, session_id)
    form = EntryPageForm(request.GET)
    if not form.is_valid():
        return form_error(request, form, status=400)
    position = entry_row(session, entry_id) if entry_id else session.index.leaf_row
    if position is not None and form.cleaned_data["resume"]:
        position = resumed_at(session.index, position)
    show = entry_row(session, form.cleaned_data["show"]) if form.cleaned_data["show"] else None
    if show is not None and (position is None or show not in ancestors(session.index, position)):
        position = latest_position_under(session.index, show)  # another branch: where it was last left
    return render(request, "sessions_app/session.html", session_context(session, position, show=show))


def session_context(
    session: SessionFile, position: int | None, show: int | None = None, **extra: Any
) -> dict[str, Any]:
    """Everything the session page and its transcript partial need, for the tab at ``position`` (its
    page starting at ``show``, an entry of its branch, when it jumped there)."""
    cat = catalog()
    info = session_info(session)
    return {
        "session": session,
        "info": info,
        "read_only": session.index.read_only,
        "past": session if isinstance(session, PastView) else None,
        "travel": _travel(session),
        **page_context(session, cat.parent_of(info), cat.forks_of(info)),
        "download_name": download_name(session, None, "jsonl"),
        **transcript_context(session, position, show=show),
        **extra,
    }


def _travel(session: SessionFile) -> dict[str, Any] | None:
    """What the time-travel box needs (a reader of the whole session: the present id, the file's line
    count now, the state shown), or None (a share of part of it has no past to show)."""
    if isinstance(session, PastView):
        return {"id": session.present_id, "lines": session.lines, "line": session.line}
    if not isinstance(session, SessionView) or not session.grant.whole:
        return None
    lines = last_line(session.index)
    return {"id": session.session_id, "lines": lines, "line": lines}


@require_GET
def travel(request: HttpRequest, session_id: str) -> HttpResponse:
    """The session as it was after ``?line=`` or at ``?time=`` (ISO, UTC): a permalink of that state."""
    session = open_session(request, session_id.partition("@")[0])
    if not session.grant.whole:  # a share of part of it: its states are not the file's
        raise Http404("No past states of a part of a session.")
    form = TravelForm(request.GET)
    if not form.is_valid():
        return form_error(request, form, status=400)
    when = form.cleaned_data["time"]
    line = line_at(session.index, when) if when is not None else form.cleaned_data["line"] or last_line(session.index)
    return redirect("sessions:session", f"{session.session_id}@{line}")


@require_GET
def older_entries(request: HttpRequest, session_id: str) -> HttpResponse:
    """The page of path entries before ``?before=`` (scrolled into view), or, with ``unfold``, the
    entries a compaction card folds."""
    session = open_session(request, session_id)
    form = OlderForm(request.GET)
    if not form.is_valid():
        return form_error(request, form, status=400)
    row = entry_row(session, form.cleaned_data["before"])
    parent = session.index.parents[row]
    if parent == NO_PARENT:
        raise Http404("Nothing is older than the first entry")
    unfold = form.cleaned_data["unfold"]
    page = transcript_page(
        session,
        parent,
        fold_before=form.cleaned_data["fold_before"] or None,
        fold_id=form.cleaned_data["fold_id"] or None,
        fold=not unfold,
    )
    return render(
        request,
        "sessions_app/partials/_older.html",
        {
            "session_id": session.session_id,
            "page": page,
            "unfold": "1" if unfold else None,
            "tools": tools_of(session),
            "trunk": trunk_of(session),
        },
    )


@require_GET
def entry_block(request: HttpRequest, session_id: str, entry_id: str, block: int) -> HttpResponse:
    """One large content block (thinking, tool output, arguments, a message's text) fetched when its
    fold is opened.

    Text shows as the transcript shows it: plain, except an answer's Markdown; but an answer's text too
    long for Markdown (``markdown.MARKDOWN_CHARS``) is plain text too, escaped: markdown-it takes up to
    25 µs a character, on the thread every sync view shares."""
    session = open_session(request, session_id)
    described = describe(session.entries([entry_row(session, entry_id)])[0])
    if described.shell is not None:
        blocks = [Block("raw", text=described.shell.output or "")]
    else:
        blocks = content_blocks(described.parts, fold_text=described.result is not None)
    found = next((b for b in blocks if b.index == block), None)
    if found is None:
        raise Http404("No such block")
    plain = described.kind != "assistant"  # an answer's text too long for Markdown is plain too
    found.lazy = False
    return render(request, "sessions_app/partials/_block_body.html", {"block": found, "plain": plain})


@require_GET
def entry_actions(request: HttpRequest, session_id: str, entry_id: str) -> HttpResponse:
    """An entry's action forms, for the tab at ``?at=``: the one ``?do=`` names, fetched into the
    entry's panel when its button is pressed, or all of them as a page of their own (a browser
    without JavaScript follows the buttons' links here)."""
    session = open_session(request, session_id)
    form = EntryActionsForm(request.GET)
    if not form.is_valid():
        return form_error(request, form, status=400)
    row = entry_row(session, entry_id)
    at = form.cleaned_data["at"]
    position = entry_row(session, at) if at else session.index.leaf_row
    context = {
        "session_id": session.session_id,
        "e": present(session, session.entries([row])[0], row),
        "position": session.index.ids[position] if position is not None else None,
        "read_only": not can_write(session),
        "may_fork": may_fork(session),
        "tools": tools_of(session),
        "trunk": trunk_of(session),
        "do": form.cleaned_data["do"],
        "branch_length": sum(1 for _ in ancestors(session.index, row)),
        "panel": is_htmx(request),
    }
    if is_htmx(request):
        return render(request, "sessions_app/partials/_entry_menu.html", context)
    return render(request, "sessions_app/entry_actions.html", context)


async def composer_settings(request: HttpRequest, session_id: str) -> HttpResponse:
    """The composer's model and thinking-level pickers for the tab at ``?at=``: the backend's models
    (asked of an OpenAI-compatible server, so this view is async) and what the branch is set to."""
    if request.method != "GET":
        return HttpResponse(status=405, headers={"Allow": "GET"})
    session = await asyncio.to_thread(open_session, request, session_id)
    form = PositionForm(request.GET)
    if not form.is_valid():
        return form_error(request, form, status=400)
    at = form.cleaned_data["at"]
    position = await asyncio.to_thread(lambda: entry_row(session, at) if at else session.index.leaf_row)
    current = await asyncio.to_thread(branch_settings, session, position)
    if pi.enabled():
        context = await pi_views.pickers(session, position, current)
        return render(request, "sessions_app/partials/_composer_settings.html", context)
    assistant = get_assistant()
    models, problem = await offered_models(assistant)
    chosen = chosen_model(assistant, current.provider, current.model, models)
    context = {
        "session_id": session.session_id,
        "position": session.index.ids[position] if position is not None else "",
        "read_only": not can_write(session),
        "assistant": assistant.info(),
        "models": models if chosen in models else [chosen, *models],
        "chosen": chosen,
        "elsewhere": f"{current.provider}/{current.model}"
        if current.model and current.provider != assistant.provider
        else "",
        "levels": THINKING_LEVELS,
        "level": current.thinking_level,
        "problem": problem,
        "beam": beam_picks(models, chosen),
    }
    return render(request, "sessions_app/partials/_composer_settings.html", context)


def beam_picks(models: list[str], chosen: str) -> list[str]:
    """What the composer's beam pickers start at: the branch's model and the next ones offered (three
    models in all), or, with a single model, that one twice; the other pickers at none."""
    others = [model for model in models if model != chosen]
    picks = [chosen, *others][:3] if others else [chosen, chosen]
    return picks + [""] * (BEAM_PICKERS - len(picks))


@require_GET
def entry_text(request: HttpRequest, session_id: str, entry_id: str) -> HttpResponse:
    """A message's text as written (Markdown), all of it: what Copy copies of a message too large for
    its page to carry twice (``EntryView.text_elsewhere``)."""
    session = open_session(request, session_id)
    parts = describe(session.entries([entry_row(session, entry_id)])[0]).parts
    return HttpResponse(written_text(parts), content_type="text/plain; charset=utf-8")


@require_GET
def entry_raw(request: HttpRequest, session_id: str, entry_id: str) -> HttpResponse:
    """The entry's line exactly as stored (for unknown types and the curious)."""
    session = open_session(request, session_id)
    line = session.raw_line(entry_row(session, entry_id))
    return HttpResponse(line, content_type="application/json; charset=utf-8")


def _tree_context(session: SessionFile, form: TreeFilterForm, **extra: Any) -> dict[str, Any]:
    """What both tree views share: the filter and the tab's position (``?at=``, else the file's leaf)."""
    at = form.cleaned_data["at"]
    position = entry_row(session, at) if at else session.index.leaf_row
    return {
        "session_id": session.session_id,
        "mode": form.cleaned_data["filter"] or "default",
        "position_row": position,
        "position": session.index.ids[position] if position is not None else "",
        "can_write": can_write(session),
        **extra,
    }


@require_GET
def tree_panel(request: HttpRequest, session_id: str) -> HttpResponse:
    """The whole tree as flat rows, filtered, with the tab's path highlighted; fetched again at every
    append, with the folds its reader opened still open (``TreePanelForm``)."""
    session = open_session(request, session_id)
    form = TreePanelForm(request.GET)
    if not form.is_valid():
        return form_error(request, form, status=400)
    context = _tree_context(session, form, filters=[(name, name) for name in FILTERS])
    opened, loaded = _opened_rows(session, form)
    context["rows"] = tree_rows(session, context["position_row"], context["mode"], opened=opened, loaded=loaded)
    return render(request, "sessions_app/partials/_tree.html", context)


def _opened_rows(session: SessionFile, form: TreePanelForm) -> tuple[list[tuple[int, int]], int | None]:
    """The rows of what the reader opened in the panel (the ends of its folds, the last entry of the
    earliest page of the path loaded). Entries the file does not hold (any more) are passed over, not
    refused: the panel is fetched again after a file was replaced too."""
    index = session.index
    ends = [(index.row(first), index.row(last)) for first, last in form.opened()]
    opened = [(first, last) for first, last in ends if first is not None and last is not None]
    loaded = index.row(form.cleaned_data["loaded"]) if form.cleaned_data["loaded"] else None
    return opened, loaded


@require_GET
def tree_run(request: HttpRequest, session_id: str) -> HttpResponse:
    """The rows a "+N" fold of the tree panel stands for, or the page of the tab's path an "earlier"
    row loads."""
    session = open_session(request, session_id)
    form = TreeRunForm(request.GET)
    if not form.is_valid():
        return form_error(request, form, status=400)
    context = _tree_context(session, form)
    first = entry_row(session, form.cleaned_data["first"])
    last = entry_row(session, form.cleaned_data["last"])
    rows = earlier_rows if form.cleaned_data["earlier"] else run_rows
    context["rows"] = rows(session, first, last, context["position_row"], context["mode"])
    return render(request, "sessions_app/partials/_tree_rows.html", context)
