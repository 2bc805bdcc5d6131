"""Comparing branches side by side, and the map of a session's tree. Read-only: the actions a column
offers (continue, label, fork) post to the session views that already do them.

The comparison URL is a permalink: ``/s/<session>/compare/?e=<ref>&e=<ref>[&e=<ref>…]``, 2 to 4 refs.

- A ref is an entry id of this session, or ``<session id>:<entry id>`` for an entry of another session
  (a fork, the session it came from). A ref that is an entry id of this session means that entry,
  whatever it contains.
- ``end=latest`` (default): each column runs on to where its branch was last left (what the
  navigator's branch switch resumes), and on into the answer when that was at a prompt that has one;
  ``end=exact``: it stops at the named entry.
- ``diff=<n>&diff=<m>``: a word diff from column n to column m (1-based) instead of the columns.
- ``branches=<entry id>[&at=<entry id>]``: the sibling branches of that entry; answered with a
  redirect to the ``e=`` URL of (up to 4 of) them, always including the one holding ``at``.
- ``older=<entry id>``: a page of the shared trunk, the entries above that one (the fragment the
  trunk's "Show earlier entries" loads; the same route, so the same permission, as the comparison).

The map: ``/s/<session>/map/[?at=<entry id>]``, its data at ``/s/<session>/map/data/``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django import forms
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse, QueryDict
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_GET

from ..access.listing import visible_sessions
from ..access.scoped import SessionView, can_write, may_fork
from ..access.web import open_for, open_session
from ..converters import MAX_ID_CHARS, SessionIdConverter, reverse_entry
from ..display.compare import (
    FOLD_CHARS,
    FOLD_LINES,
    MAX_COLUMNS,
    MIN_COLUMNS,
    Pick,
    chosen_branches,
    compare,
    diff_rows,
    trunk_page,
)
from ..display.entries import EntryView, present
from ..display.markdown import render_markdown
from ..display.tools import EVERY, READING, offered
from ..display.treemap import Fork, MapNode, tree_map
from ..display.worddiff import Budget
from ..forms import EntryIdField, PositionForm
from ..services import beam, replies
from ..services.lookup import catalog, entry_row
from ..sessionfiles.catalog import session_info
from ..sessionfiles.cursor import cursor_id, cursor_of
from ..sessionfiles.fork import fork_point
from ..sessionfiles.store import SessionFile
from ..sessionfiles.tree import ancestors, siblings
from .responses import form_error

# All word diffs of one page together; each diff alone gets at most worddiff.DIFF_SECONDS.
DIFF_PAGE_SECONDS = 1.5
# An entry id of this session, or "<session id>:<entry id>".
_REF = re.compile(rf"[^\x00-\x1f]{{1,{MAX_ID_CHARS + 129}}}")
_SESSION_ID = re.compile(SessionIdConverter.regex)


class EntryRefsField(forms.Field):
    """Repeated ``e=`` parameters: entry refs, checked for shape only (they are looked up, never used
    as paths)."""

    widget = forms.MultipleHiddenInput

    def to_python(self, value: Any) -> list[str]:
        if not value:
            return []
        return [str(item) for item in (value if isinstance(value, (list, tuple)) else [value])]

    def validate(self, value: Any) -> None:
        super().validate(value)
        for ref in value:
            if not _REF.fullmatch(ref):
                raise forms.ValidationError(
                    f"Not an entry id: an id is 1 to {MAX_ID_CHARS} characters, no control characters."
                )


class CompareForm(forms.Form):
    e = EntryRefsField(required=False)
    end = forms.ChoiceField(choices=[("latest", "latest"), ("exact", "exact")], required=False)
    diff = forms.TypedMultipleChoiceField(
        coerce=int, choices=[(str(n), str(n)) for n in range(1, MAX_COLUMNS + 1)], required=False
    )
    branches = EntryIdField(required=False)
    at = EntryIdField(required=False)
    older = EntryIdField(required=False)
    beam = EntryIdField(required=False)
    a = EntryRefsField(required=False)

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if self.errors or data.get("branches") or data.get("older"):
            return data
        if data.get("beam"):
            answers = [beam.Answer.parse(ref) for ref in data.get("a") or []]
            if not beam.MIN_ANSWERS <= len(answers) <= beam.MAX_ANSWERS + 1 or None in answers:
                raise forms.ValidationError(
                    f"A beam names {beam.MIN_ANSWERS} to {beam.MAX_ANSWERS + 1} answers (a=<reply>:<entry>:<model>)."
                )
            data["answers"] = answers
            return data
        refs = data.get("e") or []
        if not MIN_COLUMNS <= len(refs) <= MAX_COLUMNS:
            raise forms.ValidationError(
                f"Name {MIN_COLUMNS} to {MAX_COLUMNS} entries to compare (e=…), not {len(refs)}."
            )
        if len(set(refs)) != len(refs):
            raise forms.ValidationError("Name each entry once.")
        pair = data.get("diff") or []
        if pair and (len(pair) != 2 or pair[0] == pair[1] or max(pair) > len(refs)):
            raise forms.ValidationError(f"A word diff takes two different column numbers from 1 to {len(refs)}.")
        return data


@require_GET
def compare_page(request: HttpRequest, session_id: str) -> HttpResponse:
    """Branches of a session (or of it and its forks) side by side, or a word diff of two of them."""
    session = open_session(request, session_id)
    form = CompareForm(request.GET)
    if not form.is_valid():
        errors = [str(error) for errors in form.errors.values() for error in errors]
        return render(
            request,
            "sessions_app/error.html",
            {"title": "This comparison cannot be shown", "errors": errors},
            status=400,
        )
    data = form.cleaned_data
    if data["branches"]:
        return redirect(_branches_url(session, data["branches"], data["at"] or None))
    if data["beam"]:
        return _beam_page(request, session, data["beam"], data["answers"])
    if data["older"]:
        page = trunk_page(session, entry_row(session, data["older"]))
        return render(
            request, "sessions_app/partials/_compare_trunk.html", {"session_id": session.session_id, "page": page}
        )
    picks = [_pick(request, session, ref) for ref in data["e"]]
    follow = _follow([pick.session for pick in picks])
    latest = data["end"] != "exact"
    comparison = compare(picks, latest=latest)
    for column, pick in zip(comparison.columns, picks):
        column.read_only = not can_write(pick.session)  # a column the reader may not write offers no Label
    pair = data["diff"]
    diffs = diff_rows(comparison, pair[0] - 1, pair[1] - 1, Budget(DIFF_PAGE_SECONDS)) if pair else None
    return render(
        request,
        "sessions_app/compare.html",
        {
            "session": session,
            "session_id": session.session_id,
            "title": session_info(session).title,
            "comparison": comparison,
            "refs": data["e"],
            "end": "latest" if latest else "exact",
            "pair": pair,
            "diffs": diffs,
            "coarse": any(d.coarse for row in diffs or () for _, d in row.parts),
            "base_query": _query(refs=data["e"], end=None if latest else "exact"),
            "follow": follow,
            "may_fork": may_fork(session),
        },
    )


def beam_url(session_id: str, prompt_id: str, answers: Sequence[beam.Answer]) -> str:
    """The page of a beam: the answers to ``prompt_id`` side by side, as they stream and once stored."""
    query = QueryDict(mutable=True)
    query["beam"] = prompt_id
    query.setlist("a", [answer.ref for answer in answers])
    return f"{reverse('sessions:compare', args=[session_id])}?{query.urlencode()}"


def _beam_page(request: HttpRequest, session: SessionView, prompt_id: str, answers: list[beam.Answer]) -> HttpResponse:
    """A beam's answers side by side: each stored one as its entry, with "Continue with this answer";
    each still being written as the reply placeholder a session page shows, its text so far as this
    process has it (the follow socket sends the rest as it comes, from whichever process writes it)."""
    index = session.index
    prompt_row = entry_row(session, prompt_id)
    writing = {reply.id: reply.reply.text for reply in replies.running(session.session_id)}
    tools = EVERY if can_write(session) else READING
    columns = []
    for number, answer in enumerate(answers, start=1):
        row = index.row(answer.entry)
        if row is not None and index.parents[row] == prompt_row:
            view = present(session, session.entries([row])[0], row)
            columns.append(BeamColumn(number, answer, view, ""))
            continue
        placeholder = render_to_string(
            "sessions_app/partials/_reply.html",
            {
                "reply": answer.reply,
                "parent": prompt_id,
                "markdown": render_markdown(writing.get(answer.reply, "")),
                "session_id": session.session_id,
            },
            request=request,
        )
        columns.append(BeamColumn(number, answer, None, mark_safe(offered(placeholder, tools))))
    stored = [column.entry.id for column in columns if column.entry is not None]
    pending = [column.answer.reply for column in columns if column.entry is None]
    prompt = present(session, session.entries([prompt_row])[0], prompt_row)
    return render(
        request,
        "sessions_app/beam.html",
        {
            "session": session,
            "session_id": session.session_id,
            "title": session_info(session).title,
            "prompt": prompt,
            "columns": columns,
            "long": frozenset(
                view.id
                for view in [prompt, *(c.entry for c in columns if c.entry)]
                if view.longer_than(FOLD_CHARS, FOLD_LINES)
            ),
            "pending": pending,
            "stored": stored,
            "models": list(dict.fromkeys(answer.model for answer in answers)),
            "refs": [answer.ref for answer in answers],
            "compare_query": _query(refs=stored, end="exact") if len(stored) >= MIN_COLUMNS else "",
            "may_fuse": can_write(session)
            and not pending
            and len(stored) >= beam.MIN_ANSWERS
            and len(answers) <= beam.MAX_ANSWERS,
            "can_write": can_write(session),
            "follow": _follow([session]),
            "follow_replies": json.dumps(pending),
        },
    )


@dataclass(frozen=True)
class BeamColumn:
    """One answer of a beam as its column shows it: its entry once stored, else its reply's placeholder."""

    number: int
    answer: beam.Answer
    entry: EntryView | None
    placeholder: str


