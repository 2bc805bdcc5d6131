"""What of an entry is searchable: the text a reader sees in it, whatever kind of entry it is.

- messages: text and thinking blocks; a tool call's name and arguments (one ``key: value`` per line,
  so a word inside an argument is a word, not part of a JSON escape); a tool result's output;
  a shell command and its output; custom and system messages' content;
- compaction and branch summaries;
- custom messages of extensions.

Everything else (model changes, labels, names, extension state, unknown types) has nothing to find.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..sessionfiles.entries import block_text

# One entry can hold megabytes of tool output; beyond this, its text is not indexed (a snippet is cut
# from the stored text at query time, and very long rows would make every query that hits them slow).
MAX_TEXT_CHARS = 200_000


def searchable_text(entry: dict[str, Any]) -> tuple[str, str] | None:
    """``(kind, text)`` for an entry with something to find, else None. ``kind`` is the message role,
    or the entry type for entries that are not messages."""
    kind = entry.get("type")
    if kind == "message":
        message = entry.get("message")
        if not isinstance(message, dict):
            return None
        role = message.get("role")
        kind = role if isinstance(role, str) and role else "message"
        if role == "bashExecution":
            parts = [_string(message.get("command")), _string(message.get("output"))]
        else:
            parts = list(_content(message.get("content")))
    elif kind in ("compaction", "branch_summary"):
        parts = [_string(entry.get("summary"))]
    elif kind == "custom_message":
        parts = list(_content(entry.get("content")))
    else:
        return None
    text = "\n".join(part for part in parts if part)
    if not text.strip():
        return None
    return str(kind), text[:MAX_TEXT_CHARS]


def _string(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _content(content: Any) -> Iterator[str]:
    """A message's content: a string, or blocks (text, thinking, tool calls; images have no text). A
    text block's text is what the core reads of it (``entries.block_text``: a ``text`` that is no
    string as JS's ``String()`` writes it, docs/format.md §10)."""
    if isinstance(content, str):
        yield content
        return
    if not isinstance(content, list):
        return
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            yield block_text(block) or ""
        elif kind == "thinking":
            yield _string(block.get("thinking"))
        elif kind == "toolCall":
            yield _string(block.get("name"))
            yield from _flatten(block.get("arguments"))


def _flatten(value: Any) -> Iterator[str]:
    """Tool-call arguments as ``key: value`` lines, nested objects and lists included, in order.

    A stack rather than recursion: arguments come from the file, and may nest as deep as JSON allows."""
    stack: list[tuple[str | None, Any]] = [(None, value)]
    while stack:
        key, item = stack.pop()
        if isinstance(item, dict):
            stack.extend(reversed([(str(k), v) for k, v in item.items()]))
        elif isinstance(item, list):
            stack.extend(reversed([(key, v) for v in item]))
        elif item is not None:
            text = "true" if item is True else "false" if item is False else str(item)
            yield text if key is None else f"{key}: {text}"
