"""What the transcript shows of each entry: plain view objects the ``_entry.html`` partial renders.

The page view, the htmx fragments and the websocket pushes (``live.fragments``) all build entries
here and render the same partial, so an entry looks the same however it reached the browser. Nothing here writes.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass, field
from functools import cached_property
from itertools import islice
from typing import Any

from ..sessionfiles import tree
from ..sessionfiles.entries import CONTINUE_TYPE, clip, content_text, one_line
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
        Copy copies (``app.js`` joins the blocks of the raw line the same way) and Edit starts from."""
        if self.kind == "branch_summary":
            return self.text
        if self.kind not in MESSAGE_KINDS:
            return ""
        return "\n\n".join(b.text for b in self.blocks if b.kind == "text" and b.text)

    @cached_property
    def text_elsewhere(self) -> bool:
        """Whether some of its text is too large to be in the page: Copy fetches the raw line then."""
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
    kind = entry.get("type")
    if kind in _SILENT_TYPES:
        return "hidden"
    if kind == "message":
        message = entry.get("message")
        if not isinstance(message, dict):
            return "unknown"
        role = message.get("role")
        if role == "custom" and message.get("display") is False:
            return "hidden"
        if role == "system" and not message.get("content") and isinstance(message.get("sections"), dict):
            return "system_prompt"  # pi's prompt of a turn, kept in sections: a fold, as its TUI hides it
        known = {"user", "assistant", "toolResult", "bashExecution", "custom", "system"}
        return role if role in known else "unknown"
    if kind == "custom_message":
        return "hidden" if entry.get("display") is False else "custom_message"
    if kind in {
        "model_change",
        "thinking_level_change",
        "compaction",
        "branch_summary",
        "session_info",
        "context_edit",
    }:
        return str(kind)
    if kind == "custom":
        # Extension state, not the ``custom`` message role; pitree's own says only where pi continued.
        return "hidden" if entry.get("customType") == CONTINUE_TYPE else "custom_state"
    return "unknown"


def present(session: SessionFile, entry: dict[str, Any], row: int, *, navigator: Navigator | None = None) -> EntryView:
    """The view of one decoded entry (``row`` is its row in ``session.index``)."""
    index = session.index
    entry_id = index.ids[row]
    parent = index.parents[row]
    label = index.labels.get(entry_id)
    view = EntryView(
        id=entry_id,
        type=str(entry.get("type")),
        kind=entry_kind(entry),
        timestamp=str(entry.get("timestamp") or ""),
        parent_id=index.ids[parent] if parent >= 0 else None,
        label=label[0] if label else None,
        navigator=navigator,
        line=session.line_key(index.offsets[row], index.lengths[row]),
    )
    _fill(view, entry, index.lengths[row])
    if view.kind == "toolResult":
        _tool_result(session, row, view, entry.get("message") or {})
    return view


CALL_SEARCH = 32  # entries up a branch in which a tool result looks for the call it answers


def _tool_result(session: SessionFile, row: int, view: EntryView, message: dict[str, Any]) -> None:
    """A tool result with what its call says and what its output and pi's details say; the status line
    its output ends with ("Command exited with code 2") is said in its title instead."""
    call = _call_of(session, row, message.get("toolCallId"))
    if call is not None:
        view.call = describe_call(_field(call.get("name") or "tool"), call.get("arguments"), body=False)
    text = "".join(b.text for b in view.blocks if b.kind == "text" and not b.lazy)
    view.output = describe_output(view.call, text, message.get("details"))
    said = text[len(view.output.text) :]
    last = view.blocks[-1] if view.blocks else None
    if said and last is not None and last.kind == "text" and not last.lazy and last.text.endswith(said):
        last.text = last.text[: len(last.text) - len(said)]


def _call_of(session: SessionFile, row: int, call_id: Any) -> dict[str, Any] | None:
    """The tool call a result answers: in the nearest assistant message up its branch (parallel calls'
    results hang one under the other below it), within ``CALL_SEARCH`` entries."""
    index = session.index
    for ancestor in islice(tree.ancestors(index, row), 1, CALL_SEARCH):
        if index.roles[ancestor] != "assistant":
            continue
        message = session.entries([ancestor])[0].get("message")
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "toolCall" and block.get("id") == call_id:
                return block
        return None
    return None