def _pick(request: HttpRequest, session: SessionFile, ref: str) -> Pick:
    """What an ``e=`` ref names (in a session the request may see); 404 with the reason when it names
    nothing."""
    row = session.index.row(ref)
    if row is not None:
        return Pick(session, row, ref)
    other_id, colon, entry_id = ref.partition(":")
    if colon and _SESSION_ID.fullmatch(other_id):
        other = open_session(request, other_id)
        row = other.index.row(entry_id)
        if row is None:
            raise Http404(f"Entry {entry_id} not found in session {other_id}")
        return Pick(other, row, ref)
    raise Http404(f"Entry {ref} not found in this session")


def _branches_url(session: SessionFile, entry_id: str, at: str | None) -> str:
    """The comparison of the sibling branches of ``entry_id``: the one holding ``at`` (the tab's
    position) and the others in tree order, at most MAX_COLUMNS of them."""
    index = session.index
    row = entry_row(session, entry_id)
    branches = siblings(index, row)
    if len(branches) < MIN_COLUMNS:
        raise Http404(f"Entry {entry_id} has no sibling branches to compare")
    at_row = index.row(at) if at else None
    on_path = set(ancestors(index, at_row)) if at_row is not None else set()
    refs = [index.ids[b] for b in chosen_branches(branches, on_path)]
    return f"{reverse('sessions:compare', args=[session.session_id])}?{_query(refs=refs)}"


