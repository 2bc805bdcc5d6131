"""One conversation of an export, in pi's terms: a tree of source nodes, each becoming zero or more
entries, with the exporter's position, its title and its model.

A reader builds it; ``plan`` turns it into the entries a session file gains. In between it is kept in
a spool file (``dumps``/``loads``), so that an export is read whole, and found well formed, before a
single session is written.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

import orjson

from ..sessionfiles.entries import Draft, dump_json
from .errors import ExportError

_SAFE = re.compile(r"[A-Za-z0-9_-]{1,128}")


@dataclass
class Node:
    """A node of the source's tree. ``parts`` are the entries it becomes, in order, each under the one
    before (a reply with tool calls: the call, each result, the answer after them); a node with none
    (a placeholder root) adds nothing, and its children hang under its parent."""

    source_id: str
    parent: str | None  # the source id of its parent; None for a root
    parts: list[Draft]


@dataclass
class Conversation:
    source: str  # "chatgpt", "open-webui", "librechat", "claude-code"
    id: str  # the source's own id for the conversation
    where: str  # how messages name it: "conversations.json, conversation 12 (id …)"
    created_ms: int
    title: str | None
    model: tuple[str, str] | None  # (provider, model id) chosen for the conversation, when the source says
    nodes: list[Node]  # in the source's order
    position: str | None  # the source id of the exporter's current node
    fields: dict[str, Any] = field(default_factory=dict)  # what else the source says of the conversation
    notes: list[str] = field(default_factory=list)  # odd things read as best they could be

    def dumps(self) -> bytes:
        """One line of the spool. A text holding half of a surrogate pair (an emoji cut in two, which
        JSON escapes can say) is written with U+FFFD there, as pitree reads such a line; values nested
        deeper than a session line may be (1,024 levels, docs/format.md §8.2) refuse the export here,
        before anything is written."""
        record = {
            "source": self.source,
            "id": self.id,
            "where": self.where,
            "created": self.created_ms,
            "title": self.title,
            "model": self.model,
            "nodes": [
                [node.source_id, node.parent, [[part.type, part.fields, part.timestamp] for part in node.parts]]
                for node in self.nodes
            ],
            "position": self.position,
            "fields": self.fields,
            "notes": self.notes,
        }
        try:
            return orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE)
        except orjson.JSONEncodeError:
            line = dump_json(record)
        try:
            orjson.loads(line)
        except orjson.JSONDecodeError:
            raise ExportError(f"{self.where}: holds values nested more than 1,024 levels deep") from None
        return line + b"\n"

    @classmethod
    def loads(cls, line: bytes) -> Conversation:
        data = orjson.loads(line)
        model = data["model"]
        return cls(
            source=data["source"],
            id=data["id"],
            where=data["where"],
            created_ms=data["created"],
            title=data["title"],
            model=(model[0], model[1]) if model else None,
            nodes=[
                Node(source_id, parent, [Draft(kind, fields, timestamp) for kind, fields, timestamp in parts])
                for source_id, parent, parts in data["nodes"]
            ],
            position=data["position"],
            fields=data["fields"],
            notes=data["notes"],
        )


def entry_id(source_id: str, part: int = 0) -> str:
    """The id of a node's ``part``-th entry: the source's id when URLs and pi take it as it is, else a
    digest of it (``x`` and 32 hex digits); then ``.1``, ``.2`` … for its further entries."""
    base = (
        source_id
        if _SAFE.fullmatch(source_id)
        else "x" + hashlib.sha256(source_id.encode("utf-8", "replace")).hexdigest()[:32]
    )
    return base if part == 0 else f"{base}.{part}"