def _fill(view: EntryView, entry: dict[str, Any], size: int) -> None:
    """``size``: the length of the entry's line, which tells a raw view too large for the page before
    it is written out."""
    kind = view.kind
    found = entry.get("message")
    message: dict[str, Any] = found if isinstance(found, dict) else {}
    if kind in ("user", "custom", "system"):
        view.role = kind
        view.blocks = content_blocks(message.get("content"))
        if kind == "custom":
            view.title = _field(message.get("customType") or "custom")
    elif kind == "assistant":
        view.role = "assistant"
        view.blocks = content_blocks(message.get("content"))
        view.is_error = message.get("stopReason") in ("error", "aborted")
        view.error_message = _field(message.get("errorMessage") or "")
        view.meta = _assistant_meta(message)
    elif kind == "toolResult":
        view.title = _field(message.get("toolName") or "tool")
        view.is_error = bool(message.get("isError"))
        view.blocks = content_blocks(message.get("content"), fold_text=True)
    elif kind == "bashExecution":
        view.title = _field(message.get("command") or "")
        exit_code = message.get("exitCode")
        view.is_error = bool(message.get("cancelled")) or (exit_code not in (None, 0))
        view.meta = "cancelled" if message.get("cancelled") else f"exit {exit_code}" if exit_code is not None else ""
        output = str(message.get("output") or "")
        view.blocks = [Block("raw", text=output, lazy=len(output) > LAZY_BLOCK_CHARS)]
    elif kind == "custom_message":
        view.title = _field(entry.get("customType") or "extension")
        view.blocks = content_blocks(entry.get("content"))
    elif kind == "model_change":
        view.text = _field(f"{entry.get('provider')}/{entry.get('modelId')}")
    elif kind == "thinking_level_change":
        view.text = _field(entry.get("thinkingLevel"))
    elif kind in ("compaction", "branch_summary"):
        view.text = str(entry.get("summary") or "")
        if len(view.text) > LAZY_TEXT_CHARS:  # its head, and the raw line for the rest
            view.text, view.text_cut = head_of(view.text), True
        tokens = entry.get("tokensBefore")
        view.meta = f"{tokens:,} tokens before" if kind == "compaction" and isinstance(tokens, int) else ""
    elif kind == "session_info":
        view.text = _field(entry.get("name") or "")
    elif kind == "context_edit":
        replacement = entry.get("replacement")
        view.text = _field(entry.get("targetId"))
        view.detail = "dropped from the context" if replacement is None else "replaced in the context"
    elif kind == "hidden" and entry.get("type") == "label":  # shown only at the end of a path (``silent``)
        target, text = entry.get("targetId"), entry.get("label")
        view.text = target if isinstance(target, str) else ""
        view.detail = _field(text) if isinstance(text, str) else ""
    elif kind == "custom_state":
        view.title = _field(entry.get("customType") or "custom")
    if kind in ("custom_state", "unknown", "system_prompt") and size > LAZY_TEXT_CHARS:
        view.raw_size = size  # read in its raw line
    elif kind == "custom_state":
        view.raw = pretty(entry.get("data"))
    elif kind == "unknown":
        view.raw = pretty(entry)
    elif kind == "system_prompt":
        view.raw = "\n\n".join(part for part in message["sections"].values() if isinstance(part, str))


def _field(value: Any) -> str:
    """A stored value shown in a line of its own or in a heading, clipped to ``FIELD_CHARS``."""
    return clip(str(value), FIELD_CHARS)


def _assistant_meta(message: dict[str, Any]) -> str:
    model = message.get("model") or ""
    provider = message.get("provider") or ""
    return _field(f"{provider}/{model}" if provider else model)


