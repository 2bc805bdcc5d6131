"""What the push path renders: new lines of a session file, and replies being written, rendered once
with the partial templates the page itself uses, for every tab that shows them.

A batch is rendered once per view of the file (the whole file, or a share's part of it: ``Shown``);
each tab then picks what it shows from it (``live/tabs.py``), so a hundred tabs cost one rendering
and a hundred choices. Nothing here depends on a tab: its position, the entries it has loaded, the
tools its reader may use are applied on the way out. A pushed fragment carries no CSRF token (it is
rendered once for many users): its forms post through htmx, which sends the token as a header
(``hx-headers`` on <body>), and Django reads it there when the form has no such field.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import Any

from django.template.loader import render_to_string
from django.utils.html import escape
from django.utils.safestring import mark_safe

from ..display.entries import Navigator, entry_kind, navigator_for, present
from ..display.markdown import render_markdown
from ..display.toolcalls import describe_call
from ..display.tools import EVERY, offered
from ..partials.entries import entry_fragment
from ..sessionfiles.catalog import session_info
from ..sessionfiles.index import NO_PARENT
from ..sessionfiles.store import SessionFile
from ..sessionfiles.tree import siblings

# Forms rendered for many readers get this stand-in for the CSRF token; its hidden input is taken out.
_CSRF_SLOT = secrets.token_hex(16)
_CSRF_INPUT = f'<input type="hidden" name="csrfmiddlewaretoken" value="{_CSRF_SLOT}">'
_HIDDEN_TYPES = frozenset({"label", "leaf", "usage"})
PI_OUTPUT_SHOWN = 16_384  # characters of a running tool's output a tab is sent (its last ones)
_MAX_CARRY_WALK = 64  # how far a navigator update looks below a hidden branch point for the entry showing it
SETTINGS_TYPES = frozenset({"model_change", "thinking_level_change"})  # and answers, which name their model


@dataclass(frozen=True)
class Line:
    """One line of a batch, as the tabs decide with it."""

    id: str
    parent: str | None
    end: int  # byte offset just past the line
    node: bool  # False for ``leaf`` markers, which are not part of the tree
    settings: bool  # may change the model or thinking level from here on (a change, an answer)
    compaction: bool


@dataclass
class Shown:
    """A batch as one view of the file shows it: its lines, and what a tab may take from it, each
    rendered once: the entries the transcript shows, the "‹ 2/3 ›" navigators and labels that
    changed (by the entry showing them), the header, and the file's position after it."""

    lines: list[Line]
    leaf: str | None
    entries: dict[str, str] = field(default_factory=dict)
    navigators: dict[str, str] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    head: str = ""
    tree: bool = False
    _offered: dict[frozenset[str], dict[str, str]] = field(default_factory=dict, repr=False)

    def entries_for(self, tools: frozenset[str]) -> dict[str, str]:
        """The entries as offered to a reader who may use ``tools`` (made once per set of tools)."""
        if tools >= EVERY:
            return self.entries
        found = self._offered.get(tools)
        if found is None:
            found = self._offered[tools] = {key: offered(html, tools) for key, html in self.entries.items()}
        return found


@dataclass
class Batch:
    """The lines in bytes ``[start, end)`` of a file, as the feed read them once for all its tabs; or
    ``resync``: the tabs fetch their page again (``replaced``: the file is another one now)."""

    epoch: int
    start: int
    end: int
    whole: Shown | None = None  # as the whole file shows it (None for a resync)
    resync: bool = False
    replaced: bool = False
    views: dict[Any, Any] = field(default_factory=dict, repr=False)  # other views' renderings (theirs to keep)


@dataclass(frozen=True)
class Piece:
    """A reply being written, as its text so far, rendered once: the placeholder a tab appends, and
    the text alone, for a tab that shows the placeholder already."""

    reply: str
    parent: str | None
    placeholder: str
    text: str
    ended: bool = False  # its end: ``entry`` is what it became (None: nothing was stored)
    entry: str | None = None


