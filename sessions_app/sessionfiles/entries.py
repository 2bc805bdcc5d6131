"""One line of a session file: how pitree builds, names and serialises entries the way pi does.

pi writes ``JSON.stringify`` output: compact, keys in insertion order, absent optionals left out,
non-ASCII raw. orjson does the same for the dicts built here, so the builders below only have to put
the keys in pi's order and never emit a key whose value is "absent".
"""

from __future__ import annotations

import math
import os
import re
import secrets
import uuid
from collections.abc import Container, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import orjson

from .instants import format_iso, now_ms

SESSION_VERSION = 3

# Types whose common keys (id, parentId, timestamp) come *after* their own keys in pi's files (docs/format.md §3.9, §3.10).
_BASE_LAST = frozenset({"custom", "custom_message"})

ZERO_USAGE: Mapping[str, Any] = {
    "input": 0,
    "output": 0,
    "cacheRead": 0,
    "cacheWrite": 0,
    "totalTokens": 0,
    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
}


def now_iso() -> str:
    """The current time as JS ``new Date().toISOString()`` prints it (UTC, milliseconds, ``Z``)."""
    return format_iso(now_ms())


def new_session_id() -> str:
    """A UUIDv7 (time-ordered), which is what pi uses for session ids since mid 2026."""
    ms = now_ms()
    value = (ms & (2**48 - 1)) << 80 | int.from_bytes(os.urandom(10), "big") & ((1 << 80) - 1)
    value = value & ~(0xF << 76) | 0x7 << 76  # version 7
    value = value & ~(0x3 << 62) | 0x2 << 62  # RFC 4122 variant
    return str(uuid.UUID(int=value))


def new_entry_id(taken: Container[str]) -> str:
    """8 lowercase hex digits unique among ``taken``; after 100 collisions a full UUID, as pi does."""
    for _ in range(100):
        candidate = secrets.token_hex(4)
        if candidate not in taken:
            return candidate
    return str(uuid.uuid4())


def session_file_name(timestamp: str, session_id: str) -> str:
    """pi's file name: the header timestamp with ``:`` and ``.`` replaced by ``-``, then the session id."""
    return f"{timestamp.replace(':', '-').replace('.', '-')}_{session_id}.jsonl"


def dump_line(obj: Mapping[str, Any]) -> bytes:
    """One whole line, newline included, ready for a single ``os.write``."""
    try:
        return orjson.dumps(obj, option=orjson.OPT_APPEND_NEWLINE)
    except orjson.JSONEncodeError:
        return _dump_deep(obj) + b"\n"


def dump_json(value: Any) -> bytes:
    """Compact JSON of a decoded value, at any depth, with any string.

    orjson writes 254 levels at most, but reads 1024 (``lines.MAX_DEPTH``): an entry pitree reads may
    hold more levels than orjson writes. Those go through an explicit-stack writer
    (orjson still writes every scalar), so copying, inspecting or measuring such an entry never fails.
    The same writer puts U+FFFD for lone surrogates, which no UTF-8 file can hold: Python gives them to
    file names that are not UTF-8 (a fork's ``parentSession``), as Node gives U+FFFD to pi."""
    try:
        return orjson.dumps(value)
    except orjson.JSONEncodeError:
        return _dump_deep(value)


_END = object()


def _dump_deep(value: Any) -> bytes:
    out = bytearray()
    # Open containers: (their remaining items, closing bracket, items are key/value pairs, first item to come).
    stack: list[tuple[Any, bytes, bool, list[bool]]] = [(iter((value,)), b"", False, [True])]
    while stack:
        items, closer, pairs, first = stack[-1]
        item: Any = next(items, _END)
        if item is _END:
            stack.pop()
            out += closer
            continue
        if first[0]:
            first[0] = False
        else:
            out += b","
        if pairs:
            key, item = item
            out += _dump_scalar(key) + b":"
        if isinstance(item, dict):
            out += b"{"
            stack.append((iter(item.items()), b"}", True, [True]))
        elif isinstance(item, list | tuple):
            out += b"["
            stack.append((iter(item), b"]", False, [True]))
        else:
            out += _dump_scalar(item)
    return bytes(out)


_SURROGATE = re.compile("[\ud800-\udfff]")


def _dump_scalar(value: Any) -> bytes:
    if isinstance(value, str):
        value = _SURROGATE.sub("\ufffd", value)
    return orjson.dumps(value)


_LINE_BREAKS = re.compile(r"[\r\n]+")
JS_WHITESPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
"""What JS's ``String.prototype.trim`` removes. Python's ``str.strip()`` differs: it keeps U+FEFF and
removes U+001C–U+001F and U+0085, so a name trimmed the Python way is not the name pi shows."""


def js_trim(text: str) -> str:
    """``text.trim()`` as pi's JavaScript computes it."""
    return text.strip(JS_WHITESPACE)