def content_blocks(content: Any, *, fold_text: bool = False) -> list[Block]:
    """The blocks of a message's content; ``fold_text``: its text is tool output, folded when large.

    The limits are the whole message's, not each block's: its text is in the page up to
    ``LAZY_TEXT_CHARS`` and its images up to ``LAZY_IMAGE_CHARS``, all blocks together, and only its
    first ``BLOCKS_SHOWN`` blocks are (then one of kind ``omitted`` stands for the others): a message of
    a hundred blocks just under each limit made a page of a hundred times the limit."""
    if isinstance(content, str):
        return [_text_block(content, 0, fold_text, LAZY_TEXT_CHARS)]
    items = content if isinstance(content, list) else []
    blocks: list[Block] = []
    text_room, image_room = LAZY_TEXT_CHARS, LAZY_IMAGE_CHARS
    for position, block in enumerate(items[:BLOCKS_SHOWN]):
        if not isinstance(block, dict):
            blocks.append(_raw_block(block, position, "value"))
            continue
        kind = block.get("type")
        if kind == "text":
            made = _text_block(str(block.get("text") or ""), position, fold_text, text_room)
            text_room -= 0 if made.lazy else len(made.text)
            blocks.append(made)
        elif kind == "thinking":
            text = str(block.get("thinking") or "")
            blocks.append(Block("thinking", text=text, index=position, lazy=len(text) > LAZY_BLOCK_CHARS))
        elif kind == "toolCall":
            arguments = pretty(block.get("arguments"))
            blocks.append(
                Block(
                    "toolCall",
                    name=_field(block.get("name") or "tool"),
                    arguments=arguments,
                    index=position,
                    lazy=len(arguments) > LAZY_BLOCK_CHARS,
                    call_arguments=block.get("arguments"),
                )
            )
        elif kind == "image":
            data_url = image_data_url(block)
            lazy = len(data_url) > image_room
            image_room -= 0 if lazy else len(data_url)
            blocks.append(Block("image", data_url=data_url, index=position, lazy=lazy))
        else:
            blocks.append(_raw_block(block, position, _field(kind if kind is not None else "object")))
    if len(items) > BLOCKS_SHOWN:
        blocks.append(Block("omitted", index=-1))
    return blocks


def _raw_block(block: Any, position: int, name: str) -> Block:
    """A block of a kind not known here, shown as JSON (folded when large, as tool output is)."""
    text = pretty(block)
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


def image_data_url(block: dict[str, Any]) -> str:
    """A ``data:`` URL for an image block, only for real image types and valid base64 (else empty)."""
    mime = block.get("mimeType")
    data = block.get("data")
    if mime not in _IMAGE_TYPES or not isinstance(data, str) or not _BASE64.match(data):
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
    kind = entry.get("type")
    message = entry.get("message") if isinstance(entry.get("message"), dict) else None
    if message is not None:
        role = message.get("role")
        if role == "bashExecution":
            return one_line(f"$ {message.get('command')}", limit)
        if role == "toolResult":
            return one_line(f"{message.get('toolName')}: {content_text(message.get('content'))}", limit)
        text = markdown_text(content_text(message.get("content")), limit)
        if not text and isinstance(message.get("content"), list):
            names = [b.get("name") for b in message["content"] if isinstance(b, dict) and b.get("type") == "toolCall"]
            text = one_line(", ".join(f"{name}(…)" for name in names), limit)
        return text
    if kind in ("compaction", "branch_summary"):
        return markdown_text(str(entry.get("summary") or ""), limit)
    if kind == "custom_message":
        return markdown_text(content_text(entry.get("content")), limit)
    if kind == "session_info":
        text = f"name: {entry.get('name')}"
    elif kind == "label" and "targetId" not in entry:
        text = "label of no entry shown here"  # a share's view of a label on an entry it does not hold
    elif kind == "label":
        text = f"label {entry.get('targetId')}: {entry.get('label') or '(cleared)'}"
    elif kind == "model_change":
        text = f"{entry.get('provider')}/{entry.get('modelId')}"
    elif kind == "thinking_level_change":
        text = f"thinking {entry.get('thinkingLevel')}"
    else:
        text = str(kind)
    return one_line(text, limit)
