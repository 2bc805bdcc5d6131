"""``ls``: sessions grouped by workspace (cwd), forks nested under the session they came from."""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from typing import Any

from ..sessionfiles.catalog import SessionInfo, info_fields
from .transcript import terminal_line

MIN_SHORT_ID = 8
TITLE_WIDTH = 72
NO_CWD = "(no cwd)"


def age(then_ms: int, now_ms: int) -> str:
    """How long ago, in the largest unit that fits: ``just now``, ``3 min ago``, ``2 days ago``…"""
    seconds = max(0, (now_ms - then_ms) // 1000)
    if seconds < 60:
        return "just now"
    for size, unit in (
        (365 * 86400, "year"),
        (30 * 86400, "month"),
        (7 * 86400, "week"),
        (86400, "day"),
        (3600, "hour"),
        (60, "min"),
    ):
        if seconds >= size:
            count = seconds // size
            plural = "s" if count > 1 and unit != "min" else ""
            return f"{count} {unit}{plural} ago"
    raise AssertionError("unreachable")


def short_id_length(ids: Sequence[str], minimum: int = MIN_SHORT_ID) -> int:
    """The shortest prefix length (at least ``minimum``) at which every id in the listing is distinct.

    UUIDv7 session ids created close together share their first 8 characters (a millisecond clock),
    so a fixed 8 would not tell them apart.
    """
    unique = sorted(set(ids))
    length = minimum
    for left, right in itertools.pairwise(unique):
        common = 0
        for a, b in zip(left, right):
            if a != b:
                break
            common += 1
        length = max(length, common + 1)
    return min(length, max((len(i) for i in unique), default=minimum))


def grouped(forest: Sequence[tuple[SessionInfo, int]]) -> list[tuple[str, list[tuple[SessionInfo, int]]]]:
    """The forest cut into workspaces: each fork tree goes with its top session's cwd; groups keep the
    forest's order (the most recently active first)."""
    groups: dict[str, list[tuple[SessionInfo, int]]] = {}
    current = NO_CWD
    for info, depth in forest:
        if depth == 0:
            current = info.cwd or NO_CWD
        groups.setdefault(current, []).append((info, depth))
    return list(groups.items())


def ls_lines(forest: Sequence[tuple[SessionInfo, int]], now_ms: int) -> Iterator[str]:
    """Text listing: a cwd line per workspace, then ``short-id  N msgs  age  title`` per session,
    the title indented under its parent for forks."""
    width = short_id_length([info.id for info, _ in forest])
    counts = [_messages(info.message_count) for info, _ in forest]
    count_width = max((len(c) for c in counts), default=0)
    ages = [age(info.modified_ms, now_ms) for info, _ in forest]
    age_width = max((len(a) for a in ages), default=0)
    columns = {info.path: (count, when) for (info, _), count, when in zip(forest, counts, ages)}
    first = True
    for cwd, members in grouped(forest):
        if not first:
            yield ""
        first = False
        yield terminal_line(cwd)  # a cwd is any string: a line break would split the group's line
        for info, depth in members:
            count, when = columns[info.path]
            nest = "   " * (depth - 1) + "↳ " if depth else ""
            title = terminal_line(info.title, TITLE_WIDTH)
            short = terminal_line(info.id)[:width]  # an id may hold line breaks or escape sequences
            yield f"  {short:<{width}}  {count:>{count_width}}  {when:<{age_width}}  {nest}{title}"


def ls_json(forest: Sequence[tuple[SessionInfo, int]]) -> list[dict[str, Any]]:
    """pi's SessionInfo fields per session (``catalog.info_fields``), plus ``shortId`` and ``depth``
    (0 for a session that is no fork of a listed one), in listing order."""
    width = short_id_length([info.id for info, _ in forest])
    return [{**info_fields(info), "shortId": info.id[:width], "depth": depth} for info, depth in forest]


def _messages(count: int) -> str:
    return f"{count} msg" if count == 1 else f"{count} msgs"
