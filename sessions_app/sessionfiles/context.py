"""What the LLM sees: a pure function from a root→leaf path of entries to a message list (pi 1.6.0).

Nothing here is stored; the context is derived again whenever it is needed (docs/format.md §6).
``build_session_context`` gives pi's in-memory messages (§6.1–§6.4); ``convert_to_llm`` turns them into
provider messages (§6.5); ``estimate_tokens`` is §6.6.

This is pi's algorithm over pi's objects: messages go on as they are stored, and a key an entry lacks
differs from one that is null (§6.4), which the entry description (``description``) does not tell
apart. So entries are read here key by key; what reads a message's words — a command's text for the
model, the token estimate — reads them through the description, as every other reader does.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .description import Part, Shell, parts_of, shell_of
from .entries import as_text, dump_json, js_truthy
from .instants import iso_to_ms

Entry = dict[str, Any]
Message = dict[str, Any]

COMPACTION_PREFIX = (
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
)
COMPACTION_SUFFIX = "\n</summary>"
BRANCH_PREFIX = "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
BRANCH_SUFFIX = "</summary>"
_EDITABLE_ROLES = frozenset({"user", "assistant", "toolResult", "custom"})


@dataclass
class SessionContext:
    """pi's ``buildSessionContext`` result, plus the ids of the entries it was built from."""

    messages: list[Message] = field(default_factory=list)
    thinking_level: Any = "off"
    model: dict[str, Any] | None = None
    entry_ids: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {"thinkingLevel": self.thinking_level, "model": self.model, "messages": self.messages}


def build_session_context(path: Sequence[Entry]) -> SessionContext:
    """The context for a root→leaf path (the walk itself, docs/format.md §6.1, is the caller's: ``SessionFile.path_entries``)."""
    thinking_level, model = _settings(path)
    selected = context_entries(path)
    # Only string targets can name an entry; a malformed (e.g. list) targetId must not crash the build.
    edits = {
        entry["targetId"]: entry
        for entry in selected
        if entry.get("type") == "context_edit" and isinstance(entry.get("targetId"), str)
    }
    messages: list[Message] = []
    for position, entry in enumerate(selected):
        if entry.get("type") == "compaction" and position > 0:
            continue  # an older compaction inside the kept range: only the newest one speaks
        messages.extend(_apply_edit(entry_messages(entry), edits.get(entry.get("id"))))
    return SessionContext(messages, thinking_level, model, [str(entry.get("id")) for entry in selected])


def _settings(path: Sequence[Entry]) -> tuple[Any, dict[str, Any] | None]:
    """Model and thinking level from the whole path, the part before a compaction included (§6.1)."""
    thinking_level: Any = "off"
    model: dict[str, Any] | None = None
    for entry in path:
        kind = entry.get("type")
        if kind == "thinking_level_change":
            thinking_level = entry.get("thinkingLevel")
        elif kind == "model_change":
            model = _defined(provider=entry.get("provider", _UNDEFINED), modelId=entry.get("modelId", _UNDEFINED))
        elif kind == "message":
            message = entry.get("message")
            # A parsable line may hold a non-object ``message`` (pi does not validate shapes): skip it, don't crash.
            if isinstance(message, dict) and message.get("role") == "assistant":
                model = _defined(provider=message.get("provider", _UNDEFINED), modelId=message.get("model", _UNDEFINED))
    return thinking_level, model


_UNDEFINED: Any = object()
"""A key the entry does not have: JS reads it as ``undefined``, which ``JSON.stringify`` leaves out."""


def _defined(**pairs: Any) -> dict[str, Any]:
    """An object pi builds from an entry's keys, without the keys the entry lacks (§6.4): pi's object
    holds ``undefined`` there, which is no value, where ``null`` is one and stays."""
    return {key: value for key, value in pairs.items() if value is not _UNDEFINED}


def _entry_ms(entry: Entry) -> int | None:
    """``new Date(entry.timestamp).getTime()``: a missing timestamp is NaN (None), a ``null`` one 0."""
    return iso_to_ms(entry["timestamp"]) if "timestamp" in entry else None


def context_entries(path: Sequence[Entry]) -> list[Entry]:
    """pi's ``buildContextEntries`` (§6.2): the latest compaction, the entries it keeps, then the rest."""
    last = None
    for position, entry in enumerate(path):
        if entry.get("type") == "compaction":
            last = position
    if last is None:
        return list(path)
    compaction = path[last]
    selected = [compaction]
    keeping = False
    for entry in path[:last]:
        if entry.get("id") == compaction.get("firstKeptEntryId"):
            keeping = True
        if keeping and not _is_system_message(entry):
            selected.append(entry)
    selected.extend(path[last + 1 :])
    return selected


def _is_system_message(entry: Entry) -> bool:
    message = entry.get("message")  # may be a non-object on a malformed line
    return entry.get("type") == "message" and isinstance(message, dict) and message.get("role") == "system"