def render_batch(session: SessionFile, rows: list[int], start: int, end: int, epoch: int) -> Batch:
    """The rows a refresh added (file order), rendered once for the tabs of the whole file."""
    return Batch(epoch=epoch, start=start, end=end, whole=render_shown(session, rows))


def render_shown(session: SessionFile, rows: list[int]) -> Shown:
    """``rows`` of ``session`` (a view of the file) as its tabs may show them."""
    index = session.index
    shown = Shown(lines=[], leaf=index.leaf_id)
    if not rows:
        return shown
    new = set(rows)
    touched: set[int] = set()
    labelled: set[str] = set()
    for row, entry in zip(rows, session.entries(rows)):
        parent, node, kind = index.parents[row], index.is_node(row), index.types[row]
        entry_id = index.ids[row]
        answer = kind == "message" and entry_kind(entry) == "assistant"
        shown.lines.append(
            Line(
                id=entry_id,
                parent=index.ids[parent] if parent != NO_PARENT else None,
                end=index.offsets[row] + index.lengths[row] + 1,
                node=node,
                settings=kind in SETTINGS_TYPES or answer,
                compaction=kind == "compaction",
            )
        )
        if not node:
            continue
        shown.tree = True
        if entry_kind(entry) != "hidden":
            shown.entries[entry_id] = _entry(session, entry, row)
        touched.update(s for s in siblings(index, row) if s not in new)
        if kind == "label" and isinstance(entry.get("targetId"), str):
            labelled.add(entry["targetId"])
    for sibling in sorted(touched):
        for holder in _navigator_holders(session, sibling):
            nav = shown_navigator(session, holder)
            if nav is not None:
                shown.navigators[index.ids[holder]] = _navigator(session, index.ids[holder], nav)
    for target in labelled:
        label = index.labels.get(target)
        shown.labels[target] = _render(
            "sessions_app/partials/_label.html", {"entry_id": target, "label": label[0] if label else None, "oob": True}
        )
    shown.head = _head(session, renamed=any(index.types[row] == "session_info" for row in rows))
    return shown


def resync(epoch: int, offset: int, *, replaced: bool = False) -> Batch:
    """Fetch the page again; ``offset`` is how far the feed had read (what follows will come as batches),
    ``replaced`` whether the file is another one than the tab's page was made from."""
    return Batch(epoch=epoch, start=offset, end=offset, resync=True, replaced=replaced)


def render_piece(session_id: str, reply: str, parent: str | None, text: str, waiting: int = 0) -> Piece:
    """A reply being written, as its Markdown so far, below a note that it waits for its model server
    when that has said nothing for ``waiting`` seconds (0: it has not been quiet long)."""
    shown = _render("sessions_app/partials/_reply_text.html", {"markdown": render_markdown(text), "waiting": waiting})
    placeholder = _render(
        "sessions_app/partials/_reply.html",
        {"reply": reply, "parent": parent or "", "markdown": mark_safe(shown), "session_id": session_id},
    )
    return Piece(reply=reply, parent=parent, placeholder=placeholder, text=shown)


def ended_piece(reply: str, parent: str | None, entry: str | None) -> Piece:
    return Piece(reply=reply, parent=parent, placeholder="", text="", ended=True, entry=entry)


def pi_turn_piece(session_id: str, reply: str, parent: str | None, stream: dict[str, Any], silent: Any) -> Piece:
    """What pi shows of its turn before it writes it (``services.pi_stream``), as a reply being written
    under ``parent``, the entry pi continues under: the message it streams (text, thinking, tool calls)
    and the tools it runs with their output so far, under its Stop, Steer and Follow up."""
    message = stream.get("message") if isinstance(stream.get("message"), dict) else None
    parts = [p for p in (message or {}).get("parts", []) if isinstance(p, dict)]
    running = [
        {
            "name": str(tool.get("name")),
            "summary": describe_call(str(tool.get("name")), tool.get("arguments"), body=False).summary,
            "output": _tail(str(tool.get("output") or "")),
        }
        for tool in stream.get("running") or []
        if isinstance(tool, dict)
    ]
    shown = {"parts": parts, "running": running, "silent": silent if isinstance(silent, int | float) else None}
    text = _render("sessions_app/partials/_pi_turn_stream.html", shown)
    placeholder = _render(
        "sessions_app/partials/_pi_turn.html",
        {"reply": reply, "parent": parent or "", "session_id": session_id, "stream": mark_safe(text)},
    )
    return Piece(reply=reply, parent=parent, placeholder=placeholder, text=text)