def clean_session_name(name: str) -> str:
    """pi 1.6.0's cleaning of a session name: each run of CR/LF becomes one space, then trim."""
    return js_trim(_LINE_BREAKS.sub(" ", name))


def js_truthy(value: Any) -> bool:
    """JS truthiness of a JSON value, which differs from Python's for an empty list or object (true in JS)."""
    return bool(value) or isinstance(value, list | dict)


def label_text(value: Any) -> str | None:
    """The label a ``label`` line sets (docs/format.md §4.4), None when it clears one: pi keeps any
    truthy value and shows it as JS's ``String(value)`` writes it (``true``, not Python's ``True``)."""
    if isinstance(value, str):
        return value or None
    return js_string(value) if js_truthy(value) else None


def js_string(value: Any) -> str:
    """``String(value)`` of a JSON value: an array's items joined by commas (nested arrays flattened,
    null as nothing), an object ``[object Object]``. Iterative: a value may nest 1,024 levels."""
    if not isinstance(value, list):
        return _js_scalar(value)
    parts: list[str] = []
    stack: list[Any] = [iter(value)]
    while stack:
        item = next(stack[-1], _END)
        if item is _END:
            stack.pop()
        elif isinstance(item, list):
            stack.append(iter(item))
        else:
            parts.append("" if item is None else _js_scalar(item))
    return ",".join(parts)


