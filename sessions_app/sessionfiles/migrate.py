"""Older session versions, brought to version 3 in memory as each entry is decoded (docs/format.md §8.6),
and which version a header's file is read as (``read_version``, §2.2).

pi rewrites such a file on open; pitree never does (docs/format.md §8.6). The index already gave every v1
line an id and a parent; here an entry's body gets the rest: the new keys appended at the end (as pi's
rewrite leaves them), ``firstKeptEntryIndex`` resolved to an id, and v2's ``hookMessage`` role renamed.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .entries import SESSION_VERSION, js_to_number

MAX_VERSION = 2**53
"""The largest version reported as it is (JS's largest safe integer, which the listing cache's integers
hold too): beyond 3, a version only has to say that it is newer."""


def read_version(header: dict[str, Any]) -> int:
    """The version a file is read as (docs/format.md §2.2), as pi's migration decides it: its header's
    ``version ?? 1``, compared by JS's ``>=`` and ``<``, which read it as a number (``"3"``, ``3.0``
    and ``[3]`` are 3). Below 2 is 1, below 3 is 2; a version that is no number (``"abc"``) passes
    neither test, and pi migrates nothing: 3. A whole number from 3 on is reported as it is, any
    other version from 3 on as 3."""
    value = header.get("version")
    number = 1.0 if value is None else js_to_number(value)
    if math.isnan(number):
        return SESSION_VERSION
    if number < 2:
        return 1
    if number < SESSION_VERSION:
        return 2
    return int(number) if number.is_integer() and number <= MAX_VERSION else SESSION_VERSION


def migrate_entry(
    entry: dict[str, Any],
    version: int,
    entry_id: str,
    parent_id: str | None,
    id_for_parsed_index: Callable[[int], str | None],
) -> dict[str, Any]:
    """Return ``entry`` as a version-3 entry (the dict is changed in place and returned)."""
    if version >= 3:
        return entry
    if version == 1:
        entry["id"] = entry_id
        entry["parentId"] = parent_id
        index = entry.get("firstKeptEntryIndex")
        # pi's migration resolves a number only, and leaves any other value where it is.
        if entry.get("type") == "compaction" and isinstance(index, int | float) and not isinstance(index, bool):
            del entry["firstKeptEntryIndex"]
            kept = id_for_parsed_index(int(index)) if index == int(index) and index > 0 else None
            if kept is not None:
                entry["firstKeptEntryId"] = kept
    message = entry.get("message")
    if entry.get("type") == "message" and isinstance(message, dict) and message.get("role") == "hookMessage":
        message["role"] = "custom"
    return entry


def migrate_header(header: dict[str, Any]) -> dict[str, Any]:
    """The header as pi's migration leaves it: a version 1 or 2 file's ``version`` is 3, in the place
    of the old value, or last when there was none (JS's assignment keeps a key where it is)."""
    if read_version(header) >= SESSION_VERSION:
        return header
    return {**header, "version": SESSION_VERSION}
