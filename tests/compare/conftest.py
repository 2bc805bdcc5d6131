"""Fixtures for the comparison and map tests: pi's samples in a sessions folder, and sessions written
by hand from a compact description of their tree."""

from __future__ import annotations

import json
import shutil
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sessions_app.services.lookup import _catalog_for
from sessions_app.sessionfiles.store import clear_cache

SAMPLES = Path(__file__).resolve().parents[2] / "sessions_app" / "samples" / "pi"
EXPECTED = json.loads((SAMPLES / "expected.json").read_text())
FOLDER = "--home-alice-projects-todo-api--"


@pytest.fixture(autouse=True)
def _fresh_state(settings):
    """No test sees another test's cached files or listing."""
    settings.PITREE_FSYNC = False
    clear_cache()

    _catalog_for.cache_clear()
    yield
    clear_cache()


@pytest.fixture
def samples(sessions_dir: Path) -> Path:
    """Every sample pi lists, under its original name, in one workspace folder."""
    folder = sessions_dir / FOLDER
    folder.mkdir()
    for key, expected in EXPECTED.items():
        if not key.startswith("__"):
            shutil.copy(SAMPLES / f"{key}.jsonl", folder / expected["originalFileName"])
    return folder


class Make:
    """Entry builders for hand-written sessions (handed out as the ``make`` fixture: test files in
    importlib mode cannot import this conftest)."""

    @staticmethod
    def sample_id(key: str) -> str:
        return EXPECTED[key]["sessionId"]

    @staticmethod
    def user(entry_id: str, parent: str | None, text: Any, second: int) -> dict[str, Any]:
        return Make.message(entry_id, parent, {"role": "user", "content": text}, second)

    @staticmethod
    def assistant(
        entry_id: str,
        parent: str | None,
        text: str,
        second: int,
        *,
        usage: Any = None,
        model: str = "m1",
        tools: Any = (),
    ) -> dict[str, Any]:
        content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        content += [
            {"type": "toolCall", "id": f"call-{entry_id}-{i}", "name": name, "arguments": args}
            for i, (name, args) in enumerate(tools)
        ]
        message = {"role": "assistant", "content": content, "provider": "p", "model": model, "stopReason": "stop"}
        if usage is not None:
            message["usage"] = usage
        return Make.message(entry_id, parent, message, second)

    @staticmethod
    def message(entry_id: str, parent: str | None, message: dict[str, Any], second: int) -> dict[str, Any]:
        return {
            "type": "message",
            "id": entry_id,
            "parentId": parent,
            "timestamp": Make.stamp(second),
            "message": message,
        }

    @staticmethod
    def label(entry_id: str, parent: str | None, target: str, text: str, second: int) -> dict[str, Any]:
        return {
            "type": "label",
            "id": entry_id,
            "parentId": parent,
            "timestamp": Make.stamp(second),
            "targetId": target,
            "label": text,
        }

    @staticmethod
    def meta(kind: str, entry_id: str, parent: str | None, second: int, **keys: Any) -> dict[str, Any]:
        """An entry of any other type (``session_info``, ``model_change``, ``leaf`` …) with its own keys."""
        return {"type": kind, "id": entry_id, "parentId": parent, "timestamp": Make.stamp(second), **keys}

    @staticmethod
    def stamp(second: int) -> str:
        return f"2026-03-02T{9 + second // 3600:02d}:{second // 60 % 60:02d}:{second % 60:02d}.000Z"

    @staticmethod
    def usage(tokens: Any, cost: Any) -> dict[str, Any]:
        return {
            "input": 1,
            "output": 1,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": tokens,
            "cost": {"total": cost},
        }


@pytest.fixture
def make() -> type[Make]:
    return Make


WriteSession = Callable[..., tuple[str, Path]]


@pytest.fixture
def write_session(sessions_dir: Path) -> WriteSession:
    """Write a v3 session of ``entries`` (dicts, file order); returns (session id, path)."""

    def write(entries: list[dict[str, Any]], *, parent_session: str | None = None, session_id: str | None = None):
        sid = session_id or str(uuid.uuid4())
        header: dict[str, Any] = {
            "type": "session",
            "version": 3,
            "id": sid,
            "timestamp": "2026-03-02T09:00:00.000Z",
            "cwd": "/home/alice/projects/todo-api",
        }
        if parent_session:
            header["parentSession"] = parent_session
        folder = sessions_dir / FOLDER
        folder.mkdir(exist_ok=True)
        path = folder / f"2026-03-02T09-00-00-000Z_{sid}.jsonl"
        path.write_bytes(b"".join(json.dumps(line, ensure_ascii=False).encode() + b"\n" for line in [header, *entries]))
        return sid, path

    return write
