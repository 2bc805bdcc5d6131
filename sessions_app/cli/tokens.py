"""A rough token count of a context, for ``compact``'s default ``tokensBefore``.

pi's own heuristic (``estimateTokens`` in its compaction code): characters / 4, rounded up, per message;
an image counts as 4,800 characters (1,200 tokens). Only an estimate: no tokenizer is involved.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import orjson

from ..sessionfiles.context import bash_execution_text

IMAGE_CHARS = 4800


def estimate_tokens(messages: Iterable[dict[str, Any]]) -> int:
    """Sum over pi's in-memory context messages of ceil(characters / 4)."""
    return sum(math.ceil(_chars(message) / 4) for message in messages)


def _chars(message: dict[str, Any]) -> int:
    role = message.get("role")
    if role in ("branchSummary", "compactionSummary"):
        return len(str(message.get("summary") or ""))
    if role == "bashExecution":
        return len(bash_execution_text(message))
    return _content_chars(message.get("content"))


def _content_chars(content: Any) -> int:
    if isinstance(content, str):
        return len(content)
    if not isinstance(content, list):
        return 0
    total = 0
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            total += len(str(block.get("text") or ""))
        elif kind == "thinking":
            total += len(str(block.get("thinking") or ""))
        elif kind == "toolCall":
            try:
                arguments = len(orjson.dumps(block.get("arguments")))
            except (TypeError, orjson.JSONEncodeError):
                arguments = 0
            total += len(str(block.get("name") or "")) + arguments
        elif kind == "image":
            total += IMAGE_CHARS
    return total
