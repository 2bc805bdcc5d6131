"""pi's shapes (docs/format.md §3) built from what an export holds: messages, content blocks, usage,
and the entries that carry them. Every reader builds its entries here, so that an imported file
holds what pi itself would write, key order included.

What a source says that pi has no place for is kept beside pi's keys: a message entry's ``imported``
key (the source's record without the text already in the message), or the ``data`` of a ``custom``
entry for records that are no message at all. pi and pitree read neither, and keep both.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Callable, Iterable
from typing import Any

from ..sessionfiles import entries as E
from ..sessionfiles.entries import Draft
from ..sessionfiles.instants import format_iso, iso_to_ms

IMPORT_TYPE = "pitree/import"
"""The ``customType`` of the entry that opens an imported session (what the source said of the
conversation) and of the one that moves its position after a later import (``plan``)."""


def usage(input_tokens: Any = 0, output_tokens: Any = 0, cache_read: Any = 0, cache_write: Any = 0) -> dict[str, Any]:
    """pi's usage object from a source's token counts (anything that is no count is 0); prices are
    not in exports, so every cost is 0."""
    counts = [_count(input_tokens), _count(output_tokens), _count(cache_read), _count(cache_write)]
    return {
        "input": counts[0],
        "output": counts[1],
        "cacheRead": counts[2],
        "cacheWrite": counts[3],
        "totalTokens": sum(counts),
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def thinking(value: str, signature: str | None = None, *, redacted: bool = False) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "thinking", "thinking": value}
    if signature:
        block["thinkingSignature"] = signature
    if redacted:
        block["redacted"] = True
    return block


def tool_call(call_id: str, name: str, arguments: Any) -> dict[str, Any]:
    return {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}


def image(data: bytes, mime: str | None = None) -> dict[str, Any]:
    return {"type": "image", "data": base64.b64encode(data).decode("ascii"), "mimeType": mime or sniff_image(data)}


def image_from_data_url(url: Any) -> dict[str, Any] | None:
    """An image block from a ``data:image/…;base64,…`` URL (what Open WebUI keeps of a pasted picture),
    or None for any other URL: a link to a server is not the picture."""
    if not isinstance(url, str) or not url.startswith("data:image/"):
        return None
    head, _, data = url.partition(",")
    if not head.endswith(";base64") or not data:
        return None
    return {"type": "image", "data": data, "mimeType": head[len("data:") : -len(";base64")]}


_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF8", "image/gif"),
    (b"RIFF", "image/webp"),
)


def sniff_image(data: bytes) -> str:
    """The picture's type from its first bytes (export files are often named ``.dat``)."""
    for magic, mime in _MAGIC:
        if data.startswith(magic):
            return mime
    return "application/octet-stream"


def user(content: str | list[dict[str, Any]], ms: int) -> dict[str, Any]:
    return {"role": "user", "content": content, "timestamp": ms}


def assistant(
    content: list[dict[str, Any]],
    *,
    api: str,
    provider: str,
    model: str,
    usage_: dict[str, Any] | None = None,
    stop_reason: str = "stop",
    error_message: str | None = None,
    response_id: str | None = None,
    ms: int,
) -> dict[str, Any]:
    """An assistant message with pi's keys in pi's order (docs/format.md §3.2)."""
    message: dict[str, Any] = {
        "role": "assistant",
        "content": content,
        "api": api,
        "provider": provider,
        "model": model,
        "usage": usage_ or usage(),
        "stopReason": stop_reason,
    }
    if error_message:
        message["errorMessage"] = error_message
    message["timestamp"] = ms
    if response_id:
        message["responseId"] = response_id
    return message


def tool_result(
    call_id: str, name: str, content: list[dict[str, Any]], ms: int, *, is_error: bool = False
) -> dict[str, Any]:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": content,
        "isError": is_error,
        "timestamp": ms,
    }


Segment = tuple[str, Any]
"""A piece of an answer in the order it was written: ``("block", a text or thinking block)`` or
``("call", (a tool call block, its result's content blocks or None))``."""


