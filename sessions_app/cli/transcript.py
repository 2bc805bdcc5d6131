"""Entries as text: transcript blocks for ``show``, one line per node for ``tree``.

Every entry type pi writes has a rendering; an unknown type (or message role) is shown as its raw JSON.
``leaf`` markers never reach this module: they are not on any path (docs/format.md §5.3).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ..sessionfiles.entries import as_text, content_text, dump_json, one_line

Entry = dict[str, Any]
INDENT = "  "
_UNPRINTABLE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")
_RAW_IN_JSON = re.compile(r"[\x7f-\x9f]")  # what ``printable`` replaces and JSON leaves unescaped


# ---------------------------------------------------------------------------------- small pieces


def raw_json(value: Any) -> str:
    """Compact JSON, as stored (non-ASCII raw), at any depth."""
    return dump_json(value).decode()


def printable(line: str) -> str:
    """``line`` safe to print: control characters (an escape sequence in a session file could rewrite
    the terminal) and lone surrogates (a file name that is not UTF-8) become U+FFFD; tabs and
    newlines stay."""
    return _UNPRINTABLE.sub("\ufffd", line)


def printable_json(text: str) -> str:
    """JSON text safe to print that still decodes to exactly what it encodes: DEL and the C1 controls,
    which JSON may leave raw, become ``\\u`` escapes (``printable`` would replace them, changing an id
    or a message); the other controls are escaped by every JSON encoder already."""
    return _RAW_IN_JSON.sub(lambda found: f"\\u{ord(found[0]):04x}", text)


def terminal_line(text: str, width: int | None = None) -> str:
    """``one_line`` made safe to print (see ``printable``)."""
    return printable(one_line(text, width))


def when(timestamp: Any) -> str:
    """An entry's ISO timestamp, shortened for reading (``2026-03-02 09:15:09``)."""
    if not isinstance(timestamp, str) or len(timestamp) < 19 or timestamp[10] != "T":
        return as_text(timestamp) if timestamp else "?"
    return f"{timestamp[:10]} {timestamp[11:19]}"


def block_text(block: Any) -> str:
    """One content block as text: text as is, images and other blocks as a bracketed marker."""
    if not isinstance(block, dict):
        return raw_json(block)
    kind = block.get("type")
    if kind == "text":
        return as_text(block.get("text", ""))
    if kind == "image":
        return f"[image {as_text(block.get('mimeType', ''))}]".replace(" ]", "]")
    return raw_json(block)


def content_as_shown(content: Any) -> str:
    """A message ``content`` as a transcript shows it: every block on its own line, images and other
    blocks as markers. (The core's ``content_text`` keeps text blocks only: what a preview or the model
    reads, not what a reader must be shown.)"""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(block_text(block) for block in content)
    return raw_json(content)


def tool_call(block: Mapping[str, Any]) -> str:
    """``name(key=value, …)`` with JSON values, or ``name(<raw arguments>)`` when they are not an object."""
    arguments = block.get("arguments")
    if isinstance(arguments, dict):
        inner = ", ".join(f"{key}={raw_json(value)}" for key, value in arguments.items())
    elif arguments is None:
        inner = ""
    else:
        inner = raw_json(arguments)
    return f"{as_text(block.get('name', '?'))}({inner})"


def _model_name(provider: Any, model: Any) -> str:
    return "/".join(as_text(part) for part in (provider, model) if part)


# ---------------------------------------------------------------------------------- node lines (tree)


def node_line(entry: Entry, width: int = 70) -> str:
    """``kind: text`` on one line — what ``tree`` shows for a node. Not the web's ``preview`` (a title
    with Markdown read as words): a terminal reader is shown what the line holds, by kind, raw."""
    kind, text = _node_parts(entry)
    text = terminal_line(text, width)
    return f"{kind}: {text}" if text else kind


