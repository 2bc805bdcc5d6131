"""Fixtures for the session core tests (pure Python: no database, no Django).

pytest runs with ``--import-mode=importlib``: test modules cannot import each other or this file, so
everything they share is handed out as a fixture. ``_workers.py`` beside this file holds the code that
child processes run (multiprocessing and killed writers); the ``workers`` fixture imports it by name, and
``children`` starts processes that run it.
"""

from __future__ import annotations

import json
import multiprocessing
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from sessions_app.sessionfiles import fork, store
from sessions_app.sessionfiles.store import SessionFile

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
SAMPLES = REPO / "sessions_app" / "samples" / "pi"
CWD = "/home/alice/projects/todo-api"
T0 = "2026-01-01T00:00:00.000Z"


@pytest.fixture(autouse=True)
def _fresh_cache() -> Iterator[None]:
    """SessionFile.open caches per process: no test may see another test's files."""
    store.clear_cache()
    yield
    store.clear_cache()


@pytest.fixture(scope="session")
def samples_dir() -> Path:
    return SAMPLES


@pytest.fixture(scope="session")
def expected() -> dict[str, Any]:
    """What pi 1.6.0 computed for each sample (docs/format.md §13)."""
    return json.loads((SAMPLES / "expected.json").read_text(encoding="utf-8"))


@pytest.fixture
def sample_copy(tmp_path: Path) -> Callable[[str], Path]:
    """A writable copy of a sample file, by stem (``"02-tree-branches"``)."""

    def copy(stem: str, name: str | None = None) -> Path:
        target = tmp_path / (name or f"{stem}.jsonl")
        target.write_bytes((SAMPLES / f"{stem}.jsonl").read_bytes())
        return target

    return copy


@pytest.fixture
def sessions_root(tmp_path: Path) -> Path:
    root = tmp_path / "sessions"
    root.mkdir()
    return root


@pytest.fixture
def new_session(sessions_root: Path) -> Callable[..., SessionFile]:
    """A fresh v3 session file written by pitree (fsync off: these tests do not pull the plug)."""

    def make(cwd: str = CWD, name: str | None = None) -> SessionFile:
        return fork.create_session(sessions_root, cwd, name=name, fsync=False)

    return make


def dump(obj: Any) -> bytes:
    """One line the way pi writes it (compact, non-ASCII raw), newline included."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode("utf-8") + b"\n"


def header(session_id: str = "sess-1", version: int | None = 3, **extra: Any) -> dict[str, Any]:
    head: dict[str, Any] = {"type": "session"}
    if version is not None:
        head["version"] = version
    head.update({"id": session_id, "timestamp": T0, "cwd": CWD, **extra})
    return head


def entry(
    entry_id: str, parent: str | None, kind: str = "custom", ts: str = "2026-01-01T00:00:01.000Z", **fields: Any
) -> dict[str, Any]:
    if kind == "custom":
        fields.setdefault("customType", "test")
    return {"type": kind, "id": entry_id, "parentId": parent, "timestamp": ts, **fields}


def user(entry_id: str, parent: str | None, text: str, ts: str = "2026-01-01T00:00:01.000Z") -> dict[str, Any]:
    return entry(entry_id, parent, "message", ts, message={"role": "user", "content": text, "timestamp": 1767225601000})


def assistant(
    entry_id: str, parent: str | None, text: str, ts: str = "2026-01-01T00:00:02.000Z", model: str = "m1"
) -> dict[str, Any]:
    return entry(
        entry_id,
        parent,
        "message",
        ts,
        message={
            "role": "assistant",
            "content": [{"type": "text", "text": text}],
            "api": "test",
            "provider": "prov",
            "model": model,
            "usage": {
                "input": 1,
                "output": 1,
                "cacheRead": 0,
                "cacheWrite": 0,
                "totalTokens": 2,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
            },
            "stopReason": "stop",
            "timestamp": 1767225602000,
        },
    )


@pytest.fixture(scope="session")
def L() -> SimpleNamespace:
    """Line builders for hand-written files: ``L.header()``, ``L.entry(id, parent, kind, **fields)``,
    ``L.user(id, parent, text)``, ``L.assistant(id, parent, text)``, ``L.dump(obj) -> bytes``."""
    return SimpleNamespace(dump=dump, header=header, entry=entry, user=user, assistant=assistant, T0=T0, CWD=CWD)


@pytest.fixture
def write_file(tmp_path: Path) -> Callable[..., Path]:
    """Write a file from parts: dicts become pi-style lines, ``str`` gets a ``\\n``, ``bytes`` go in verbatim."""

    def write(*parts: dict[str, Any] | str | bytes, name: str = "session.jsonl") -> Path:
        data = b"".join(
            dump(part) if isinstance(part, dict) else part.encode("utf-8") + b"\n" if isinstance(part, str) else part
            for part in parts
        )
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        return path

    return write


@pytest.fixture
def workers(monkeypatch: pytest.MonkeyPatch) -> Any:
    """The ``_workers`` module, importable by name here and in spawned children (they inherit sys.path)."""
    monkeypatch.syspath_prepend(str(HERE))
    monkeypatch.syspath_prepend(str(REPO))
    import _workers  # noqa: PLC0415 - importable only once the paths above are on sys.path

    return _workers


@pytest.fixture
def children(workers: Any) -> multiprocessing.context.BaseContext:
    """Where the tests' child processes start: forked from one server that imported ``_workers`` (and
    with it the session core) once, instead of a new interpreter importing it all again for each child
    (spawn: a few tenths of a CPU-second a child). Each child is still a process of its own, with its own
    open files, locks and caches; the server opened no session file."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["_workers"])
    return context


def check_lines(data: bytes) -> list[dict[str, Any]]:
    """Every line of a pitree-written file: valid JSON object, ending in ``\\n``."""
    assert data.endswith(b"\n")
    objects = []
    for raw in data.split(b"\n")[:-1]:
        obj = json.loads(raw)
        assert isinstance(obj, dict)
        objects.append(obj)
    return objects


@pytest.fixture(scope="session")
def valid_lines() -> Callable[[bytes], list[dict[str, Any]]]:
    return check_lines


@pytest.fixture(scope="session")
def ids_of() -> Callable[[SessionFile, list[int]], list[str]]:
    return lambda session, rows: [session.index.ids[row] for row in rows]
