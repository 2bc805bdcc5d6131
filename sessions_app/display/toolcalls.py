"""What an agent's tool calls and their results show, as pi's own terminal shows them: a fold's title
that says what the call does (the bash command, the file path), and inside it the call as its tool
means it (a command, an edit as a diff of old and new text, a file written, highlighted by its name),
the output in a monospace block, its exit code and its truncation said in words.

For every session, whoever wrote it: only the tool's name and arguments are read (pi's built-in tools
by name: ``bash``, ``read``, ``write``, ``edit``, ``ls``, ``find``, ``grep``), and the details pi keeps
on a result (an edit's diff, a truncated output's counts). Anything else shows as JSON, as before.
Work is bounded: a diff or highlighting past ``DIFF_CHARS``/``HIGHLIGHT_CHARS`` is left plain.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Any

import orjson
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_for_filename
from pygments.util import ClassNotFound

from ..sessionfiles.entries import clip, dump_json, one_line
from .markdown import TOKEN_CLASS_PREFIX

SUMMARY_CHARS = 120  # a fold's title
DIFF_CHARS = 20_000  # old and new text together, past which an edit shows both whole instead of a diff
HIGHLIGHT_CHARS = 40_000  # a file's text highlighted up to this size, plain past it
_FORMATTER = HtmlFormatter(nowrap=True, classprefix=TOKEN_CLASS_PREFIX)
_EXIT = re.compile(r"(?:\n\n|\A)Command exited with code (-?\d+)\Z")
_STATUS = re.compile(
    r"(?:\n\n|\A)(Command aborted|Command timed out after [^\n]*|Command terminated without an exit code)\Z"
)


@dataclass(frozen=True)
class DiffLine:
    sign: str  # "-", "+" or " "
    text: str  # the rest of the line as shown after the sign (its spacing, line numbers included)

    @property
    def kind(self) -> str:
        return {"-": "old", "+": "new"}.get(self.sign, "same")


@dataclass
class Edit:
    """One replacement of an ``edit`` call: a diff, or both texts whole when too large to diff."""

    diff: list[DiffLine] = field(default_factory=list)
    old: str = ""
    new: str = ""


@dataclass
class Call:
    """A tool call as the transcript shows it."""

    name: str
    summary: str  # one line, for the fold's title
    command: str = ""  # bash
    path: str = ""  # read, write, edit, ls, find, grep
    edits: list[Edit] = field(default_factory=list)  # edit
    content: SafeString = field(default_factory=lambda: mark_safe(""))  # write: the file, highlighted
    rest: str = ""  # the other arguments (all of them for a tool not known here), as JSON


@dataclass
class Output:
    """What a tool result adds to its output: how it ended and what of it was left out."""

    status: str = ""  # "exit 2", "aborted", "timed out after 30 seconds"…
    truncated: str = ""  # what was left out, in words
    diff: list[DiffLine] = field(default_factory=list)  # an edit's, as pi kept it
    text: str = ""  # the output without the status line the status says
    highlighted: SafeString = field(default_factory=lambda: mark_safe(""))  # a file read, by its name


def describe_call(name: str, arguments: Any, *, body: bool = True) -> Call:
    """The call: its one-line summary, and (``body``) what its fold shows, as its tool means it. Without
    the body it costs little whatever the arguments' size (a fold not open yet, a tool result's title)."""
    args = dict(arguments) if isinstance(arguments, dict) else {}
    path = _text(args.get("path") or args.get("file_path") or "")
    if name == "bash" and isinstance(args.get("command"), str):
        command = args["command"]
        first = command.strip().split("\n", 1)[0]
        more = " …" if "\n" in command.strip() else ""
        return Call(name, clip(f"$ {first}", SUMMARY_CHARS) + more, command=command, rest=_rest(args, "command"))
    if name == "edit" and path:
        items = _edits(args)
        edits = [_edit(item) for item in items] if body else []
        summary = f"{path} · {len(items)} edits" if len(items) != 1 else path
        return Call(name, clip(summary, SUMMARY_CHARS), path=path, edits=edits, rest=_rest(args, "path", "edits"))
    if name == "write" and path:
        content = _text(args.get("content") or "")
        summary = f"{path} · {content.count(chr(10)) + (not content.endswith(chr(10)) and bool(content))} lines"
        shown = highlighted(content, path) if body else mark_safe("")
        return Call(name, clip(summary, SUMMARY_CHARS), path=path, content=shown, rest=_rest(args, "path", "content"))
    if name == "read" and path:
        lines = _line_range(args.get("offset"), args.get("limit"))
        return Call(name, clip(path + lines, SUMMARY_CHARS), path=path, rest=_rest(args, "path", "offset", "limit"))
    if name in ("ls", "find", "grep"):
        pattern = _text(args.get("pattern") or "")
        where = path or "."
        summary = f"{pattern} in {where}" if pattern else where
        return Call(name, clip(one_line(summary), SUMMARY_CHARS), path=path, rest=_rest(args, "path", "pattern"))
    compact = one_line(dump_json(arguments).decode()[: SUMMARY_CHARS * 2]) if arguments not in (None, {}) else ""
    return Call(name, clip(compact, SUMMARY_CHARS), rest=pretty(arguments) if compact and body else "")


def describe_output(call: Call | None, text: str, details: Any) -> Output:
    """A result's output (its text blocks joined), told with what its call and pi's details say."""
    output = Output(text=text)
    name = call.name if call is not None else ""
    found = _EXIT.search(text)
    if found:
        output.status, output.text = f"exit {found.group(1)}", text[: found.start()]
    elif name == "bash" and (found := _STATUS.search(text)):
        output.status = found.group(1).removeprefix("Command ").replace("terminated", "ended")
        output.text = text[: found.start()]
    info = details if isinstance(details, dict) else {}
    truncation = info.get("truncation")
    if isinstance(truncation, dict) and truncation.get("truncated"):
        output.truncated = _truncation(truncation, info.get("fullOutputPath"))
    diff = info.get("diff")
    if name == "edit" and isinstance(diff, str) and len(diff) <= DIFF_CHARS * 2:
        output.diff = [DiffLine(line[:1] if line[:1] in "+-" else " ", line[1:]) for line in diff.split("\n")]
    if name == "read" and call is not None and call.path and not output.truncated:
        output.highlighted = highlighted(text, call.path)
    return output


def highlighted(text: str, path: str) -> SafeString:
    """``text`` highlighted by the language its file name says (Pygments' classes, static/pitree/
    highlight.css); escaped plain text for a name it does not know, or a text past ``HIGHLIGHT_CHARS``."""
    if not text:
        return mark_safe("")
    if len(text) <= HIGHLIGHT_CHARS:
        try:
            lexer = get_lexer_for_filename(path, stripnl=False, ensurenl=False)
        except ClassNotFound:
            lexer = None
        if lexer is not None:
            return mark_safe(highlight(text, lexer, _FORMATTER))  # Pygments escapes the text it wraps
    return escape(text)


def diff_lines(old: str, new: str) -> list[DiffLine]:
    """A line diff of ``old`` and ``new``, every line of both kept (an edit's texts are short)."""
    found = []
    for line in difflib.ndiff(old.splitlines(), new.splitlines()):
        if line[:1] in ("-", "+", " "):
            found.append(DiffLine(line[:1], line[1:]))
    return found


def _edits(args: dict[str, Any]) -> list[dict[str, Any]]:
    """The replacements of an ``edit`` call: pi 1.6's ``edits`` list, or an older single pair."""
    items = args.get("edits")
    if isinstance(items, list):
        return [item for item in items if isinstance(item, dict)]
    return [args] if "oldText" in args or "old_string" in args else []


def _edit(item: dict[str, Any]) -> Edit:
    old = _text(item.get("oldText", item.get("old_string", "")))
    new = _text(item.get("newText", item.get("new_string", "")))
    if len(old) + len(new) > DIFF_CHARS:
        return Edit(old=old, new=new)
    return Edit(diff=diff_lines(old, new))


def _line_range(offset: Any, limit: Any) -> str:
    start = offset if isinstance(offset, int) and offset > 0 else None
    count = limit if isinstance(limit, int) and limit > 0 else None
    if start is None and count is None:
        return ""
    first = start or 1
    return f" · lines {first}–{first + count - 1}" if count else f" · from line {first}"


def _truncation(truncation: dict[str, Any], full_output: Any) -> str:
    shown, total = truncation.get("outputLines"), truncation.get("totalLines")
    said = f"{shown} of {total} lines shown" if isinstance(shown, int) and isinstance(total, int) else "truncated"
    if isinstance(full_output, str) and full_output:
        said += f"; the whole output was saved in {full_output}"
    return said


def _rest(args: dict[str, Any], *shown: str) -> str:
    rest = {key: value for key, value in args.items() if key not in shown}
    return pretty(rest) if rest else ""


def pretty(value: Any) -> str:
    """Indented JSON for a raw view; a value nested deeper than orjson writes is shown compact."""
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()
    except orjson.JSONEncodeError:
        return dump_json(value).decode()


def _text(value: Any) -> str:
    return value if isinstance(value, str) else "" if value is None else str(value)