def answer_turns(
    segments: Iterable[Segment],
    reply: Callable[[list[dict[str, Any]], str, bool], dict[str, Any]],
    stop: str,
    ms: int,
) -> list[dict[str, Any]]:
    """An answer whose source keeps its tool calls inline (Open WebUI, LibreChat) as pi's turns: an
    assistant message up to each run of tool calls, each call's result, and the text after them in
    the next assistant message, as pi would have written the same exchange. ``reply(blocks, stop
    reason, is the last)`` builds each assistant message; ``stop`` is the answer's own ending."""
    turns: list[dict[str, Any]] = []
    blocks: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    for kind, value in segments:
        if kind == "call":
            call, result = value
            blocks.append(call)
            if result is not None:
                results.append(tool_result(call["id"], call["name"], result, ms))
            continue
        if results:
            turns += [reply(blocks, "toolUse", False), *results]
            blocks, results = [], []
        blocks.append(value)
    turns.append(reply(blocks, "toolUse" if results and stop == "stop" else stop, True))
    return turns + results


def message(msg: dict[str, Any], imported: dict[str, Any] | None = None) -> Draft:
    """A ``message`` entry at the message's own time, with what else the source said of it."""
    fields: dict[str, Any] = {"message": msg}
    if imported:
        fields["imported"] = imported
    return Draft("message", fields, format_iso(msg["timestamp"]))


def custom(custom_type: str, data: Any, ms: int) -> Draft:
    """A ``custom`` entry: kept, shown, never part of the context (a record with no pi equivalent)."""
    return Draft("custom", {"customType": custom_type, "data": data}, format_iso(ms))


def custom_message(custom_type: str, content: list[dict[str, Any]], ms: int, *, details: Any = None) -> Draft:
    """A ``custom_message``: what a tool showed without a call pi could pair it with; part of the
    context, as the model of the source saw it."""
    draft = E.custom_message(custom_type, content, True, details)
    return Draft(draft.type, draft.fields, format_iso(ms))


def session_info(name: str, ms: int, imported: dict[str, Any] | None = None) -> Draft:
    fields: dict[str, Any] = {"name": E.clean_session_name(name)}
    if imported:
        fields["imported"] = imported
    return Draft("session_info", fields, format_iso(ms))


def model_change(provider: str, model_id: str, ms: int) -> Draft:
    draft = E.model_change(provider, model_id)
    return Draft(draft.type, draft.fields, format_iso(ms))


def compaction(summary: str, first_kept: str, tokens_before: int, ms: int, imported: dict[str, Any]) -> Draft:
    draft = E.compaction(summary, first_kept, tokens_before)
    return Draft(draft.type, {**draft.fields, "imported": imported}, format_iso(ms))


def seconds_ms(value: Any) -> int | None:
    """Epoch seconds (a float, as ChatGPT and Open WebUI write them) in milliseconds; None for anything
    else or a time outside JS's dates."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    ms = round(value * 1000)
    return ms if abs(ms) <= 8_640_000_000_000_000 else None


def iso_ms(value: Any) -> int | None:
    """An ISO time (LibreChat, Claude Code) in milliseconds, read as pi reads timestamps."""
    return iso_to_ms(value) if isinstance(value, str) else None


def without(record: dict[str, Any], keys: Iterable[str]) -> dict[str, Any]:
    """``record`` less ``keys``: what is left to keep beside pi's keys."""
    kept = dict(record)
    for key in keys:
        kept.pop(key, None)
    return kept


def plain_text(value: Any) -> str | None:
    """A string, or None for anything else (sources write null, numbers, objects where text may be)."""
    return value if isinstance(value, str) else None


def obj(value: Any) -> dict[str, Any]:
    """An object the source holds where an object belongs, else an empty one (exports leave things out)."""
    return value if isinstance(value, dict) else {}


def listed(value: Any) -> list[Any]:
    """A list the source holds where a list belongs, else an empty one."""
    return value if isinstance(value, list) else []
