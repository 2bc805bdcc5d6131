"""LibreChat's JSON export of a conversation: ``{conversationId, title, endpoint, options?, messages}``,
each message ``{messageId, parentMessageId, isCreatedByUser, sender, text, content?, model, createdAt,
…}``; with "recursive" checked, ``messagesTree``, each message holding its ``children``. With
"branches" checked every branch is there; without, only the one shown.

LibreChat's export names no current message: the branch it shows by default is the newest at each
branch point, so that is the position. An answer's ``content`` parts become pi's blocks: ``text``,
``think`` (thinking), ``tool_call`` (the call, and its ``output`` as the tool result, text after it in
the next assistant message), pictures given as ``data:`` URLs; anything else stays in the entry's
``imported`` key.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson

from ..sessionfiles.entries import Draft
from . import shapes as S
from .conversation import Conversation, Node
from .errors import ExportError
from .sources import LIBRECHAT, Counter, Export, items

API = "librechat-export"
NO_PARENT = "00000000-0000-0000-0000-000000000000"  # LibreChat's parent of a first message


def conversations(export: Export, counter: Counter) -> Iterator[Conversation]:
    for member in export.members:
        for number, record in items(member, counter):
            yield _conversation(record, member.name if number == 1 else f"{member.name}, conversation {number:,}")


def _conversation(record: Any, where: str) -> Conversation:
    if not isinstance(record, dict):
        raise ExportError(f"{where}: not an object")
    conversation_id = record.get("conversationId")
    if not isinstance(conversation_id, str) or not conversation_id:
        raise ExportError(f"{where}: no 'conversationId'")
    where = f"{where} ({conversation_id})"
    messages = _flattened(record, where)
    options = S.obj(record.get("options"))
    endpoint = S.plain_text(record.get("endpoint")) or S.plain_text(options.get("endpoint")) or "librechat"
    model = S.plain_text(options.get("model"))
    if model is None:
        model = next(
            (
                S.plain_text(m.get("model"))
                for m in messages
                if not m.get("isCreatedByUser") and S.plain_text(m.get("model"))
            ),
            None,
        )
    times = [S.iso_ms(message.get("createdAt")) for message in messages]
    created = min((time for time in times if time is not None), default=0)
    by_id = {message["messageId"]: message for message in messages}
    nodes = []
    for message, time in zip(messages, times):
        parent = message.get("parentMessageId")
        parent = parent if isinstance(parent, str) and parent != NO_PARENT else None
        ms = time if time is not None else _parent_time(by_id, parent, created)
        nodes.append(Node(message["messageId"], parent, _parts(message, endpoint, model or "unknown", ms)))
    return Conversation(
        source=LIBRECHAT,
        id=conversation_id,
        where=where,
        created_ms=created,
        title=S.plain_text(record.get("title")),
        model=(endpoint, model) if model else None,
        nodes=nodes,
        position=_shown(nodes),
        fields=S.without(record, ["messages", "messagesTree"]),
    )


def _flattened(record: dict[str, Any], where: str) -> list[dict[str, Any]]:
    """The messages in the export's order (a tree's depth first), without their ``children``."""
    listed = record.get("messages", record.get("messagesTree"))
    if not isinstance(listed, list):
        raise ExportError(f"{where}: no 'messages' list")
    out: list[dict[str, Any]] = []
    stack = [iter(listed)]
    while stack:
        message = next(stack[-1], None)
        if message is None:
            stack.pop()
            continue
        if not isinstance(message, dict) or not isinstance(message.get("messageId"), str):
            raise ExportError(f"{where}: message {len(out) + 1} is not an object with a 'messageId'")
        out.append(S.without(message, ["children"]))
        if isinstance(message.get("children"), list):
            stack.append(iter(message["children"]))
    return out


def _parent_time(by_id: dict[str, dict[str, Any]], parent: str | None, created: int) -> int:
    seen = set()
    while parent in by_id and parent not in seen:
        seen.add(parent)
        time = S.iso_ms(by_id[parent].get("createdAt"))
        if time is not None:
            return time
        parent = by_id[parent].get("parentMessageId")
    return created


def _shown(nodes: list[Node]) -> str | None:
    """The branch LibreChat shows: the newest child at each branch point, from the newest root."""
    known = {node.source_id for node in nodes}
    children: dict[str | None, list[str]] = {}
    for node in nodes:
        children.setdefault(node.parent if node.parent in known else None, []).append(node.source_id)
    current = None
    seen: set[str] = set()
    while children.get(current):
        current = children[current][-1]
        if current in seen:
            break
        seen.add(current)
    return current


def _parts(message: dict[str, Any], endpoint: str, default_model: str, ms: int) -> list[Draft]:
    content = message.get("content") if isinstance(message.get("content"), list) else None
    said = S.plain_text(message.get("text")) or ""
    imported = {"from": LIBRECHAT, "message": S.without(message, ["text"] if content is None else ["text", "content"])}
    if message.get("isCreatedByUser"):
        blocks = [block for kind, block in _segments(content) if kind == "block"] if content is not None else []
        body: str | list[dict[str, Any]] = blocks if content is not None and blocks else said
        return [S.message(S.user(body, ms), imported)]
    model = S.plain_text(message.get("model")) or default_model
    provider = S.plain_text(message.get("endpoint")) or endpoint
    stop = "error" if message.get("error") else "aborted" if message.get("unfinished") else "stop"

    def reply(blocks: list[dict[str, Any]], reason: str, last: bool) -> dict[str, Any]:
        tokens = message.get("tokenCount") if last else None
        return S.assistant(
            blocks,
            api=API,
            provider=provider,
            model=model,
            usage_=S.usage(output_tokens=tokens) if tokens is not None else None,
            stop_reason=reason,
            error_message=(said or "error") if last and reason == "error" else None,
            ms=ms,
        )

    segments = _segments(content) if content is not None else iter([("block", S.text(said))] if said else [])
    turns = S.answer_turns(segments, reply, stop, ms)
    return [S.message(turn, imported if number == 0 else None) for number, turn in enumerate(turns)]


def _value(part: dict[str, Any], key: str) -> str | None:
    """LibreChat's text of a part: a string, or ``{value: …}``."""
    found = part.get(key)
    return S.plain_text(found.get("value")) if isinstance(found, dict) else S.plain_text(found)


def _segments(content: list[Any] | None) -> Iterator[S.Segment]:
    for part in content or []:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind == "text" and _value(part, "text"):
            yield "block", S.text(_value(part, "text") or "")
        elif kind == "think" and _value(part, "think"):
            yield "block", S.thinking(_value(part, "think") or "")
        elif kind == "tool_call" and isinstance(part.get("tool_call"), dict):
            call = part["tool_call"]
            arguments = call.get("args")
            if isinstance(arguments, str):
                try:
                    arguments = orjson.loads(arguments)
                except orjson.JSONDecodeError:
                    arguments = {"input": arguments}
            name = S.plain_text(call.get("name")) or S.plain_text(call.get("type")) or "tool"
            output = call.get("output")
            result = (
                None
                if output is None
                else [S.text(output if isinstance(output, str) else orjson.dumps(output).decode())]
            )
            yield (
                "call",
                (
                    S.tool_call(
                        S.plain_text(call.get("id")) or f"call_{name}", name, arguments if arguments is not None else {}
                    ),
                    result,
                ),
            )
        elif kind == "image_url" and isinstance(part.get("image_url"), dict):
            picture = S.image_from_data_url(part["image_url"].get("url"))
            if picture is not None:
                yield "block", picture
