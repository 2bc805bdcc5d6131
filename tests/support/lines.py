"""Entry lines built by hand, for tests that write a session of their own shape (a tree of many
branches, long runs, labels): a message and a label as pi writes them (docs/format.md), timed a
number of seconds after 2026-03-02 09:00 UTC, the time ``Sessions.write_lines`` gives its header."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

START_MS = 1772442000000  # 2026-03-02T09:00:00.000Z
LONG_CHAT_START = datetime(2026, 3, 1, tzinfo=UTC)


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


def long_chat(count: int, *, compaction_at: int | None = None, label_at: int | None = None) -> list[dict[str, Any]]:
    """``count`` messages, user and assistant in turn (ids ``m0000``…), one an hour from 2026-03-01
    00:00 UTC, so that they span days; a compaction after message ``compaction_at`` (id ``compact``,
    keeping from the message before it) and a label on message ``label_at`` (text "milestone")."""
    lines: list[dict[str, Any]] = []
    parent: str | None = None
    for n in range(count):
        entry_id = f"m{n:04d}"
        when = (LONG_CHAT_START + timedelta(hours=n)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
        role = "user" if n % 2 == 0 else "assistant"
        entry = message(entry_id, parent, role, f"Message number {n}")
        entry["timestamp"] = when
        lines.append(entry)
        parent = entry_id
        if n == compaction_at:
            lines.append(
                {
                    "type": "compaction",
                    "id": "compact",
                    "parentId": parent,
                    "timestamp": when,
                    "summary": "## Goal\nCount messages.",
                    "firstKeptEntryId": f"m{n - 1:04d}",
                    "tokensBefore": 1000,
                }
            )
            parent = "compact"
    if label_at is not None:
        lines.append(
            {
                "type": "label",
                "id": "label1",
                "parentId": parent,
                "timestamp": lines[-1]["timestamp"],
                "targetId": f"m{label_at:04d}",
                "label": "milestone",
            }
        )
    return lines
