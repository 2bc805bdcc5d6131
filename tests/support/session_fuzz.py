"""Random but plausible pi session files, for the differential test against pi's own code
(tests/pi_compat/test_differential.py).

A file is written the way pi's ``SessionManager`` writes one (``Writer``): a leaf that each append
moves, every entry type pi 1.6.0 writes with its keys in pi's order — messages of every role, assistant
turns with thinking, text and tool calls and every stop reason, tool results, model and thinking
changes, compactions whose first kept entry is on the path, elsewhere, the compaction itself, no entry
or absent, branch summaries, labels set and cleared, names, custom entries and messages, context edits,
usage — and branches made by moving the leaf back (``branch``, ``resetLeaf``, ``branchWithSummary``).
Most files stop there. Some then get the odd things real files hold (``ODDITIES``, docs/format.md §8):
timestamps in other forms, parents that are missing or come later, duplicate ids, ids of other shapes,
unknown types and roles, blank and broken lines, lines of the wrong shape, invalid UTF-8, lone
surrogates, a second header, odd headers and versions, labels and summaries, lone carriage returns,
lines pi's list throws on, text blocks whose text is no string, times beyond JS's dates, a torn last
line. Some are version 1 or 2 files, some hold pitree's ``leaf`` markers, and some are written by
pitree's own store (``pitree_written``).

Everything is drawn from one ``random.Random``, so a seed names a file — except a file pitree's store
wrote, whose ids and times come from the store (the test keeps the bytes of a file that disagrees).
"""

from __future__ import annotations

import json
import random
import re
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles.fork import create_session, fork_session
from sessions_app.sessionfiles.instants import MAX_MS, format_iso, iso_to_ms
from sessions_app.sessionfiles.store import AT_LEAF, SessionFile

START_MS = 1_772_442_900_000  # 2026-03-02T09:15:00Z, the samples' fake clock
CWD = "/home/alice/projects/todo-api"
MISSING = object()
"""A key that the entry does not have at all (JS ``undefined``, left out by ``JSON.stringify``)."""

TEXTS = [
    "List the endpoints in app.py",
    "Add a DELETE endpoint",
    "Why does the test fail?",
    "ok",
    "line\u2028separator and next\u0085line",
    'quotes " and \\ backslash\ttab',
    "emoji \U0001f600 and CJK 漢字",
    "  padded  ",
    "   ",
    "",
    "\ufeffBOM-led",
    "multi\nline\n\ntext",
]
NAMES = [
    "Todo API endpoints",
    "  padded name  ",
    "",
    "Ünïcødé name",
    "\u00a0nbsp-padded\u00a0",
    "\u3000ideographic\u3000",
    "\ufeffbom-led",
    "\x1cfile-separator\x1f",
    "\x85next-line\x85",
    "\u2028line-separator\u2029",
    "tab\tinside",
]
THINKING_LEVELS = ["off", "minimal", "low", "medium", "high", "xhigh", "max"]
MODELS = [
    ("anthropic", "claude-sonnet-4-5", "anthropic-messages"),
    ("anthropic", "claude-opus-4-5", "anthropic-messages"),
    ("openai", "gpt-5", "openai-responses"),
    ("google", "gemini-2.5-pro", "google-generative-ai"),
]
STOP_REASONS = ["stop", "stop", "stop", "toolUse", "length", "error", "aborted", "deferred"]
TOOLS = ["read", "bash", "edit", "write", "grep"]


