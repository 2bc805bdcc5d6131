"""Odd files that pi 1.6.0 opens: pitree reads the same session from them (and, unlike pi, never
writes to a file it reads)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sessions_app.sessionfiles import tree
from sessions_app.sessionfiles.store import SessionFile

pytestmark = pytest.mark.processes  # pi's own code, run by node

HEADER = {"type": "session", "version": 3, "id": "odd", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}


def _line(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


def _user(entry_id: str, parent: Any, text: str, second: int) -> dict[str, Any]:
    stamp = f"2026-01-01T00:00:{second:02d}.000Z"
    message = {"role": "user", "content": text, "timestamp": 1767225600000 + second * 1000}
    return {"type": "message", "id": entry_id, "parentId": parent, "timestamp": stamp, "message": message}


def test_header_without_final_newline(pi: Any, tmp_path: Path) -> None:
    path = tmp_path / "header-only.jsonl"
    path.write_bytes(_line(HEADER))
    seen = pi.open_one(path)
    assert seen["error"] is None and seen["fileChanged"]  # pi opens it, and adds the "\n" to (its copy of) it
    session = SessionFile(path)
    assert session.session_id == seen["sessionId"]
    assert session.leaf_id == seen["leafId"] is None
    assert session.path_rows() == seen["branchIds"] == []
    assert path.read_bytes() == _line(HEADER)


def test_parent_ids_that_are_no_strings(pi: Any, tmp_path: Path) -> None:
    lines = [HEADER, _user("a", None, "root", 1)]
    for number, parent in enumerate([5, True, ["a"], {"id": "a"}], start=2):
        lines.append(_user(f"odd{number}", parent, f"parent {parent!r}", number))
        lines.append(_user(f"under{number}", f"odd{number}", "below it", number + 10))
    path = tmp_path / "odd-parents.jsonl"
    path.write_bytes(b"".join(_line(line) + b"\n" for line in lines))
    seen = pi.open_one(path)
    assert seen["error"] is None
    session = SessionFile(path)
    index = session.index
    assert [index.ids[row] for row in index.roots] == seen["treeRoots"] == ["a", "odd2", "odd3", "odd4", "odd5"]
    assert [index.ids[row] for row in session.path_rows()] == seen["branchIds"] == ["odd5", "under5"]
    assert session.context().entry_ids == seen["contextEntryIds"]
    assert tree.tree(index) == seen["tree"]
    assert [line for line, _ in index.skipped()] == [3, 5, 7, 9]
