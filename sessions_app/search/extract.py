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

from ..sessionfiles.description import Part, describe

# One entry can hold megabytes of tool output; beyond this, its text is not indexed (a snippet is cut
# from the stored text at query time, and very long rows would make every query that hits them slow).
MAX_TEXT_CHARS = 200_000


def searchable_text(entry: dict[str, Any]) -> tuple[str, str] | None:
    """``(kind, text)`` for an entry with something to find, else None. ``kind`` is the message role,
    or the entry type for entries that are not messages."""
    described = describe(entry)
    kind = described.kind
    if described.message is not None:
        kind = described.role or "message"
        shell = described.shell
        parts = [shell.command, shell.output] if shell is not None else list(_content(described.parts))
    elif kind in ("compaction", "branch_summary"):
        parts = [described.text]
    elif kind == "custom_message":
        parts = list(_content(described.parts))
    else:
        return None
    text = "\n".join(part for part in parts if part)
    if not text.strip():
        return None
    return kind, text[:MAX_TEXT_CHARS]


def _content(parts: tuple[Part, ...]) -> Iterator[str]:
    """A message's words: its text and thinking, its tool calls' names and arguments (images and
    parts of other kinds have no text)."""
    for part in parts:
        if part.call is not None:
            yield part.call.name or ""
            yield from _flatten(part.call.arguments)
        elif part.kind in ("text", "thinking"):
            yield part.text


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
