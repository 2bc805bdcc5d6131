"""A branch as a list to pick an entry from (the share dialog): each of its messages by role and a
one-line preview, so a reader points at an entry instead of typing its id."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..sessionfiles.store import SessionFile
from ..sessionfiles.tree import latest_position_under, path
from .entries import preview

PREVIEW_WIDTH = 90
# The rows listed at most, around the entry picked (the newest, when none is): a radio button costs
# Django's widget about half a millisecond to render, so a branch of 2,000 messages listed whole took
# a second and a half and half a megabyte. Share… in an entry's actions lists the rows around it.
SHOWN = 120
# What a reader points a share at: what was said, not the records of settings around it (a model
# change, a label), which a row could only show by their type.
LISTED = frozenset({"message", "custom_message", "compaction", "branch_summary"})
ROLES = {"user": "User", "assistant": "Assistant", "toolResult": "Tool result", "bashExecution": "Shell"}
TYPES = {"custom_message": "Note", "compaction": "Compaction", "branch_summary": "Branch summary"}


@dataclass(frozen=True)
class Listed:
    entry_id: str
    role: str
    preview: str


@dataclass(frozen=True)
class Branch:
    rows: list[Listed] = field(default_factory=list)
    earlier: int = 0  # rows of the branch before those listed
    later: int = 0  # and after them


def branch_through(session: SessionFile, entry_id: str | None) -> Branch:
    """The branch through ``entry_id`` from its root to its latest entry (through the file's position
    when ``entry_id`` is None or not in the session), its rows around ``entry_id`` listed; ``entry_id``
    is listed whatever its type, so that what a page pointed at is always there to pick."""
    index = session.index
    row = index.row(entry_id) if entry_id else None
    end = latest_position_under(index, row) if row is not None else index.leaf_row
    rows = [at for at in path(index, end) if index.types[at] in LISTED or at == row]
    middle = rows.index(row) if row is not None else len(rows)
    start = max(0, min(middle - SHOWN // 2, len(rows) - SHOWN))
    shown = rows[start : start + SHOWN]
    listed = []
    for at, entry in zip(shown, session.entries(shown)):
        kind = index.types[at]
        role = ROLES.get(index.roles[at] or "", "Message") if kind == "message" else TYPES.get(kind, kind)
        listed.append(Listed(index.ids[at], role, preview(entry, PREVIEW_WIDTH) or "(empty)"))
    return Branch(listed, start, len(rows) - start - len(shown))
