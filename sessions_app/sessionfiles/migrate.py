"""Older session versions, brought to version 3 in memory as each entry is decoded (docs/format.md §8.6).

pi rewrites such a file on open; pitree never does (docs/format.md §8.6). The index already gave every v1
line an id and a parent; here an entry's body gets the rest: the new keys appended at the end (as pi's
rewrite leaves them), ``firstKeptEntryIndex`` resolved to an id, and v2's ``hookMessage`` role renamed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


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
    """The header as pi's rewrite leaves it: ``version: 3`` appended at the end."""
    version = header.get("version", 1)
    if isinstance(version, int) and not isinstance(version, bool) and version >= 3:
        return header
    migrated = {key: value for key, value in header.items() if key != "version"}
    migrated["version"] = 3
    return migrated
