"""One description of each entry type: what an entry is, what it says, its parts and its tool calls.

Everything that shows or sends an entry — the page (``display.entries``), the command line
(``cli.transcript``), the Markdown download, search, the context and what a backend sends — reads an
entry through ``describe`` rather than walking the decoded line itself, so every type and block kind
is read one way (docs/format.md §3). A value of an unexpected shape is read, never refused: a string
field holding a number reads as that number's text, a block or entry of a kind not known here is
kept (``Part.value``, ``Description.entry``) for its reader to show raw, never dropped.

The fields are plain data: a description is built again whenever an entry is read, never stored.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from .entries import as_text, block_text

Entry = dict[str, Any]

MESSAGE_ROLES = frozenset({"user", "assistant", "toolResult", "bashExecution", "custom", "system"})
"""The roles of the messages a file holds (docs/format.md §3.2); any other role is described as
``unknown``."""

ENTRY_KINDS = frozenset(
    {
        "custom_message",
        "model_change",
        "thinking_level_change",
        "compaction",
        "branch_summary",
        "session_info",
        "label",
        "context_edit",
        "usage",
        "leaf",
    }
)
"""Entry types described by their own name; ``custom`` (an extension's state) is ``custom_state``,
so that it is never mistaken for the ``custom`` message role."""


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A tool call an assistant made: ``id`` is what its result names (``ToolResult.call_id``)."""

    id: str | None
    name: str | None
    arguments: Any
    """As stored: pi writes an object."""


@dataclass(frozen=True, slots=True)
class Part:
    """One block of a message's content, at ``position`` in its list (0 for a content that is a string)."""

    kind: str
    """``text``, ``thinking``, ``toolCall``, ``image``, or ``other`` (a block of another kind, or a value
    that is no block: its reader shows ``value`` raw)."""
    position: int
    text: str = ""
    """A text block's text as pi reads it (``entries.block_text``), a thinking block's thoughts."""
    redacted: bool = False
    """A thinking block whose thoughts the provider withheld."""
    call: ToolCall | None = None
    mime_type: str | None = None
    """An image's type and its base64 ``data``, each when a string."""
    data: str | None = None
    value: Any = None
    """An ``other`` part as stored."""


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a tool call gave back (a ``toolResult`` message)."""

    call_id: str | None
    """The ``ToolCall.id`` it answers."""
    tool: str | None
    is_error: bool
    details: Any
    """What the tool recorded besides its output, as stored: pi's ``bash`` and ``read`` record a
    ``truncation``, ``bash`` a ``fullOutputPath``, ``edit`` a ``diff``."""

    @property
    def truncated(self) -> bool:
        """Whether the tool cut its output (pi records ``details.truncation.truncated``)."""
        truncation = self.details.get("truncation") if isinstance(self.details, dict) else None
        return isinstance(truncation, dict) and truncation.get("truncated") is True

    @property
    def full_output_path(self) -> str | None:
        """Where the tool kept the whole output it cut."""
        path = self.details.get("fullOutputPath") if isinstance(self.details, dict) else None
        return path if isinstance(path, str) else None


@dataclass(frozen=True, slots=True)
class Shell:
    """A command the user ran (``!command``, a ``bashExecution`` message)."""

    command: str | None
    output: str | None
    exit_code: Any
    """As stored: a number, or None when the command did not end by itself."""
    cancelled: bool
    truncated: bool
    full_output_path: str | None
    excluded: bool
    """Kept out of the model's context (``excludeFromContext``)."""


@dataclass(frozen=True, slots=True)
class Description:
    """What one entry is and says. ``kind`` is a message's role (``MESSAGE_ROLES``), the entry's type
    (``ENTRY_KINDS``), ``custom_state`` for an extension's state, or ``unknown``: an entry of another
    type or role, or a message that is no object, which its reader shows raw (``entry``)."""

    kind: str
    entry: Entry
    """The entry as decoded."""
    message: dict[str, Any] | None = None
    """A message entry's message, when it is an object: what the context passes on whole."""
    role: str | None = None
    """A message's role, as text, whatever it is."""
    parts: tuple[Part, ...] = ()
    """The content of a message or a ``custom_message``; the content a ``context_edit`` puts in its
    target's place."""
    custom_type: str | None = None
    """An extension's name for what it wrote: ``custom`` messages, ``custom_message``, ``custom_state``."""
    hidden: bool = False
    """``display: false``: a ``custom`` message or ``custom_message`` the model gets and the transcript
    does not show."""
    provider: str | None = None
    """The provider and model of an ``assistant`` reply, a ``model_change`` (its ``modelId``) or a
    ``usage`` entry."""
    model: str | None = None
    stop_reason: str | None = None
    """Why an ``assistant`` reply ended (``stop``, ``toolUse``, ``error``, ``aborted``, …), and the
    error it names."""
    error: str | None = None
    result: ToolResult | None = None
    """A ``toolResult`` message's call, tool and outcome; its output is ``parts``."""
    shell: Shell | None = None
    """A ``bashExecution`` message."""
    text: str | None = None
    """What the entry says in words: a ``compaction``'s or ``branch_summary``'s summary, a
    ``session_info``'s name, a ``thinking_level_change``'s level, a ``label``'s label, a ``usage``
    entry's kind."""
    target: str | None = None
    """The entry another one names: a ``label``'s, ``context_edit``'s or ``leaf``'s ``targetId``, a
    ``compaction``'s first kept entry, a ``branch_summary``'s ``fromId``."""
    number: Any = None
    """A ``compaction``'s ``tokensBefore``, as stored."""
    data: Any = None
    """As stored: an extension's state (``custom_state``), a ``context_edit``'s replacement (None: the
    entry is dropped from the context), a ``usage`` entry's counts."""
    note: str | None = None
    """A ``usage`` entry's note."""

    @property
    def type(self) -> str:
        """The entry's ``type`` as text (what an unknown entry is named by)."""
        return as_text(self.entry.get("type"))

    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
        """The tool calls of an assistant reply, in order."""
        return tuple(part.call for part in self.parts if part.call is not None)

    @property
    def is_error(self) -> bool:
        """A reply that failed or was stopped, a tool result that is an error, a command that failed."""
        if self.result is not None:
            return self.result.is_error
        if self.shell is not None:
            return self.shell.cancelled or self.shell.exit_code not in (None, 0)
        return self.stop_reason in ("error", "aborted")


def describe(entry: Entry) -> Description:
    """The description of one decoded entry."""
    kind = entry.get("type")
    if kind == "message":
        message = entry.get("message")
        return _message(entry, message) if isinstance(message, dict) else Description("unknown", entry)
    if kind == "custom":
        custom_type = _text(entry.get("customType"))
        return Description("custom_state", entry, custom_type=custom_type, data=entry.get("data"))
    if kind not in ENTRY_KINDS:
        return Description("unknown", entry)
    get = entry.get
    if kind == "custom_message":
        parts, custom_type = parts_of(get("content")), _text(get("customType"))
        return Description(kind, entry, parts=parts, custom_type=custom_type, hidden=get("display") is False)
    if kind == "model_change":
        return Description(kind, entry, provider=_text(get("provider")), model=_text(get("modelId")))
    if kind == "thinking_level_change":
        return Description(kind, entry, text=_text(get("thinkingLevel")))
    if kind == "compaction":
        summary, kept = _text(get("summary")), _text(get("firstKeptEntryId"))
        return Description(kind, entry, text=summary, target=kept, number=get("tokensBefore"))
    if kind == "branch_summary":
        return Description(kind, entry, text=_text(get("summary")), target=_text(get("fromId")))
    if kind == "session_info":
        return Description(kind, entry, text=_text(get("name")))
    if kind == "label":
        return Description(kind, entry, text=_text(get("label")), target=_text(get("targetId")))
    if kind == "context_edit":
        replacement = get("replacement")
        content = replacement.get("content") if isinstance(replacement, dict) else replacement
        return Description(kind, entry, parts=parts_of(content), target=_text(get("targetId")), data=replacement)
    if kind == "usage":
        provider, model = _text(get("provider")), _text(get("model"))
        return Description(
            kind,
            entry,
            provider=provider,
            model=model,
            text=_text(get("kind")),
            data=get("usage"),
            note=_text(get("note")),
        )
    return Description(kind, entry, target=_text(get("targetId")))  # leaf


def _message(entry: Entry, message: dict[str, Any]) -> Description:
    role = message.get("role")
    kind = role if role in MESSAGE_ROLES else "unknown"
    get, said = message.get, _text(role)
    if kind == "bashExecution":
        return Description(kind, entry, message, said, shell=shell_of(message))
    parts = parts_of(get("content"))
    if kind == "assistant":
        provider, model = _text(get("provider")), _text(get("model"))
        stop_reason, error = _text(get("stopReason")), _text(get("errorMessage"))
        return Description(
            kind, entry, message, said, parts, provider=provider, model=model, stop_reason=stop_reason, error=error
        )
    if kind == "toolResult":
        result = ToolResult(_text(get("toolCallId")), _text(get("toolName")), bool(get("isError")), get("details"))
        return Description(kind, entry, message, said, parts, result=result)
    if kind == "custom":
        custom_type = _text(get("customType"))
        return Description(kind, entry, message, said, parts, custom_type=custom_type, hidden=get("display") is False)
    return Description(kind, entry, message, said, parts)


def shell_of(message: dict[str, Any]) -> Shell:
    """A ``bashExecution`` message's command and how it ended."""
    get = message.get
    return Shell(
        command=_text(get("command")),
        output=_text(get("output")),
        exit_code=get("exitCode"),
        cancelled=bool(get("cancelled")),
        truncated=bool(get("truncated")),
        full_output_path=_text(get("fullOutputPath")),
        excluded=bool(get("excludeFromContext")),
    )


def text_of(parts: Iterable[Part], separator: str = " ") -> str:
    """The text of the text parts, joined: what a preview, a title or the model reads as a message's
    words (images, thoughts and tool calls left out)."""
    return separator.join(part.text for part in parts if part.kind == "text")


class Written(Protocol):
    """A piece of a message as a reader holds it: a ``Part``, or a block of the page's."""

    @property
    def kind(self) -> str: ...
    @property
    def text(self) -> str: ...


def written_text(parts: Iterable[Written]) -> str:
    """A message's text as written: its text parts whole, a blank line between them (what Copy copies,
    from the file's parts or the page's blocks alike)."""
    return "\n\n".join(part.text for part in parts if part.kind == "text" and part.text)


def parts_of(content: Any) -> tuple[Part, ...]:
    """A message's content as parts: a string is one text part, a list one part per item, none (absent
    or null) no part, and a value of another shape one ``other`` part, shown raw."""
    if isinstance(content, str):
        return (Part("text", 0, content),)
    if isinstance(content, list):
        return tuple(_part(block, position) for position, block in enumerate(content))
    return () if content is None else (Part("other", 0, value=content),)


def _part(block: Any, position: int) -> Part:
    kind = block.get("type") if isinstance(block, dict) else None
    if kind == "text":
        return Part("text", position, block_text(block) or "")
    if kind == "thinking":
        return Part("thinking", position, _text(block.get("thinking")) or "", redacted=bool(block.get("redacted")))
    if kind == "toolCall":
        call = ToolCall(_text(block.get("id")), _text(block.get("name")), block.get("arguments"))
        return Part("toolCall", position, call=call)
    if kind == "image":
        mime, data = block.get("mimeType"), block.get("data")
        return Part(
            "image",
            position,
            mime_type=mime if isinstance(mime, str) else None,
            data=data if isinstance(data, str) else None,
        )
    return Part("other", position, value=block)


def _text(value: Any) -> str | None:
    """A stored value read where text is expected: None for none (absent or null), a string as it is,
    anything else as ``entries.as_text`` writes it."""
    return None if value is None else value if isinstance(value, str) else as_text(value)
