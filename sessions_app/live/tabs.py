"""One tab of a session as its consumer keeps it: where the tab stands, and what it is to be shown.

The tab tells its socket where its page is, on every connect and every move it makes (``Hello``): the
entry it stands on, the byte offset of the file its page reflects (its cursor) with the id of the line
that ends there, the oldest entry of its path it has loaded, the note it shows about the file's
position and the replies being written it shows. From then on the server decides, for each batch the
feed read and each piece of a reply being written, what this tab should see, and sends it as HTML,
out of fragments rendered once for every tab (``fragments``), with ``hx-swap-oob`` on every element,
for htmx's websocket extension to swap in:

- entries appended under the entry the tab stands on continue its branch: they are appended to
  ``#entries``, and the tab moves onto them (what it sends next answers the newest entry);
- the "‹ 2/3 ›" navigators and the labels that changed, of entries of its path it has loaded; the
  header (counts, title, after a rename the Rename field);
- the note about the file's position: "This tab shows an earlier point or another branch", or, when the
  file moved away from where the tab followed it, "The session moved to another branch" with *Follow
  it*;
- a reply being written shows as a placeholder at the end of ``#entries`` while it answers the entry
  the tab stands on, its text swapped as it grows; the entry it becomes takes its place;
- ``#tab-state``: where the tab stands now (its forms name that entry when sent, its socket names the
  cursor when it connects again);
- when a push cannot say what changed (a compaction continued the branch: its summary card folds
  history above; the file was replaced or grew by hundreds of lines; a batch past the largest
  websocket message), ``#resync``: the tab fetches its page again and morphs it in.

Each message begins with a comment ``<!--pitree v=N do=…-->``: ``v``, the move of the tab it was made
for (the tab drops a message made for a page it has left since, and tells its socket the page it has
now, which answers from there); ``do``, what the page fetches again itself, through htmx, because it
holds what the reader opened there (``tree``: the tree panel; ``settings``: the composer's pickers;
``sidebar``: the sessions sidebar), or what it is told (``live``: caught up; ``reply:<id>``: a reply
was started, by a request of this tab's or not, which tells the tab that asked for it, should the
answer to its request be lost, that the server took it).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.html import escape

from ..converters import reverse_entry
from ..display.tools import WRITE, offered
from ..sessionfiles.index import NO_PARENT, SessionIndex
from .fragments import Batch, Piece, Shown, reply_text

NOTES = ("none", "position", "moved")
HEARD_KEPT = 256  # replies a tab remembers being told of
REPLACED = "This session's file was replaced or rewritten (by another program): it shows as the file is now."


@dataclass(frozen=True)
class Hello:
    """Where a tab's page is: sent when its socket opens, and again after every move of the tab."""

    view: int  # the tab's count of its moves: messages made for an older one are dropped by the tab
    at: str | None  # the entry it stands on (None: before the first entry)
    cursor: int  # the byte offset of the file its page reflects
    line_id: str | None  # the id of the line that ends there (None: not said)
    top: str | None  # the oldest entry of its path on the page (None: none)
    notes: str  # what it says of the file's position (``NOTES``)
    replies: tuple[str, ...] = ()  # the replies being written it shows
    asked: tuple[str, ...] = ()  # the replies it asked for and has no answer for yet
    sidebar: bool = False  # it has the sessions sidebar, told when the sessions folder changed


