"""Generated, pi-like session files for the benchmarks, cached outside the repo.

Everything lands under ``$PITREE_BENCH_DIR`` (default ``/tmp/pitree-bench/``). Each dataset is
generated once, deterministically (fixed seeds), written to a temporary name and renamed into place,
so an interrupted run never leaves a half file behind. The file names carry ``GEN_VERSION``: bump it
when the shapes below change and the old files are simply ignored.

Run ``python bench/_gen.py`` to generate every dataset up front and print what they contain.

What a generated session looks like (docs/format.md §2–§3): a v3 header, then agent turns — a user message,
assistant messages with thinking / text / toolCall blocks and full ``usage``, toolResults whose outputs
are often several KB (file reads, test runs, diffs), now and then a user ``!`` bashExecution — with
occasional ``model_change`` / ``thinking_level_change``, labels set and cleared, a ``session_info``
name, ``custom`` extension state, a few branches (a user message re-sent from an earlier point, so it
gets a sibling, plus a ``branch_summary``) and a ``compaction``. Ids are 8 hex digits, timestamps are
JS ``toISOString()`` strings that move forward by seconds, message timestamps are epoch milliseconds.
"""

from __future__ import annotations

import base64
import os
import random
import shutil
import sys
import tempfile
import uuid
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import orjson

GEN_VERSION = 1
BIG_SCALE = 0.35  # body sizes of the single-session files: ~0.9 KB/line on average
BENCH_DIR = Path(os.environ.get("PITREE_BENCH_DIR", "/tmp/pitree-bench"))

_WORDS = [
    "the",
    "a",
    "to",
    "of",
    "and",
    "in",
    "is",
    "it",
    "for",
    "that",
    "this",
    "with",
    "on",
    "be",
    "as",
    "are",
    "not",
    "if",
    "return",
    "def",
    "class",
    "self",
    "import",
    "from",
    "None",
    "True",
    "False",
    "value",
    "index",
    "file",
    "line",
    "session",
    "entry",
    "parent",
    "tree",
    "node",
    "leaf",
    "branch",
    "path",
    "offset",
    "read",
    "write",
    "append",
    "lock",
    "test",
    "assert",
    "error",
    "result",
    "data",
    "config",
    "request",
    "response",
    "user",
    "model",
    "token",
    "cache",
    "list",
    "dict",
    "str",
    "int",
    "bytes",
    "json",
    "parse",
    "load",
    "dump",
    "open",
    "close",
    "print",
    "raise",
    "except",
    "try",
    "while",
    "yield",
    "async",
    "await",
    "lambda",
    "function",
    "const",
    "let",
    "var",
    "export",
    "default",
    "interface",
    "type",
    "string",
    "number",
    "boolean",
    "undefined",
    "null",
    "promise",
    "src/app.py",
    "tests/test_api.py",
    "README.md",
    "package.json",
    "server.ts",
    "utils/format.ts",
    "docs/index.md",
    "TODO",
    "FIXME",
    "NOTE",
    "we",
    "should",
    "check",
    "whether",
    "handle",
    "update",
    "create",
    "delete",
    "query",
    "filter",
    "sort",
    "map",
    "reduce",
    "naïve",
    "café",
    "→",
    "✓",
    "✗",
    "—",
    "…",
    "“quoted”",
    "日本語",
    "Überprüfung",
]
_WEIGHTS = [1.0 if w.isascii() else 0.05 for w in _WORDS]  # a little non-ASCII, as in real chats
_PUNCT = [
    "",
    "",
    "",
    "",
    "",
    "",
    "",
    "",
    ",",
    ",",
    ".",
    ".",
    ":",
    "()",
    '"',
    "'",
    "{",
    "}",
    "[",
    "]",
    ";",
    " =",
    " #",
    "\\n",
    "/",
]  # some JSON escapes (quotes, backslashes, newlines), as in code

_MODELS = [
    ("anthropic", "claude-sonnet-4-5", "anthropic-messages"),
    ("anthropic", "claude-opus-4-1", "anthropic-messages"),
    ("openai", "gpt-5", "openai-responses"),
    ("google", "gemini-2.5-pro", "google-generative-ai"),
]
_THINKING = ["off", "minimal", "low", "medium", "high", "xhigh"]
_TOOLS = ["read", "bash", "edit", "write", "grep", "find", "ls"]
_CWDS = [
    "/home/alice/projects/todo-api",
    "/home/alice/projects/pitree",
    "/home/alice/projects/website",
    "/home/alice/src/linux-notes",
    "/home/alice/work/billing-service",
    "/home/alice/work/billing-service/frontend",
    "/home/alice/work/infra",
    "/home/alice/tmp/scratch",
    "/home/alice/projects/ml-experiments",
    "/home/alice/projects/dotfiles",
    "/home/alice/work/mobile-app",
    "/home/alice/work/data-pipeline",
]