def _js_scalar(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or value is None:
        return {True: "true", False: "false", None: "null"}[value]
    if isinstance(value, int | float):
        return js_number(value)
    return "[object Object]"


def js_number(value: float) -> str:
    """``String(number)``: the shortest digits that read back (Python's ``repr`` finds them), placed
    as JS's Number::toString places them (plain from 1e-7 to 1e21, else ``1e+21``, ``1e-7``)."""
    number = float(value)
    if number == 0:
        return "0"
    if not math.isfinite(number):
        return "Infinity" if number > 0 else "-Infinity" if number < 0 else "NaN"
    sign = "-" if number < 0 else ""
    digits_tuple, exponent = Decimal(repr(abs(number))).normalize().as_tuple()[1:]
    digits = "".join(map(str, digits_tuple))
    point = len(digits) + int(exponent)  # digits[:point] is the integer part
    if len(digits) <= point <= 21:
        return sign + digits + "0" * (point - len(digits))
    if 0 < point <= 21:
        return f"{sign}{digits[:point]}.{digits[point:]}"
    if -6 < point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    return f"{sign}{mantissa}e{'+' if point > 0 else '-'}{abs(point - 1)}"


# JS's StringNumericLiteral (once trimmed): a signed decimal or Infinity, or an unsigned hex, octal or binary.
_JS_NUMBER = re.compile(
    r"[+-]?(?:Infinity|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)|0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+"
)
_RADIXES = {"x": 16, "X": 16, "o": 8, "O": 8, "b": 2, "B": 2}


def js_to_number(value: Any) -> float:
    """``Number(value)`` of a JSON value, what JS's ``<`` and ``>=`` compare: a number as it is, a
    boolean 0 or 1, ``null`` 0, a string read as a number literal once trimmed (empty: 0; decimal,
    ``Infinity``, hex, octal or binary; anything else NaN), an array as its ``String()``, an object NaN."""
    if isinstance(value, bool) or value is None:
        return float(bool(value))
    if isinstance(value, int | float):
        return _to_float(value)
    if isinstance(value, list):
        value = js_string(value)
    return _string_to_number(value) if isinstance(value, str) else math.nan


def _string_to_number(text: str) -> float:
    text = js_trim(text)
    if not text:
        return 0.0
    if _JS_NUMBER.fullmatch(text) is None:
        return math.nan
    if text[-8:] == "Infinity":
        return -math.inf if text[0] == "-" else math.inf
    if text[:1] == "0" and text[1:2] in _RADIXES:
        return _to_float(int(text[2:], _RADIXES[text[1]]))
    return float(text)


def _to_float(number: float) -> float:
    """A JSON number as JS's double: an integer too large for one is infinite."""
    try:
        return float(number)
    except OverflowError:
        return math.inf if number > 0 else -math.inf


def block_text(block: Any) -> str | None:
    """The text of a text block as pi's list reads it (``block.text``, joined by ``Array.join``): a
    string as it is, nothing for ``null`` or a missing ``text``, any other value as JS's ``String()``
    writes it; None for a block that is no text block."""
    if not isinstance(block, dict) or block.get("type") != "text":
        return None
    text = block.get("text")
    return text if isinstance(text, str) else "" if text is None else js_string(text)


def joined_text(content: Any) -> str:
    """The text of a message ``content`` as pi's session list reads it (its ``extractTextContent``,
    docs/format.md §10): a string as it is, else every text block's text joined by a space, where a
    block without text still takes its place (blocks with ``"a"`` and no text give ``"a "``)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return " ".join(text for text in map(block_text, content) if text is not None)


def session_name(value: Any) -> str | None:
    """The name a ``session_info`` line gives the session (docs/format.md §4.5): pi's
    ``name?.trim() || undefined``, where a name that is no string names nothing."""
    return (js_trim(value) or None) if isinstance(value, str) else None


@dataclass(frozen=True)
class Draft:
    """An entry before the store gives it an id, a parent and (unless kept from elsewhere) a timestamp."""

    type: str
    fields: Mapping[str, Any] = field(default_factory=dict)
    timestamp: str | None = None

    def build(self, entry_id: str, parent_id: str | None, timestamp: str) -> dict[str, Any]:
        """The full entry with pi's key order."""
        base = {"id": entry_id, "parentId": parent_id, "timestamp": self.timestamp or timestamp}
        if self.type in _BASE_LAST:
            return {"type": self.type, **self.fields, **base}
        return {"type": self.type, **base, **self.fields}


def _present(**pairs: Any) -> dict[str, Any]:
    """Keep only keys whose value is not None: pi omits undefined optionals instead of writing null."""
    return {key: value for key, value in pairs.items() if value is not None}


def message(msg: Mapping[str, Any]) -> Draft:
    return Draft("message", {"message": dict(msg)})


def user_message(content: str | list[dict[str, Any]], timestamp_ms: int | None = None) -> Draft:
    return message({"role": "user", "content": content, "timestamp": timestamp_ms or now_ms()})


def assistant_message(
    text: str,
    *,
    provider: str,
    model: str,
    api: str,
    usage: Mapping[str, Any] | None = None,
    stop_reason: str = "stop",
    error_message: str | None = None,
    timestamp_ms: int | None = None,
) -> Draft:
    """An assistant reply with the fields pi stores (api, provider, model, usage, stopReason, timestamp)."""
    content = [{"type": "text", "text": text}] if text else []
    msg = {
        "role": "assistant",
        "content": content,
        "api": api,
        "provider": provider,
        "model": model,
        "usage": dict(usage or ZERO_USAGE),
        "stopReason": stop_reason,
        **_present(errorMessage=error_message),
        "timestamp": timestamp_ms or now_ms(),
    }
    return message(msg)


def model_change(provider: str, model_id: str) -> Draft:
    return Draft("model_change", {"provider": provider, "modelId": model_id})


def thinking_level_change(level: str) -> Draft:
    return Draft("thinking_level_change", {"thinkingLevel": level})


def label(target_id: str, text: str | None, timestamp: str | None = None) -> Draft:
    """Set (non-empty text) or clear (None/empty: the ``label`` key is left out) a label."""
    return Draft("label", {"targetId": target_id, **_present(label=text or None)}, timestamp)


def session_info(name: str) -> Draft:
    return Draft("session_info", {"name": clean_session_name(name)})


def compaction(
    summary: str,
    first_kept_entry_id: str,
    tokens_before: int,
    *,
    details: Mapping[str, Any] | None = None,
    usage: Mapping[str, Any] | None = None,
    from_hook: bool = False,
) -> Draft:
    return Draft(
        "compaction",
        {
            "summary": summary,
            "firstKeptEntryId": first_kept_entry_id,
            "tokensBefore": tokens_before,
            **_present(details=details, usage=usage),
            "fromHook": from_hook,
        },
    )


def branch_summary(
    from_id: str,
    summary: str,
    *,
    details: Mapping[str, Any] | None = None,
    usage: Mapping[str, Any] | None = None,
    from_hook: bool = False,
) -> Draft:
    return Draft(
        "branch_summary",
        {"fromId": from_id, "summary": summary, **_present(details=details, usage=usage), "fromHook": from_hook},
    )


# pitree's own ``custom`` entry: where pi is to continue (docs/format.md §3.9). pi continues under a
# file's last line; this line, under the entry a browser is on, makes that entry's branch the one pi
# continues, in pi's reading and in pitree's, and changes nothing else (no context, no settings).
CONTINUE_TYPE = "pitree/continue"


def continue_here() -> Draft:
    return Draft("custom", {"customType": CONTINUE_TYPE})


def custom_message(custom_type: str, content: Any, display: bool, details: Any = None) -> Draft:
    return Draft(
        "custom_message",
        {"customType": custom_type, "content": content, "display": display, **_present(details=details)},
    )


def clip(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters, an ellipsis marking the cut (quotes, previews and server
    messages can be any size)."""
    return text if len(text) <= width else text[: max(width - 1, 0)].rstrip() + "…"


def one_line(text: str, width: int | None = None) -> str:
    """``text`` with every run of whitespace as one space, clipped to ``width`` characters if given."""
    flat = " ".join(text.split())
    return flat if width is None else clip(flat, width)


def as_text(value: Any) -> str:
    """A stored value where text is expected: a string as is, other scalars as ``str`` writes them,
    lists and objects as JSON (``str`` of a value nested a thousand levels deep would overflow)."""
    return dump_json(value).decode() if isinstance(value, list | dict) else str(value)
