"""A node's children in pi's order: ``new Date(a.timestamp).getTime() - new Date(b.timestamp).getTime()``,
ties in file order; roots in file order. String order gets each case below wrong.

Where a timestamp is no valid date, pi's comparator answers NaN, which JS's sort takes for "equal";
the order then is what the sort algorithm makes of it. tests/pi_compat/test_child_order.py checks the
same cases, and random ones, against pi itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sessions_app.sessionfiles import tree
from sessions_app.sessionfiles.store import SessionFile

PARENT_TS = "2026-03-01T00:00:00.000Z"


def children_ids(write_file: Any, L: Any, *stamps: Any, missing: tuple[str, ...] = ()) -> list[str]:
    """Children ``c0, c1, …`` of one parent, in file order, with these timestamps (``missing``: no key)."""
    lines: list[Any] = [L.header(), L.entry("p", None, ts=PARENT_TS)]
    for number, stamp in enumerate(stamps):
        child = L.entry(f"c{number}", "p", ts=stamp)
        if f"c{number}" in missing:
            del child["timestamp"]
        lines.append(child)
    session = SessionFile(write_file(*lines), fsync=False)
    index = session.index
    ids = [index.ids[row] for row in index.children(session.row_of("p"))]
    shown = tree.tree(index)[0]["children"]
    assert [node["id"] for node in shown] == ids  # getTree's shape agrees with children()
    return ids


def test_offsets_count(write_file: Any, L: Any) -> None:
    # 10:00+01:00 is 09:00Z, half an hour before the other; as strings it would sort last.
    assert children_ids(write_file, L, "2026-03-02T09:30:00.000Z", "2026-03-02T10:00:00.000+01:00") == ["c1", "c0"]


def test_seconds_without_milliseconds(write_file: Any, L: Any) -> None:
    # "04.500Z" < "04Z" as strings ("." before "Z"), but 09:15:04 is the earlier instant.
    assert children_ids(write_file, L, "2026-03-02T09:15:04.500Z", "2026-03-02T09:15:04Z") == ["c1", "c0"]


def test_more_than_three_fractional_digits_are_cut(write_file: Any, L: Any) -> None:
    # Both are 09:15:04.123: a tie, so file order (as strings, "…1239Z" would come first).
    assert children_ids(write_file, L, "2026-03-02T09:15:04.123Z", "2026-03-02T09:15:04.1239Z") == ["c0", "c1"]


def test_date_only_is_midnight_utc(write_file: Any, L: Any) -> None:
    # 2026-03-01T23:00-02:00 is 01:00Z on the 2nd: after midnight of the 2nd.
    assert children_ids(write_file, L, "2026-03-01T23:00:00-02:00", "2026-03-02") == ["c1", "c0"]


def test_years_beyond_four_digits_and_year_zero(write_file: Any, L: Any) -> None:
    stamps = ("+010000-01-01T00:00:00.000Z", "2026-03-02T00:00:00.000Z", "0000-01-01T00:00:00.000Z")
    assert children_ids(write_file, L, *stamps) == ["c2", "c1", "c0"]


def test_null_and_numbers_as_js_dates_them(write_file: Any, L: Any) -> None:
    # new Date(null) is the epoch, new Date(5) 5 ms after it.
    assert children_ids(write_file, L, "2026-03-02T00:00:00.000Z", 5, None) == ["c2", "c1", "c0"]


def test_an_invalid_date_is_equal_to_everything(write_file: Any, L: Any) -> None:
    # NaN compares "equal" to both neighbours, so the sort sees one ascending run: file order stays.
    assert children_ids(write_file, L, "2026-03-02T10:00:00Z", "not a date", "2026-03-02T09:00:00Z") == [
        "c0",
        "c1",
        "c2",
    ]
    # A descending run (c0 > c1) is reversed, then c2 (NaN) is inserted after everything "equal" to it.
    assert children_ids(write_file, L, "2026-03-02T10:00:00Z", "2026-03-02T09:00:00Z", "garbage") == [
        "c1",
        "c0",
        "c2",
    ]
    # A missing timestamp is NaN too (new Date(undefined)).
    assert children_ids(write_file, L, "2026-03-02T10:00:00Z", "x", "2026-03-02T09:00:00Z", missing=("c1",)) == [
        "c0",
        "c1",
        "c2",
    ]


def test_order_holds_when_children_arrive_one_refresh_at_a_time(tmp_path: Path, L: Any) -> None:
    """Appended siblings are placed among the earlier ones as a full sort of all of them places them."""
    stamps = [
        "2026-03-02T10:00:00.000Z",
        "2026-03-02T10:30:00.000+01:00",
        "bad",
        "2026-03-02T09:00:00Z",
        "2026-03-02",
        "2026-03-02T09:00:00.000Z",
    ]
    path = tmp_path / "grow.jsonl"
    path.write_bytes(L.dump(L.header()) + L.dump(L.entry("p", None, ts=PARENT_TS)))
    grown = SessionFile(path, fsync=False)
    for number, stamp in enumerate(stamps):
        with open(path, "ab") as handle:
            handle.write(L.dump(L.entry(f"c{number}", "p", ts=stamp)))
        grown.refresh()
        whole = SessionFile(path, fsync=False)
        assert grown.index.children(0) == whole.index.children(0)
    assert [grown.index.ids[row] for row in grown.index.children(0)] == ["c4", "c3", "c5", "c1", "c0", "c2"]


def test_roots_keep_file_order(write_file: Any, L: Any) -> None:
    path = write_file(L.header(), L.entry("late", None, ts="2026-03-03T00:00:00Z"), L.entry("early", None, ts="2026"))
    index = SessionFile(path, fsync=False).index
    assert [index.ids[row] for row in index.roots] == ["late", "early"]


def test_order_children_orders_any_subset_of_siblings(write_file: Any, L: Any) -> None:
    """What a filtered tree view uses: the same comparator, over the rows it keeps."""
    path = write_file(
        L.header(),
        L.entry("p", None, ts=PARENT_TS),
        L.entry("a", "p", ts="2026-03-02T10:00:00+01:00"),
        L.entry("b", "p", ts="2026-03-02T08:00:00Z"),
        L.entry("c", "p", ts="2026-03-02T09:30:00Z"),
    )
    session = SessionFile(path, fsync=False)
    index = session.index
    a, c = session.row_of("a"), session.row_of("c")
    assert index.order_children([c, a]) == [a, c]
