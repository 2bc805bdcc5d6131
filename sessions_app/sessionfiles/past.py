"""A session as it was: a file only ever grows, so its first bytes are every earlier state of it.

The state after line N is the index of the file's lines up to N (entries, branches, labels, name and
the position the file had then), built as a cold open builds one, from those bytes only: opening it
costs at most what opening the file costs. The state at a moment is the one after the last line whose
entries, and every entry before it, were written by then.
"""

from __future__ import annotations

import math
import os
from typing import Any

from .errors import ReadOnlySession
from .index import IndexBuilder, SessionIndex
from .store import SessionFile, feed_file, reopen_regular


def last_line(index: SessionIndex) -> int:
    """The file's line count as far as its index reaches (the header's line when it has no entry)."""
    count = len(index)
    return index.line_numbers[count - 1] if count else 1


def line_offset(index: SessionIndex, line: int) -> int:
    """Where the state after line ``line`` ends in the file: the end of the last entry's line at or
    before it (lines that are no entries change nothing)."""
    low, high = 0, len(index)  # the first row past ``line``
    while low < high:
        middle = (low + high) // 2
        if index.line_numbers[middle] <= line:
            low = middle + 1
        else:
            high = middle
    if low == 0:
        return index.offsets[0] if len(index) else index.offset
    return index.offsets[low - 1] + index.lengths[low - 1] + 1


def line_at(index: SessionIndex, ms: int) -> int:
    """The last line of the state at ``ms`` (milliseconds since the epoch): the line before the first
    entry written later (a time that does not read counts as not later)."""
    for row in range(len(index)):
        instant = index.instant(row)
        if not math.isnan(instant) and instant > ms:
            return index.line_numbers[row] - 1
    return last_line(index)


class PastSession(SessionFile):
    """``source`` as it was after its line ``line``: read-only, never refreshed (its bytes do not
    change); ``view_key`` keeps what caches draw from it apart from the file as it is now."""

    def __init__(self, source: SessionFile, line: int) -> None:
        # No SessionFile.__init__: the index is the one of the file's first bytes, built here.
        self.source = source
        self.path = source.path
        self.within = source.within
        self.fsync = source.fsync
        self.max_line_bytes = source.max_line_bytes
        self.line = line
        self.offset = line_offset(source.index, line)
        self.view_key = ("past", self.offset)
        builder = IndexBuilder(str(self.path), max_line_bytes=self.max_line_bytes)
        fd, _ = reopen_regular(self.path)
        try:
            feed_file(fd, builder, self.offset, at_eof=False)
            builder.commit()
        finally:
            os.close(fd)
        self.index = builder.snapshot()

    def refresh(self) -> list[int]:
        return []

    def _write(self, lines: Any) -> Any:
        raise ReadOnlySession(f"{self.path}: a past state of the session is read-only; fork it to continue")