@dataclass
class Tab:
    """What the consumer knows of its tab, and the messages that keep the tab where it should be."""

    session_id: str
    tools: frozenset[str]  # the entry tools its reader is offered
    view: int = 0
    position: str | None = None
    sent: int = 0  # the byte offset of the file the tab's page reflects (pushes cut there)
    mark: tuple[int, str | None] = (0, None)  # the end and id of the last line the tab has: its cursor
    top: str | None = None
    path: set[str] = field(default_factory=set)  # entries of its path it has loaded
    following: bool = False  # it stood where the file's position is, as of the last batch
    notes: str = "none"
    replies: dict[str, str | None] = field(default_factory=dict)  # reply placeholders it shows -> their parent
    head: str = ""  # the header as the last batch rendered it
    heard: dict[str, None] = field(default_factory=dict)  # replies it was told were started, oldest first

    # ------------------------------------------------------------------ the tab's page

    def move(self, hello: Hello, index: SessionIndex, running: Iterable[Piece], ended: Iterable[str]) -> str:
        """The tab's page is ``hello``'s now (it connected, or moved): what it shows of the replies
        being written is put right (the placeholders its page holds that answer elsewhere go, those
        that answer where it stands now come), and where it stands (an edit or a regeneration moved it
        without a new page); what the file gained since its cursor follows as a batch."""
        self.view, self.position, self.sent = hello.view, hello.at, hello.cursor
        self.mark = (hello.cursor, hello.line_id)
        self.notes = hello.notes if hello.notes in NOTES else "none"
        self.following = self.notes == "none"
        self.top = hello.top
        self.path = loaded_path(index, hello.at, hello.top)
        self.replies = dict.fromkeys(hello.replies)
        running = list(running)
        # The header is outside what a page answered to the tab brings: a batch made for the page the
        # tab left, and dropped there, may have been the one that said it.
        parts = [self.head, *self._replies(running, force=set(hello.replies)), self._state()]
        known = {piece.reply for piece in running} | set(ended)
        return self.message(parts, [word for reply in hello.asked if reply in known for word in self._heard(reply)])

    def scrolled(self, top: str | None, index: SessionIndex) -> None:
        """The tab loaded older entries of its path (or a fold of them): they are targets too now."""
        self.top = top
        self.path = loaded_path(index, self.position, top)

    # ------------------------------------------------------------------ what the file gained

    def take(self, batch: Batch, shown: Shown | None, running: Iterable[Piece]) -> str | None:
        """The message for a batch (None: nothing for this tab); ``shown`` is the batch as the tab's view
        of the file shows it (None: it holds nothing the tab may see)."""
        if batch.resync:
            self.sent = batch.end
            return self.resync(replaced=batch.replaced)
        lines = [] if shown is None else [line for line in shown.lines if line.end > self.sent]
        self.sent = max(self.sent, batch.end)
        if shown is None or not lines:
            return None
        self.mark = (lines[-1].end, lines[-1].id)
        entries = shown.entries_for(self.tools)
        appended: list[str] = []
        settings = compacted = False
        for line in lines:
            if line.node and line.parent == self.position:
                self.position = line.id
                self.path.add(line.id)
                html = entries.get(line.id)
                if html is not None:
                    appended.append(html)
                settings = settings or line.settings
                compacted = compacted or line.compaction
        if compacted:
            # Its summary card folds the history above into the branch's reading: the page is fetched
            # again, as it now is (its tree and pickers with it).
            return self.resync()
        parts: list[str] = []
        if appended:
            parts.append(f'<div hx-swap-oob="beforeend:#entries">{"".join(appended)}</div>')
        parts.extend(html for holder, html in shown.navigators.items() if holder in self.path)
        parts.extend(html for target, html in shown.labels.items() if target in self.path)
        self.head = shown.head
        parts.append(shown.head)
        parts.extend(self._notes(shown.leaf))
        parts.extend(self._replies(running))
        parts.append(self._state())
        todo = [name for name, due in (("tree", shown.tree), ("settings", settings)) if due]
        return self.message(parts, todo)

    def resync(self, *, replaced: bool = False) -> str:
        """Fetch the page again: at the tab's position, or, the file being another one now (the entry
        it stands on may be gone from it), the session's own page at its latest position, saying why."""
        parts = []
        if replaced:
            url = reverse("sessions:session", args=[self.session_id])
            parts.append(render_to_string("sessions_app/partials/_flash_note.html", {"text": REPLACED}))
        else:
            url = self.url()
        parts.append(render_to_string("sessions_app/partials/_resync.html", {"url": url, "replaced": replaced}))
        return self.message(parts)

    # ------------------------------------------------------------------ replies being written

    def take_piece(self, piece: Piece) -> str | None:
        """The message for a piece of a reply being written, or its end (None: nothing for this tab).
        Every tab is told once that a reply was started (``reply:<id>``), wherever it answers: the
        tab that asked for it knows then that its request was taken, should its answer be lost."""
        parts = self._piece(piece)
        todo = self._heard(piece.reply)
        return self.message(parts, todo) if parts or todo else None

    def _piece(self, piece: Piece) -> list[str]:
        shown = piece.reply in self.replies
        if piece.ended:
            if not shown or piece.entry is not None:
                return []  # stored: the entry takes its place when it arrives
            del self.replies[piece.reply]
            return [_gone(piece.reply)]
        if shown and piece.parent == self.position:
            self.replies[piece.reply] = piece.parent
            return [reply_text(piece.reply, piece.text)]
        if shown:
            del self.replies[piece.reply]
            return [_gone(piece.reply)]
        if piece.parent != self.position:
            return []
        self.replies[piece.reply] = piece.parent
        return [self._placeholder(piece)]

    def _heard(self, reply: str) -> list[str]:
        if reply in self.heard:
            return []
        self.heard[reply] = None
        if len(self.heard) > HEARD_KEPT:
            del self.heard[next(iter(self.heard))]
        return [f"reply:{reply}"]

    def _replies(self, running: Iterable[Piece], force: set[str] | None = None) -> list[str]:
        """Placeholders that answer elsewhere than the entry the tab stands on go; those of replies
        being written there come (``force``: those the page holds get their text so far)."""
        parts: list[str] = []
        live = {piece.reply: piece for piece in running}
        for reply, parent in list(self.replies.items()):
            piece = live.get(reply)
            answers = piece.parent if piece is not None else parent
            if answers != self.position or (piece is None and force is not None):
                del self.replies[reply]
                parts.append(_gone(reply))
            elif piece is not None and force is not None and reply in force:
                self.replies[reply] = piece.parent
                parts.append(reply_text(reply, piece.text))
        for piece in live.values():
            if piece.reply not in self.replies and piece.parent == self.position:
                self.replies[piece.reply] = piece.parent
                parts.append(self._placeholder(piece))
        return parts

    def _placeholder(self, piece: Piece) -> str:
        return f'<div hx-swap-oob="beforeend:#entries">{offered(piece.placeholder, self.tools)}</div>'

    # ------------------------------------------------------------------ the tab's state

    def _notes(self, leaf: str | None) -> list[str]:
        """The note about the file's position, when it changed: none while the tab stands there; "moved
        to another branch" once the file left where the tab followed it (another tab or program navigated,
        or wrote on another branch); else "an earlier point or another branch"."""
        if leaf == self.position:
            notes, self.following = "none", True
        elif self.following:
            notes, self.following = "moved", False
        else:
            notes = "moved" if self.notes == "moved" else "position"
        if notes == self.notes:
            return []
        self.notes = notes
        return [_notes(self.session_id, notes, WRITE in self.tools)]

    def _state(self) -> str:
        return _tab_state(self.session_id, self.position, self.mark[0], self.mark[1] or "", WRITE in self.tools)

    def url(self) -> str:
        """The permalink of where the tab stands (the session's own URL before the first entry)."""
        found = reverse_entry("sessions:entry", self.session_id, self.position) if self.position else None
        return found or reverse("sessions:session", args=[self.session_id])

    def message(self, parts: Iterable[str], todo: Iterable[str] = ()) -> str:
        return head(self.view, todo) + "".join(parts)