def _node_parts(entry: Entry) -> tuple[str, str]:
    kind = entry.get("type")
    if kind == "message":
        message = entry.get("message")
        if not isinstance(message, dict):
            return "message", raw_json(message)
        role = message.get("role")
        content = message.get("content")
        if role == "assistant":
            return "assistant", _assistant_node(content)
        if role == "toolResult":
            error = " (error)" if message.get("isError") else ""
            return f"toolResult {as_text(message.get('toolName', '?'))}{error}", content_as_shown(content)
        if role == "bashExecution":
            return "bash", f"$ {as_text(message.get('command', ''))}{_exit_note(message)}"
        if role == "custom":
            return f"custom {as_text(message.get('customType', ''))}".strip(), content_as_shown(content)
        if role in ("user", "system"):
            return str(role), content_as_shown(content)
        return f"message {role}" if isinstance(role, str) else "message", raw_json(message)
    if kind == "model_change":
        return kind, _model_name(entry.get("provider"), entry.get("modelId"))
    if kind == "thinking_level_change":
        return kind, as_text(entry.get("thinkingLevel"))
    if kind == "compaction":
        return kind, as_text(entry.get("summary", ""))
    if kind == "branch_summary":
        return kind, as_text(entry.get("summary", ""))
    if kind == "custom_message":
        return f"custom_message {as_text(entry.get('customType', ''))}".strip(), content_as_shown(entry.get("content"))
    if kind == "custom":
        data = f" {raw_json(entry['data'])}" if "data" in entry else ""
        return "custom", f"{as_text(entry.get('customType', ''))}{data}"
    if kind == "label":
        return kind, _label_text(entry)
    if kind == "session_info":
        name = entry.get("name")
        return kind, f"name {as_text(name)!r}" if name else "name cleared"
    if kind == "context_edit":
        return kind, _context_edit_text(entry)
    if kind == "usage":
        return kind, _usage_text(entry)
    return as_text(kind), raw_json(entry)


