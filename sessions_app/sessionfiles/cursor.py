"""Cursors: how far into its file a reader's copy reaches, and which version of the file it counts in.

A page carries a cursor (a byte offset) and the id of the line that ends there; the push path cuts its
batches at the same offsets, and a tab that reconnects names both, so the feed sends exactly what the
tab lacks (no gap, no duplicate) or tells that the file is another one now (docs/architecture.md §6.3).
"""

from __future__ import annotations

import bisect

from .index import SessionIndex


def cursor_of(index: SessionIndex) -> int:
    """How far into its file an index reflects: the end of its last entry's line (0 before any). A page
    carries this as its cursor, and batches are cut at it, so both count alike."""
    count = len(index)
    return index.offsets[count - 1] + index.lengths[count - 1] + 1 if count else 0


def cursor_id(index: SessionIndex) -> str:
    """The id of the line that ends at ``cursor_of(index)``: the last entry's, or before any, the
    header's. A page carries it with its cursor, so that its tab can tell the feed which version of the
    file that cursor counts in (``reflects``)."""
    count = len(index)
    return index.ids[count - 1] if count else _header_id(index)


def reflects(index: SessionIndex, cursor: int, line_id: str) -> bool:
    """Whether a page whose content ends at byte ``cursor`` with the line ``line_id`` came from the file
    ``index`` reads: a line of it ends exactly there and has that id (pi and pitree give each line of a
    file an id of its own, docs/format.md §1.4; a file replaced or rewritten has other lines there). At
    0 the page reflects the header alone."""
    if cursor == 0:
        return line_id == _header_id(index)
    row = bisect.bisect_left(index.offsets, cursor, 0, len(index)) - 1
    return row >= 0 and index.offsets[row] + index.lengths[row] + 1 == cursor and index.ids[row] == line_id


def _header_id(index: SessionIndex) -> str:
    return str((index.header or {}).get("id", ""))
