"""What a push carries: new lines of a session file, and replies being written, rendered once for
every tab with the partial templates the page itself uses.

Nothing here depends on a tab. A tab's position decides what it does with a push (append an entry
that continues its branch, update the "‹ 2/3 ›" of an entry it shows, say that the file moved on
elsewhere), and the browser decides that (``static/pitree/live.js``), so one rendering serves a
hundred tabs. The few position-dependent bits of the partials are rendered for the entry itself
(``is-position`` on a new entry) or left to the browser (the ``at`` field of forms is filled in when
a form is sent).

The protocol, server to browser, one JSON object per websocket message:

- ``{"t": "batch", "epoch", "from", "to", "leaf", "entries": [{"id", "parent", "end", "node", "html"}],
  "navs": {entry id: html}, "labels": {entry id: text or null}, "head", "title", "doctitle", "name", "tree"}``:
  the lines in bytes ``[from, to)`` of the file; ``end`` is where each entry's line ends, so a tab
  whose content already reflects a byte offset skips what it has; ``name`` is the session's name ("" for
  none), for its *Rename* field.
- ``{"t": "resync", "epoch", "replaced"}``: fetch the page again. ``replaced``: the file is not the one
  the tab's page was made from (replaced, rewritten, read again from scratch, or without the line the
  tab named at its cursor), so the entry the tab stands on may be gone: it fetches the session's page,
  at its leaf; otherwise too much changed to patch, and it fetches its own position again.
- ``{"t": "reply", "reply", "parent", "html"}`` / ``{"t": "reply-end", "reply", "entry"}``: a reply
  being written, as its text so far, and the entry it became. What pi streams of its turn comes the
  same way (with ``"pi": true``), one reply per message it continues under: its text, thinking and tool
  calls as they come, and the tools it runs with their output so far.
- ``{"t": "live"}``: the tab has what it missed; from here on everything comes as it happens.
- ``{"t": "gone"}``: the session's file is no longer there.

Browser to server: ``{"cursor": byte offset, "id": line id}`` once, when the socket opens. ``id`` names
the version of the file the cursor counts in: the id of the line that ends at the cursor (the last entry
the tab has, ``leaf`` markers included; at 0, the header's: the session id). A file that holds no such
line there is not the one the tab's page came from (replaced or rewritten while its socket was down):
the tab gets a ``resync`` with ``replaced``, not the bytes after its cursor of another file. A tab of a
branch share, whose batches end past lines it may not see, sends the end of its own last line as its
cursor. A tab that sends no ``id`` (a page from before it was sent) is caught up from its cursor alone.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field, replace
from typing import Any

import orjson
from django.template.loader import render_to_string

from ..display.entries import EntryView, Navigator, entry_kind, navigator_for, present
from ..display.markdown import title_text
from ..display.toolcalls import describe_call
from ..display.tools import EVERY, offered
from ..sessionfiles.catalog import session_info
from ..sessionfiles.index import NO_PARENT
from ..sessionfiles.store import SessionFile
from ..sessionfiles.tree import siblings

# A push is rendered once for many users, so it cannot carry anyone's CSRF token: forms are rendered
# with this stand-in, and its hidden input is taken out again. htmx sends the token as a header
# (``hx-headers`` on <body>), which Django reads when the form has no such field.
_CSRF_SLOT = secrets.token_hex(16)
_CSRF_INPUT = f'<input type="hidden" name="csrfmiddlewaretoken" value="{_CSRF_SLOT}">'
_HIDDEN_TYPES = frozenset({"label", "leaf", "usage"})
PI_OUTPUT_SHOWN = 16_384  # characters of a running tool's output a tab is sent (its last ones)
_MAX_CARRY_WALK = 64  # how far a navigator update looks below a hidden branch point for the entry showing it


@dataclass(frozen=True)
class PushedEntry:
    id: str
    parent: str | None
    end: int  # byte offset just past the entry's line
    node: bool  # False for ``leaf`` markers, which are not part of the tree
    html: str  # "" for entries the transcript does not show


@dataclass
class Batch:
    """New lines of a file, ``[start, end)`` in bytes, as every tab receives them."""

    epoch: int
    start: int
    end: int
    entries: list[PushedEntry] = field(default_factory=list)
    leaf: str | None = None
    navs: dict[str, str] = field(default_factory=dict)
    labels: dict[str, str | None] = field(default_factory=dict)
    head: str = ""
    title: str = ""
    doctitle: str = ""
    name: str = ""
    tree: bool = False
    resync: bool = False
    replaced: bool = False  # a resync because the file is another one now
    _text: str | None = field(default=None, repr=False, compare=False)
    _offering: dict[frozenset[str], Batch] = field(default_factory=dict, repr=False, compare=False)

    def text(self) -> str:
        """The websocket message (serialised once, however many tabs receive it)."""
        if self._text is None:
            self._text = _dumps(self._payload())
        return self._text

    def offering(self, tools: frozenset[str]) -> Batch:
        """This batch for a reader offered only ``tools`` under its entries (``display.tools``): made
        once per set of tools, however many tabs receive it."""
        if tools >= EVERY or self.resync:
            return self
        found = self._offering.get(tools)
        if found is None:
            entries = [replace(e, html=offered(e.html, tools)) for e in self.entries]
            found = self._offering[tools] = replace(self, entries=entries, _text=None, _offering={})
        return found

    def after(self, offset: int) -> Batch | None:
        """This batch for a tab whose content reflects the file up to ``offset``: None when it has it all."""
        if self.resync or offset <= self.start:
            return self
        if offset >= self.end:
            return None
        return replace(self, entries=[e for e in self.entries if e.end > offset], _text=None, _offering={})

    def _payload(self) -> dict[str, Any]:
        if self.resync:
            return {"t": "resync", "epoch": self.epoch, "replaced": self.replaced}
        return {
            "t": "batch",
            "epoch": self.epoch,
            "from": self.start,
            "to": self.end,
            "leaf": self.leaf,
            "entries": [
                {"id": e.id, "parent": e.parent, "end": e.end, "node": e.node, "html": e.html} for e in self.entries
            ],
            "navs": self.navs,
            "labels": self.labels,
            "head": self.head,
            "title": self.title,
            "doctitle": self.doctitle,
            "name": self.name,
            "tree": self.tree,
        }


def render_batch(session: SessionFile, rows: list[int], start: int, end: int, epoch: int) -> Batch:
    """Render the rows a refresh added (file order), once for every tab of the session."""
    index = session.index
    batch = Batch(epoch=epoch, start=start, end=end, leaf=index.leaf_id)
    if not rows:
        return batch
    decoded = session.entries(rows)
    new = set(rows)
    touched: set[int] = set()
    for row, entry in zip(rows, decoded):
        parent = index.parents[row]
        node = index.is_node(row)
        html = ""
        if node and entry_kind(entry) != "hidden":
            html = _entry_html(session, entry, row)
        batch.entries.append(
            PushedEntry(
                id=index.ids[row],
                parent=index.ids[parent] if parent != NO_PARENT else None,
                end=index.offsets[row] + index.lengths[row] + 1,
                node=node,
                html=html,
            )
        )
        if not node:
            continue
        batch.tree = True
        touched.update(s for s in siblings(index, row) if s not in new)
        if index.types[row] == "label":
            target = entry.get("targetId")
            if isinstance(target, str):
                label = index.labels.get(target)
                batch.labels[target] = label[0] if label else None
    for sibling in sorted(touched):
        for holder in _navigator_holders(session, sibling):
            nav = shown_navigator(session, holder)
            if nav is not None:
                batch.navs[index.ids[holder]] = _navigator_html(session, nav)
    info = session_info(session)
    batch.head = _render(
        "sessions_app/partials/_session_meta.html",
        {"info": info, "session": session, "session_id": session.session_id, "read_only": index.read_only},
    )
    batch.title = title_text(info.name, info.first_message, 160)
    batch.doctitle = f"{title_text(info.name, info.first_message, 60)} · pitree"
    batch.name = info.name or ""
    return batch


def resync(epoch: int, offset: int, *, replaced: bool = False) -> Batch:
    """Fetch the page again; ``offset`` is how far the feed had read (what follows will come as batches),
    ``replaced`` whether the file is another one than the tab's page was made from."""
    return Batch(epoch=epoch, start=offset, end=offset, resync=True, replaced=replaced)


