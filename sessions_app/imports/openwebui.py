"""Open WebUI's chat export (one chat or all: a JSON list of chat records): each chat's
``history.messages`` is a tree of ``{id, parentId, childrenIds, role, content, …}`` and
``history.currentId`` the message the user was on.

| message | becomes |
| --- | --- |
| user text, pasted pictures (``files`` of type ``image`` with a ``data:`` URL) | a user message |
| assistant text | an assistant message (its model from ``model``) |
| an answer holding ``<details type="reasoning">`` | thinking blocks, in place |
| an answer holding ``<details type="tool_calls">`` | the call in an assistant message, its result as a tool result, the text after it in the next assistant message |
| several answers to one message (several models at once, regenerations) | sibling branches, each with its model |
| system and other roles | a ``custom`` entry holding the message |

A chat without ``history`` (older exports) is read from its ``messages`` list, one after another.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from typing import Any

import orjson

from ..sessionfiles.entries import Draft
from . import shapes as S
from .conversation import Conversation, Node
from .errors import ExportError
from .sources import OPEN_WEBUI, Counter, Export, items

API, PROVIDER = "open-webui-export", "open-webui"
_DETAILS = re.compile(r"<details\s+([^>]*)>(.*?)</details>\n?", re.S)
_ATTRIBUTE = re.compile(r'([\w-]+)="([^"]*)"')
_SUMMARY = re.compile(r"<summary>.*?</summary>\n?", re.S)
_KEPT_FILE_URL = "(the picture is in the message's content)"


def conversations(export: Export, counter: Counter) -> Iterator[Conversation]:
    for member in export.members:
        for number, record in items(member, counter):
            yield _conversation(record, f"{member.name}, chat {number:,}")


def epoch_ms(value: Any) -> int | None:
    """Open WebUI's times: seconds in chats and messages, though some versions write milliseconds or
    nanoseconds; told apart by size (any time after 1973 in seconds is below 10^11)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if abs(value) >= 1e17:
        return S.seconds_ms(value / 1e9)
    if abs(value) >= 1e11:
        return S.seconds_ms(value / 1e3)
    return S.seconds_ms(value)


def _conversation(record: Any, where: str) -> Conversation:
    if not isinstance(record, dict):
        raise ExportError(f"{where}: not an object")
    chat: dict[str, Any] = record["chat"] if isinstance(record.get("chat"), dict) else record
    history = chat.get("history")
    chat_id = record.get("id") or chat.get("id")
    if not isinstance(chat_id, str) or not chat_id:
        chat_id = f"{record.get('created_at')}:{record.get('title') or chat.get('title')}"
    where = f"{where} ({chat_id})"
    if isinstance(history, dict) and isinstance(history.get("messages"), dict):
        messages = history["messages"]
        current = history.get("currentId")
    elif isinstance(chat.get("messages"), list):
        messages, current = _chained(chat["messages"], where)
    else:
        raise ExportError(f"{where}: no 'history.messages' (the chat's messages)")
    models = [model for model in S.listed(chat.get("models")) if isinstance(model, str)]
    created = epoch_ms(record.get("created_at")) or epoch_ms(chat.get("timestamp"))
    reader = _Reader(messages, where, models[0] if models else None, created)
    nodes = [reader.node(key, message) for key, message in messages.items()]
    if not isinstance(current, str) or current not in messages:
        current = reader.newest_leaf()
        if messages:
            reader.notes.append(f"{where}: no current message: the newest one without replies is taken")
    title = S.plain_text(record.get("title")) or S.plain_text(chat.get("title"))
    kept_chat = S.without(chat, ["history", "messages"])
    return Conversation(
        source=OPEN_WEBUI,
        id=chat_id,
        where=where,
        created_ms=reader.created,
        title=title,
        model=(PROVIDER, models[0]) if models else None,
        nodes=nodes,
        position=current,
        fields={**S.without(record, ["chat"]), "chat": kept_chat} if chat is not record else kept_chat,
        notes=reader.notes,
    )


def _chained(listed: list[Any], where: str) -> tuple[dict[str, Any], str | None]:
    """An older chat's ``messages`` list as a tree: each message under the one before."""
    messages: dict[str, Any] = {}
    previous = None
    for number, message in enumerate(listed, 1):
        if not isinstance(message, dict):
            raise ExportError(f"{where}: message {number} is not an object")
        key = S.plain_text(message.get("id")) or f"message-{number}"
        messages[key] = {**message, "parentId": previous}
        previous = key
    return messages, previous