def _tail(output: str) -> str:
    """The end of a running tool's output, as a terminal shows it: what it printed last."""
    if len(output) <= PI_OUTPUT_SHOWN:
        return output
    return "…" + output[-PI_OUTPUT_SHOWN:]


# ------------------------------------------------------------------------------------ helpers


def _render(template: str, context: dict[str, Any]) -> str:
    return render_to_string(template, {**context, "csrf_token": _CSRF_SLOT}).replace(_CSRF_INPUT, "")


def _head(session: SessionFile, *, renamed: bool) -> str:
    """The header's parts that follow the file: its counts, its title, and after a rename the Rename
    field (which, saved as it was, would undo another's rename)."""
    info = session_info(session)
    context = {"info": info, "session": session, "session_id": session.session_id, "oob": True}
    parts = [
        _render("sessions_app/partials/_session_meta.html", {**context, "read_only": session.index.read_only}),
        _render("sessions_app/partials/_session_title.html", context),
    ]
    if renamed:
        parts.append(_render("sessions_app/partials/_rename_field.html", context))
    return "".join(parts)


def _is_hidden(session: SessionFile, row: int) -> bool:
    kind = session.index.types[row]
    if kind in _HIDDEN_TYPES:
        return True
    if kind not in ("message", "custom_message"):
        return False
    return entry_kind(session.entries([row])[0]) == "hidden"


def shown_navigator(session: SessionFile, row: int) -> Navigator | None:
    """The "‹ 2/3 ›" a visible entry shows: its own, else that of the hidden entries right above it on
    its path (a branch point the transcript does not show hands its navigator down, nearest first).
    It depends only on the entry's ancestors, so it is the same in every tab that shows the entry."""
    index = session.index
    nav = navigator_for(index, row)
    parent = index.parents[row]
    while nav is None and parent != NO_PARENT and _is_hidden(session, parent):
        nav = navigator_for(index, parent)
        parent = index.parents[parent]
    return nav


def _navigator_holders(session: SessionFile, row: int) -> list[int]:
    """The visible entries whose navigator shows ``row``'s place among its siblings: ``row`` itself, or
    for a hidden one, the visible entries below it that have no navigator of their own."""
    if not _is_hidden(session, row):
        return [row]
    index = session.index
    holders: list[int] = []
    stack = list(index.children(row))
    visits = 0
    while stack and visits < _MAX_CARRY_WALK:
        visits += 1
        child = stack.pop()
        if navigator_for(index, child) is not None:
            continue  # its own navigator wins over the carried one
        if _is_hidden(session, child):
            stack.extend(index.children(child))
        else:
            holders.append(child)
    return holders


def _entry(session: SessionFile, entry: dict[str, Any], row: int) -> str:
    """``_entry.html`` for a pushed entry, through the page's own cache of entry fragments: every tool
    marked (each tab's reader is offered theirs: ``Shown.entries_for``), no position (a tab marks the
    entry it stands on itself, and its forms name it when sent) and no CSRF token."""
    view = present(session, entry, row, navigator=shown_navigator(session, row))
    return str(entry_fragment(view, session.session_id, session.index.read_only, tools=EVERY))


def _navigator(session: SessionFile, holder: str, nav: Navigator) -> str:
    return _render(
        "sessions_app/partials/_navigator.html",
        {"nav": nav, "session_id": session.session_id, "holder": holder, "position": "", "oob": True},
    )


def reply_text(reply: str, text: str) -> str:
    """The swap of a reply's text so far into the placeholder a tab shows already (its Stop button,
    which the reader may be pressing, stays)."""
    return f'<div id="reply-{escape(reply)}-text" hx-swap-oob="innerHTML">{text}</div>'
