"""What the transcript shows of each entry: plain view objects the ``_entry.html`` partial renders.

The page view, the htmx fragments and the websocket pushes (``live.fragments``) all build entries
here and render the same partial, so an entry looks the same however it reached the browser. Nothing here writes.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import islice
from typing import Any

from ..sessionfiles import tree
from ..sessionfiles.description import Description, Part, ToolCall, ToolResult, describe, text_of, written_text
from ..sessionfiles.entries import CONTINUE_TYPE, clip, one_line
from ..sessionfiles.index import SessionIndex
from ..sessionfiles.store import SessionFile
from .markdown import markdown_text
from .toolcalls import Call, Output, describe_call, describe_output, pretty

# Blocks bigger than this are folded and fetched only when opened.
LAZY_BLOCK_CHARS = 4000
# A message's text is in the page whole up to this size. Past it the page carries only its head and a
# fold that fetches the rest: a 20 MB paste made a 38 MB page (the text, and its copy for Copy), and
# rendering it took the server's memory from 127 to 298 MB.
LAZY_TEXT_CHARS, TEXT_HEAD_CHARS = 200_000, 2000
# A message with more text than this starts folded to a capped height in the transcript (Show all):
# a pasted file would otherwise be drawn whole, hundreds of screens tall, between two messages.
LONG_MESSAGE_CHARS, LONG_MESSAGE_LINES = 8000, 120
# An image's data past this many base64 characters (about 750 kB) loads when its fold is opened: a
# file may hold any size of picture, and the page carries it in a ``data:`` URL.
LAZY_IMAGE_CHARS = 1_000_000
# A message's blocks in the page: past these, a note that the others are in the raw line.
BLOCKS_SHOWN = 100
# What a line shows of a stored name, title, model or error: the file may hold any size of string.
FIELD_CHARS = 2000
_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
_BASE64 = re.compile(r"^[A-Za-z0-9+/]*={0,2}$")

# Entry types that never get their own block in the transcript: a label shows as a tag on the entry
# it names, and ``leaf`` lines are no tree nodes.
_SILENT_TYPES = frozenset({"label", "leaf", "usage"})
# Bookkeeping: shown as a slim line, not as a message card.
MARKER_KINDS = frozenset(
    {
        "model_change",
        "thinking_level_change",
        "session_info",
        "context_edit",
        "custom_state",
        "compaction",
        "silent",
        "system_prompt",
    }
)
"""``silent``: an entry otherwise left out (a label), shown where the path ends in it below a fork."""


# Entries read as messages: what Copy copies, and what folds when long.
MESSAGE_KINDS = frozenset({"user", "assistant", "custom", "custom_message", "system"})


@dataclass
class Block:
    """One piece of message content."""

    kind: str  # text | thinking | toolCall | image | raw | omitted (the blocks past BLOCKS_SHOWN)
    text: str = ""
    name: str = ""  # a tool call's tool; the type of a block of a kind not known here
    arguments: str = ""
    data_url: str = ""
    lazy: bool = False  # folded, fetched when opened
    index: int = 0  # position in the message content (for lazy fetches)
    head: str = ""  # a message text too large for the page: the start it shows before its fold
    html: str = ""  # its text as Markdown renders it, when the page rendered it already (``budget``)
    mono: bool = False  # a tool's output: monospace, as written
    call_arguments: Any = None  # a tool call's arguments as stored

    @cached_property
    def summary(self) -> str:
        """A tool call's one-line summary (its fold's title), cheap whatever its arguments' size."""
        return describe_call(self.name, self.call_arguments, body=False).summary

    @cached_property
    def call(self) -> Call:
        """A tool call as its tool means it (what its fold holds, once open)."""
        return describe_call(self.name, self.call_arguments)

    @property
    def shown(self) -> str:
        """The text the page carries of it (a lazy block: only its head)."""
        return self.head if self.lazy else self.text + self.arguments

    @property
    def size(self) -> int:
        """Its text's size in bytes (UTF-8), which a fold names; a pure-ASCII text is not encoded to
        tell (``isascii`` is known without reading it)."""
        return len(self.text) if self.text.isascii() else len(self.text.encode("utf-8", "surrogatepass"))


@dataclass
class Navigator:
    """ "‹ 2/3 ›": this entry's place among its siblings, and where each neighbour branch resumes."""

    position: int
    total: int
    previous_id: str | None
    next_id: str | None


