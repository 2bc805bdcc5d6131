"""Entry lines built by hand, for tests that write a session of their own shape (a tree of many
branches, long runs, labels): a message and a label as pi writes them (docs/format.md), timed a
number of seconds after 2026-03-02 09:00 UTC, the time ``Sessions.write_lines`` gives its header."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

START_MS = 1772442000000  # 2026-03-02T09:00:00.000Z


def stamp(second: int) -> str:
    """An entry's ``timestamp``, ``second`` seconds after the start."""
    return f"2026-03-02T09:{second // 60:02d}:{second % 60:02d}.000Z"


def message(
    entry_id: str,
    parent: str | None,
    role: str,
    content: str | list[dict[str, Any]],
    second: int = 1,
    *,
    model: str | None = None,
) -> dict[str, Any]:
    """A message entry. An assistant's text is one text block, as pi stores it (a list of blocks is
    taken as it is); ``model`` ("provider/model") adds what pi stores with an assistant's reply: its
    provider, model, api, usage and stop reason."""
    body: dict[str, Any] = {"role": role, "content": content}
    if role != "user" and isinstance(content, str):
        body["content"] = [{"type": "text", "text": content}]
    if model is not None:
        provider, _, name = model.partition("/")
        body.update(provider=provider, model=name, api="x", usage={}, stopReason="stop")
    body["timestamp"] = START_MS + second * 1000
    return {"type": "message", "id": entry_id, "parentId": parent, "timestamp": stamp(second), "message": body}


def label(entry_id: str, parent: str, target: str, text: str, second: int) -> dict[str, Any]:
    """A label entry: ``text`` on the entry ``target``."""
    return {
        "type": "label",
        "id": entry_id,
        "parentId": parent,
        "timestamp": stamp(second),
        "targetId": target,
        "label": text,
    }


def copy_as(source: Path, target: Path, session_id: str) -> Path:
    """A copy of the session file ``source`` holding session ``session_id``: a plain copy would hold
    the same id as its source, which makes both files found nowhere (docs/format.md §1.3)."""
    header, _, rest = source.read_bytes().partition(b"\n")
    target.write_bytes(orjson.dumps({**orjson.loads(header), "id": session_id}) + b"\n" + rest)
    return target
