"""Fixtures for the ``manage.py pitree`` command tests.

pytest runs with ``--import-mode=importlib``, so helpers are handed out as fixtures rather than imported.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from django.core.management import call_command

from sessions_app.sessionfiles.store import clear_cache

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sessions_app" / "samples" / "pi"


@pytest.fixture(autouse=True)
def _fresh_file_cache():
    """SessionFile.open caches per process; every test starts without cached files."""
    clear_cache()
    yield
    clear_cache()


@pytest.fixture(scope="session")
def expected() -> dict[str, Any]:
    return json.loads((SAMPLES / "expected.json").read_text(encoding="utf-8"))


@pytest.fixture
def pitree(sessions_dir: Path, settings: Any) -> Callable[..., str]:
    """Run ``pitree`` in-process; returns stdout (CommandError propagates). fsync is off unless a test
    turns ``settings.PITREE_FSYNC`` back on."""
    settings.PITREE_FSYNC = False

    def run(*args: str) -> str:
        out, err = io.StringIO(), io.StringIO()
        call_command("pitree", *args, stdout=out, stderr=err)
        return out.getvalue()

    return run


@pytest.fixture
def pitree_cli(sessions_dir: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run ``python manage.py pitree`` in a child process (real exit codes and stderr)."""

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "PITREE_SESSIONS_DIR": str(sessions_dir), "PITREE_FSYNC": "0"}
        return subprocess.run(
            [sys.executable, str(REPO / "manage.py"), "pitree", *args],
            cwd=REPO,
            check=False,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    return run


@pytest.fixture
def sample(sessions_dir: Path, expected: dict[str, Any]) -> Callable[[str], Path]:
    """A copy of a sample file (by expected.json key or file stem) inside the sessions folder, under
    the name pi gave it (so that forks find their parent by file name)."""

    def copy(stem: str) -> Path:
        name = expected[stem]["originalFileName"] if stem in expected else f"{stem}.jsonl"
        target = sessions_dir / "--home-alice-projects-todo-api--" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(SAMPLES / f"{stem}.jsonl", target)
        return target

    return copy


def _line(obj: dict[str, Any]) -> bytes:
    return orjson.dumps(obj) + b"\n"


def _header(session_id: str = "0197aaaa-0000-7000-8000-000000000001", **extra: Any) -> dict[str, Any]:
    return {
        "type": "session",
        "version": 3,
        "id": session_id,
        "timestamp": "2026-03-02T09:00:00.000Z",
        "cwd": "/work/demo",
        **extra,
    }


@pytest.fixture
def write_session(sessions_dir: Path) -> Callable[..., Path]:
    """Write a session file from a header and entries (dicts; ``parentId`` defaults to the previous id)."""

    def write(name: str, entries: list[dict[str, Any]], *, header: dict[str, Any] | None = None) -> Path:
        path = sessions_dir / name
        previous = None
        chunks = [_line(header or _header())]
        for number, given in enumerate(entries):
            entry = dict(given)
            entry.setdefault("parentId", previous)
            entry.setdefault("timestamp", f"2026-03-02T09:{number // 60 % 60:02d}:{number % 60:02d}.000Z")
            chunks.append(_line(entry))
            previous = entry["id"]
        path.write_bytes(b"".join(chunks))
        return path

    return write


@pytest.fixture
def chain(sessions_dir: Path) -> Callable[[int], Path]:
    """A session whose ``count`` user/assistant messages each answer the one before (one long path)."""

    def make(count: int, name: str = "chain.jsonl") -> Path:
        path = sessions_dir / name
        chunks = [_line(_header("0197bbbb-0000-7000-8000-000000000002"))]
        previous = None
        for number in range(count):
            entry_id = f"e{number:07d}"
            role = "user" if number % 2 == 0 else "assistant"
            content: Any = f"message {number}" if role == "user" else [{"type": "text", "text": f"reply {number}"}]
            chunks.append(
                _line(
                    {
                        "type": "message",
                        "id": entry_id,
                        "parentId": previous,
                        "timestamp": "2026-03-02T09:00:00.000Z",
                        "message": {"role": role, "content": content, "timestamp": 1772442000000 + number},
                    }
                )
            )
            previous = entry_id
        path.write_bytes(b"".join(chunks))
        return path

    return make