@dataclass
class EntryView:
    id: str
    type: str
    kind: str
    timestamp: str
    parent_id: str | None
    label: str | None = None
    role: str | None = None
    blocks: list[Block] = field(default_factory=list)
    text: str = ""
    title: str = ""
    detail: str = ""
    is_error: bool = False
    error_message: str = ""
    meta: str = ""
    raw: str = ""  # an entry of unknown type (or an extension's state) as JSON
    raw_size: int = 0  # the size of its line, when too large to be in the page: it is left out then
    text_cut: bool = False  # ``text`` is the head of a summary too large for the page
    call: Call | None = None  # a tool result's call, when found on its branch
    output: Output | None = None  # a tool result's status, truncation, diff
    html: str = ""  # a summary's ``text`` as Markdown renders it, when the page rendered it (``budget``)
    navigator: Navigator | None = None
    line: tuple[Any, ...] = ()  # which stored line this shows, as its reader sees it (``SessionFile.line_key``)

    @property
    def dom_id(self) -> str:
        return f"entry-{self.id}"

    @property
    def is_marker(self) -> bool:
        return self.kind in MARKER_KINDS

    def longer_than(self, chars: int, lines: int) -> bool:
        """Whether the text it shows whole (of blocks folded as large, only the head shown before the
        fold counts) has more than ``chars`` characters or ``lines`` lines."""
        texts = [block.shown for block in self.blocks] + [self.text, self.raw]
        return sum(map(len, texts)) > chars or sum(text.count("\n") for text in texts) > lines

    @cached_property
    def is_long(self) -> bool:
        """A message the transcript shows folded at first (``_entry.html``; tool output folds anyway)."""
        return self.kind in MESSAGE_KINDS and self.longer_than(LONG_MESSAGE_CHARS, LONG_MESSAGE_LINES)

    @cached_property
    def written(self) -> str:
        """The message's text as written (Markdown): a message's text blocks, a summary's text. What
        Copy copies (of a message too large for the page, ``views.pages.entry_text`` sends it) and Edit
        starts from."""
        if self.kind == "branch_summary":
            return self.text
        if self.kind not in MESSAGE_KINDS:
            return ""
        return written_text(self.blocks)

    @cached_property
    def text_elsewhere(self) -> bool:
        """Whether some of its text is too large to be in the page: Copy fetches it then (its text route)."""
        return self.kind in MESSAGE_KINDS and any(
            (b.kind == "text" and b.lazy) or b.kind == "omitted" for b in self.blocks
        )

    @cached_property
    def source(self) -> str:
        """What the page carries for Copy: the text as written, unless part of it is left out of the
        page (``text_elsewhere``): a second copy of a 20 MB paste would double the page. (These
        properties are cached: a view is not changed once built, and templates read them several
        times per entry.)"""
        return "" if self.text_elsewhere else self.written


def entry_kind(entry: dict[str, Any]) -> str:
    """Which template branch renders an entry (``hidden`` ones are left out of the transcript)."""
    return shown_kind(describe(entry))


def shown_kind(described: Description) -> str:
    """What the transcript shows a described entry as: its kind, or ``hidden``."""
    if described.kind in _SILENT_TYPES or described.hidden:
        return "hidden"
    if described.kind == "custom_state" and described.custom_type == CONTINUE_TYPE:
        return "hidden"  # pitree's own state says only where pi continued
    message = described.message
    if (
        described.kind == "system"
        and message
        and not message.get("content")
        and isinstance(message.get("sections"), dict)
    ):
        return "system_prompt"  # pi's prompt of a turn, kept in sections: a fold, as its TUI hides it
    return described.kind


def present(session: SessionFile, entry: dict[str, Any], row: int, *, navigator: Navigator | None = None) -> EntryView:
    """The view of one decoded entry (``row`` is its row in ``session.index``)."""
    index = session.index
    entry_id = index.ids[row]
    parent = index.parents[row]
    label = index.labels.get(entry_id)
    described = describe(entry)
    view = EntryView(
        id=entry_id,
        type=described.type,
        kind=shown_kind(described),
        timestamp=str(entry.get("timestamp") or ""),
        parent_id=index.ids[parent] if parent >= 0 else None,
        label=label[0] if label else None,
        navigator=navigator,
        line=session.line_key(index.offsets[row], index.lengths[row]),
    )
    _fill(view, described, index.lengths[row])
    if (result := described.result) is not None:
        _tool_result(session, row, view, result)
    return view


CALL_SEARCH = 32  # entries up a branch in which a tool result looks for the call it answers


def _tool_result(session: SessionFile, row: int, view: EntryView, result: ToolResult) -> None:
    """A tool result with what its call says and what its output and pi's details say; the status line
    its output ends with ("Command exited with code 2") is said in its title instead."""
    call = _call_of(session, row, result.call_id)
    if call is not None:
        view.call = describe_call(_field(call.name or "tool"), call.arguments, body=False)
    text = "".join(b.text for b in view.blocks if b.kind == "text" and not b.lazy)
    view.output = describe_output(view.call, text, result.details)
    said = text[len(view.output.text) :]
    last = view.blocks[-1] if view.blocks else None
    if said and last is not None and last.kind == "text" and not last.lazy and last.text.endswith(said):
        last.text = last.text[: len(last.text) - len(said)]


