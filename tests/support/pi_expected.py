"""How ``sessions_app/samples/pi/expected.json`` records a context message, so that tests can compare
pitree's (or pi's) full messages with what pi computed for the samples."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SAMPLES_DIR = Path(__file__).resolve().parents[2] / "sessions_app" / "samples" / "pi"
EXPECTED: dict[str, Any] = json.loads((SAMPLES_DIR / "expected.json").read_text())
SAMPLE_KEYS = [key for key in EXPECTED if not key.startswith("__")]  # one per sample file; "__…" are cross-file
PREVIEW_CHARS = 70


def preview(message: dict[str, Any]) -> str:
    """The recorded 70-character preview of a context message.

    Inferred from the recorded previews: summaries show their summary, a bash run its command; content
    is a string as is, or its blocks joined with " | " (text, thinking, ``[toolCall name]``); longer than
    70 characters is cut to 70 plus an ellipsis.
    """
    role = message["role"]
    if role in ("branchSummary", "compactionSummary"):
        text = message["summary"]
    elif role == "bashExecution":
        text = message["command"]
    else:
        content = message.get("content")
        if isinstance(content, str):
            text = content
        else:
            parts = []
            for block in content or []:
                if block["type"] == "text":
                    parts.append(block["text"])
                elif block["type"] == "thinking":
                    parts.append(block["thinking"])
                elif block["type"] == "toolCall":
                    parts.append(f"[toolCall {block['name']}]")
                else:
                    parts.append(f"[{block['type']}]")
            text = " | ".join(parts)
    return text[:PREVIEW_CHARS] + "\u2026" if len(text) > PREVIEW_CHARS else text


def summary(message: dict[str, Any]) -> dict[str, Any]:
    """A context message as ``expected.json``'s ``context.messages`` records it."""
    out: dict[str, Any] = {"role": message["role"], "preview": preview(message)}
    for key in ("fromId", "customType"):
        if key in message:
            out[key] = message[key]
    return out