def head(view: int | None, todo: Iterable[str] = ()) -> str:
    """The comment a message begins with: the tab's move it was made for, what the page fetches again."""
    words = ["pitree"]
    if view is not None:
        words.append(f"v={view}")
    todo = list(todo)
    if todo:
        words.append("do=" + ",".join(todo))
    return f"<!--{' '.join(words)}-->"


def loaded_path(index: SessionIndex, at: str | None, top: str | None) -> set[str]:
    """The entries of the path to ``at`` from ``top`` down (the part of its path a page has loaded)."""
    row = index.row(at) if at else None
    if row is None or not top:
        return set()
    found: set[str] = set()
    parents, ids = index.parents, index.ids
    while row != NO_PARENT:
        found.add(ids[row])
        if ids[row] == top:
            return found
        row = parents[row]
    return set()  # ``top`` is not on this path: the page is another one than the tab says


def _gone(reply: str) -> str:
    return f'<div id="reply-{escape(reply)}" hx-swap-oob="delete"></div>'


@lru_cache(maxsize=64)
def _notes(session_id: str, notes: str, writes: bool) -> str:
    return render_to_string(
        "sessions_app/partials/_position_notes.html",
        {"session_id": session_id, "notes": notes, "can_write": writes, "oob": True},
    )


@lru_cache(maxsize=1024)
def _tab_state(session_id: str, position: str | None, cursor: int, cursor_id: str, composer: bool) -> str:
    """``#tab-state`` as the push replaces it (the tabs of a session that follow it share one), and the
    composer's fields that say the same, when the tab's reader may write (it has a composer then)."""
    context: dict[str, Any] = {
        "session_id": session_id,
        "position": position,
        "cursor": cursor,
        "cursor_id": cursor_id,
        "composer": composer,
        "oob": True,
    }
    return render_to_string("sessions_app/partials/_tab_state.html", context)