def usage(rng: random.Random) -> dict[str, Any]:
    tokens_in, tokens_out = rng.randrange(10, 50_000), rng.randrange(1, 4_000)
    return {
        "input": tokens_in,
        "output": tokens_out,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": tokens_in + tokens_out,
        "cost": {"input": tokens_in * 3e-6, "output": tokens_out * 1.5e-5, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_LONE_CR = re.compile(rb"\r(?!\n)")


def dumps(value: Any) -> bytes:
    """``JSON.stringify`` of a value pi would write: compact, non-ASCII raw, a lone surrogate (a text
    cut inside an emoji) as its escape."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return _LONE_SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", text).encode()


@dataclass
class Line:
    """One line of a generated file: an entry (or header) to serialise, or raw bytes."""

    value: Any = None
    raw: bytes | None = None
    pitree_skips: bool = False
    """A line pitree skips and pi reads, unchecked (docs/format.md §11.2: lines of the wrong shape,
    invalid UTF-8)."""

    def encode(self) -> bytes:
        return self.raw if self.raw is not None else dumps(self.value)


@dataclass
class FuzzFile:
    """A generated session file: what pitree reads, and what pi is given to compare with."""

    name: str
    lines: list[Line]
    tail: bytes = b""
    """An unterminated last line (a torn write), or nothing."""
    traits: set[str] = field(default_factory=set)
    """The odd things the file holds, by name: the comparison allows for the documented ones."""
    version: int = 3
    mtime_ns: int = START_MS * 1_000_000

    def data(self) -> bytes:
        """The file pitree reads."""
        return b"".join(line.encode() + b"\n" for line in self.lines) + self.tail

    def reference(self) -> bytes:
        """The file pi reads: the same without the lines pitree skips on purpose and pi reads
        (docs/format.md §11.2: lines of the wrong shape, invalid UTF-8)."""
        return b"".join(line.encode() + b"\n" for line in self.lines if not line.pitree_skips) + self.tail

    def listing_reference(self) -> bytes:
        """The file pi's list reads: ``reference`` with each lone ``\r`` (one no ``\n`` follows) a space,
        since pi's list also ends a line there and pitree's does not (docs/format.md §10, §11.2)."""
        return _LONE_CR.sub(b" ", self.reference())


class Writer:
    """pi's SessionManager, reduced to what shapes a file: a leaf, ids, a clock, and pi's key order."""

    def __init__(self, rng: random.Random, *, version: int = 3) -> None:
        self.rng = rng
        self.version = version
        self.clock = START_MS + rng.randrange(0, 10**9)
        self.entries: list[dict[str, Any]] = []
        self.by_id: dict[str, dict[str, Any]] = {}
        self.leaf: str | None = None
        session_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        self.header: dict[str, Any] = {
            "type": "session",
            "version": version,
            "id": session_id,
            "timestamp": format_iso(self.clock),
            "cwd": CWD,
        }
        if rng.random() < 0.1:
            self.header["parentSession"] = f"/sessions/--home--/2026-01-01T00-00-00-000Z_{uuid.uuid4()}.jsonl"

    # ---------------------------------------------------------------- the primitives

    def tick(self) -> int:
        self.clock += self.rng.choice([1, 7, 250, 1500, 4000, 30_000, 600_000])
        return self.clock

    def new_id(self) -> str:
        while True:
            candidate = f"{self.rng.getrandbits(32):08x}"
            if candidate not in self.by_id:
                return candidate

    def append(self, kind: str, fields: dict[str, Any], *, parent: Any = MISSING) -> dict[str, Any]:
        """Write an entry under the leaf (or ``parent``) and move the leaf to it, as ``_appendEntry``."""
        base = {
            "id": self.new_id(),
            "parentId": self.leaf if parent is MISSING else parent,
            "timestamp": format_iso(self.tick()),
        }
        fields = {key: value for key, value in fields.items() if value is not MISSING}
        entry = (
            {"type": kind, **fields, **base}
            if kind in ("custom", "custom_message")
            else {"type": kind, **base, **fields}
        )
        self.entries.append(entry)
        self.by_id[entry["id"]] = entry
        self.leaf = entry["id"]
        return entry

    def path(self) -> list[dict[str, Any]]:
        """The entries from the root to the leaf."""
        current = self.by_id.get(self.leaf) if self.leaf is not None else None
        out: list[dict[str, Any]] = []
        while current is not None and current not in out:
            out.append(current)
            parent = current.get("parentId")
            current = self.by_id.get(parent) if isinstance(parent, str) else None
        out.reverse()
        return out

    def nodes(self) -> list[dict[str, Any]]:
        """The entries pi and pitree both see as tree nodes: pitree's ``leaf`` markers left out, since
        an entry under one is where the two disagree on purpose (docs/format.md §11.3)."""
        return [entry for entry in self.entries if entry["type"] != "leaf"]

    def message_ms(self) -> int:
        """A message's own ``timestamp``: a little before the entry that stores it."""
        return self.clock - self.rng.randrange(0, 2000)

    # ---------------------------------------------------------------- messages

    def text(self) -> str:
        return self.rng.choice(TEXTS)

    def user(self) -> None:
        rng = self.rng
        roll = rng.random()
        if roll < 0.6:
            content: Any = self.text()
        elif roll < 0.9:
            content = [{"type": "text", "text": self.text()} for _ in range(rng.randrange(1, 3))]
        else:
            content = [
                {"type": "text", "text": self.text()},
                {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
            ]
        self.tick()
        self.append("message", {"message": {"role": "user", "content": content, "timestamp": self.message_ms()}})

    def assistant(self, provider: str | None = None) -> None:
        rng = self.rng
        name, model, api = rng.choice(MODELS)
        stop = rng.choice(STOP_REASONS)
        content: list[dict[str, Any]] = []
        if rng.random() < 0.4:
            block: dict[str, Any] = {"type": "thinking", "thinking": self.text()}
            if rng.random() < 0.5:
                block["thinkingSignature"] = "sig"
            if rng.random() < 0.1:
                block["redacted"] = True
            content.append(block)
        if stop != "toolUse" or rng.random() < 0.5:
            content.append({"type": "text", "text": self.text()})
        calls = []
        if stop == "toolUse":
            for _ in range(rng.randrange(1, 3)):
                call = {"type": "toolCall", "id": f"toolu_{rng.getrandbits(40):010x}", "name": rng.choice(TOOLS)}
                call["arguments"] = {"path": "app.py", "n": rng.randrange(100)}
                content.append(call)
                calls.append(call)
        if stop in ("error", "aborted") and rng.random() < 0.5:
            content = []
        self.tick()
        message: dict[str, Any] = {
            "role": "assistant",
            "content": content,
            "api": api,
            "provider": provider or name,
            "model": model,
            "usage": usage(rng),
            "stopReason": stop,
        }
        if stop == "error":
            message["errorMessage"] = "503 overloaded"
        elif stop == "aborted":
            message["errorMessage"] = "Request was aborted"
        message["timestamp"] = self.message_ms()
        if rng.random() < 0.3:
            message["responseId"] = f"msg_{rng.getrandbits(48):012x}"
        self.append("message", {"message": message})
        for call in calls:
            if rng.random() < 0.9:
                self.tool_result(call)

    def tool_result(self, call: dict[str, Any]) -> None:
        self.tick()
        result: dict[str, Any] = {
            "role": "toolResult",
            "toolCallId": call["id"],
            "toolName": call["name"],
            "content": [{"type": "text", "text": self.text()}],
            "isError": self.rng.random() < 0.2,
            "timestamp": self.message_ms(),
        }
        if self.rng.random() < 0.3:
            result["details"] = {"diff": "-a\n+b"}
        self.append("message", {"message": result})

    def bash(self) -> None:
        rng = self.rng
        message: dict[str, Any] = {
            "role": "bashExecution",
            "command": rng.choice(["pytest -q", "ls", "git status"]),
            "output": rng.choice(["", "3 passed\n", "boom"]),
            "exitCode": rng.choice([0, 0, 1, 2, None]),
            "cancelled": rng.random() < 0.1,
            "truncated": rng.random() < 0.1,
            "timestamp": self.message_ms(),
        }
        if message["truncated"] and rng.random() < 0.5:
            message["fullOutputPath"] = "/tmp/out.txt"
        if rng.random() < 0.2:
            message["excludeFromContext"] = True
        self.append("message", {"message": message})

    def custom_role(self) -> None:
        """A message of role ``custom`` (``hookMessage`` in version 2 files)."""
        rng = self.rng
        message: dict[str, Any] = {
            "role": "hookMessage" if self.version == 2 else "custom",
            "customType": "todo-ext/note",
            "content": self.text() if rng.random() < 0.5 else [{"type": "text", "text": self.text()}],
            "display": rng.random() < 0.7,
            "timestamp": self.message_ms(),
        }
        if rng.random() < 0.3:
            message["details"] = {"k": 1}
        self.append("message", {"message": message})

    def system(self) -> None:
        """pi 1.x: a change of the system prompt or tools, stored as a ``system`` message."""
        message: dict[str, Any] = {
            "role": "system",
            "content": "You are pi. " + self.text(),
            "timestamp": self.message_ms(),
        }
        if self.rng.random() < 0.5:
            message["toolsAdded"] = ["grep"]
        self.append("message", {"message": message})

    # ---------------------------------------------------------------- other entries

    def thinking(self) -> None:
        self.append("thinking_level_change", {"thinkingLevel": self.rng.choice(THINKING_LEVELS)})

    def model(self) -> None:
        provider, model, _ = self.rng.choice(MODELS)
        self.append("model_change", {"provider": provider, "modelId": model})

    def compaction(self) -> None:
        rng = self.rng
        path = self.path()
        roll = rng.random()
        if path and roll < 0.6:
            first_kept: Any = rng.choice(path)["id"]  # on the path: the usual case
        elif roll < 0.7:
            first_kept = "self"  # pi 1.x: "keeps nothing", its own id
        elif roll < 0.8 and self.entries:
            first_kept = rng.choice(self.nodes())["id"]  # anywhere, often off the path
        elif roll < 0.9:
            first_kept = "0badf00d"  # names no entry
        else:
            first_kept = MISSING
        fields: dict[str, Any] = {
            "summary": "## Goal\n" + self.text(),
            "firstKeptEntryId": first_kept,
            "tokensBefore": rng.randrange(1000, 200_000),
            "details": {"readFiles": ["app.py"], "modifiedFiles": []} if rng.random() < 0.5 else MISSING,
            "usage": usage(rng) if rng.random() < 0.5 else MISSING,
            "fromHook": rng.random() < 0.1,
        }
        if rng.random() < 0.2:
            fields["systemMessage"] = {"role": "system", "content": "You are pi.", "timestamp": self.clock}
        entry = self.append("compaction", fields)
        if first_kept == "self":
            entry["firstKeptEntryId"] = entry["id"]

    def branch_summary(self) -> None:
        """``branchWithSummary``: a summary of the branch left, placed where the conversation goes on."""
        rng = self.rng
        nodes = self.nodes()
        target = rng.choice(nodes)["id"] if nodes and rng.random() < 0.85 else None
        from_id = self.leaf or "root"
        summary = rng.choice(["The user tried an 80-char limit.", "Regex approach abandoned.", ""])
        fields = {
            "fromId": from_id,
            "summary": summary,
            "details": {"readFiles": [], "modifiedFiles": ["v.py"]} if rng.random() < 0.5 else MISSING,
            "usage": usage(rng) if rng.random() < 0.3 else MISSING,
            "fromHook": False,
        }
        self.append("branch_summary", fields, parent=target)

    def label(self) -> None:
        rng = self.rng
        if not self.entries:
            return
        target = rng.choice(self.entries)["id"]  # a leaf marker too: labels name any id (§4.4)
        text = rng.choice(["checkpoint", "regex-approach", "ラベル", MISSING, MISSING])
        self.append("label", {"targetId": target, "label": text})

    def session_info(self) -> None:
        name = self.rng.choice(NAMES)
        self.append("session_info", {"name": " ".join(name.replace("\r", "\n").split("\n")).strip(" ")})

    def custom(self) -> None:
        data = {"checked": self.rng.randrange(10)} if self.rng.random() < 0.8 else MISSING
        self.append("custom", {"customType": "todo-ext/state", "data": data})

    def custom_message(self) -> None:
        rng = self.rng
        content: Any = self.text() if rng.random() < 0.5 else [{"type": "text", "text": self.text()}]
        details = {"source": "todo-ext"} if rng.random() < 0.5 else MISSING
        fields = {
            "customType": "todo-ext/reminder",
            "content": content,
            "display": rng.random() < 0.6,
            "details": details,
        }
        self.append("custom_message", fields)

    def context_edit(self) -> None:
        """pi 1.x: an edit of an editable entry on the branch (text normalised to a block for assistant
        and tool results, as ``appendContextEdit`` does)."""
        rng = self.rng
        editable = [
            entry
            for entry in self.path()
            if entry["type"] == "custom_message"
            or (entry["type"] == "message" and entry["message"]["role"] in ("user", "assistant", "toolResult"))
        ]
        if not editable:
            return
        target = rng.choice(editable)
        replacement: Any = None
        if rng.random() < 0.7:
            text = "[redacted] " + self.text()
            role = target["message"]["role"] if target["type"] == "message" else "custom"
            content: Any = [{"type": "text", "text": text}] if role in ("assistant", "toolResult") else text
            replacement = {"content": content}
        self.append("context_edit", {"targetId": target["id"], "replacement": replacement})

    def usage_entry(self) -> None:
        provider, model, _ = self.rng.choice(MODELS)
        note = "warm-up" if self.rng.random() < 0.5 else MISSING
        fields = {"kind": "cache_warm", "provider": provider, "model": model, "usage": usage(self.rng), "note": note}
        self.append("usage", fields)

    # ---------------------------------------------------------------- moving the leaf

    def branch(self) -> None:
        """``branch(id)``: the next entry starts a new branch there (nothing is written)."""
        nodes = self.nodes()
        if nodes:
            path = self.path()
            pool = path if path and self.rng.random() < 0.7 else nodes
            self.leaf = self.rng.choice(pool)["id"]

    def reset_leaf(self) -> None:
        """``resetLeaf()``: the next entry is a new root."""
        self.leaf = None

    def navigate(self) -> None:
        """pitree's move (docs/format.md §5.2): a ``leaf`` marker under the old leaf, naming the new one."""
        nodes = self.nodes()
        if not nodes:
            return
        roll = self.rng.random()
        if roll < 0.05:  # a marker pitree does not follow (§5.3): no target, or an unknown one
            old = self.leaf
            self.append("leaf", {"targetId": self.rng.choice([MISSING, "0ddba11"])}, parent=old)
            self.leaf = old
            return
        target = self.rng.choice(nodes)["id"] if roll < 0.9 else None
        old = self.leaf
        self.append("leaf", {"targetId": target}, parent=old)
        self.leaf = target


# What a session does next, and how often: a conversation, with now and then a move or some metadata.
OPERATIONS: list[tuple[str, int]] = [
    ("user", 30),
    ("assistant", 30),
    ("bash", 3),
    ("custom_role", 2),
    ("system", 1),
    ("thinking", 3),
    ("model", 3),
    ("compaction", 4),
    ("branch_summary", 3),
    ("label", 4),
    ("session_info", 3),
    ("custom", 2),
    ("custom_message", 3),
    ("context_edit", 2),
    ("usage_entry", 1),
    ("branch", 8),
    ("reset_leaf", 1),
]


def conversation(writer: Writer, steps: int, *, navigate: bool = False) -> None:
    """Run ``steps`` random operations; a session starts as pi's do (model, thinking level, a prompt)."""
    rng = writer.rng
    if rng.random() < 0.8:
        writer.model()
    if rng.random() < 0.6:
        writer.thinking()
    operations = OPERATIONS + ([("navigate", 5)] if navigate else [])
    names = [name for name, _ in operations]
    weights = [weight for _, weight in operations]
    for name in rng.choices(names, weights, k=steps):
        getattr(writer, name)()


# ---------------------------------------------------------------- odd things real files hold


JS_DATE_EDGES: list[Any] = [MAX_MS, MAX_MS + 1, -MAX_MS - 1, 1e20, -1e20, 1e300]
"""Times in milliseconds at and beyond the ends of JS's dates (``new Date(t)`` is invalid past ±MAX_MS)."""


def odd_timestamp(rng: random.Random, stamp: Any) -> Any:
    """Another form of an entry's timestamp, as other writers and hand edits leave them (§1.5)."""
    base = stamp if isinstance(stamp, str) and len(stamp) == 24 else format_iso(START_MS + rng.randrange(10**9))
    choice = rng.randrange(11)
    if choice == 10:  # the last instant JS holds, just beyond it, or beyond it as a number
        return rng.choice(["+275760-09-13T00:00:00.000Z", "+275760-09-13T00:00:00.001Z", *JS_DATE_EDGES])
    if choice == 0:
        hours = rng.choice([1, -5, 9])
        shifted = format_iso(_iso_ms(base) + hours * 3_600_000)
        return f"{shifted[:-1]}{'+' if hours > 0 else '-'}{abs(hours):02d}:00"
    if choice == 1:
        return base[:19] + "Z"  # no milliseconds
    if choice == 2:
        return _iso_ms(base)  # a number
    if choice == 3:
        return None
    if choice == 4:
        return MISSING
    if choice == 5:
        return "not a date"
    if choice == 6:
        return base[:10]  # date only
    if choice == 7:
        return base[:-1] + "123Z"  # a longer fraction
    if choice == 8:
        return base[:-1]  # no offset: local time in JS, UTC in pitree (§11.3; node runs with TZ=UTC)
    return base[:16] + "Z"  # no seconds


def _iso_ms(text: str) -> int:
    ms = iso_to_ms(text)
    assert ms is not None
    return ms


def _set(entry: dict[str, Any], key: str, value: Any) -> None:
    if value is MISSING:
        entry.pop(key, None)
    else:
        entry[key] = value


@dataclass
class Odd:
    """A file being made odd: its lines, the writer that made them (for fresh ids and times), what
    it holds so far, and its torn tail."""

    rng: random.Random
    writer: Writer
    lines: list[Line]
    traits: set[str]
    tail: bytes = b""

    def entries(self) -> list[Line]:
        """The lines that hold an entry now (not the header, not raw lines)."""
        return [line for line in self.lines[1:] if isinstance(line.value, dict) and not line.pitree_skips]

    def insert(self, line: Line) -> None:
        """Put a line anywhere after the header."""
        self.lines.insert(self.rng.randrange(1, len(self.lines) + 1), line)

    def parent(self) -> Any:
        """Some entry's id, never a ``leaf`` marker's (an entry under one is where pi and pitree
        disagree on purpose, docs/format.md §11.3)."""
        nodes = [line for line in self.entries() if line.value.get("type") != "leaf"]
        return self.rng.choice(nodes).value.get("id") if nodes else None

    def entry(self, kind: str, **fields: Any) -> dict[str, Any]:
        """A new entry line's value, placed under some entry of the file."""
        base = {"id": self.writer.new_id(), "parentId": self.parent(), "timestamp": format_iso(self.writer.tick())}
        return {"type": kind, **base, **fields}


def odd_timestamps(odd: Odd) -> None:
    entries = odd.entries()
    for line in odd.rng.sample(entries, max(1, len(entries) // 3)) if entries else []:
        _set(line.value, "timestamp", odd_timestamp(odd.rng, line.value.get("timestamp")))


def missing_parent(odd: Odd) -> None:
    entries = odd.entries()
    if entries:
        _set(odd.rng.choice(entries).value, "parentId", odd.rng.choice(["feedface", MISSING, None]))


def duplicate_id(odd: Odd) -> None:
    entries = odd.entries()
    if len(entries) < 3:
        return
    earlier, later = sorted(odd.rng.sample(range(len(entries)), 2))
    if odd.rng.random() < 0.5:
        entries[later].value["id"] = entries[earlier].value["id"]
    else:  # the same line written twice
        at = next(number for number, line in enumerate(odd.lines) if line is entries[later])
        odd.lines.insert(at + 1, Line(dict(entries[earlier].value)))


def unknown_type(odd: Odd) -> None:
    odd.insert(Line(odd.entry("x_future", payload={"k": [1, 2]})))


def skipped_lines(odd: Odd) -> None:
    """Lines both skip: blank, broken JSON."""
    for _ in range(odd.rng.randrange(1, 4)):
        raw = odd.rng.choice([b"", b"   ", b"\t", b"{not json", b'{"type":"message","id":', b"garbage \xc3\xa9"])
        odd.insert(Line(raw=raw))


def torn_tail(odd: Odd) -> None:
    """A writer died mid-line: a broken piece both leave unread, or a whole entry without its "\n",
    which both read."""
    last = odd.lines[-1]
    if odd.rng.random() < 0.5 or len(odd.lines) < 2 or last.pitree_skips or last.raw is not None:
        odd.tail = b'{"type":"message","id":"7a11","parentId":null,"timestamp":"2026-03-02T09:'
    else:
        odd.tail = odd.lines.pop().encode()


def second_header(odd: Odd) -> None:
    header = dict(odd.lines[0].value, id=str(uuid.UUID(int=odd.rng.getrandbits(128), version=4)))
    odd.insert(Line(header))


WRONG_SHAPES: list[Any] = [
    [1, 2],
    5,
    "text",
    {"no": "type"},
    {"type": "message", "parentId": None, "message": {"role": "user", "content": "no id"}},
    {"type": 7, "id": "numtype"},
    {"type": "custom", "id": 12345, "parentId": None},
]


def wrong_shape(odd: Odd) -> None:
    for _ in range(odd.rng.randrange(1, 3)):
        odd.insert(Line(odd.rng.choice(WRONG_SHAPES), pitree_skips=True))


def invalid_utf8(odd: Odd) -> None:
    """An entry with a byte that is no UTF-8: pi reads U+FFFD in its place, pitree skips the line."""
    raw = dumps(odd.entry("custom", customType="bin", data={"blob": "@"})).replace(b'"@"', b'"\xff\xfe"')
    odd.insert(Line(raw=raw, pitree_skips=True))


def forward_parent(odd: Odd) -> None:
    """Two lines swapped: a child may come before its parent."""
    if len(odd.lines) > 4:
        first, second = sorted(odd.rng.sample(range(1, len(odd.lines)), 2))
        odd.lines[first], odd.lines[second] = odd.lines[second], odd.lines[first]


def crlf(odd: Odd) -> None:
    for line in odd.rng.sample(odd.lines, max(1, len(odd.lines) // 4)):
        line.raw = line.encode() + b"\r"


MESSAGE_TIMES: list[Any] = [MISSING, None, "2026-03-02T09:00:00Z", 1.5e12 + 0.5, -5, *JS_DATE_EDGES]


def odd_message_times(odd: Odd) -> None:
    """Message times of other shapes, and at and beyond the ends of what a JS date holds: pi's list
    then dates the session "Invalid Date", pitree by its other messages (docs/format.md §10, §11.2)."""
    for line in odd.entries():
        message = line.value.get("message")
        if isinstance(message, dict) and odd.rng.random() < 0.3:
            _set(message, "timestamp", odd.rng.choice(MESSAGE_TIMES))


def missing_keys(odd: Odd) -> None:
    """An entry without one of its own keys, a message without one of its keys (never a message
    entry's ``message`` nor an edit's ``replacement``: pi's own code fails on such a line, reading
    ``message.role`` or ``replacement.content``)."""
    entries = odd.entries()
    if not entries:
        return
    value = odd.rng.choice(entries).value
    keys = [key for key in value if key not in ("type", "id", "parentId", "timestamp", "message", "replacement")]
    if keys:
        value.pop(odd.rng.choice(keys))
    message = value.get("message")
    if isinstance(message, dict) and odd.rng.random() < 0.5:
        message.pop(odd.rng.choice(list(message)))


def extra_keys(odd: Odd) -> None:
    entries = odd.entries()
    for line in odd.rng.sample(entries, max(1, len(entries) // 5)) if entries else []:
        line.value["x-extension"] = {"note": "kept as is"}


def lone_surrogate(odd: Odd) -> None:
    """Texts cut inside an emoji: pi's ``JSON.stringify`` writes the lone half as an escape."""
    cut = "cut here \U0001f600"[:-1] + "\ud83d"
    odd.insert(Line(odd.entry("message", message={"role": "user", "content": cut, "timestamp": odd.writer.clock})))
    odd.insert(Line(odd.entry("session_info", name="name \ud83d")))


def odd_ids(odd: Odd) -> None:
    """Entry ids of other shapes (any string is an id), with every reference to them renamed."""
    entries = odd.entries()
    names = ["1", "root", "a b", "ä-ß", "x/y", "id\u2028", "00000000-0000-4000-8000-000000000000"]
    renamed = {}
    for line, name in zip(odd.rng.sample(entries, min(len(entries), 3)), odd.rng.sample(names, 3)):
        renamed[line.value["id"]] = name
    for line in entries:
        for key in ("id", "parentId", "targetId", "firstKeptEntryId", "fromId"):
            if line.value.get(key) in renamed:
                line.value[key] = renamed[line.value[key]]


def odd_roles(odd: Odd) -> None:
    """Messages of a role pi 1.6.0 does not know, of a role that is no string, of no role."""
    message: dict[str, Any] = {"role": "futureRole", "content": "from a newer pi", "timestamp": odd.writer.clock}
    _set(message, "role", odd.rng.choice(["futureRole", 5, MISSING]))
    odd.insert(Line(odd.entry("message", message=message)))


def odd_context_edits(odd: Odd) -> None:
    """Edits pi's writer would not make: of an entry off the branch, unknown, or of any type, with a
    replacement that is no ``{content}``."""
    entries = [line.value for line in odd.entries()]
    target = odd.rng.choice(entries)["id"] if entries and odd.rng.random() < 0.8 else "0ddba11"
    replacement = odd.rng.choice(["plain text", {}, {"content": None}, [1], {"content": "text"}])
    odd.insert(Line(odd.entry("context_edit", targetId=target, replacement=replacement)))


def odd_header(odd: Odd) -> None:
    header = odd.lines[0].value
    choice = odd.rng.randrange(5)
    if choice == 0:
        _set(header, "timestamp", odd_timestamp(odd.rng, header.get("timestamp")))
    elif choice == 1:
        header.pop("cwd")
    elif choice == 2:
        header["parentSession"] = "/sessions/--elsewhere--/2026-01-01T00-00-00-000Z_parent.jsonl"
    elif choice == 3 and header["version"] == 3:
        header["version"] = 4  # a newer pi: read as version 3 (§2.2)
    else:
        header["x-writer"] = {"name": "another tool"}


def odd_labels(odd: Odd) -> None:
    target = odd.parent() or "nothing"
    for label in odd.rng.sample(["", "renamed", MISSING], 2):
        value = odd.entry("label", targetId=odd.rng.choice([target, "0badf00d"]))
        _set(value, "label", label)
        odd.insert(Line(value))


def odd_label_values(odd: Odd) -> None:
    """Labels that are no strings (pi keeps the value as it is)."""
    value = odd.entry("label", targetId=odd.parent() or "nothing", label=odd.rng.choice([True, 5, 1.5]))
    odd.insert(Line(value))


def long_texts(odd: Odd) -> None:
    """Messages of tens of kilobytes: a file long enough to be read in several chunks."""
    for _ in range(odd.rng.randrange(1, 12)):
        text = "".join(odd.rng.choice(TEXTS) + " " for _ in range(odd.rng.choice([500, 3000, 9000])))
        message = {"role": "user", "content": text, "timestamp": odd.writer.clock}
        odd.insert(Line(odd.entry("message", message=message)))


def odd_summaries(odd: Odd) -> None:
    """Summaries that are empty, missing or no string, and a summary without ``fromId``."""
    summary = odd.rng.choice([MISSING, None, "", 0, "kept"])
    value = odd.entry("branch_summary", fromId="root", summary=summary)
    _set(value, "summary", summary)
    if odd.rng.random() < 0.5:
        value.pop("fromId")
    odd.insert(Line(value))
    odd.insert(Line(odd.entry("session_info", name=None)))


SAME_VERSION: dict[int, list[Any]] = {
    3: ["3", 3.0, "3.0", " 3\n", "0x3", "3e0", [3], ["3"], [[3]], "4", 3.5, "Infinity", "abc", {}, [1, 2]],
    2: ["2", 2.0, 2.5, "2.9", " 2 ", "0x2", "0b10", [2], ["2"]],
}
"""Header versions that are no integer, by the version pi reads them as (a number as JS's ``>=``
compares it; one that is no number, as 3: pi migrates nothing), docs/format.md §2.2."""


def odd_version(odd: Odd) -> None:
    """A header ``version`` that is no integer, read as the version the file was written as."""
    header = odd.lines[0].value
    header["version"] = odd.rng.choice(SAME_VERSION[header["version"] if header["version"] in (2, 3) else 3])


def lone_cr(odd: Odd) -> None:
    """A ``\r`` without ``\n`` between the tokens of a line (JSON whitespace), in the header too, or
    between two entries on one line. Every reader splits lines on ``\n`` only, except pi's list, which
    ends a line at a lone ``\r`` too (docs/format.md §1.6, §11.2)."""
    lines = [line for line in odd.lines if not line.pitree_skips]
    for line in odd.rng.sample(lines, max(1, len(lines) // 6)):
        raw = line.encode()
        if raw.startswith(b"{"):
            line.raw = raw[:1] + b"\r" + raw[1:] if odd.rng.random() < 0.5 else raw[:-1] + b"\r" + raw[-1:]
    entries = odd.entries()
    if len(entries) > 2 and odd.rng.random() < 0.3:
        first, second = odd.rng.sample(entries, 2)
        first.raw = first.encode() + b"\r" + second.encode()
        del odd.lines[next(number for number, line in enumerate(odd.lines) if line is second)]


def list_breakers(odd: Odd) -> None:
    """Entries pi reads and its list throws on, so that pi's list leaves the session out: a user or
    assistant message whose ``content`` is no string or list or holds a null block, a name that is no
    string (pi's ``getSessionName`` throws on it too, when it is the latest)."""
    rng = odd.rng
    if rng.random() < 0.5:
        content = rng.choice([None, 5, True, {}, {"type": "text", "text": "x"}, [None, {"type": "text", "text": "x"}]])
        message = {"role": rng.choice(["user", "assistant"]), "content": content, "timestamp": odd.writer.clock}
        odd.insert(Line(odd.entry("message", message=message)))
    else:
        odd.insert(Line(odd.entry("session_info", name=rng.choice([5, True, 1.5, [], ["a"], {"name": "x"}]))))


ODD_TEXTS: list[Any] = [5, 0, -0.0, 2.0, 1.5, 1e21, 1e-7, True, False, None, MISSING, [1, [2, None], "x"], [], {"k": 1}]


def odd_text_blocks(odd: Odd) -> None:
    """Text blocks whose ``text`` is no string, in user and assistant messages, often the first
    message: pi's list joins them as JS's ``join`` writes them (docs/format.md §10)."""
    rng = odd.rng
    blocks = []
    for _ in range(rng.randrange(1, 5)):
        block: dict[str, Any] = {"type": "text"}
        _set(block, "text", rng.choice([*ODD_TEXTS, odd.writer.text()]))
        blocks.append(block)
    message = {"role": rng.choice(["user", "user", "assistant"]), "content": blocks, "timestamp": odd.writer.clock}
    line = Line(odd.entry("message", message=message))
    if rng.random() < 0.5:
        odd.lines.insert(1, line)
    else:
        odd.insert(line)


def junk_before_header(odd: Odd) -> None:
    """Lines before the header that both skip (blank, no JSON, JSON that JS counts as false), or that
    pitree skips and pi takes for its first entry, and so for no session (lines of the wrong shape)."""
    raw = odd.rng.choice([b"", b"not json", b"  ", b"null", b"0", b'""', b"5", b"[1]"])
    odd.lines.insert(0, Line(raw=raw, pitree_skips=raw in (b"5", b"[1]")))


ODDITIES = [
    odd_timestamps,
    missing_parent,
    duplicate_id,
    unknown_type,
    skipped_lines,
    second_header,
    wrong_shape,
    invalid_utf8,
    forward_parent,
    crlf,
    odd_message_times,
    missing_keys,
    extra_keys,
    lone_surrogate,
    odd_ids,
    odd_roles,
    odd_context_edits,
    odd_header,
    odd_labels,
    odd_summaries,
    odd_label_values,
    long_texts,
    odd_version,
    lone_cr,
    list_breakers,
    odd_text_blocks,
]
LAST_ODDITIES = [torn_tail, junk_before_header]
"""Done after the others, which expect the header first and the last line to be the last entry."""


def oddities(rng: random.Random, writer: Writer, lines: list[Line], traits: set[str]) -> bytes:
    """Give a file some of the odd things real files hold; returns its torn tail (or nothing)."""
    odd = Odd(rng, writer, lines, traits)
    chosen = rng.sample(ODDITIES, rng.randrange(1, 5))
    chosen += [oddity for oddity in LAST_ODDITIES if rng.random() < 0.15]
    for oddity in chosen:
        traits.add(oddity.__name__)
        oddity(odd)
    return odd.tail


# ---------------------------------------------------------------- whole files


def _file_lines(writer: Writer) -> list[Line]:
    return [Line(writer.header), *(Line(entry) for entry in writer.entries)]


def generate(rng: random.Random, name: str = "fuzz", scratch: Path | None = None) -> FuzzFile:
    """One random session file: mostly a plain pi file, sometimes an odd one or an older version, and
    given a ``scratch`` folder to write in, sometimes one pitree's own store wrote."""
    roll = rng.random()
    if roll < 0.05:
        return _v1_file(rng, name)
    if scratch is not None and roll > 0.85:
        return pitree_written(rng, scratch, name)
    version = 2 if roll < 0.1 else 3
    writer = Writer(rng, version=version)
    navigate = rng.random() < 0.15
    conversation(writer, rng.choice([0, 1, 3, 8, 15, 25, 40, 60]), navigate=navigate)
    lines = _file_lines(writer)
    traits = {"leaf-markers"} if any(entry["type"] == "leaf" for entry in writer.entries) else set()
    if version == 2:
        traits.add("v2")
    tail = b""
    if rng.random() < 0.35:
        tail = oddities(rng, writer, lines, traits)
    mtime_ns = (START_MS + rng.randrange(0, 10**10)) * 1_000_000
    return FuzzFile(name, lines, tail, traits, version, mtime_ns)


def pitree_written(rng: random.Random, folder: Path, name: str = "pitree") -> FuzzFile:
    """A session written by pitree's own store (docs/format.md §3.15): messages under the leaf or under
    a parent a tab names, moves persisted as ``leaf`` markers, labels, names, compactions, branch
    summaries, model and thinking changes, sometimes continued in a fork. Ids and times come from
    pitree's writer (random ids, the real clock), so the seed does not rebuild the same bytes."""
    session = create_session(folder, CWD, name=rng.choice([None, *NAMES]), fsync=False)
    for _ in range(rng.choice([0, 2, 6, 15, 30])):
        action = rng.choices(list(PITREE_ACTIONS), [weight for _, weight in PITREE_ACTIONS.values()])[0]
        forked = PITREE_ACTIONS[action][0](rng, session)
        session = forked or session
    data = session.path.read_bytes()
    lines = [Line(raw=raw) for raw in data.split(b"\n")[:-1]]
    traits = {"pitree_written"} | ({"leaf-markers"} if session.index.leaf_rows else set())
    return FuzzFile(name, lines, b"", traits, 3, (START_MS + rng.randrange(10**10)) * 1_000_000)


def _node(rng: random.Random, session: SessionFile) -> str | None:
    """A node of the session (None when it has none)."""
    index = session.index
    rows = [row for row in range(len(index)) if index.is_node(row)]
    return index.ids[rng.choice(rows)] if rows else None


def _parent(rng: random.Random, session: SessionFile) -> Any:
    """Where a tab appends: mostly at the leaf, sometimes under an entry it shows, or as a new root."""
    roll = rng.random()
    return AT_LEAF if roll < 0.75 else None if roll < 0.8 else _node(rng, session) or AT_LEAF


def _say(rng: random.Random, session: SessionFile) -> None:
    parent = _parent(rng, session)
    written = session.append(E.user_message(rng.choice(TEXTS)), parent)
    if rng.random() < 0.8:
        provider, model, api = rng.choice(MODELS)
        error = "503 overloaded" if rng.random() < 0.1 else None
        reply = E.assistant_message(
            rng.choice(TEXTS),
            provider=provider,
            model=model,
            api=api,
            usage=usage(rng),
            stop_reason="error" if error else "stop",
            error_message=error,
        )
        session.append(reply, written["id"])


def _move(rng: random.Random, session: SessionFile) -> None:
    target = _node(rng, session) if rng.random() < 0.9 else None
    session.navigate(target)


def _label(rng: random.Random, session: SessionFile) -> None:
    target = _node(rng, session)
    if target is not None:
        session.set_label(target, rng.choice(["checkpoint", "ラベル", None]), _parent(rng, session))


def _rename(rng: random.Random, session: SessionFile) -> None:
    session.rename(rng.choice(NAMES), _parent(rng, session))


def _compact(rng: random.Random, session: SessionFile) -> None:
    path = session.path_rows()
    if path:
        first_kept = session.index.ids[rng.choice(path)]
        session.compact("## Goal\n" + rng.choice(TEXTS), first_kept, rng.randrange(100, 90_000))


def _summarize(rng: random.Random, session: SessionFile) -> None:
    target = _node(rng, session) if rng.random() < 0.85 else None
    session.branch_summary(target, rng.choice(["Tried an 80-char limit.", ""]))


def _settings(rng: random.Random, session: SessionFile) -> None:
    if rng.random() < 0.5:
        provider, model, _ = rng.choice(MODELS)
        session.append(E.model_change(provider, model), _parent(rng, session))
    else:
        session.append(E.thinking_level_change(rng.choice(THINKING_LEVELS)), _parent(rng, session))


def _fork(rng: random.Random, session: SessionFile) -> SessionFile | None:
    """Continue in a fork of some branch (docs/format.md §7.2): the generated file is the fork."""
    return fork_session(session, _node(rng, session), fsync=False) if rng.random() < 0.5 else None


PITREE_ACTIONS: dict[str, tuple[Any, int]] = {
    "say": (_say, 10),
    "move": (_move, 3),
    "label": (_label, 2),
    "rename": (_rename, 1),
    "compact": (_compact, 1),
    "summarize": (_summarize, 1),
    "settings": (_settings, 2),
    "fork": (_fork, 1),
}


def _v1_file(rng: random.Random, name: str) -> FuzzFile:
    """A version 1 file: no ids, no parents, one chain; a compaction names its first kept entry by
    its position among the file's JSON values (the header is 0)."""
    writer = Writer(rng, version=1)
    header = {key: value for key, value in writer.header.items() if key != "version"}
    traits = {"v1"}
    if rng.random() < 0.3:  # a version pi reads as 1 (docs/format.md §2.2)
        header["version"] = rng.choice(V1_VERSIONS)
        traits.add("v1_odd_version")
    if rng.random() < 0.5:
        header.update(provider="anthropic", modelId="claude-sonnet-4-5", thinkingLevel="off")
    lines = [Line(header)]
    for _ in range(rng.randrange(0, 20)):
        roll = rng.random()
        writer.tick()
        stamp = format_iso(writer.clock)
        if roll < 0.7:
            role = rng.choice(["user", "assistant"])
            message: dict[str, Any] = {"role": role, "content": writer.text(), "timestamp": writer.clock}
            if role == "assistant":
                provider, model, api = rng.choice(MODELS)
                message = {"role": role, "content": [{"type": "text", "text": writer.text()}], "api": api}
                message.update(
                    provider=provider, model=model, usage=usage(rng), stopReason="stop", timestamp=writer.clock
                )
            lines.append(Line({"type": "message", "timestamp": stamp, "message": message}))
        elif roll < 0.8:
            lines.append(Line({"type": "thinking_level_change", "timestamp": stamp, "thinkingLevel": "high"}))
        elif roll < 0.82:
            lines.append(Line(raw=rng.choice([b"not json", b"", b"null"])))
        elif roll < 0.85:  # a second header, and a line with ids of its own: pi's migration replaces them
            lines.append(Line(rng.choice([dict(header, id="other"), {"type": "custom", "id": "x", "parentId": "y"}])))
        else:
            kept: Any = rng.choice([rng.randrange(0, len(lines) + 2), rng.randrange(0, len(lines) + 2), 1.0, "2", -1])
            fields = {"summary": "v1 summary", "firstKeptEntryIndex": kept, "tokensBefore": 1234}
            lines.append(Line({"type": "compaction", "timestamp": stamp, **fields}))
    return FuzzFile(name, lines, b"", traits, 1, START_MS * 1_000_000)


V1_VERSIONS: list[Any] = [None, 1, 0, -1, 1.0, 1.5, "1", "", " ", "0b1", "-Infinity", True, False, [], [1], [None]]
"""Header versions pi reads as 1: none at all (``null``), and values JS's ``>=`` takes for less than 2."""
