"""Entries as text: transcript blocks for ``show``, one line per node for ``tree``.

Every entry type pi writes has a rendering; an unknown type (or message role) is shown as its raw JSON.
``leaf`` markers never reach this module: they are not on any path (docs/format.md §5.3).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ..sessionfiles.description import Description, Part, Shell, ToolCall, describe, text_of
from ..sessionfiles.entries import as_text, dump_json, one_line

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


def part_text(part: Part) -> str:
    """One part of a message as text: text as is, thoughts and tool calls marked, an image as a
    bracketed marker, anything else as its raw JSON."""
    if part.kind == "text":
        return part.text
    if part.kind == "thinking":
        return "(thinking, redacted)" if part.redacted else f"(thinking) {part.text}"
    if part.call is not None:
        return f"→ {tool_call(part.call)}"
    if part.kind == "image":
        return f"[image {part.mime_type or ''}]".replace(" ]", "]")
    return raw_json(part.value)


def content_as_shown(parts: Iterable[Part]) -> str:
    """A message's content as a transcript shows it: every part on its own line (``part_text``). (The
    description's ``text_of`` keeps the text parts only: what a preview or the model reads, not what
    a reader must be shown.)"""
    return "\n".join(map(part_text, parts))


def tool_call(call: ToolCall) -> str:
    """``name(key=value, …)`` with JSON values, or ``name(<raw arguments>)`` when they are not an object."""
    arguments = call.arguments
    if isinstance(arguments, dict):
        inner = ", ".join(f"{key}={raw_json(value)}" for key, value in arguments.items())
    elif arguments is None:
        inner = ""
    else:
        inner = raw_json(arguments)
    return f"{call.name or '?'}({inner})"


def _model_name(provider: str | None, model: str | None) -> str:
    return "/".join(part for part in (provider, model) if part)


# ---------------------------------------------------------------------------------- node lines (tree)


def node_line(entry: Entry, width: int = 70) -> str:
    """``kind: text`` on one line — what ``tree`` shows for a node. Not the web's ``preview`` (a title
    with Markdown read as words): a terminal reader is shown what the line holds, by kind, raw."""
    kind, text = _node_parts(describe(entry))
    text = terminal_line(text, width)
    return f"{kind}: {text}" if text else kind


def _node_parts(described: Description) -> tuple[str, str]:
    kind, parts = described.kind, described.parts
    if described.type == "message" and described.message is None:
        return "message", raw_json(described.entry.get("message"))
    if (result := described.result) is not None:
        return f"toolResult {result.tool or '?'}{' (error)' if result.is_error else ''}", content_as_shown(parts)
    if (shell := described.shell) is not None:
        return "bash", f"$ {shell.command or ''}{_exit_note(shell)}"
    if kind == "assistant":
        return "assistant", _assistant_node(described)
    if kind in ("custom", "custom_message"):
        return f"{kind} {described.custom_type or ''}".strip(), content_as_shown(parts)
    if kind in ("user", "system"):
        return kind, content_as_shown(parts)
    if described.message is not None:  # a role not known here
        return f"message {described.role}" if described.role is not None else "message", raw_json(described.message)
    if kind == "model_change":
        return kind, _model_name(described.provider, described.model)
    if kind in ("thinking_level_change", "compaction", "branch_summary"):
        return kind, described.text or ""
    if kind == "custom_state":
        return "custom", _custom_state_text(described)
    if kind == "label":
        return kind, _label_text(described)
    if kind == "session_info":
        return kind, f"name {described.text!r}" if described.text else "name cleared"
    if kind == "context_edit":
        return kind, _context_edit_text(described)
    if kind == "usage":
        return kind, _usage_text(described)
    return described.type, raw_json(described.entry)


def _assistant_node(described: Description) -> str:
    if written := text_of(described.parts).strip():
        return written
    if calls := described.tool_calls:
        return "→ " + ", ".join(map(tool_call, calls))
    if any(part.kind == "thinking" for part in described.parts):
        return "[thinking only]"
    return ""


def _exit_note(shell: Shell) -> str:
    if shell.cancelled:
        return "  (cancelled)"
    return f"  (exit {as_text(shell.exit_code)})" if shell.exit_code is not None else ""


def _custom_state_text(described: Description) -> str:
    data = f" {raw_json(described.data)}" if described.data is not None else ""
    return f"{described.custom_type or ''}{data}"


def _label_text(described: Description) -> str:
    if described.target is None:
        return "of no entry shown here"  # a share's view of a label on an entry it does not hold
    target = described.target
    return f"{described.text!r} on {target}" if described.text else f"cleared on {target}"


def _context_edit_text(described: Description) -> str:
    if described.data is None:
        return f"{described.target} dropped from the context"
    return f"{described.target} replaced by {terminal_line(content_as_shown(described.parts))!r}"


def _usage_text(described: Description) -> str:
    usage = described.data
    total = usage.get("totalTokens") if isinstance(usage, dict) else None
    parts = [described.text or "?", _model_name(described.provider, described.model)]
    if total is not None:
        parts.append(f"{as_text(total)} tokens")
    if described.note:
        parts.append(described.note)
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
    described = describe(entry)
    entry_id = as_text(entry.get("id", "?"))
    label_note = f"  (label: {label})" if label else ""
    one_liner = _one_liner(described)
    if one_liner is not None:
        return [f"· {entry_id}  {when(entry.get('timestamp'))}  {one_liner}{label_note}"]
    marker, details, body = _block(described)
    header = f"[{marker}] {entry_id}  {when(entry.get('timestamp'))}"
    if details:
        header += "  " + " · ".join(details)
    lines = [header + label_note]
    for part in body:
        lines.extend(INDENT + line for line in part.split("\n"))
    return lines


def _one_liner(described: Description) -> str | None:
    kind = described.kind
    if kind == "model_change":
        return f"model → {_model_name(described.provider, described.model)}"
    if kind == "thinking_level_change":
        return f"thinking level → {described.text or '?'}"
    if kind == "label":
        return f"label {_label_text(described)}"
    if kind == "session_info":
        return f"session name → {described.text!r}" if described.text else "session name cleared"
    if kind == "custom_state":
        return f"custom {_custom_state_text(described)}"
    if kind == "context_edit":
        return f"context edit: {_context_edit_text(described)}"
    if kind == "usage":
        return f"usage {_usage_text(described)}"
    return None


def _block(described: Description) -> tuple[str, list[str], list[str]]:
    """(marker, header details, body texts) for entries shown as a block."""
    kind, parts = described.kind, described.parts
    if kind == "user":
        return "user", [], [content_as_shown(parts)]
    if kind == "assistant":
        details = [_model_name(described.provider, described.model)]
        if described.stop_reason not in (None, "stop", "toolUse"):
            details.append(f"stopped: {described.stop_reason}")
        body = list(map(part_text, parts))
        if described.error:
            body.append(f"[error] {described.error}")
        return "assistant", [d for d in details if d], body
    if (result := described.result) is not None:
        return "tool result", [result.tool or "?", *(["ERROR"] if result.is_error else [])], [content_as_shown(parts)]
    if (shell := described.shell) is not None:
        return "bash", _shell_details(shell), [f"$ {shell.command or ''}", *_output(shell)]
    if kind == "custom":
        details = [described.custom_type or "", *(["not displayed"] if described.hidden else [])]
        return "custom", [d for d in details if d], [content_as_shown(parts)]
    if kind == "system":
        return "system", [], [content_as_shown(parts)]
    if kind == "compaction":
        details = [f"keeps from {described.target}", f"{as_text(described.number)} tokens before"]
        return "compaction", details, [described.text or ""]
    if kind == "branch_summary":
        return "branch summary", [f"from {described.target}"], [described.text or ""]
    if kind == "custom_message":
        details = [described.custom_type or "", *(["not displayed"] if described.hidden else [])]
        return "custom message", details, [content_as_shown(parts)]
    if described.message is not None:
        return f"message {described.role}", ["unknown role, raw"], [raw_json(described.entry)]
    return described.type, ["unknown entry type, raw"], [raw_json(described.entry)]


def _shell_details(shell: Shell) -> list[str]:
    details = []
    if shell.cancelled:
        details.append("cancelled")
    elif shell.exit_code is not None:
        details.append(f"exit code {as_text(shell.exit_code)}")
    if shell.truncated:
        details.append("output truncated")
    if shell.excluded:
        details.append("not in context")
    return details


def _output(shell: Shell) -> list[str]:
    output = (shell.output or "").rstrip("\n")
    return [output] if output else []
