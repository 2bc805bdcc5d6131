"""The Markdown download: a branch as a person reads it (the conversation's text, tool calls named,
summaries quoted), titled like the session."""

from __future__ import annotations

import re

from ..access.scoped import SessionView
from ..assistants.base import ABORTED_MESSAGE
from ..cli.transcript import content_as_shown, tool_call
from ..services.lookup import entry_row
from ..sessionfiles import entries as E
from ..sessionfiles.catalog import session_info
from ..sessionfiles.tree import path as tree_path
from .downloads import Download, download_name

TITLE_WIDTH = 80  # characters of a Markdown download's title line (one line: a name or a first message)


def markdown(view: SessionView, entry_id: str | None) -> Download:
    """The branch through ``entry_id`` (default: the position the view stands at) as Markdown."""
    index = view.index
    row = entry_row(view, entry_id) if entry_id is not None else index.leaf_row
    rows = tree_path(index, row)
    info = session_info(view)
    parts = [
        f"# {E.one_line(info.title, TITLE_WIDTH) or 'Session'}\n",
        f"Session `{view.session_id}`, exported from pitree.\n",
    ]
    for entry in view.entries(rows):
        part = _markdown_entry(entry)
        if part:
            parts.append(part)
    return Download(download_name(view, entry_id, "md"), "\n".join(parts).encode())


def _markdown_entry(entry: dict[str, object]) -> str:
    kind = entry.get("type")
    if kind == "message":
        message = entry.get("message")
        if not isinstance(message, dict):
            return ""
        role = message.get("role")
        content = message.get("content")
        if role == "user":
            return f"## You\n\n{content_as_shown(content)}\n"
        if role == "assistant":
            return "## Assistant\n\n" + _assistant_markdown(content) + _ending(message)
        if role == "toolResult":
            return f"### Tool result: {message.get('toolName', '?')}\n\n{_fenced(content_as_shown(content))}"
        if role == "bashExecution":
            shown = f"$ {message.get('command', '')}\n{message.get('output') or ''}"
            return f"### Shell\n\n{_fenced(shown)}"
        return f"## {role}\n\n{content_as_shown(content)}\n"
    if kind in ("compaction", "branch_summary"):
        title = "Summary of the earlier history" if kind == "compaction" else "Summary of a branch left behind"
        return (
            f"> **{title}**\n>\n" + "\n".join(f"> {line}" for line in str(entry.get("summary", "")).splitlines()) + "\n"
        )
    if kind == "custom_message":
        return f"### {entry.get('customType', 'extension')}\n\n{content_as_shown(entry.get('content'))}\n"
    return ""  # position markers, labels, names, model changes: not part of the conversation's text


def _assistant_markdown(content: object) -> str:
    if not isinstance(content, list):
        return f"{content_as_shown(content)}\n"
    parts = []
    for block in content:
        if isinstance(block, dict) and block.get("type") == "toolCall":
            parts.append(f"→ `{tool_call(block)}`")
        elif isinstance(block, dict) and block.get("type") == "thinking":
            continue
        else:
            parts.append(content_as_shown([block]))
    return "\n\n".join(part for part in parts if part.strip()) + "\n"


def _ending(message: dict[str, object]) -> str:
    """What the page says under a reply that did not end well (stopped, failed), as a note after it."""
    reason = message.get("stopReason")
    if reason not in ("aborted", "error"):
        return ""
    why = E.one_line(str(message.get("errorMessage") or ""), TITLE_WIDTH * 4)
    said = ABORTED_MESSAGE if reason == "aborted" else "The reply failed"  # what replies stopped here store
    return f"\n*{said}{': ' + why if why and why != said else ''}.*\n"


def _fenced(text: str) -> str:
    fence = "`" * max(3, _longest_run(text, "`") + 1)
    return f"{fence}\n{text}\n{fence}\n"


def _longest_run(text: str, char: str) -> int:
    runs = re.findall(f"{re.escape(char)}+", text)
    return max((len(run) for run in runs), default=0)