def _query(*, refs: list[str], end: str | None = None) -> str:
    query = QueryDict(mutable=True)
    query.setlist("e", refs)
    if end:
        query["end"] = end
    return query.urlencode()


# ---------------------------------------------------------------------- the map


@require_GET
def map_page(request: HttpRequest, session_id: str) -> HttpResponse:
    """The page that draws the map (map.js fetches the data and lays it out, and again whenever the
    file grows). Without ``?at=`` it follows the file's own position."""
    form = PositionForm(request.GET)
    if not form.is_valid():
        return form_error(request, form, status=400)
    session = open_session(request, session_id)
    follow = _follow([session])
    at = _position(session, form)
    query = QueryDict(mutable=True)
    if form.cleaned_data["at"] and at is not None:
        query["at"] = session.index.ids[at]
    return render(
        request,
        "sessions_app/map.html",
        {
            "session": session,
            "session_id": session.session_id,
            "title": session_info(session).title,
            "position": session.index.ids[at] if at is not None else "",
            "data_url": f"{reverse('sessions:map_data', args=[session.session_id])}?{query.urlencode()}",
            "follow": follow,
        },
    )


def _follow(sessions: list[SessionFile]) -> str:
    """For the follow socket (``live.consumers.FollowConsumer``): each session's file, how far into it
    this page reads (its cursor, taken before anything is rendered, so whatever is appended meanwhile is
    announced) and the id of the line that ends there (by which the feed tells a file replaced meanwhile, ``sessionfiles.cursor.reflects``)."""
    seen: dict[str, dict[str, Any]] = {}
    for session in sessions:
        index = session.index
        seen.setdefault(
            session.session_id, {"session": session.session_id, "cursor": cursor_of(index), "id": cursor_id(index)}
        )
    return json.dumps(list(seen.values()))


