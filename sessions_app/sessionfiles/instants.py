"""Points in time as pi's JavaScript sees them: ``new Date(value).getTime()`` and ``toISOString()``.

pi orders a node's children with ``new Date(a.timestamp).getTime() - new Date(b.timestamp).getTime()``
and dates its sessions the same way, so reading a timestamp "like Python does" would order siblings
differently from pi: string order gets offsets (``+01:00``) and a missing millisecond part wrong, and
``datetime`` refuses years outside 1..9999 that JS accepts. Everything here is integer arithmetic over
JS's own range (±100,000,000 days around the epoch), so no value can raise.

JS reads the ISO forms below exactly; its other, free-form formats ("March 2, 2026", "2026/03/02",
"2026-03-02 09:15Z" with a space) are not read and count as invalid (NaN). A date-time without an offset is local time in JS, which depends on the
machine pi runs on; here it is UTC, so that the result does not depend on where pitree runs.
"""

from __future__ import annotations

import math
import re
import time
from typing import Any

MAX_MS = 8_640_000_000_000_000
"""JS Date's range: 100,000,000 days either side of 1970-01-01 (``TimeClip``)."""

_DAY_MS = 86_400_000
_YEAR_10000_MS = 253_402_300_800_000

# The ISO forms V8 reads (checked against node): a 4-digit or signed 6-digit year, optional month and
# day; optional time (``T`` or ``t``) with optional seconds and a fraction of any length; ``Z`` or an
# offset with or without its colon. Digits are ASCII only (``\d`` would take other scripts' digits).
_ISO = re.compile(
    r"(?P<year>[+-][0-9]{6}|[0-9]{4})(?:-(?P<month>[0-9]{2})(?:-(?P<day>[0-9]{2}))?)?"
    r"(?:[Tt](?P<hour>[0-9]{2}):(?P<minute>[0-9]{2})(?::(?P<second>[0-9]{2})(?:\.(?P<fraction>[0-9]+))?)?)?"
    r"(?P<zone>[Zz]|(?P<sign>[+-])(?P<zone_hour>[0-9]{2}):?(?P<zone_minute>[0-9]{2}))?"
)


def now_ms() -> int:
    """``Date.now()``: the current time in milliseconds since the epoch."""
    return time.time_ns() // 1_000_000


def js_date_ms(value: Any) -> float:
    """``new Date(value).getTime()``: milliseconds since the epoch, or NaN for an invalid date.

    Strings are read as above; ``null`` is 0 and booleans 0/1, as in JS; numbers are truncated and
    kept when inside JS's range. Arrays and objects count as invalid (JS would read their string form,
    which nothing that writes sessions produces).
    """
    if isinstance(value, str):
        return _parse(value)
    if value is None or isinstance(value, bool):
        return float(bool(value))
    if isinstance(value, int | float):
        return _clip(value)
    return math.nan


def iso_to_ms(value: Any) -> int | None:
    """``js_date_ms`` as an int, None where JS would give NaN."""
    ms = js_date_ms(value)
    return None if math.isnan(ms) else int(ms)


def format_iso(ms: int) -> str:
    """``new Date(ms).toISOString()``: UTC, milliseconds, ``Z``; years outside 0..9999 with a sign and six digits."""
    if 0 <= ms < _YEAR_10000_MS:  # the C library's calendar, a few times faster (imports format one per entry)
        seconds, millis = divmod(ms, 1000)
        return f"{time.strftime('%Y-%m-%dT%H:%M:%S', time.gmtime(seconds))}.{millis:03d}Z"
    days, rest = divmod(ms, _DAY_MS)
    year, month, day = _civil_from_days(days)
    hours, rest = divmod(rest, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    seconds, millis = divmod(rest, 1000)
    year_text = f"{year:04d}" if 0 <= year <= 9999 else f"{'+' if year > 0 else '-'}{abs(year):06d}"
    return f"{year_text}-{month:02d}-{day:02d}T{hours:02d}:{minutes:02d}:{seconds:02d}.{millis:03d}Z"


def _parse(text: str) -> float:
    match = _ISO.fullmatch(text)
    if match is None or match["year"] == "-000000":
        return math.nan
    year = int(match["year"])
    month = int(match["month"] or 1)
    day = int(match["day"] or 1)
    hour = int(match["hour"] or 0)
    minute = int(match["minute"] or 0)
    second = int(match["second"] or 0)
    millis = int((match["fraction"] or "0")[:3].ljust(3, "0"))  # V8 keeps the first three digits
    if not (1 <= month <= 12 and 1 <= day <= 31 and minute <= 59 and second <= 59):
        return math.nan
    if hour > 24 or (hour == 24 and (minute or second or millis)):
        return math.nan
    offset = 0
    if match["zone"] is not None and match["hour"] is None:  # a zone needs a time ("2026-03-02Z" is free-form)
        return math.nan
    if match["sign"] is not None:
        zone_hour, zone_minute = int(match["zone_hour"]), int(match["zone_minute"])
        if zone_hour > 23 or zone_minute > 59:
            return math.nan
        offset = (zone_hour * 60 + zone_minute) * 60_000 * (1 if match["sign"] == "+" else -1)
    # Day 31 of a 30-day month is the 1st of the next, as JS's MakeDay counts it.
    days = _days_from_civil(year, month, 1) + day - 1
    return _clip(days * _DAY_MS + ((hour * 60 + minute) * 60 + second) * 1000 + millis - offset)


def _clip(ms: float) -> float:
    """JS ``TimeClip``: NaN outside the range (and for infinities), else truncated towards zero."""
    if isinstance(ms, float) and not math.isfinite(ms):
        return math.nan
    return float(int(ms)) if abs(ms) <= MAX_MS else math.nan


def _days_from_civil(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm; any year)."""
    year -= month <= 2
    era = year // 400
    year_of_era = year - era * 400
    day_of_year = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    day_of_era = year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + day_of_year
    return era * 146097 + day_of_era - 719468


def _civil_from_days(days: int) -> tuple[int, int, int]:
    """The inverse of ``_days_from_civil``."""
    days += 719468
    era = days // 146097
    day_of_era = days - era * 146097
    year_of_era = (day_of_era - day_of_era // 1460 + day_of_era // 36524 - day_of_era // 146096) // 365
    day_of_year = day_of_era - (365 * year_of_era + year_of_era // 4 - year_of_era // 100)
    shifted_month = (5 * day_of_year + 2) // 153
    day = day_of_year - (153 * shifted_month + 2) // 5 + 1
    month = shifted_month + (3 if shifted_month < 10 else -9)
    return year_of_era + era * 400 + (month <= 2), month, day