def reply_message(reply: str, parent: str | None, text: str, session_id: str) -> str:
    """A reply being written, as its Markdown so far: a placeholder the finished entry replaces."""
    html = _render(
        "sessions_app/partials/_reply.html",
        {"reply": reply, "parent": parent or "", "text": text, "session_id": session_id},
    )
    return _dumps({"t": "reply", "reply": reply, "parent": parent, "html": html})


def pi_turn_message(reply: str, parent: str | None, stream: dict[str, Any], silent: Any, session_id: str) -> str:
    """What pi shows of its turn before it writes it (``services.pi_stream``): a reply being written, to
    the browser, whose ``parent`` is the entry pi continues under (``pi`` says it is pi's, so that the
    tab that asked shows it in place of its own stand-in whatever its id)."""
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
    html = _render(
        "sessions_app/partials/_pi_turn.html",
        {
            "reply": reply,
            "parent": parent or "",
            "parts": parts,
            "running": running,
            "silent": silent if isinstance(silent, int | float) else None,
            "session_id": session_id,
        },
    )
    return _dumps({"t": "reply", "reply": reply, "parent": parent, "html": html, "pi": True})


def _tail(output: str) -> str:
    """The end of a running tool's output, as a terminal shows it: what it printed last."""
    if len(output) <= PI_OUTPUT_SHOWN:
        return output
    return "…" + output[-PI_OUTPUT_SHOWN:]


def reply_end_message(reply: str, entry: str | None) -> str:
    return _dumps({"t": "reply-end", "reply": reply, "entry": entry})


GONE = '{"t":"gone"}'
LIVE = '{"t":"live"}'


def layer_message(paused: bool) -> str:
    """Whether live updates from other server processes are paused (the channel layer does not answer)."""
    return _dumps({"t": "layer", "paused": paused})


# ------------------------------------------------------------------------------------ helpers


def _render(template: str, context: dict[str, Any]) -> str:
    return render_to_string(template, {**context, "csrf_token": _CSRF_SLOT}).replace(_CSRF_INPUT, "")


def _dumps(payload: dict[str, Any]) -> str:
    return orjson.dumps(payload).decode()


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


def _entry_html(session: SessionFile, entry: dict[str, Any], row: int) -> str:
    view: EntryView = present(session, entry, row, navigator=shown_navigator(session, row))
    return _render(
        "sessions_app/partials/_entry.html",
        {
            "e": view,
            "session_id": session.session_id,
            "position": view.id,
            "read_only": session.index.read_only,
        },
    )


def _navigator_html(session: SessionFile, nav: Navigator) -> str:
    return _render(
        "sessions_app/partials/_navigator.html",
        {"nav": nav, "session_id": session.session_id, "position": ""},
    )
