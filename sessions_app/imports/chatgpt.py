"""ChatGPT's export (``conversations.json``, alone or in its ``.zip``): a list of conversations, each a
``mapping`` of nodes ``{id, message, parent, children}`` and the ``current_node`` the user was on.

| node | becomes |
| --- | --- |
| no ``message`` (the root placeholder) | nothing: its children hang under its parent |
| user text, pictures (``multimodal_text``), a voice transcription | a user message (pictures from the export's files) |
| assistant text (``recipient`` ``all``) | an assistant message (model from ``metadata.model_slug``) |
| assistant reasoning (``thoughts``) | an assistant message of thinking blocks |
| assistant addressed to a tool (``recipient`` ``python``, ``web.run``, ``dalle.text2im`` …) | an assistant message with one tool call |
| tool output answering such a call | its tool result |
| tool output with no call before it | a ``custom_message`` (the model saw it) |
| system messages, hidden user context (custom instructions), ``reasoning_recap``, other roles | a ``custom`` entry holding the message |

Each message entry keeps the rest of ChatGPT's message (metadata, status, pointers of pictures not in
the export …) in its ``imported`` key.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson

from ..sessionfiles.entries import Draft
from . import shapes as S
from .conversation import Conversation, Node
from .errors import ExportError
from .sources import CHATGPT, Counter, Export, items

API, PROVIDER = "chatgpt-export", "openai"
_STOP = {"stop": "stop", "max_tokens": "length", "interrupted": "aborted"}


def conversations(export: Export, counter: Counter) -> Iterator[Conversation]:
    for member in export.members:
        for number, item in items(member, counter):
            yield _conversation(item, export, f"{member.name}, conversation {number:,}")


def _conversation(item: Any, export: Export, where: str) -> Conversation:
    if not isinstance(item, dict):
        raise ExportError(f"{where}: not an object")
    conversation_id = item.get("conversation_id") or item.get("id")
    if not isinstance(conversation_id, str) or not conversation_id:
        conversation_id = f"{item.get('create_time')}:{item.get('title')}"
    where = f"{where} ({conversation_id})"
    mapping = item.get("mapping")
    if not isinstance(mapping, dict):
        raise ExportError(f"{where}: no 'mapping' object (the conversation's messages)")
    default_model = S.plain_text(item.get("default_model_slug"))
    reader = _Reader(mapping, export, where, default_model, S.seconds_ms(item.get("create_time")))
    nodes = [reader.node(key, node) for key, node in mapping.items()]
    current = item.get("current_node")
    return Conversation(
        source=CHATGPT,
        id=conversation_id,
        where=where,
        created_ms=reader.created,
        title=S.plain_text(item.get("title")),
        model=(PROVIDER, default_model) if default_model else None,
        nodes=nodes,
        position=current if isinstance(current, str) else None,
        fields=S.without(item, ["mapping"]),
        notes=reader.notes,
    )


class _Reader:
    def __init__(
        self, mapping: dict[str, Any], export: Export, where: str, model: str | None, created: int | None
    ) -> None:
        self.mapping = mapping
        self.export = export
        self.where = where
        self.model = model or "unknown"
        self.notes: list[str] = []
        self._own = {key: self._own_time(node) for key, node in mapping.items()}
        self._times: dict[str, int] = {}
        self.created = (
            created if created is not None else min((t for t in self._own.values() if t is not None), default=0)
        )

    def node(self, key: str, node: Any) -> Node:
        if not isinstance(node, dict):
            raise ExportError(f"{self.where}: node {key} is not an object")
        parent = node.get("parent")
        message = node.get("message")
        if message is not None and not isinstance(message, dict):
            raise ExportError(f"{self.where}: node {key}: 'message' is not an object")
        parts = [] if message is None else [self._part(key, message, parent, self._time(key))]
        return Node(key, parent if isinstance(parent, str) else None, parts)

    def _own_time(self, node: Any) -> int | None:
        message = node.get("message") if isinstance(node, dict) else None
        if not isinstance(message, dict):
            return None
        return S.seconds_ms(message.get("create_time")) or S.seconds_ms(message.get("update_time"))

    def _time(self, key: str) -> int:
        """The node's time, else its nearest ancestor's, else the conversation's (hidden system nodes
        have none, and pi orders siblings by time)."""
        walked = []
        found: int | None = None
        seen = set()
        while key in self.mapping and key not in seen:
            seen.add(key)
            if key in self._times:
                found = self._times[key]
                break
            walked.append(key)
            found = self._own[key]
            if found is not None:
                break
            parent = self.mapping[key].get("parent") if isinstance(self.mapping[key], dict) else None
            if not isinstance(parent, str):
                break
            key = parent
        result = found if found is not None else self.created
        for key in walked:
            self._times[key] = result
        return result

    def _part(self, key: str, message: dict[str, Any], parent: Any, ms: int) -> Draft:
        author = S.obj(message.get("author"))
        role = author.get("role")
        content = S.obj(message.get("content"))
        kind = content.get("content_type")
        metadata = S.obj(message.get("metadata"))
        hidden = bool(metadata.get("is_visually_hidden_from_conversation"))
        if kind in ("user_editable_context", "reasoning_recap"):
            return S.custom(f"chatgpt/{kind}", {"message": message}, ms)
        if role == "system" or (hidden and role == "user"):
            return S.custom(f"chatgpt/{role}", {"message": message}, ms)
        blocks, kept = self._blocks(content)
        imported = {"from": CHATGPT, "message": {**message, "content": kept}}
        if role == "user":
            only_text = len(blocks) == 1 and blocks[0]["type"] == "text"
            return S.message(S.user(blocks[0]["text"] if only_text else blocks, ms), imported)
        if role == "assistant":
            return S.message(self._assistant(key, message, blocks, metadata, ms), imported)
        if role == "tool":
            return self._tool_output(message, author, blocks, parent, imported, ms)
        return S.custom(f"chatgpt/{role}", {"message": message}, ms)

    def _blocks(self, content: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """pi's content blocks of a message's content, and what is left of the content to keep."""
        blocks: list[dict[str, Any]] = []
        parts = content.get("parts")
        if isinstance(parts, list):
            kept_parts = []
            for part in parts:
                if isinstance(part, str):
                    if part:
                        blocks.append(S.text(part))
                    continue
                kept_parts.append(part)
                if isinstance(part, dict):
                    block = self._object_part(part)
                    if block is not None:
                        blocks.append(block)
            kept = {**content, "parts": kept_parts} if kept_parts else S.without(content, ["parts"])
            return blocks, kept
        if content.get("content_type") == "thoughts" and isinstance(content.get("thoughts"), list):
            for thought in content["thoughts"]:
                if isinstance(thought, dict):
                    said = [S.plain_text(thought.get(key)) for key in ("summary", "content")]
                    blocks.append(S.thinking("\n\n".join(text for text in said if text)))
            return blocks, S.without(content, ["thoughts"])
        for key in ("text", "result"):
            value = S.plain_text(content.get(key))
            if value:
                return [S.text(value)], S.without(content, [key])
        return blocks, content

    def _object_part(self, part: dict[str, Any]) -> dict[str, Any] | None:
        kind = part.get("content_type")
        if kind == "image_asset_pointer":
            pointer = S.plain_text(part.get("asset_pointer")) or ""
            data = self.export.picture(pointer.rpartition("://")[2])
            if data is None:
                self.notes.append(f"{self.where}: picture {pointer or '(no pointer)'} is not in the export")
                return None
            return S.image(data)
        if kind == "audio_transcription":
            said = S.plain_text(part.get("text"))
            return S.text(said) if said else None
        return None

    def _assistant(
        self, key: str, message: dict[str, Any], blocks: list[dict[str, Any]], metadata: dict[str, Any], ms: int
    ) -> dict[str, Any]:
        model = S.plain_text(metadata.get("model_slug")) or self.model
        recipient = message.get("recipient")
        if isinstance(recipient, str) and recipient != "all":
            said = "\n".join(block["text"] for block in blocks if block["type"] == "text")
            return S.assistant(
                [S.tool_call(call_id(key), recipient, _arguments(said))],
                api=API,
                provider=PROVIDER,
                model=model,
                stop_reason="toolUse",
                ms=ms,
            )
        finish = S.obj(metadata.get("finish_details"))
        stop = _STOP.get(str(finish.get("type")), "stop")
        if message.get("status") == "in_progress":
            stop = "aborted"
        return S.assistant(blocks, api=API, provider=PROVIDER, model=model, stop_reason=stop, ms=ms)

    def _tool_output(
        self,
        message: dict[str, Any],
        author: dict[str, Any],
        blocks: list[dict[str, Any]],
        parent: Any,
        imported: dict[str, Any],
        ms: int,
    ) -> Draft:
        name = S.plain_text(author.get("name")) or "tool"
        call = self.mapping.get(parent) if isinstance(parent, str) else None
        calling = call.get("message") if isinstance(call, dict) else None
        if isinstance(calling, dict) and _addressed_to_tool(calling):
            is_error = (
                isinstance(message.get("content"), dict) and message["content"].get("content_type") == "system_error"
            )
            return S.message(S.tool_result(call_id(parent), name, blocks, ms, is_error=is_error), imported)
        return S.custom_message(f"chatgpt/{name}", blocks, ms, details=imported)


def call_id(node_id: str) -> str:
    """The tool call id of an assistant node addressed to a tool (ChatGPT's export names none): its
    output answers it by pointing at that node."""
    return f"call_{node_id}"


def _addressed_to_tool(message: dict[str, Any]) -> bool:
    author = S.obj(message.get("author"))
    recipient = message.get("recipient")
    return author.get("role") == "assistant" and isinstance(recipient, str) and recipient != "all"


def _arguments(said: str) -> Any:
    """A tool call's arguments: the JSON object it was written as, else the text as ``input``."""
    try:
        value = orjson.loads(said)
    except orjson.JSONDecodeError:
        return {"input": said}
    return value if isinstance(value, dict) else {"input": said}
