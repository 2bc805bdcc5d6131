"""Where a long session's branch may be jumped to: its start, each compaction, each labelled entry,
and the entry nearest a date, each shown by ``transcript.window_page`` without loading what lies
between."""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta, tzinfo

from ..sessionfiles.index import SessionIndex
from ..sessionfiles.instants import iso_to_ms


@dataclass(frozen=True)
class Jump:
    """One place to jump to: its entry and what the menu calls it."""

    entry_id: str
    text: str


@dataclass
class Jumps:
    start: str | None = None
    compactions: list[Jump] = field(default_factory=list)
    labels: list[Jump] = field(default_factory=list)


def jumps(index: SessionIndex, path_rows: list[int], zone: tzinfo = UTC) -> Jumps:
    """The places on a branch (``path_rows``, root first) that a reader may jump to, oldest first; a
    compaction named by when it was written, in the reader's ``zone``."""
    found = Jumps(start=index.ids[path_rows[0]] if path_rows else None)
    for row in path_rows:
        entry_id = index.ids[row]
        if index.types[row] == "compaction":
            found.compactions.append(Jump(entry_id, _when(index, row, zone)))
        label = index.labels.get(entry_id)
        if label is not None:
            found.labels.append(Jump(entry_id, label[0]))
    return found


def nearest_to_date(index: SessionIndex, path_rows: list[int], day: date, zone: tzinfo = UTC) -> int:
    """The index in ``path_rows`` (root first, not empty) of the entry nearest ``day`` as the reader's
    ``zone`` counts days: the first one written that day, else the one closest in time before or after
    it. The branch is searched in halves, its timestamps taken as growing along it (an entry without
    one counts as its parent's)."""
    start = datetime.combine(day, datetime.min.time(), tzinfo=zone)
    start_ms = int(start.timestamp() * 1000)
    end_ms = int((start + timedelta(days=1)).timestamp() * 1000)
    stamps = _Stamps(index, path_rows)
    after = bisect.bisect_left(stamps, start_ms)
    if after == len(path_rows):
        return after - 1
    if after == 0 or stamps[after] < end_ms:
        return after
    return after if stamps[after] - end_ms < start_ms - stamps[after - 1] else after - 1


class _Stamps:
    """The branch's timestamps in milliseconds, parsed only where the search looks."""

    def __init__(self, index: SessionIndex, path_rows: list[int]) -> None:
        self._index, self._rows = index, path_rows

    def __len__(self) -> int:
        return len(self._rows)

    def __getitem__(self, at: int) -> int:
        for back in range(at, -1, -1):
            ms = iso_to_ms(self._index.timestamps[self._rows[back]])
            if ms is not None:
                return ms
        return 0


def _when(index: SessionIndex, row: int, zone: tzinfo) -> str:
    """When an entry was written, in ``zone``, for the menu; empty when its timestamp cannot be read."""
    ms = iso_to_ms(index.timestamps[row])
    return datetime.fromtimestamp(ms / 1000, zone).strftime("%Y-%m-%d %H:%M") if ms is not None else ""