def _call_of(session: SessionFile, row: int, call_id: str | None) -> ToolCall | None:
    """The tool call a result answers: in the nearest assistant message up its branch (parallel calls'
    results hang one under the other below it), within ``CALL_SEARCH`` entries."""
    index = session.index
    for ancestor in islice(tree.ancestors(index, row), 1, CALL_SEARCH):
        if index.roles[ancestor] != "assistant":
            continue
        calls = describe(session.entries([ancestor])[0]).tool_calls
        return next((call for call in calls if call.id == call_id), None)
    return None


def _fill(view: EntryView, described: Description, size: int) -> None:
    """``size``: the length of the entry's line, which tells a raw view too large for the page before
    it is written out."""
    kind = view.kind
    if kind in ("user", "custom", "system"):
        view.role = kind
        view.blocks = content_blocks(described.parts)
        if kind == "custom":
            view.title = _field(described.custom_type or "custom")
    elif kind == "assistant":
        view.role = "assistant"
        view.blocks = content_blocks(described.parts)
        view.is_error = described.is_error
        view.error_message = _field(described.error or "")
        model = described.model or ""
        view.meta = _field(f"{described.provider}/{model}" if described.provider else model)
    elif (result := described.result) is not None:
        view.title = _field(result.tool or "tool")
        view.is_error = result.is_error
        view.blocks = content_blocks(described.parts, fold_text=True)
    elif (shell := described.shell) is not None:
        view.title = _field(shell.command or "")
        view.is_error = described.is_error
        code = shell.exit_code
        view.meta = "cancelled" if shell.cancelled else f"exit {code}" if code is not None else ""
        output = shell.output or ""
        view.blocks = [Block("raw", text=output, lazy=len(output) > LAZY_BLOCK_CHARS)]
    elif kind == "custom_message":
        view.title = _field(described.custom_type or "extension")
        view.blocks = content_blocks(described.parts)
    elif kind == "model_change":
        view.text = _field(f"{described.provider}/{described.model}")
    elif kind == "thinking_level_change":
        view.text = _field(described.text)
    elif kind in ("compaction", "branch_summary"):
        view.text = described.text or ""
        if len(view.text) > LAZY_TEXT_CHARS:  # its head, and the raw line for the rest
            view.text, view.text_cut = head_of(view.text), True
        tokens = described.number
        view.meta = f"{tokens:,} tokens before" if kind == "compaction" and isinstance(tokens, int) else ""
    elif kind == "session_info":
        view.text = _field(described.text or "")
    elif kind == "context_edit":
        view.text = _field(described.target)
        view.detail = "dropped from the context" if described.data is None else "replaced in the context"
    elif described.kind == "label":  # shown only at the end of a path (``silent``)
        view.text = described.target or ""
        view.detail = _field(described.text) if described.text is not None else ""
    elif kind == "custom_state":
        view.title = _field(described.custom_type or "custom")
    if kind in ("custom_state", "unknown", "system_prompt") and size > LAZY_TEXT_CHARS:
        view.raw_size = size  # read in its raw line
    elif kind == "custom_state":
        view.raw = pretty(described.data)
    elif kind == "unknown":
        view.raw = pretty(described.entry)
    elif kind == "system_prompt":
        sections = (described.message or {})["sections"]
        view.raw = "\n\n".join(part for part in sections.values() if isinstance(part, str))


def _field(value: Any) -> str:
    """A stored value shown in a line of its own or in a heading, clipped to ``FIELD_CHARS``."""
    return clip(str(value), FIELD_CHARS)


def content_blocks(parts: Sequence[Part], *, fold_text: bool = False) -> list[Block]:
    """The blocks of a message's content; ``fold_text``: its text is tool output, folded when large.

    The limits are the whole message's, not each block's: its text is in the page up to
    ``LAZY_TEXT_CHARS`` and its images up to ``LAZY_IMAGE_CHARS``, all blocks together, and only its
    first ``BLOCKS_SHOWN`` blocks are (then one of kind ``omitted`` stands for the others): a message of
    a hundred blocks just under each limit made a page of a hundred times the limit."""
    blocks: list[Block] = []
    text_room, image_room = LAZY_TEXT_CHARS, LAZY_IMAGE_CHARS
    for part in parts[:BLOCKS_SHOWN]:
        position = part.position
        if part.kind == "text":
            made = _text_block(part.text, position, fold_text, text_room)
            text_room -= 0 if made.lazy else len(made.text)
            blocks.append(made)
        elif part.kind == "thinking":
            blocks.append(Block("thinking", text=part.text, index=position, lazy=len(part.text) > LAZY_BLOCK_CHARS))
        elif part.call is not None:
            arguments = pretty(part.call.arguments)
            blocks.append(
                Block(
                    "toolCall",
                    name=_field(part.call.name or "tool"),
                    arguments=arguments,
                    index=position,
                    lazy=len(arguments) > LAZY_BLOCK_CHARS,
                    call_arguments=part.call.arguments,
                )
            )
        elif part.kind == "image":
            data_url = image_data_url(part)
            lazy = len(data_url) > image_room
            image_room -= 0 if lazy else len(data_url)
            blocks.append(Block("image", data_url=data_url, index=position, lazy=lazy))
        else:
            blocks.append(_raw_block(part.value, position))
    if len(parts) > BLOCKS_SHOWN:
        blocks.append(Block("omitted", index=-1))
    return blocks