class _Text:
    """A few MB of code-and-prose-like text; snippets are slices of it (fast, and deterministic)."""

    def __init__(self, rng: random.Random, size: int = 4 << 20) -> None:
        words = rng.choices(_WORDS, weights=_WEIGHTS, k=size // 5)
        punct = rng.choices(_PUNCT, k=len(words))
        out: list[str] = []
        for i, (word, p) in enumerate(zip(words, punct)):
            out.append(word + p)
            if i % 11 == 10:
                out.append("\n" + " " * (4 * rng.randrange(3)))
        self.pool = " ".join(out)
        self.rng = rng

    def get(self, n: int) -> str:
        n = max(1, min(n, len(self.pool) - 1))
        start = self.rng.randrange(len(self.pool) - n)
        return self.pool[start : start + n]


def _iso(ms: int) -> str:
    seconds, millis = divmod(ms, 1000)
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S") + f".{millis:03d}Z"


def _uuid7(rng: random.Random, ms: int) -> str:
    value = (ms & (2**48 - 1)) << 80 | rng.getrandbits(80)
    value = value & ~(0xF << 76) | 0x7 << 76
    value = value & ~(0x3 << 62) | 0x2 << 62
    return str(uuid.UUID(int=value))


def _lognormal_int(rng: random.Random, median: float, sigma: float, lo: int, hi: int) -> int:
    return max(lo, min(hi, int(rng.lognormvariate(0.0, sigma) * median)))


class SessionWriter:
    """Builds one pi-like session, entry by entry, keeping the tree consistent (ids, parents, leaf).

    ``scale`` multiplies the size of the large bodies (tool outputs, thinking); 1.0 gives ~750 B/line.
    """

    def __init__(
        self, seed: int, *, cwd: str, start_ms: int, scale: float = 1.0, parent_session: str | None = None
    ) -> None:
        self.rng = random.Random(seed)
        self.text = _text_for(seed)
        self.scale = scale
        self.ms = start_ms
        self.ids: set[str] = set()
        self.order: list[str] = []  # ids in file order
        self.parent_of: dict[str, str | None] = {}
        self.kind_of: dict[str, str] = {}
        self.leaf: str | None = None
        self.lines: list[bytes] = []
        self.provider, self.model, self.api = _MODELS[0]
        self.tool_seq = 0
        self.user_ids: set[str] = set()
        header: dict[str, Any] = {
            "type": "session",
            "version": 3,
            "id": _uuid7(self.rng, start_ms),
            "timestamp": _iso(start_ms),
            "cwd": cwd,
        }
        if parent_session is not None:
            header["parentSession"] = parent_session
        self.header = header
        self.lines.append(orjson.dumps(header))

    # ------------------------------------------------------------------ plumbing

    def _id(self) -> str:
        while True:
            candidate = f"{self.rng.getrandbits(32):08x}"
            if candidate not in self.ids:
                self.ids.add(candidate)
                return candidate

    def _tick(self, lo: float = 0.4, hi: float = 20.0) -> int:
        self.ms += int(self.rng.uniform(lo, hi) * 1000)
        return self.ms

    def _emit(
        self, kind: str, fields: dict[str, Any], *, parent: str | bool | None = True, base_last: bool = False
    ) -> str:
        entry_id = self._id()
        parent_id = self.leaf if parent is True else (parent or None)
        base = {"id": entry_id, "parentId": parent_id, "timestamp": _iso(self._tick())}
        entry = {"type": kind, **fields, **base} if base_last else {"type": kind, **base, **fields}
        self.lines.append(orjson.dumps(entry))
        self.order.append(entry_id)
        self.parent_of[entry_id] = parent_id
        self.kind_of[entry_id] = kind
        self.leaf = entry_id
        return entry_id

    def _msg(self, message: dict[str, Any], parent: str | bool | None = True, **after: Any) -> str:
        message["timestamp"] = self.ms + int(self.rng.uniform(0.2, 1.5) * 1000)
        message.update(after)  # keys pi writes after the timestamp (responseId)
        return self._emit("message", {"message": message}, parent=parent)

    def _size(self, median: float, sigma: float, lo: int, hi: int) -> int:
        return _lognormal_int(self.rng, median * self.scale, sigma, lo, int(hi * self.scale) + lo)

    def _usage(self) -> dict[str, Any]:
        r = self.rng
        inp, out, cr, cw = r.randrange(200, 4000), r.randrange(20, 3000), r.randrange(0, 150_000), r.randrange(0, 6000)
        ci, co, ccr, ccw = inp * 3e-6, out * 1.5e-5, cr * 3e-7, cw * 3.75e-6
        return {
            "input": inp,
            "output": out,
            "cacheRead": cr,
            "cacheWrite": cw,
            "totalTokens": inp + out + cr + cw,
            "cost": {
                "input": round(ci, 6),
                "output": round(co, 6),
                "cacheRead": round(ccr, 7),
                "cacheWrite": round(cw * 3.75e-6, 7),
                "total": ci + co + ccr + ccw,
            },
        }

    # ------------------------------------------------------------------ entries

    def user(self, parent: str | bool | None = True) -> str:
        r = self.rng
        n = self._size(120, 1.0, 5, 3000) if r.random() > 0.05 else self._size(2500, 0.6, 500, 12000)
        text = self.text.get(n)
        content: Any = text if r.random() < 0.85 else [{"type": "text", "text": text}]
        entry_id = self._msg({"role": "user", "content": content}, parent)
        self.user_ids.add(entry_id)
        return entry_id

    def assistant(self, tool_calls: int) -> tuple[str, list[tuple[str, str]]]:
        r = self.rng
        content: list[dict[str, Any]] = []
        if r.random() < 0.6:
            block: dict[str, Any] = {"type": "thinking", "thinking": self.text.get(self._size(350, 0.9, 20, 4000))}
            if self.provider == "anthropic":
                block["thinkingSignature"] = base64.b64encode(r.randbytes(r.randrange(60, 200))).decode()
            content.append(block)
        if tool_calls == 0 or r.random() < 0.5:
            content.append({"type": "text", "text": self.text.get(self._size(220, 1.0, 5, 6000))})
        calls = []
        for _ in range(tool_calls):
            self.tool_seq += 1
            call_id = f"toolu_01{self.tool_seq:06d}{r.getrandbits(40):010x}"
            name = r.choice(_TOOLS)
            if name == "bash":
                args: dict[str, Any] = {"command": self.text.get(r.randrange(8, 120)).replace("\n", " ")}
            elif name == "edit":
                args = {
                    "path": "src/app.py",
                    "oldText": self.text.get(self._size(150, 0.8, 10, 2000)),
                    "newText": self.text.get(self._size(180, 0.8, 10, 2500)),
                }
            elif name == "write":
                args = {"path": "src/new_module.py", "content": self.text.get(self._size(900, 0.9, 50, 9000))}
            else:
                args = {"path": r.choice(["src/app.py", "tests/test_api.py", "README.md", "src"])}
            content.append({"type": "toolCall", "id": call_id, "name": name, "arguments": args})
            calls.append((call_id, name))
        message = {
            "role": "assistant",
            "content": content,
            "api": self.api,
            "provider": self.provider,
            "model": self.model,
            "usage": self._usage(),
            "stopReason": "toolUse" if tool_calls else "stop",
        }
        return self._msg(message, responseId=f"msg_{r.getrandbits(64):016x}"), calls

    def tool_result(self, call_id: str, name: str) -> str:
        r = self.rng
        roll = r.random()
        if roll < 0.55:
            n = self._size(500, 0.9, 10, 3000)
        elif roll < 0.93:
            n = self._size(2800, 0.6, 800, 12000)
        else:
            n = self._size(11000, 0.5, 4000, 40000)  # a whole file read
        message: dict[str, Any] = {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": name,
            "content": [{"type": "text", "text": self.text.get(n)}],
            "isError": r.random() < 0.04,
        }
        if name == "edit":
            message["details"] = {
                "diff": self.text.get(self._size(400, 0.7, 40, 4000)),
                "firstChangedLine": r.randrange(1, 900),
            }
        return self._msg(message)

    def bash_execution(self) -> str:
        r = self.rng
        return self._msg(
            {
                "role": "bashExecution",
                "command": self.text.get(r.randrange(5, 80)).replace("\n", " "),
                "output": self.text.get(self._size(900, 1.0, 0, 20000)),
                "exitCode": r.choice([0, 0, 0, 1, 2]),
                "cancelled": False,
                "truncated": r.random() < 0.05,
            }
        )

    def turn(self, parent: str | bool | None = True) -> None:
        """A user prompt and the agent's work on it: tool rounds, then a final answer."""
        self.user(parent)
        rounds = min(int(self.rng.expovariate(1 / 2.2)), 25)
        for _ in range(rounds):
            _, calls = self.assistant(1 if self.rng.random() < 0.85 else 2)
            for call_id, name in calls:
                self.tool_result(call_id, name)
        self.assistant(0)

    def model_change(self) -> None:
        self.provider, self.model, self.api = self.rng.choice(_MODELS)
        self._emit("model_change", {"provider": self.provider, "modelId": self.model})

    def thinking_change(self) -> None:
        self._emit("thinking_level_change", {"thinkingLevel": self.rng.choice(_THINKING)})

    def label(self) -> None:
        target = self.rng.choice(self.order[-200:])
        text = self.rng.choice(["checkpoint", "works", "before-refactor", "regex-approach", "good answer", ""])
        self._emit("label", {"targetId": target, **({"label": text} if text else {})})

    def session_info(self) -> None:
        self._emit("session_info", {"name": self.text.get(self.rng.randrange(10, 50)).replace("\n", " ").strip()})

    def custom(self) -> None:
        self._emit(
            "custom", {"customType": "todo-ext/state", "data": {"checked": self.rng.randrange(10)}}, base_last=True
        )

    def branch(self) -> str | bool | None:
        """Go back to an earlier user message on the current path and ask differently: the next turn
        becomes its sibling, either directly (an edited re-send) or after a ``branch_summary``.
        Returns the parent for that next turn."""
        path: list[str] = []
        node = self.leaf
        while node is not None and len(path) < 400:
            path.append(node)
            node = self.parent_of[node]
        users = [i for i in path[5:] if i in self.user_ids]
        if not users:
            return True
        back_to = self.parent_of[self.rng.choice(users[:40])]
        if self.rng.random() < 0.5:
            return back_to
        summary = {
            "fromId": self.leaf,
            "summary": self.text.get(self._size(600, 0.5, 100, 3000)),
            "details": {"readFiles": ["src/app.py"], "modifiedFiles": ["src/app.py"]},
            "fromHook": False,
        }
        return self._emit("branch_summary", summary, parent=back_to)

    def compaction(self) -> None:
        path: list[str] = []
        node = self.leaf
        while node is not None and len(path) < 60:
            path.append(node)
            node = self.parent_of[node]
        self._emit(
            "compaction",
            {
                "summary": "## Goal\n" + self.text.get(self._size(3000, 0.4, 800, 8000)),
                "firstKeptEntryId": path[-1],
                "tokensBefore": self.rng.randrange(80_000, 190_000),
                "details": {"readFiles": ["src/app.py", "README.md"], "modifiedFiles": ["src/app.py"]},
                "fromHook": False,
            },
        )

    def build(self, entries: int) -> list[bytes]:
        """Lines (header first, no newlines) for a session of about ``entries`` entries."""
        r = self.rng
        self.model_change()
        self.thinking_change()
        compaction_at = int(entries * 0.6) if entries >= 2000 else -1
        named = False
        while len(self.order) < entries:
            roll = r.random()
            if not named and len(self.order) > min(30, entries // 3):
                self.session_info()
                named = True
            elif 0 <= compaction_at <= len(self.order):
                self.compaction()
                compaction_at = -1
            elif roll < 0.05:
                self.bash_execution()
            elif roll < 0.052 and len(self.order) > 20:
                self.turn(self.branch())
                continue
            elif roll < 0.075 and len(self.order) > 5:
                self.label()
            elif roll < 0.08:
                self.model_change()
            elif roll < 0.085:
                self.thinking_change()
            elif roll < 0.09:
                self.custom()
            self.turn()
        return self.lines


_TEXTS: dict[int, _Text] = {}


def _text_for(seed: int) -> _Text:
    """One shared text pool per process (building it is the slow part), with its own position RNG."""
    pool = _TEXTS.get(0)
    if pool is None:
        pool = _TEXTS[0] = _Text(random.Random(12345))
    text = _Text.__new__(_Text)
    text.pool = pool.pool
    text.rng = random.Random(seed ^ 0x5EED)
    return text


def _write_atomically(path: Path, lines: list[bytes]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    with open(tmp, "wb") as handle:
        handle.write(b"\n".join(lines) + b"\n")
    os.replace(tmp, path)


# ---------------------------------------------------------------------- datasets


def session_file(entries: int = 100_000, *, seed: int = 1) -> Path:
    """One large session of ``entries`` entries (generated once, then reused)."""
    path = BENCH_DIR / f"session-{entries}-s{seed}-v{GEN_VERSION}.jsonl"
    if not path.exists():
        print(f"[gen] writing {path} ({entries:,} entries) …", file=sys.stderr, flush=True)
        writer = SessionWriter(seed, cwd=_CWDS[1], start_ms=1_767_600_000_000, scale=BIG_SCALE)
        _write_atomically(path, writer.build(entries))
    return path


def big_session() -> Path:
    return session_file(100_000)


def sessions_folder(files: int = 3000, *, seed: int = 7) -> Path:
    """A sessions root in pi's layout: ``<root>/--<encoded cwd>--/<ts>_<id>.jsonl``, with forks."""
    root = BENCH_DIR / f"sessions-{files}-s{seed}-v{GEN_VERSION}"
    done = root / ".complete"
    if done.exists():
        return root
    print(f"[gen] writing {files:,} session files under {root} …", file=sys.stderr, flush=True)
    if root.exists():
        shutil.rmtree(root)
    rng = random.Random(seed)
    cwd_weights = [1 / (i + 1) for i in range(len(_CWDS))]  # a few busy projects, a long tail
    by_cwd: dict[str, list[Path]] = {}
    start = 1_760_000_000_000
    for i in range(files):
        cwd = rng.choices(_CWDS, weights=cwd_weights)[0]
        earlier = by_cwd.setdefault(cwd, [])
        parent = str(rng.choice(earlier).absolute()) if earlier and rng.random() < 0.12 else None
        start += rng.randrange(60_000, 5_000_000)
        # Small/medium sessions: median ~20 entries, a tail to several hundred; lighter bodies.
        entries = _lognormal_int(rng, 20, 1.0, 3, 800)
        writer = SessionWriter(seed * 100_003 + i, cwd=cwd, start_ms=start, scale=0.3, parent_session=parent)
        lines = writer.build(entries)
        folder = root / ("--" + cwd.lstrip("/").replace("/", "-") + "--")
        name = writer.header["timestamp"].replace(":", "-").replace(".", "-") + "_" + writer.header["id"] + ".jsonl"
        path = folder / name
        _write_atomically(path, lines)
        os.utime(path, ns=(writer.ms * 1_000_000, writer.ms * 1_000_000))
        earlier.append(path)
    done.write_text(f"{files}\n")
    return root


PROBE_MESSAGE_BYTES = 31_000_000  # the probe's one-message session
PROBE_ENTRIES = 2000  # the probe's many-entry session: this many entries …
PROBE_ENTRY_BYTES = 8 * 1024  # … of this much text each


def probe_folder() -> Path:
    """The shapes an attacker's probe used (issue 26), in pi's layout under ``--probe--/``: a session of one
    31 MB message, one of 2,000 entries of 8 KB each, and the same two with the text "a a a …" (every
    word the one-letter query, the worst case for anything that weighs matches)."""
    root = BENCH_DIR / f"probe-v{GEN_VERSION}"
    done = root / ".complete"
    if done.exists():
        return root
    print(f"[gen] writing the probe's sessions under {root} …", file=sys.stderr, flush=True)
    if root.exists():
        shutil.rmtree(root)
    text = _text_for(26)
    pool = text.pool
    prose_message = (pool * (PROBE_MESSAGE_BYTES // len(pool) + 1))[:PROBE_MESSAGE_BYTES]
    shapes = {
        "message": [prose_message],
        "entries": [text.get(PROBE_ENTRY_BYTES) for _ in range(PROBE_ENTRIES)],
        "dense-message": ["a " * (PROBE_MESSAGE_BYTES // 2)],
        "dense-entries": ["a " * (PROBE_ENTRY_BYTES // 2)] * PROBE_ENTRIES,
    }
    for number, (name, texts) in enumerate(shapes.items()):
        session_id = f"0b0b0b0b-0000-4000-8000-{number:012d}"
        header = {
            "type": "session",
            "version": 3,
            "id": session_id,
            "timestamp": _iso(1_767_000_000_000),
            "cwd": "/probe",
        }
        lines = [orjson.dumps(header)]
        parent = None
        for n, body in enumerate(texts):
            entry_id = f"{number:02x}{n:06x}"
            role = "user" if n % 2 == 0 or len(texts) == 1 else "assistant"
            content: Any = body if role == "user" else [{"type": "text", "text": body}]
            message = {"role": role, "content": content, "timestamp": 1_767_000_000_000 + n}
            lines.append(
                orjson.dumps(
                    {
                        "type": "message",
                        "id": entry_id,
                        "parentId": parent,
                        "timestamp": _iso(1_767_000_000_000 + n),
                        "message": message,
                    }
                )
            )
            parent = entry_id
        _write_atomically(root / "--probe--" / f"2026-01-01T00-00-0{number}-000Z_{session_id}.jsonl", lines)
        (root / "--probe--" / f".{name}").write_text(session_id)
    done.write_text("probe\n")
    return root


def probe_session(name: str) -> tuple[str, Path]:
    """The id and path of one of ``probe_folder()``'s sessions: message, entries, dense-message, dense-entries."""
    folder = probe_folder() / "--probe--"
    session_id = (folder / f".{name}").read_text()
    return session_id, next(folder.glob(f"*_{session_id}.jsonl"))


def scratch_copy(source: Path, name: str) -> Path:
    """A fresh copy of ``source`` under ``<bench dir>/work/`` for benchmarks that append to it."""
    target = BENCH_DIR / "work" / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.unlink(missing_ok=True)
    shutil.copyfile(source, target)
    return target


def warm(path: Path) -> int:
    """Read a file once so that it is in the page cache; returns its size."""
    size = 0
    with open(path, "rb", buffering=0) as handle:
        while chunk := handle.read(8 << 20):
            size += len(chunk)
    return size


_K = TypeVar("_K")


@contextmanager
def served_folder(prefix: str, sources: Mapping[_K, Path]) -> Iterator[tuple[Path, dict[_K, Path]]]:
    """A temporary sessions folder (``mkdtemp(prefix=prefix)``) holding a copy of each of ``sources`` in
    one ``--bench--`` project folder, each copy in the page cache; yields it and the copies by key, and
    removes it afterwards. The benchmarks that serve pages point Django's settings at it, so that the
    listing holds just these sessions and appends never touch the generated files."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        copies = {}
        for key, source in sources.items():
            target = folder / "--bench--" / source.name
            target.parent.mkdir(exist_ok=True)
            shutil.copy(source, target)
            warm(target)
            copies[key] = target
        yield folder, copies
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def copied_folder(prefix: str, source: Path) -> Iterator[tuple[Path, list[Path], int]]:
    """A temporary folder (``mkdtemp(prefix=prefix)``) holding ``sessions/``, a copy of the sessions
    folder ``source`` in the page cache; yields the temporary folder (room for an index beside the
    copy), the copy's session files and their bytes, and removes it afterwards."""
    scratch = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        shutil.copytree(source, scratch / "sessions")
        files = sorted((scratch / "sessions").rglob("*.jsonl"))
        yield scratch, files, sum(warm(path) for path in files)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def describe(path: Path) -> str:
    counts: Counter[str] = Counter()
    sizes: Counter[str] = Counter()
    roots = 0
    children: Counter[str] = Counter()
    with open(path, "rb") as handle:
        next(handle)
        for raw in handle:
            entry = orjson.loads(raw)
            kind = entry["type"] if entry["type"] != "message" else "message/" + entry["message"]["role"]
            counts[kind] += 1
            sizes[kind] += len(raw)
            if entry.get("parentId") is None:
                roots += 1
            else:
                children[entry["parentId"]] += 1
    total = sum(counts.values())
    size = path.stat().st_size
    head = (
        f"{path}: {size / 1e6:.1f} MB, {total:,} entries, {size / total:.0f} B/line, "
        f"{roots} root(s), {sum(1 for c in children.values() if c > 1)} branch points"
    )
    out = [head]
    for kind, n in counts.most_common():
        out.append(f"  {kind:<28} {n:>7,}  avg {sizes[kind] / n:>7.0f} B")
    return "\n".join(out)


if __name__ == "__main__":
    print(describe(big_session()))
    print(describe(session_file(10_000)))
    root = sessions_folder()
    files = list(root.rglob("*.jsonl"))
    total = sum(f.stat().st_size for f in files)
    forks = sum(1 for f in files if b'"parentSession"' in f.open("rb").readline())
    folders = len({f.parent for f in files})
    print(f"{root}: {len(files):,} files in {folders} folders, {total / 1e6:.1f} MB, {forks} forks")
