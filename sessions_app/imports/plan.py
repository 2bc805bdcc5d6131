"""The entries a conversation adds to its session file, given what the file already holds.

Ids are the source's: a node's first entry has the node's own id (made safe for URLs and for pi when
it is not), its further entries that id and ``.1``, ``.2`` … So an entry is in the file exactly when
its id is, and importing an export again adds only the nodes the file lacks, under the entries of
their parents: a later export of a longer conversation grows the right branches, the same one adds
nothing.

A new file starts with three entries of its own: a ``custom`` entry (``pitree/import``) holding what
the source says of the conversation, the title (``session_info``) and the conversation's model
(``model_change``); the source's roots hang under the last of them. Then come the nodes, parents
before children, and at each branch point the branch that leads to the exporter's position last, so
that the file's last line is that position: pi and pitree open the session where the exporter was,
with the same context. When the position is not the last entry written (an earlier node, or one with
children), one more entry under it moves the leaf there the way pi reads a file (its last line): a
``custom`` entry saying so, or the new title when the conversation was renamed since.
"""

from __future__ import annotations

from collections.abc import Container
from dataclasses import dataclass
from typing import Any

from ..sessionfiles.description import describe
from ..sessionfiles.entries import clean_session_name, new_entry_id
from ..sessionfiles.instants import format_iso
from ..sessionfiles.store import SessionFile
from . import shapes as S
from .conversation import Conversation, Node, entry_id

HEAD, TITLE, MODEL = "pitree.import", "pitree.title", "pitree.model"


@dataclass(frozen=True)
class Existing:
    """What a session file already holds, as far as an import cares: its ids, and the title the last
    import gave it (a name given in pitree since is the user's, and stays)."""

    ids: Container[str]
    title: str | None

    @classmethod
    def nothing(cls) -> Existing:
        return cls(frozenset(), None)

    @classmethod
    def of(cls, session: SessionFile) -> Existing:
        index = session.index
        rows = [row for row in range(len(index)) if index.types[row] == "session_info"]
        titles = [describe(entry).text for entry in session.entries(rows) if "imported" in entry]
        return cls(index.by_id, titles[-1] if titles else None)


class _Taken:
    def __init__(self, ids: Container[str], more: set[str]) -> None:
        self.ids, self.more = ids, more

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self.more or entry_id in self.ids


def plan(conversation: Conversation, existing: Existing) -> list[dict[str, Any]]:
    """The entries to append (all of them for a new file), in the order they are written."""
    fresh = HEAD not in existing.ids
    out: list[dict[str, Any]] = []
    anchor = (
        _head(conversation, out) if fresh else next(i for i in (MODEL, TITLE, HEAD) if i in existing.ids or i == HEAD)
    )
    walk = _Walk(conversation, anchor, existing.ids)
    new = out + walk.entries()
    position = walk.position()
    title = clean_session_name(conversation.title or "")
    renamed = not fresh and title and title != existing.title
    if not renamed and (not new or new[-1]["id"] == position):
        return new
    ms = max((S.iso_ms(entry["timestamp"]) or 0 for entry in new), default=conversation.created_ms)
    taken = _Taken(existing.ids, {entry["id"] for entry in new})
    if renamed:
        draft = S.session_info(title, ms, {"from": conversation.source})
    else:
        data = {"from": conversation.source, "conversation": conversation.id, "position": conversation.position}
        draft = S.custom(S.IMPORT_TYPE, data, ms)
    return [*new, draft.build(new_entry_id(taken), position, format_iso(ms))]


def _head(conversation: Conversation, out: list[dict[str, Any]]) -> str:
    """The entries opening a new file; returns the id the source's roots hang under."""
    ms = conversation.created_ms
    data = {"from": conversation.source, "conversation": conversation.id, "fields": conversation.fields}
    out.append(S.custom(S.IMPORT_TYPE, data, ms).build(HEAD, None, format_iso(ms)))
    if conversation.title:
        out.append(
            S.session_info(conversation.title, ms, {"from": conversation.source}).build(TITLE, HEAD, format_iso(ms))
        )
    if conversation.model:
        out.append(S.model_change(*conversation.model, ms).build(MODEL, out[-1]["id"], format_iso(ms)))
    return out[-1]["id"]


class _Walk:
    """The conversation's nodes in writing order, with the ids of their entries and parents."""

    def __init__(self, conversation: Conversation, anchor: str, existing: Container[str]) -> None:
        self.conversation = conversation
        self.anchor = anchor
        self.existing = existing
        self.nodes: dict[str, Node] = {}
        for node in conversation.nodes:
            self.nodes.setdefault(node.source_id, node)  # a repeated id: the first says it
        self.children: dict[str | None, list[str]] = {}
        for source_id, node in self.nodes.items():
            parent = node.parent if node.parent in self.nodes and node.parent != source_id else None
            if parent is None and node.parent is not None:
                self._note(f"node {source_id}: its parent {node.parent} is not in the export: imported as a root")
            self.children.setdefault(parent, []).append(source_id)
        self.tails: dict[str, str] = {}  # source id -> the id its children hang under
        self.last: str | None = None

    def entries(self) -> list[dict[str, Any]]:
        """The entries the file lacks, in writing order."""
        leading = self._towards_position()
        out: list[dict[str, Any]] = []
        visited: set[str] = set()
        starts = [(root, self.anchor) for root in self.children.get(None, [])]
        # Nodes no root leads to sit on a cycle of parents: each one left is cut loose, as a root.
        loose = iter(source_id for source_id in self.nodes)
        while True:
            if not starts:
                cut = next((source_id for source_id in loose if source_id not in visited), None)
                if cut is None:
                    return out
                self._note(f"node {cut}: its parents come back to it: imported as a root")
                starts = [(cut, self.anchor)]
            stack = [_ordered(starts, leading)[::-1]]
            starts = []
            while stack:
                if not stack[-1]:
                    stack.pop()
                    continue
                source_id, parent_id = stack[-1].pop()
                if source_id in visited:
                    continue
                visited.add(source_id)
                tail = parent_id
                for number, part in enumerate(self.nodes[source_id].parts):
                    own = entry_id(source_id, number)
                    if own not in self.existing:
                        out.append(part.build(own, tail, part.timestamp or format_iso(self.conversation.created_ms)))
                    tail = own
                self.tails[source_id] = tail
                self.last = source_id
                below = [(child, tail) for child in self.children.get(source_id, []) if child not in visited]
                stack.append(_ordered(below, leading)[::-1])

    def _note(self, what: str) -> None:
        note = f"{self.conversation.where}: {what}"
        if note not in self.conversation.notes:  # planned again when another import wrote the file first
            self.conversation.notes.append(note)

    def _towards_position(self) -> set[str]:
        """The exporter's position and its ancestors: at each branch point, the branch written last."""
        on_path: set[str] = set()
        node = self.conversation.position
        while node is not None and node in self.nodes and node not in on_path:
            on_path.add(node)
            node = self.nodes[node].parent
        return on_path

    def position(self) -> str:
        """The id of the entry the exporter stood on (the last node's when the source names none)."""
        source_id = self.conversation.position
        if source_id not in self.tails:
            source_id = self.last
        return self.tails[source_id] if source_id is not None else self.anchor


def _ordered(pairs: list[tuple[str, str]], leading: set[str]) -> list[tuple[str, str]]:
    """The source's order, the branch towards the position moved last."""
    return [pair for pair in pairs if pair[0] not in leading] + [pair for pair in pairs if pair[0] in leading]