def _raw_block(block: Any, position: int) -> Block:
    """A block of a kind not known here, shown as JSON (folded when large, as tool output is) and
    named by its type (``value`` for an item that is no block)."""
    text, name = pretty(block), "value"
    if isinstance(block, dict):
        kind = block.get("type")
        name = _field(kind if kind is not None else "object")
    return Block("raw", text=text, name=name, index=position, lazy=len(text) > LAZY_BLOCK_CHARS)


def _text_block(text: str, position: int, fold_text: bool, room: int) -> Block:
    """A text block: tool output folds whole past ``LAZY_BLOCK_CHARS`` (it is folded anyway); a
    message's text shows its head and folds the rest past the ``room`` left in its message."""
    if fold_text:
        return Block("text", text=text, index=position, lazy=len(text) > LAZY_BLOCK_CHARS, mono=True)
    if len(text) <= room:
        return Block("text", text=text, index=position)
    return Block("text", text=text, index=position, lazy=True, head=head_of(text))


def head_of(text: str) -> str:
    """The start of a text too long for the page, cut after a line (else a word) in the second half of
    the head when there is one: a preview that ends mid-word reads as a broken text."""
    head = text[:TEXT_HEAD_CHARS]
    for stop in ("\n", " "):
        cut = head.rfind(stop, TEXT_HEAD_CHARS // 2)
        if cut > 0:
            return head[: cut + 1]
    return head


def image_data_url(part: Part) -> str:
    """A ``data:`` URL for an image part, only for real image types and valid base64 (else empty)."""
    mime, data = part.mime_type, part.data
    if mime not in _IMAGE_TYPES or data is None or not _BASE64.match(data):
        return ""
    try:
        base64.b64decode(data[:64] + "=" * (-len(data[:64]) % 4), validate=True)
    except (binascii.Error, ValueError):
        return ""
    return f"data:{mime};base64,{data}"


def navigator_for(index: SessionIndex, row: int) -> Navigator | None:
    """The BranchNavigator of a row whose parent has other children (None when it has no siblings)."""
    siblings = tree.siblings(index, row)
    if len(siblings) < 2:
        return None
    position = siblings.index(row)
    previous = siblings[position - 1] if position > 0 else None
    following = siblings[position + 1] if position + 1 < len(siblings) else None
    return Navigator(
        position=position + 1,
        total=len(siblings),
        previous_id=index.ids[previous] if previous is not None else None,
        next_id=index.ids[following] if following is not None else None,
    )


def preview(entry: dict[str, Any], limit: int = 80) -> str:
    """A one-line plain-text preview of an entry (tree panel, titles): Markdown is shown as the words
    it renders to, never as ``**`` and backticks."""
    described = describe(entry)
    kind = described.kind
    if described.message is not None:
        if described.shell is not None:
            return one_line(f"$ {described.shell.command}", limit)
        if described.result is not None:
            return one_line(f"{described.result.tool}: {text_of(described.parts)}", limit)
        text = markdown_text(text_of(described.parts), limit)
        if not text and described.tool_calls:
            text = one_line(", ".join(f"{call.name}(…)" for call in described.tool_calls), limit)
        return text
    if kind in ("compaction", "branch_summary"):
        return markdown_text(described.text or "", limit)
    if kind == "custom_message":
        return markdown_text(text_of(described.parts), limit)
    if kind == "session_info":
        text = f"name: {described.text}"
    elif kind == "label" and described.target is None:
        text = "label of no entry shown here"  # a share's view of a label on an entry it does not hold
    elif kind == "label":
        text = f"label {described.target}: {described.text or '(cleared)'}"
    elif kind == "model_change":
        text = f"{described.provider}/{described.model}"
    elif kind == "thinking_level_change":
        text = f"thinking {described.text}"
    else:
        text = described.type
    return one_line(text, limit)
