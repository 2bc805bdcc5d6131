"""What the index reads of one line, fast: type, id, parentId and the few fields that steer the tree.

msgspec decodes a typed Struct and skips every other key (the message body, often kilobytes) without
building Python objects for it; that is most of the cost of opening a large file. A line the Struct does
not fit (odd but valid shapes pi would accept, or garbage) goes the slow way: ``orjson`` + checks, which
also yields the reason a bad line is reported with.
"""

from __future__ import annotations

from typing import Any

import msgspec
import orjson

UNSET = msgspec.UNSET


class MessageHead(msgspec.Struct, gc=False):
    role: Any = None
    timestamp: Any = None


class Head(msgspec.Struct, gc=False):
    """The parts of an entry line the index keeps or acts on, decoded straight from the line
    (``gc=False``: a 100k-row load creates 100k of these and none can be part of a cycle)."""

    type: str
    id: str | None = None
    parentId: str | None = None
    timestamp: str | None = None
    targetId: str | msgspec.UnsetType | None = msgspec.UNSET
    label: Any = None
    name: Any = None
    message: MessageHead | None = None

    @property
    def role(self) -> str | None:
        message = self.message
        return message.role if message is not None and isinstance(message.role, str) else None


decode_head = msgspec.json.Decoder(Head).decode
DECODE_ERRORS = (msgspec.DecodeError, msgspec.ValidationError)


class _Block(msgspec.Struct, gc=False):
    type: Any = None


class _Body(msgspec.Struct, gc=False):
    content: list[_Block] | str | None = None
    stopReason: Any = None


class _Blocks(msgspec.Struct, gc=False):
    message: _Body | None = None


_decode_blocks = msgspec.json.Decoder(_Blocks).decode


def only_tool_calls(line: bytes | memoryview) -> bool:
    """Whether a message line holds nothing but tool calls (and did not end in an error or abort):
    the turns pi's ``/tree`` hides by default. Reads the block types only, not their contents."""
    try:
        body = _decode_blocks(line).message
    except DECODE_ERRORS:
        return False
    if body is None or body.stopReason in ("error", "aborted") or not isinstance(body.content, list):
        return False
    return bool(body.content) and all(block.type == "toolCall" for block in body.content)


class BadLine(Exception):
    """A line that is not an entry; ``reason`` says why in words a user can act on."""

    def __init__(self, reason: str, value: Any = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.value = value  # the parsed JSON value, when it parsed


def read_head(line: bytes | memoryview) -> Head:
    """Read an entry line's head, or raise BadLine. A header line raises BadLine too (callers check first)."""
    try:
        return decode_head(line)
    except DECODE_ERRORS:
        return _slow_head(line)


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
    timestamp = value.get("timestamp")
    return Head(
        kind,
        entry_id if isinstance(entry_id, str) else None,
        parent_id if isinstance(parent_id, str) else None,
        timestamp if isinstance(timestamp, str) else None,
        value.get("targetId", UNSET),
        value.get("label"),
        value.get("name"),
        MessageHead(msg.get("role"), msg.get("timestamp")) if isinstance(msg, dict) else None,
    )


def is_header(value: Any) -> bool:
    """pi's header test: an object with ``type: "session"`` and a string ``id``."""
    return isinstance(value, dict) and value.get("type") == "session" and isinstance(value.get("id"), str)


def is_harness_v4_header(value: Any) -> bool:
    return isinstance(value, dict) and value.get("kind") == "header"
