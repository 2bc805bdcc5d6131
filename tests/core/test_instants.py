"""Timestamps read as pi's JavaScript reads them (``new Date(value).getTime()``), and written as
``toISOString()`` writes them, over JS's whole date range. Expected values were printed by node 20."""

from __future__ import annotations

import math
from typing import Any

import pytest

from sessions_app.sessionfiles.instants import MAX_MS, format_iso, iso_to_ms, js_date_ms

NAN = math.nan


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-03-02T09:15:04.500Z", 1772442904500),
        ("2026-03-02T09:15:04Z", 1772442904000),  # no milliseconds
        ("2026-03-02T09:15Z", 1772442900000),  # no seconds
        ("2026-03-02T09:15:04.5Z", 1772442904500),  # one fractional digit
        ("2026-03-02T09:15:04.123456789Z", 1772442904123),  # more than three: cut, not rounded
        ("2026-03-02T23:59:59.9999Z", 1772495999999),
        ("2026-03-02T09:15:04.500+01:00", 1772439304500),  # offsets
        ("2026-03-02T09:15:04.500-01:30", 1772448304500),
        ("2026-03-02T09:15:04.500+0100", 1772439304500),
        ("2026-03-02T09:15:04.500-23:59", 1772529244500),
        ("2026-03-02t09:15:04.500z", 1772442904500),
        ("2026-03-02", 1772409600000),  # date-only forms are UTC
        ("2026-03", 1772323200000),
        ("2026", 1767225600000),
        ("2026-03T09:15Z", 1772356500000),
        ("2026-03-02T24:00:00Z", 1772496000000),  # the end of a day
        ("2026-02-30", 1772409600000),  # day 30 of February is March 2nd, as JS counts
        ("+002026-03-02T00:00:00Z", 1772409600000),  # six-digit years
        ("+099999-01-01T00:00:00.000Z", 3093496444800000),
        ("-000001-01-01T00:00:00Z", -62198755200000),
        ("0000-01-01T00:00:00.000Z", -62167219200000),  # year 0
        ("+275760-09-13T00:00:00.000Z", MAX_MS),  # the last instant JS knows
        ("-271821-04-20T00:00:00.000Z", -MAX_MS),
    ],
)
def test_iso_forms_read_as_javascript_does(text: str, expected: int) -> None:
    assert js_date_ms(text) == expected
    assert iso_to_ms(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        "garbage",
        "99999-01-01T00:00:00.000Z",  # five-digit years need the signed six-digit form
        "-000000-01-01T00:00:00Z",
        "+275760-09-13T00:00:00.001Z",  # past JS's range
        "2026-13-01",
        "2026-00-10",
        "2026-01-32",
        "2026-03-02T24:00:01Z",
        "2026-03-02T09:60:00Z",
        "2026-03-02T09:15:60Z",
        "2026-03-02T9:15:04Z",
        "2026-03-02T09Z",
        "2026-03-02T09:15:04.500+01",
        "2026-03-02T09:15:04.500+24:00",
        "2026-03-02+01:00",
        " 2026-03-02T09:15:04Z",
        "2026-03-02T09:15:04,5Z",
        "２０２６-03-02",  # digits of other scripts
    ],
)
def test_invalid_dates_are_nan(text: str) -> None:
    assert math.isnan(js_date_ms(text))
    assert iso_to_ms(text) is None


@pytest.mark.parametrize("text", ["2026-03-02 09:15:04Z", "2026-03-02Z", "March 2, 2026", "2026/03/02", "2026-3-2"])
def test_free_form_dates_are_not_read(text: str) -> None:
    """JS's Date also guesses at free-form texts (each of these is March 2nd to node); pi never writes
    them, and pitree reads the ISO forms only."""
    assert math.isnan(js_date_ms(text))


def test_date_time_without_offset_is_read_as_utc() -> None:
    """JS reads it in the local zone of the machine pi runs on; pitree takes UTC, the same everywhere."""
    assert js_date_ms("2026-03-02T09:15:04") == 1772442904000


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, 0),
        (True, 1),
        (False, 0),
        (5, 5),
        (1.5, 1),
        (-1.5, -1),
        (MAX_MS, MAX_MS),
        (MAX_MS + 1, NAN),
        (1e300, NAN),
        (math.inf, NAN),
        ([], NAN),
        ({}, NAN),
    ],
)
def test_other_values_as_new_date_reads_them(value: Any, expected: float) -> None:
    result = js_date_ms(value)
    assert (math.isnan(result) and math.isnan(expected)) or result == expected


@pytest.mark.parametrize(
    ("ms", "text"),
    [
        (1772442904500, "2026-03-02T09:15:04.500Z"),
        (0, "1970-01-01T00:00:00.000Z"),
        (-1, "1969-12-31T23:59:59.999Z"),
        (-62198755200000, "-000001-01-01T00:00:00.000Z"),
        (253402300800000, "+010000-01-01T00:00:00.000Z"),
        (MAX_MS, "+275760-09-13T00:00:00.000Z"),
        (-MAX_MS, "-271821-04-20T00:00:00.000Z"),
    ],
)
def test_format_iso_as_to_iso_string(ms: int, text: str) -> None:
    assert format_iso(ms) == text
    assert iso_to_ms(text) == ms