@require_GET
def map_data(request: HttpRequest, session_id: str) -> HttpResponse:
    """The map as JSON: nodes with their drawn parent, kind, label, preview text and links."""
    form = PositionForm(request.GET)
    if not form.is_valid():
        return JsonResponse({"errors": {name: list(errors) for name, errors in form.errors.items()}}, status=400)
    session = open_session(request, session_id)
    data = tree_map(session, _position(session, form), _forks(session))
    return JsonResponse(
        {
            "session": session.session_id,
            "entries": data.entries,
            "shown": sum(1 for node in data.nodes if node.kind not in ("start", "fork")),
            "folding": data.folding,
            "foldedMore": data.level > 0,
            "compareUrl": reverse("sessions:compare", args=[session.session_id]),
            "nodes": _nodes_json(session, data.nodes),
            "hiddenLabels": [
                {"id": entry_id, "label": label, "url": _entry_url(session.session_id, entry_id)}
                for entry_id, label in data.hidden_labels
            ],
        }
    )


def _position(session: SessionFile, form: PositionForm) -> int | None:
    """The position a valid ``?at=`` names (404 for an entry not in the session), else the file's leaf."""
    at = form.cleaned_data["at"]
    return entry_row(session, at) if at else session.index.leaf_row


def _forks(session: SessionView) -> list[Fork]:
    """Sessions forked from this one that the reader may open (each as they see it), with the entry
    each was forked at."""
    if session.access is None:
        return []
    forks = []  # lineage from the catalog's header index: no file is read but the forks
    for fork_info in visible_sessions(session.access, catalog().forks_of(session_info(session))):
        try:
            fork = open_for(session.access, fork_info.id)
        except (OSError, ValueError, Http404):
            continue
        forks.append(Fork(fork.session_id, fork_info.title, fork_point(fork, session), fork.leaf_id))
    return forks


def _nodes_json(session: SessionFile, nodes: list[MapNode]) -> list[dict[str, Any]]:
    """Nodes keyed by their place in the list (``key``/``parentKey``): entry ids are any string, so
    they cannot share a namespace with the map's own start and fork nodes."""
    keys = {node.id: key for key, node in enumerate(nodes) if node.kind != "fork"}
    return [
        {**_node_json(session, node), "key": key, "parentKey": None if node.parent is None else keys[node.parent]}
        for key, node in enumerate(nodes)
    ]


def _node_json(session: SessionFile, node: MapNode) -> dict[str, Any]:
    sid = session.session_id
    if node.kind == "fork":
        url = reverse("sessions:session", args=[node.session_id])
        ref = f"{node.session_id}:{node.fork_leaf}" if node.fork_leaf else ""
    elif node.kind == "start":
        url, ref = reverse("sessions:session", args=[sid]), ""
    else:
        url, ref = _entry_url(sid, node.id), node.id
    out: dict[str, Any] = {
        "id": node.id,
        "parent": node.parent,
        "kind": node.kind,
        "folded": node.folded,
        "label": node.label,
        "text": node.text,
        "onPath": node.on_path,
        "isPosition": node.is_position,
        "url": url,
        "ref": ref,
    }
    if node.branches:
        query = QueryDict(mutable=True)
        query["branches"] = node.first_branch
        out["branches"] = node.branches
        out["branchesUrl"] = f"{reverse('sessions:compare', args=[sid])}?{query.urlencode()}"
    return out


def _entry_url(session_id: str, entry_id: str) -> str:
    return reverse_entry("sessions:entry", session_id, entry_id) or ""  # map.js draws such an entry without a link