def entry_messages(entry: Entry) -> list[Message]:
    """The in-memory messages one selected entry stands for (§6.4)."""
    kind = entry.get("type")
    if kind == "message":
        message = entry.get("message")
        if not isinstance(message, dict):
            return []
        role = message.get("role")
        if message.get("content") is None and role == "system":
            return [{**message, "content": ""}]
        if message.get("content") is None and role in ("user", "assistant", "toolResult"):
            return [{**message, "content": []}]
        return [message]
    if kind == "custom_message":
        content = entry.get("content")
        custom = _defined(
            role="custom",
            customType=entry.get("customType", _UNDEFINED),
            content=[] if content is None else content,
            display=entry.get("display", _UNDEFINED),
            details=entry.get("details", _UNDEFINED),
        )
        custom["timestamp"] = _entry_ms(entry)
        return [custom]
    if kind == "branch_summary" and js_truthy(entry.get("summary")):
        summary = _defined(role="branchSummary", summary=entry["summary"], fromId=entry.get("fromId", _UNDEFINED))
        summary["timestamp"] = _entry_ms(entry)
        return [summary]
    if kind == "compaction":
        folded = _defined(
            role="compactionSummary",
            summary=entry.get("summary", _UNDEFINED),
            tokensBefore=entry.get("tokensBefore", _UNDEFINED),
        )
        folded["timestamp"] = _entry_ms(entry)
        system = entry.get("systemMessage")
        return [folded] if system is None or not js_truthy(system) else [system, folded]
    return []


def _apply_edit(messages: list[Message], edit: Entry | None) -> list[Message]:
    """The last ``context_edit`` for an entry (§6.3): null drops it, ``{content}`` replaces the content,
    and a replacement without a ``content`` leaves the content undefined, as in pi (the key goes)."""
    if edit is None:
        return messages
    replacement = edit.get("replacement")
    if replacement is None:
        return []
    new_content = replacement.get("content", _UNDEFINED) if isinstance(replacement, dict) else _UNDEFINED
    edited = []
    for message in messages:
        role = message.get("role") if isinstance(message, dict) else None  # malformed systemMessage: keep as is
        if role not in _EDITABLE_ROLES:
            edited.append(message)
            continue
        content = new_content
        if role in ("assistant", "toolResult") and isinstance(content, str):
            content = [{"type": "text", "text": content}]
        changed = dict(message)  # the key keeps its place, as in pi's ``{...message, content}``
        if content is _UNDEFINED:
            changed.pop("content", None)
        else:
            changed["content"] = content
        edited.append(changed)
    return edited


def convert_to_llm(messages: Sequence[Message]) -> list[Message]:
    """pi's ``convertToLlm`` (§6.5): every message as one a provider understands."""
    converted: list[Message] = []
    for message in messages:
        if not isinstance(message, dict):
            continue  # e.g. a malformed compaction ``systemMessage``; pi drops messages without a known role
        role = message.get("role")
        timestamp = message.get("timestamp")
        if role in ("system", "user", "assistant", "toolResult"):
            converted.append(message)
        elif role == "bashExecution":
            shell = shell_of(message)
            if not shell.excluded:
                converted.append(_user_text(bash_execution_text(shell), timestamp))
        elif role == "custom":
            content = message.get("content")
            if isinstance(content, str):
                content = [{"type": "text", "text": content}]
            converted.append({"role": "user", "content": content, "timestamp": timestamp})
        elif role == "branchSummary":
            converted.append(_user_text(BRANCH_PREFIX + as_text(message.get("summary")) + BRANCH_SUFFIX, timestamp))
        elif role == "compactionSummary":
            converted.append(
                _user_text(COMPACTION_PREFIX + as_text(message.get("summary")) + COMPACTION_SUFFIX, timestamp)
            )
    return converted


def _user_text(text: str, timestamp: Any) -> Message:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": timestamp}


def bash_execution_text(shell: Shell) -> str:
    """How a ``!command`` run by the user reads to the model."""
    text = f"Ran `{shell.command}`\n"
    text += f"```\n{shell.output}\n```" if shell.output else "(no output)"
    if shell.cancelled:
        text += "\n\n(command cancelled)"
    elif shell.exit_code is not None and shell.exit_code != 0:
        text += f"\n\nCommand exited with code {as_text(shell.exit_code)}"
    if shell.truncated and shell.full_output_path:
        text += f"\n\n[Output truncated. Full output: {shell.full_output_path}]"
    return text


IMAGE_CHARS = 4800


def estimate_tokens(messages: Iterable[Message]) -> int:
    """pi's rough token count of a context (its compaction's ``estimateTokens``): per message,
    ceil(characters / 4), an image counting 4,800 characters. Stored as a compaction's ``tokensBefore``."""
    return sum(math.ceil(_chars(message) / 4) for message in messages)


def _chars(message: dict[str, Any]) -> int:
    role = message.get("role")
    if role in ("branchSummary", "compactionSummary"):
        return len(as_text(message.get("summary") or ""))
    if role == "bashExecution":
        return len(bash_execution_text(shell_of(message)))
    return sum(map(_part_chars, parts_of(message.get("content"))))


def _part_chars(part: Part) -> int:
    if part.call is not None:
        return len(part.call.name or "") + len(dump_json(part.call.arguments))
    if part.kind == "image":
        return IMAGE_CHARS
    return len(part.text)
