"""Reading one line: what the index keeps of it (fast), and the whole value (``loads_line``).

msgspec decodes a typed Struct and skips every other key (the message body, often kilobytes) without
building Python objects for it; that is most of the cost of opening a large file. A line the Struct does
not fit (odd but valid shapes pi would accept, or garbage) goes the slow way: ``loads_line`` + checks,
which also yields the reason a bad line is reported with.

``loads_line`` is the one judge of what a line holds: the index's slow path and the store's entry
decoder both call it, so a line is an entry for both or skipped by both. The fast Struct accepts a
subset of what it accepts: whatever is valid JSON (it skips unknown keys without checking that their
numbers fit a double, and ``loads_line`` reads those), nested no deeper than ``MAX_DEPTH`` (msgspec
gives up where the interpreter's recursion budget ends; where that budget may be larger than
``MAX_DEPTH``, a line it accepts is checked with ``nested_too_deeply``, see ``fast_path_may_nest_deeper``).
"""

from __future__ import annotations

import re
import sys
from itertools import accumulate
from typing import Any, Literal

import msgspec
import orjson

from .errors import NotASession, UnsupportedFormat

UNSET = msgspec.UNSET


class MessageHead(msgspec.Struct, gc=False, frozen=True):
    role: str | None = None  # the slow path may put any value here (``Head.role`` reads only strings)
    timestamp: Any = None
    content: msgspec.Raw | msgspec.UnsetType = UNSET
    """Whether the message has a ``content`` (UNSET: none), which pi's list asks before it dates a
    session by the message (docs/format.md §10). Kept as raw bytes, never decoded: it costs a view."""


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
# slow way (``loads_line`` says whether it is nested too deeply).
DECODE_ERRORS = (msgspec.DecodeError, msgspec.ValidationError, RecursionError)


class _Block(msgspec.Struct, gc=False):
    type: Any = None


class _Body(msgspec.Struct, gc=False):
    content: list[_Block] | str | None = None
    stopReason: Any = None


class _Blocks(msgspec.Struct, gc=False):
    message: _Body | None = None


_decode_blocks = msgspec.json.Decoder(_Blocks).decode


def only_tool_calls(line: bytes) -> bool:
    """Whether a message line holds nothing but tool calls (and did not end in an error or abort):
    the turns pi's ``/tree`` hides by default. Reads the block types only, not their contents, and
    only of a line that names a tool call at all (as pi writes the word, unescaped)."""
    if b'"toolCall"' not in line:
        return False
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
        head = decode_head(line)
    except DECODE_ERRORS:
        return _slow_head(line)
    if fast_path_may_nest_deeper() and nested_too_deeply(line):
        return _slow_head(line)  # which refuses it, as the decoder does
    return head


def parse_value(line: bytes | memoryview) -> Any:
    """Parse a whole line as JSON or raise BadLine with the reason (blank, not UTF-8, not JSON)."""
    raw = bytes(line)
    if not raw.strip():
        raise BadLine("blank line")
    return loads_line(raw)


def loads_line(raw: bytes) -> Any:
    """The JSON value of a line, or BadLine: orjson, and what ``JSON.parse`` reads beyond it.

    orjson refuses two things pi's ``JSON.parse`` reads, and pitree reads them too: a string with a
    lone surrogate escape (``"\\ud83d"``: pi's ``JSON.stringify`` writes one when a text was cut inside
    an emoji) gets U+FFFD in its place, and a number beyond a double's range (``1e400``) becomes null,
    which is what ``JSON.stringify`` writes for the Infinity pi would read. Nesting deeper than
    ``MAX_DEPTH`` (orjson's own limit) is refused as "nested too deeply": building such a value costs
    memory and time without bound (an 8 MB line of ``[`` took 6.6 s and 700 MB), and pi writes none.
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
    if nested_too_deeply(raw):
        raise BadLine(f"nested too deeply (more than {MAX_DEPTH:,} levels)")
    repaired = _TOKEN.sub(_repair, text)
    if repaired != text:
        try:
            return orjson.loads(repaired)
        except orjson.JSONDecodeError:
            pass
    raise BadLine("not valid JSON")


MAX_DEPTH = 1024
"""The deepest nesting of arrays and objects a line may hold: orjson's limit, so that orjson alone
decides every line; ``nested_too_deeply`` says the same of any line without decoding it."""
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


_STRING_BYTES = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NOT_BRACKETS = bytes(sorted(set(range(256)) - set(b"[]{}")))
_STEP = tuple(1 if byte in b"[{" else -1 for byte in range(256))  # only brackets are left to step on
_DEPTH_RUN = 1 << 16


def nested_too_deeply(line: bytes | memoryview) -> bool:
    """Whether arrays and objects nest more than ``MAX_DEPTH`` levels in ``line`` (brackets inside
    strings do not count). A line needs two bytes per level, so a short one is answered at once; a
    long one is scanned only when it has enough opening brackets, and the scan stops at the first
    level too deep."""
    if len(line) <= 2 * MAX_DEPTH:
        return False
    raw = bytes(line)
    if raw.count(b"[") + raw.count(b"{") <= MAX_DEPTH:
        return False
    brackets = _STRING_BYTES.sub(b"", raw).translate(None, _NOT_BRACKETS)
    depth = 0
    for start in range(0, len(brackets), _DEPTH_RUN):
        steps = map(_STEP.__getitem__, brackets[start : start + _DEPTH_RUN])
        levels = list(accumulate(steps, initial=depth))
        if max(levels) > MAX_DEPTH:
            return True
        depth = levels[-1]
    return False


def fast_path_may_nest_deeper() -> bool:
    """Whether msgspec's Struct decoders may accept a line deeper than ``MAX_DEPTH``: they nest as deep
    as the interpreter lets C code recurse, which on CPython 3.11 is the recursion limit (1,000 unless
    raised: Hypothesis raises it while it runs a test) and on later versions a larger C limit. Where
    they may, a line they accept is checked with ``nested_too_deeply`` before it counts as an entry."""
    return sys.version_info >= (3, 12) or sys.getrecursionlimit() > MAX_DEPTH


_PRESENT = msgspec.Raw(b"null")  # a ``content`` the slow path found (its value is not needed)


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
        MessageHead(msg.get("role"), msg.get("timestamp"), _PRESENT if "content" in msg else UNSET)
        if isinstance(msg, dict)
        else NO_MESSAGE,
    )
    if parent_id is None or isinstance(parent_id, str):
        return Head(*fields)
    return OddParentHead(*fields, odd_parent=parent_id)


def header_of(
    value: dict[str, Any], source: str, lineno: int, skipped: tuple[int, str] | None = None
) -> dict[str, Any]:
    """The first JSON object of a file as its header, or why the file is not a session: pi's test is an
    object with ``type: "session"`` and a string ``id``; a harness v4 header is named as such.
    ``skipped``: the first line passed over before it (its number, why), which is then what the error
    names first: a file whose first line is not JSON is about that line, not the next one's."""
    if value.get("kind") == "header":
        raise UnsupportedFormat(
            f'{source}: a pi harness JSONL v4 session ("kind":"header"); pitree reads format v3 only'
        )
    if value.get("type") != "session" or not isinstance(value.get("id"), str):
        if skipped is not None:
            raise NotASession(
                f"{source}: not a pi session (line {skipped[0]} is not JSON: {skipped[1]};"
                f" line {lineno} is not a session header either)"
            )
        raise NotASession(f"{source}: not a pi session (line {lineno} is not a session header)")
    return value