class _Reader:
    def __init__(self, messages: dict[str, Any], where: str, model: str | None, created: int | None) -> None:
        self.messages = messages
        self.where = where
        self.model = model or "unknown"
        self.notes: list[str] = []
        times = [epoch_ms(m.get("timestamp")) for m in messages.values() if isinstance(m, dict)]
        self.created = created if created is not None else min((t for t in times if t is not None), default=0)

    def newest_leaf(self) -> str | None:
        parents = {m.get("parentId") for m in self.messages.values() if isinstance(m, dict)}
        leaves = [key for key in self.messages if key not in parents]
        return max(leaves, key=self._time, default=None)

    def _time(self, key: str | None) -> int:
        seen = set()
        while key is not None and key in self.messages and key not in seen:
            seen.add(key)
            message = S.obj(self.messages[key])
            found = epoch_ms(message.get("timestamp"))
            if found is not None:
                return found
            key = S.plain_text(message.get("parentId"))
        return self.created

    def node(self, key: str, message: Any) -> Node:
        if not isinstance(message, dict):
            raise ExportError(f"{self.where}: message {key} is not an object")
        parent = message.get("parentId")
        return Node(key, parent if isinstance(parent, str) else None, self._parts(key, message, self._time(key)))

    def _parts(self, key: str, message: dict[str, Any], ms: int) -> list[Draft]:
        role = message.get("role")
        content = message.get("content")
        said = content if isinstance(content, str) else ""
        imported = {"from": OPEN_WEBUI, "message": _kept(message, content)}
        if role == "user":
            pictures = [block for block in map(_picture, _files(message)) if block is not None]
            body: str | list[dict[str, Any]] = [S.text(said), *pictures] if pictures else said
            if pictures and not said:
                body = pictures
            return [S.message(S.user(body, ms), imported)]
        if role == "assistant":
            return self._answer(message, said, imported, ms)
        return [S.custom(f"open-webui/{role}", {"message": message}, ms)]

    def _answer(self, message: dict[str, Any], said: str, imported: dict[str, Any], ms: int) -> list[Draft]:
        """An answer as pi's turns: what came before each run of tool calls, the calls' results, and
        the text after them in the next assistant message (tool calls live inside Open WebUI's text)."""
        model = S.plain_text(message.get("model")) or self.model
        error = message.get("error")
        reason = "error" if error else "aborted" if message.get("done") is False else "stop"
        error_text = (S.plain_text(error.get("content")) if isinstance(error, dict) else S.plain_text(error)) or None

        def reply(blocks: list[dict[str, Any]], stop: str, last: bool) -> dict[str, Any]:
            return S.assistant(
                blocks,
                api=API,
                provider=PROVIDER,
                model=model,
                usage_=_usage(message) if last else None,
                stop_reason=stop,
                error_message=error_text if last and stop == "error" else None,
                ms=ms,
            )

        turns = S.answer_turns(_segments(said), reply, reason, ms)
        return [S.message(turn, imported if number == 0 else None) for number, turn in enumerate(turns)]


def _segments(said: str) -> Iterator[tuple[str, Any]]:
    """The answer's text, thinking and tool calls, in order."""
    at = 0
    for match in _DETAILS.finditer(said):
        if said[at : match.start()].strip():
            yield "block", S.text(said[at : match.start()].strip("\n"))
        at = match.end()
        attributes = {name: html.unescape(value) for name, value in _ATTRIBUTE.findall(match[1])}
        body = _SUMMARY.sub("", match[2], count=1)
        if attributes.get("type") == "reasoning":
            yield (
                "text",
                S.thinking(
                    "\n".join(line.removeprefix(">").removeprefix(" ") for line in body.strip("\n").split("\n"))
                ),
            )
        elif attributes.get("type") == "tool_calls":
            call = S.tool_call(
                attributes.get("id") or f"call_{match.start()}",
                attributes.get("name") or "tool",
                _json(attributes.get("arguments"), {}),
            )
            result = attributes.get("result")
            output = _json(result, result) if result is not None else html.unescape(body.strip("\n"))
            yield "call", (call, [S.text(output if isinstance(output, str) else orjson.dumps(output).decode())])
        else:
            yield "block", S.text(match[0].strip("\n"))
    if at == 0:
        if said:  # no details in it: the text as it was written
            yield "block", S.text(said)
    elif said[at:].strip():
        yield "block", S.text(said[at:].strip("\n"))


def _json(text: str | None, fallback: Any) -> Any:
    if text is None:
        return fallback
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return fallback


def _usage(message: dict[str, Any]) -> dict[str, Any] | None:
    found = message.get("usage") if isinstance(message.get("usage"), dict) else message.get("info")
    if not isinstance(found, dict):
        return None
    return S.usage(
        found.get("prompt_tokens", found.get("input_tokens", 0)),
        found.get("completion_tokens", found.get("output_tokens", 0)),
    )


def _files(message: dict[str, Any]) -> list[Any]:
    files = message.get("files")
    return files if isinstance(files, list) else []


def _picture(file: Any) -> dict[str, Any] | None:
    return S.image_from_data_url(file.get("url")) if isinstance(file, dict) and file.get("type") == "image" else None


def _kept(message: dict[str, Any], content: Any) -> dict[str, Any]:
    """The message less its text (in pi's content), the tree links (in the entries) and the pictures'
    data (in pi's image blocks)."""
    kept = S.without(message, ["childrenIds", "parentId", *(["content"] if isinstance(content, str) else [])])
    if _files(message):
        kept["files"] = [
            {**file, "url": _KEPT_FILE_URL} if _picture(file) is not None else file for file in _files(message)
        ]
    return kept
