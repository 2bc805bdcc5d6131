"""The Markdown download: a branch as a person reads it (the conversation's text, tool calls named,
summaries quoted), titled like the session. Made as it is sent: the path's entries are decoded
``BATCH`` at a time, and each is written out in pieces (its text is never copied whole); an entry of a
long line is decoded without its long texts, and a text the Markdown copies as it is (a message's) is
read from the file a piece at a time (``SessionFile.outlines``), so that what the download holds at
once is a batch of entries, or a piece of a long text, whatever the file's size."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from contextlib import closing

from ..access.scoped import SessionView
from ..assistants.base import ABORTED_MESSAGE
from ..cli.transcript import content_as_shown, part_text, tool_call
from ..services.lookup import catalog, entry_row
from ..sessionfiles import entries as E
from ..sessionfiles.catalog import session_info
from ..sessionfiles.description import Description, Part, describe
from ..sessionfiles.longtext import Span, holds_marker, marker, split_markers
from ..sessionfiles.tree import path as tree_path
from .downloads import Download, download_name, in_pieces

TITLE_WIDTH = 80  # characters of a Markdown download's title line (one line: a name or a first message)
BATCH = 64  # entries decoded at a time


def markdown(view: SessionView, entry_id: str | None) -> Download:
    """The branch through ``entry_id`` (default: the position the view stands at) as Markdown."""
    index = view.index
    row = entry_row(view, entry_id) if entry_id is not None else index.leaf_row
    rows = tree_path(index, row)
    # The listing's, known already, for a whole session: its own read of a large first message costs
    # as much memory again as the download's.
    info = catalog().info(view.path) if view.grant.whole else session_info(view)
    title = E.one_line(info.title, TITLE_WIDTH) or "Session"
    head = f"# {title}\n\nSession `{view.session_id}`, exported from pitree.\n"
    return Download(download_name(view, entry_id, "md"), in_pieces(_parts(view, rows, head)))


def _parts(view: SessionView, rows: list[int], head: str) -> Iterator[str]:
    """The Markdown's text in parts: the head, then each entry's, a blank line before each."""
    yield head
    for start in range(0, len(rows), BATCH):
        batch = rows[start : start + BATCH]
        for row, (entry, spans) in zip(batch, view.outlines(batch)):
            described = describe(entry)
            parts = _markdown_entry(described)
            if not spans:
                written: Iterator[str] = iter(parts)
            elif _copied_as_is(view, described, parts, spans):
                written = _with_long_texts(view, parts, spans)
            else:
                parts = _markdown_entry(describe(view.entries([row])[0]))
                written = iter(parts)
            if parts:
                yield "\n"
                yield from written


def _copied_as_is(view: SessionView, described: Description, parts: list[str], spans: tuple[Span, ...]) -> bool:
    """Whether the Markdown of an outlined entry (``SessionFile.outlines``) shows each long text it shows
    as it is: the text of a part of a message's content written out whole (not fenced, quoted or as
    JSON) and, in a reply, not blank (a blank text is left out). Any other entry is read whole."""
    shown = {n for part in parts if holds_marker(part) for n in split_markers(part) if isinstance(n, int)}
    if not shown:
        return True
    as_is = described.message is not None and described.result is None and described.shell is None
    if not as_is and described.kind != "custom_message":
        return False
    texts = {part.text: part.kind for part in described.parts if part.kind in ("text", "thinking")}
    for n in shown:
        kind = texts.get(marker(n))
        if kind is None:
            return False
        if described.kind == "assistant" and kind == "text" and _blank(view, spans[n]):
            return False
    return True


def _blank(view: SessionView, span: Span) -> bool:
    with closing(view.long_text(span)) as pieces:
        return not any(piece.strip() for piece in pieces)


def _with_long_texts(view: SessionView, parts: list[str], spans: tuple[Span, ...]) -> Iterator[str]:
    """An outlined entry's Markdown with each long text in its marker's place, a piece at a time."""
    for part in parts:
        yield from view.with_long_texts(part, spans) if holds_marker(part) else (part,)


def _markdown_entry(described: Description) -> list[str]:
    """An entry as Markdown, in parts: a text as long as the entry's is one part, never copied into a
    longer one."""
    kind, parts = described.kind, described.parts
    if described.message is not None:
        if kind == "user":
            return ["## You\n\n", content_as_shown(parts), "\n"]
        if kind == "assistant":
            return ["## Assistant\n\n", *_assistant_markdown(parts), _ending(described)]
        if (result := described.result) is not None:
            return [f"### Tool result: {result.tool or '?'}\n\n", *_fenced(content_as_shown(parts))]
        if (shell := described.shell) is not None:
            return ["### Shell\n\n", *_fenced(f"$ {shell.command or ''}\n{shell.output or ''}")]
        return [f"## {described.role}\n\n", content_as_shown(parts), "\n"]
    if kind in ("compaction", "branch_summary"):
        title = "Summary of the earlier history" if kind == "compaction" else "Summary of a branch left behind"
        quoted = "\n".join(f"> {line}" for line in (described.text or "").splitlines())
        return [f"> **{title}**\n>\n", quoted, "\n"]
    if kind == "custom_message":
        return [f"### {described.custom_type or 'extension'}\n\n", content_as_shown(parts), "\n"]
    return []  # position markers, labels, names, model changes: not part of the conversation's text


def _assistant_markdown(parts: tuple[Part, ...]) -> list[str]:
    shown = [f"→ `{tool_call(p.call)}`" if p.call is not None else part_text(p) for p in parts if p.kind != "thinking"]
    shown = [text for text in shown if text.strip()]
    return [*itertools.chain.from_iterable((["\n\n", text] if at else [text]) for at, text in enumerate(shown)), "\n"]


def _ending(described: Description) -> str:
    """What the page says under a reply that did not end well (stopped, failed), as a note after it."""
    reason = described.stop_reason
    if reason not in ("aborted", "error"):
        return ""
    why = E.one_line(described.error or "", TITLE_WIDTH * 4).rstrip(".")
    if reason == "aborted":  # what was stored says why (stopped, a restart), in a sentence of its own
        return f"\n*{why or ABORTED_MESSAGE}.*\n"
    return f"\n*The reply failed{': ' + why if why else ''}.*\n"


def _fenced(text: str) -> list[str]:
    fence = "`" * max(3, _longest_run(text, "`") + 1)
    return [f"{fence}\n", text, f"\n{fence}\n"]


def _longest_run(text: str, char: str) -> int:
    runs = re.findall(f"{re.escape(char)}+", text)
    return max((len(run) for run in runs), default=0)
