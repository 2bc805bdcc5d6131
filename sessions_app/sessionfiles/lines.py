"""What the index reads of one line, fast: type, id, parentId and the few fields that steer the tree.

msgspec decodes a typed Struct and skips every other key (the message body, often kilobytes) without
building Python objects for it; that is most of the cost of opening a large file. A line the Struct does
not fit (odd but valid shapes pi would accept, or garbage) goes the slow way: ``orjson`` + checks, which
also yields the reason a bad line is reported with.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgspec
import orjson

UNSET = msgspec.UNSET


class _MessageHead(msgspec.Struct):
    role: Any = None
    timestamp: Any = None


class _Head(msgspec.Struct):
    type: str
    id: str | None = None
    parentId: str | None = None
    timestamp: str | None = None
    targetId: str | None | msgspec.UnsetType = msgspec.UNSET
    label: Any = None
    name: Any = None
    message: _MessageHead | None = None


_decode_head = msgspec.json.Decoder(_Head).decode


@dataclass(slots=True)
class Head:
    """The parts of an entry line the index keeps or acts on."""

    type: str
    id: str | None
    parent_id: str | None
    timestamp: str
    target_id: Any  # UNSET when the key is absent
    label: Any
    name: Any
    role: str | None
    message_timestamp: Any


class BadLine(Exception):
    """A line that is not an entry; ``reason`` says why in words a user can act on."""

    def __init__(self, reason: str, value: Any = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.value = value  # the parsed JSON value, when it parsed


def read_head(line: bytes | memoryview) -> Head:
    """Read an entry line's head, or raise BadLine. A header line raises BadLine too (callers check first)."""
    try:
        h = _decode_head(line)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return _slow_head(line)
    msg = h.message
    return Head(
        h.type,
        h.id,
        h.parentId,
        h.timestamp if h.timestamp is not None else "",
        h.targetId,
        h.label,
        h.name,
        msg.role if msg is not None and isinstance(msg.role, str) else None,
        msg.timestamp if msg is not None else None,
    )


def parse_value(line: bytes | memoryview) -> Any:
    """Parse a whole line as JSON or raise BadLine with the reason (blank, not UTF-8, not JSON)."""
    raw = bytes(line)
    if not raw.strip():
        raise BadLine("blank line")
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            raise BadLine("not valid UTF-8") from None
        raise BadLine("not valid JSON") from None


def _slow_head(line: bytes | memoryview) -> Head:
    value = parse_value(line)
    if not isinstance(value, dict):
        raise BadLine(f"JSON {type(value).__name__} is not an object", value)
    kind = value.get("type")
    if not isinstance(kind, str):
        raise BadLine("no string 'type'", value)
    entry_id = value.get("id")
    parent_id = value.get("parentId")
    msg = value.get("message")
    role = msg.get("role") if isinstance(msg, dict) else None
    label = value.get("label")
    timestamp = value.get("timestamp")
    return Head(
        kind,
        entry_id if isinstance(entry_id, str) else None,
        parent_id if isinstance(parent_id, str) else None,
        timestamp if isinstance(timestamp, str) else "",
        value.get("targetId", UNSET),
        label,
        value.get("name"),
        role if isinstance(role, str) else None,
        msg.get("timestamp") if isinstance(msg, dict) else None,
    )


def is_header(value: Any) -> bool:
    """pi's header test: an object with ``type: "session"`` and a string ``id``."""
    return isinstance(value, dict) and value.get("type") == "session" and isinstance(value.get("id"), str)


def is_harness_v4_header(value: Any) -> bool:
    return isinstance(value, dict) and value.get("kind") == "header"