def _assistant_node(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    if written := content_text(content).strip():
        return written
    calls = [tool_call(b) for b in content if isinstance(b, dict) and b.get("type") == "toolCall"]
    if calls:
        return "→ " + ", ".join(calls)
    if any(isinstance(b, dict) and b.get("type") == "thinking" for b in content):
        return "[thinking only]"
    return ""


def _exit_note(message: Mapping[str, Any]) -> str:
    if message.get("cancelled"):
        return "  (cancelled)"
    code = message.get("exitCode")
    return f"  (exit {as_text(code)})" if code is not None else ""


def _label_text(entry: Entry) -> str:
    if "targetId" not in entry:
        return "of no entry shown here"  # a share's view of a label on an entry it does not hold
    label = entry.get("label")
    target = entry.get("targetId")
    return f"{as_text(label)!r} on {as_text(target)}" if label else f"cleared on {as_text(target)}"


def _context_edit_text(entry: Entry) -> str:
    replacement = entry.get("replacement")
    target = entry.get("targetId")
    if replacement is None:
        return f"{as_text(target)} dropped from the context"
    content = replacement.get("content") if isinstance(replacement, dict) else replacement
    return f"{as_text(target)} replaced by {terminal_line(content_as_shown(content))!r}"


def _usage_text(entry: Entry) -> str:
    usage = entry.get("usage")
    total = usage.get("totalTokens") if isinstance(usage, dict) else None
    parts = [as_text(entry.get("kind", "?")), _model_name(entry.get("provider"), entry.get("model"))]
    if total is not None:
        parts.append(f"{as_text(total)} tokens")
    if entry.get("note"):
        parts.append(as_text(entry["note"]))
    return " · ".join(part for part in parts if part)


# ---------------------------------------------------------------------------------- transcript (show)


def render_transcript(entries: Iterable[Entry], labels: Mapping[str, Any]) -> Iterator[str]:
    """Lines of the transcript: one block per entry, blocks separated by a blank line (a run of
    one-liners — settings changes, labels, names — stays together).

    ``labels`` maps target id → label text (or ``(text, timestamp)`` as the index keeps them); a label
    is shown on its target's header line.
    """
    previous_single = None
    for entry in entries:
        entry_id = entry.get("id")
        label = labels.get(entry_id) if isinstance(entry_id, str) else None
        if isinstance(label, tuple):
            label = label[0]
        lines = render_entry(entry, label)
        single = len(lines) == 1 and lines[0].startswith("· ")
        if previous_single is not None and not (single and previous_single):
            yield ""
        previous_single = single
        yield from lines


def render_entry(entry: Entry, label: str | None = None) -> list[str]:
    """One entry: a header line (``[marker] id  time  details  (label: …)``) and its indented body.

    Settings changes and other metadata are single lines starting with ``·``.
    """
    entry_id = as_text(entry.get("id", "?"))
    label_note = f"  (label: {label})" if label else ""
    one_liner = _one_liner(entry)
    if one_liner is not None:
        return [f"· {entry_id}  {when(entry.get('timestamp'))}  {one_liner}{label_note}"]
    marker, details, body = _block(entry)
    header = f"[{marker}] {entry_id}  {when(entry.get('timestamp'))}"
    if details:
        header += "  " + " · ".join(details)
    lines = [header + label_note]
    for part in body:
        lines.extend(INDENT + line for line in part.split("\n"))
    return lines


def _one_liner(entry: Entry) -> str | None:
    kind = entry.get("type")
    if kind == "model_change":
        return f"model → {_model_name(entry.get('provider'), entry.get('modelId'))}"
    if kind == "thinking_level_change":
        return f"thinking level → {as_text(entry.get('thinkingLevel'))}"
    if kind == "label":
        return f"label {_label_text(entry)}"
    if kind == "session_info":
        name = entry.get("name")
        return f"session name → {as_text(name)!r}" if name else "session name cleared"
    if kind == "custom":
        data = f" {raw_json(entry['data'])}" if "data" in entry else ""
        return f"custom {as_text(entry.get('customType', ''))}{data}"
    if kind == "context_edit":
        return f"context edit: {_context_edit_text(entry)}"
    if kind == "usage":
        return f"usage {_usage_text(entry)}"
    return None


def _block(entry: Entry) -> tuple[str, list[str], list[str]]:
    """(marker, header details, body texts) for entries shown as a block."""
    kind = entry.get("type")
    if kind == "message" and isinstance(entry.get("message"), dict):
        return _message_block(entry["message"], entry)
    if kind == "compaction":
        details = [
            f"keeps from {as_text(entry.get('firstKeptEntryId'))}",
            f"{as_text(entry.get('tokensBefore'))} tokens before",
        ]
        return "compaction", details, [as_text(entry.get("summary", ""))]
    if kind == "branch_summary":
        return "branch summary", [f"from {as_text(entry.get('fromId'))}"], [as_text(entry.get("summary", ""))]
    if kind == "custom_message":
        details = [as_text(entry.get("customType", ""))]
        if not entry.get("display"):
            details.append("not displayed")
        return "custom message", details, [content_as_shown(entry.get("content"))]
    return as_text(kind), ["unknown entry type, raw"], [raw_json(entry)]


def _message_block(message: Mapping[str, Any], entry: Entry) -> tuple[str, list[str], list[str]]:
    role = message.get("role")
    content = message.get("content")
    if role == "user":
        return "user", [], [content_as_shown(content)]
    if role == "assistant":
        details = [_model_name(message.get("provider"), message.get("model"))]
        stop = message.get("stopReason")
        if stop not in (None, "stop", "toolUse"):
            details.append(f"stopped: {as_text(stop)}")
        body = _assistant_body(content)
        if message.get("errorMessage"):
            body.append(f"[error] {as_text(message['errorMessage'])}")
        return "assistant", [d for d in details if d], body
    if role == "toolResult":
        details = [as_text(message.get("toolName", "?"))]
        if message.get("isError"):
            details.append("ERROR")
        return "tool result", details, [content_as_shown(content)]
    if role == "bashExecution":
        details = []
        if message.get("cancelled"):
            details.append("cancelled")
        elif message.get("exitCode") is not None:
            details.append(f"exit code {as_text(message.get('exitCode'))}")
        if message.get("truncated"):
            details.append("output truncated")
        if message.get("excludeFromContext"):
            details.append("not in context")
        output = as_text(message.get("output") or "").rstrip("\n")
        body = [f"$ {as_text(message.get('command', ''))}"] + ([output] if output else [])
        return "bash", details, body
    if role == "custom":
        details = [as_text(message.get("customType", ""))]
        if message.get("display") is False:
            details.append("not displayed")
        return "custom", [d for d in details if d], [content_as_shown(content)]
    if role == "system":
        return "system", [], [content_as_shown(content)]
    return f"message {as_text(role)}", ["unknown role, raw"], [raw_json(entry)]


def _assistant_body(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    body = []
    for block in content:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "thinking":
            if block.get("redacted"):
                body.append("(thinking, redacted)")
            else:
                body.append("(thinking) " + as_text(block.get("thinking", "")))
        elif kind == "toolCall":
            body.append("→ " + tool_call(block))
        else:
            body.append(block_text(block))
    return body


# ---------------------------------------------------------------------------------- which rows
