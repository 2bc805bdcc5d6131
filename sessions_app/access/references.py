"""A line a scoped view holds that names an entry the view does not hold: what the view shows of it.

A scoped share (``scoped.py``) holds whole lines of the file, but some lines point elsewhere: a
``label`` line sits wherever the position was when it was written and may name an entry of another
branch (labels are the session's, not a branch's: docs/format.md §4.4); a ``branch_summary`` names
the tip of the branch it left (``fromId``, §3.6); a ``compaction`` the entry its context keeps from
(``firstKeptEntryId``, §3.5); a ``context_edit`` the message it edits (§3.11); a ``leaf`` marker the
position before the move (``parentId``, informational, §5.3). Such a line stays in the view, since
what follows it may hang under it (pi's label lines are nodes like any other), but without the
reference, and without what only describes the entry it named (a label's text, an edit's
replacement). None of these fields places the line in the tree, so the view's tree is the file's.

The cleaned line keeps the original's length (padded with spaces, which JSON allows after a value): a
scoped index keeps every line at its own byte offset and length, which the pages' cursors and the
push are counted in (docs/architecture.md §6.3).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..sessionfiles.entries import dump_json
from ..sessionfiles.lines import BadLine, loads_line

# Per type: the key that names another entry, and the keys dropped with it (they only describe that
# entry); none dropped: the key stays, set to null (a leaf marker's ``parentId`` must be there).
REFERENCES: dict[str, tuple[str, tuple[str, ...]]] = {
    "label": ("targetId", ("targetId", "label")),
    "branch_summary": ("fromId", ("fromId",)),
    "compaction": ("firstKeptEntryId", ("firstKeptEntryId",)),
    "context_edit": ("targetId", ("targetId", "replacement")),
    "leaf": ("parentId", ()),
}

DROP = b""
"""What ``cleaned_line`` answers for a line that cannot be cleaned within its length: the view leaves
it out (it then shows less, never more)."""


def cleaned_line(kind: str, line: bytes, holds: Callable[[str], bool]) -> bytes | None:
    """``line`` (of type ``kind``, without its newline) as a view that holds the entries ``holds``
    accepts may show it: None when it names nothing the view lacks (shown as stored), else the line
    without the reference, padded to the same length (``DROP`` if that cannot be done)."""
    reference = REFERENCES.get(kind)
    if reference is None:
        return None
    key, dropped = reference
    try:
        entry: Any = loads_line(line)
    except BadLine:
        return DROP
    named = entry.get(key) if isinstance(entry, dict) else None
    if named is None or (isinstance(named, str) and holds(named)):
        return None
    shown = {name: value for name, value in entry.items() if name not in dropped} if dropped else {**entry, key: None}
    text = dump_json(shown)
    return text.ljust(len(line)) if len(text) <= len(line) else DROP
