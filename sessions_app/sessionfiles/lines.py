"""Reading one line: what the index keeps of it (fast), and the whole value (``loads_line``).

msgspec decodes a typed Struct and skips every other key (the message body, often kilobytes) without
building Python objects for it; that is most of the cost of opening a large file. A line the Struct does
not fit (odd but valid shapes pi would accept, or garbage) goes the slow way: ``loads_line`` + checks,
which also yields the reason a bad line is reported with.

``loads_line`` is the one judge of what a line holds: the index's slow path and the store's entry
decoder both call it, so a line is an entry for both or skipped by both. The fast Struct accepts a
subset of what it accepts: whatever is valid JSON (it skips unknown keys without checking that their
numbers fit a double, and ``loads_line`` reads those; it gives up on nesting where the interpreter's
recursion budget ends, and ``loads_line`` reads any depth).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, Literal

import msgspec
import orjson

from .errors import NotASession, UnsupportedFormat

UNSET = msgspec.UNSET


class MessageHead(msgspec.Struct, gc=False, frozen=True):
    role: str | None = None  # the slow path may put any value here (``Head.role`` reads only strings)
    timestamp: Any = None


NO_MESSAGE = MessageHead()
"""What ``Head.message`` holds for a line without a message: one shared, immutable instance, so that
``message.role`` can be read off every head in bulk (``operator.attrgetter``) without a test per row."""


class Head(msgspec.Struct, gc=False):
    """The parts of an entry line the index keeps or acts on, decoded straight from the line
    (``gc=False``: a 100k-row load creates 100k of these and none can be part of a cycle)."""

    type: str
    id: str | None = None
    parentId: str | None = None
    timestamp: Any = UNSET  # JS dates null, numbers and strings alike (``instants.js_date_ms``)
    targetId: str | msgspec.UnsetType | None = msgspec.UNSET
    label: Any = None
    name: Any = None
    message: MessageHead = NO_MESSAGE  # a ``message`` that is no object: the slow path

    @property
    def role(self) -> str | None:
        role = self.message.role
        return role if isinstance(role, str) else None


class OddParentHead(Head):
    """A head whose ``parentId`` is present but neither a string nor null (a number, say): the entry is
    a root, as in pi, and the index reports the value. Only the slow path builds these (the typed
    decoder refuses such a line), so the field is never read from JSON."""

    odd_parent: Any = None


KnownType = Literal[
    "message",
    "model_change",
    "thinking_level_change",
    "compaction",
    "branch_summary",
    "custom",
    "custom_message",
    "context_edit",
    "usage",
    "label",
    "session_info",
    "leaf",
]
KnownRole = Literal["user", "assistant", "toolResult", "bashExecution", "custom"]


class _KnownMessageHead(MessageHead, frozen=True, gc=False):
    role: KnownRole | None = None


_NO_KNOWN_MESSAGE = _KnownMessageHead()


class KnownHead(Head, gc=False):
    """A ``Head`` whose type and role are among those pi writes. For a literal, msgspec hands back the
    one string object of the literal instead of a new string per line, so a 100k-row index keeps one
    ``"message"`` and nobody has to intern them; a line with another type or role does not fit (the
    index then decodes its chunk with ``Head``)."""

    type: KnownType
    message: _KnownMessageHead = _NO_KNOWN_MESSAGE


decode_head = msgspec.json.Decoder(Head).decode
decode_known_head = msgspec.json.Decoder(KnownHead).decode
# msgspec raises RecursionError, not DecodeError, on deeply nested input: such a line is decoded the
# slow way (``loads_line`` reads any depth).
DECODE_ERRORS = (msgspec.DecodeError, msgspec.ValidationError, RecursionError)


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
    return loads_line(raw)


def loads_line(raw: bytes) -> Any:
    """The JSON value of a line, or BadLine: orjson, and what ``JSON.parse`` reads beyond it.

    orjson refuses three things pi's ``JSON.parse`` reads. A string with a lone surrogate escape
    (``"\\ud83d"``: pi's ``JSON.stringify`` writes one when a text was cut inside an emoji) gets U+FFFD
    in its place; a number beyond a double's range (``1e400``) becomes null, which is what
    ``JSON.stringify`` writes for the Infinity pi would read; and nesting deeper than orjson's 1024
    levels is read by an explicit-stack parser. So every valid JSON line is read, whatever the
    interpreter's recursion limit (which decides how deep msgspec's Struct decoder goes).
    """
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        pass
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise BadLine("not valid UTF-8") from None
    if text.startswith("\ufeff"):
        raise BadLine("not valid JSON (starts with a byte order mark)")
    repaired = _TOKEN.sub(_repair, text)
    if repaired != text:
        try:
            return orjson.loads(repaired)
        except orjson.JSONDecodeError:
            pass
    if repaired.count("[") + repaired.count("{") > _ORJSON_DEPTH:
        return _loads_deep(repaired)
    raise BadLine("not valid JSON")


_ORJSON_DEPTH = 1024
# A JSON string, or a number outside strings (the alternation consumes whole strings first).
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?', re.DOTALL)
# Inside a string: a surrogate pair, a lone surrogate escape, or any other escape (so ``\\\\`` is one unit).
_ESCAPE = re.compile(
    r"\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|(\\u[dD][89a-fA-F][0-9a-fA-F]{2})|\\."
)


def _repair(match: re.Match[str]) -> str:
    token = match.group()
    if token[0] == '"':
        return _ESCAPE.sub(lambda m: "\\ufffd" if m.group(1) else m.group(), token)
    return "null" if float(token) in (float("inf"), float("-inf")) else token


_scanstring: Callable[[str, int], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]
_SPACE = re.compile(r"[ \t\n\r]*")
_SCALAR = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?|true|false|null")
_KEY_END = re.compile(r"[ \t\n\r]*:[ \t\n\r]*")
_LITERALS = {"true": True, "false": False, "null": None}
_INT64 = range(-(2**63), 2**64)  # orjson's integers; a larger one is a double, as in JS


def _loads_deep(text: str) -> Any:
    """One JSON value at any depth, with an explicit stack (``text`` already repaired, see above)."""
    stack: list[tuple[list[Any] | dict[str, Any], str | None]] = []  # open containers, each with its pending key
    pos = _SPACE.match(text).end()  # type: ignore[union-attr]
    while True:
        opener = text[pos : pos + 1]
        value: Any
        if opener in ("[", "{"):
            container: list[Any] | dict[str, Any] = [] if opener == "[" else {}
            pos = _SPACE.match(text, pos + 1).end()  # type: ignore[union-attr]
            if text[pos : pos + 1] != ("]" if opener == "[" else "}"):
                key = None
                if opener == "{":
                    key, pos = _key(text, pos)
                stack.append((container, key))
                continue  # its first member is the next value
            value, pos = container, pos + 1
        elif opener == '"':
            value, pos = _string(text, pos + 1)
        else:
            match = _SCALAR.match(text, pos)
            if match is None:
                raise BadLine("not valid JSON")
            value, pos = _scalar(match.group()), match.end()
        # Put the value into its container; close every container that ends here.
        while True:
            pos = _SPACE.match(text, pos).end()  # type: ignore[union-attr]
            if not stack:
                if pos != len(text):
                    raise BadLine("not valid JSON")
                return value
            container, key = stack[-1]
            if key is None:
                container.append(value)  # type: ignore[union-attr]
            else:
                container[key] = value  # type: ignore[call-overload]
            closer = "]" if isinstance(container, list) else "}"
            separator = text[pos : pos + 1]
            if separator == ",":
                pos = _SPACE.match(text, pos + 1).end()  # type: ignore[union-attr]
                if isinstance(container, dict):
                    key, pos = _key(text, pos)
                    stack[-1] = (container, key)
                break
            if separator != closer:
                raise BadLine("not valid JSON")
            stack.pop()
            value, pos = container, pos + 1


def _string(text: str, start: int) -> tuple[str, int]:
    try:
        return _scanstring(text, start)
    except json.JSONDecodeError:
        raise BadLine("not valid JSON") from None


def _key(text: str, pos: int) -> tuple[str, int]:
    if text[pos : pos + 1] != '"':
        raise BadLine("not valid JSON")
    key, pos = _string(text, pos + 1)
    colon = _KEY_END.match(text, pos)
    if colon is None:
        raise BadLine("not valid JSON")
    return key, colon.end()


def _scalar(token: str) -> Any:
    if token in _LITERALS:
        return _LITERALS[token]
    if "." in token or "e" in token or "E" in token:
        return float(token)
    number = int(token)
    return number if number in _INT64 else float(number)


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
    fields = (
        kind,
        entry_id if isinstance(entry_id, str) else None,
        parent_id if isinstance(parent_id, str) else None,
        value.get("timestamp", UNSET),
        value.get("targetId", UNSET),
        value.get("label"),
        value.get("name"),
        MessageHead(msg.get("role"), msg.get("timestamp")) if isinstance(msg, dict) else NO_MESSAGE,
    )
    if parent_id is None or isinstance(parent_id, str):
        return Head(*fields)
    return OddParentHead(*fields, odd_parent=parent_id)


def header_of(value: dict[str, Any], source: str, lineno: int) -> dict[str, Any]:
    """The first JSON object of a file as its header, or why the file is not a session: pi's test is an
    object with ``type: "session"`` and a string ``id``; a harness v4 header is named as such."""
    if value.get("kind") == "header":
        raise UnsupportedFormat(
            f'{source}: a pi harness JSONL v4 session ("kind":"header"); pitree reads format v3 only'
        )
    if value.get("type") != "session" or not isinstance(value.get("id"), str):
        raise NotASession(f"{source}: not a pi session (line {lineno} is not a session header)")
    return value
