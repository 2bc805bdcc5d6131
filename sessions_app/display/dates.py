"""Dates as the reader lives them: in their own time zone, grouped as chat apps group their chats
(Today, Yesterday, Previous 7 days, Previous 30 days, then by month).

The zone is the browser's (``prefs.js`` puts its IANA name in the ``pitree_tz`` cookie); pages are
rendered on the server in it, so that a list is grouped the same way on every load and in its push.
A browser that sent none yet (its very first page) gets UTC.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

ZONE_COOKIE = "pitree_tz"
_ZONE_NAME_CHARS = 64  # the longest IANA names are about 30 characters


def reader_zone(name: str | None) -> tzinfo:
    """The zone named by the browser, or UTC for none, an unknown one, or anything that is not a zone
    name (a cookie is the client's to write)."""
    if not name or len(name) > _ZONE_NAME_CHARS:
        return UTC
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):  # ValueError: a path, not a key
        return UTC


def zone_name(zone: tzinfo) -> str:
    """A key naming ``zone`` (for caches of what is rendered in it)."""
    return getattr(zone, "key", None) or str(zone)


def local_date(epoch_ms: int, zone: tzinfo) -> date:
    return datetime.fromtimestamp(epoch_ms / 1000, zone).date()


def when_group(epoch_ms: int, today: date, zone: tzinfo) -> str:
    """The group of a chat last active at ``epoch_ms`` in a list read on ``today`` (in ``zone``)."""
    day = local_date(epoch_ms, zone)
    if day >= today:
        return "Today"  # a clock ahead of the reader's counts as now
    if day == today - timedelta(days=1):
        return "Yesterday"
    if day >= today - timedelta(days=7):
        return "Previous 7 days"
    if day >= today - timedelta(days=30):
        return "Previous 30 days"
    return day.strftime("%B %Y")
