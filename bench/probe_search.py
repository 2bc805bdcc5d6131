"""Search with the shapes an attacker's probe used (issue 26): one-letter and common queries over a
session of one 31 MB message, one of 2,000 entries of 8 KB, and the same two holding "a a a …" (every
word the one-letter query: the most matches a text can hold).

Side by side on one index (built once, by today's code; the schema is the baseline's too): today's
``SearchIndex.search`` and the baseline's (``git merge-base HEAD main``, or ``$PITREE_BENCH_BASELINE``),
which had FTS5's ``snippet()`` cut each hit's snippet, in time growing with the square of the matches
in its text. Interleaved, ``REPS`` rounds, medians. A baseline query still running after ``CAP``
seconds is interrupted (``sqlite3`` ``interrupt``): its figure is then "> CAP". Also today's whole
``search()`` as the page calls it (listing, catch-up, query), and the CPU time of three such searches
run at once, next to one.

Target: today's slowest query ≤ 1 s (the probe's worst took 42–76 s of CPU).
"""

from __future__ import annotations

import sqlite3
import sys
import threading
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _baseline
import _common as C
import _gen

from sessions_app.search.index import SearchIndex
from sessions_app.search.results import search
from sessions_app.sessionfiles.catalog import Catalog

REPS = 3
CAP = 15.0
TARGET = 1.0


def _queries() -> list[tuple[str, str, dict[str, Any]]]:
    """(label, query, options of ``SearchIndex.search``)."""
    ids = {name: _gen.probe_session(name)[0] for name in ("message", "entries", "dense-message", "dense-entries")}
    return [
        ('"a", every session', "a", {}),
        ('"a", the 31 MB message', "a", {"session": ids["message"]}),
        ('"a", 2,000 × 8 KB', "a", {"session": ids["entries"]}),
        ('"a", 31 MB of "a a a"', "a", {"session": ids["dense-message"]}),
        ('"a", 2,000 × 8 KB of "a a a"', "a", {"session": ids["dense-entries"]}),
        ('"x", every session', "x", {}),
        ('"the", every session', "the", {}),
        ('"ses" (prefix), every session', "ses", {}),
        ('"a", a share\'s view (every hit weighed)', "a", {"keep": lambda path, entry: True}),
    ]


def main() -> int:
    report = C.Report("probe_search", "Search with the probe's shapes: 31 MB message, 2,000 × 8 KB, one letter")
    with _gen.copied_folder("pitree-probe-search-", _gen.probe_folder()) as (scratch, files, size):
        report.line(f"folder: {len(files)} sessions, {size / 1e6:.1f} MB (the probe's shapes)")
        return _measure(report, scratch)


def _measure(report: C.Report, scratch: Path) -> int:
    root = scratch / "sessions"
    catalog = Catalog(root)
    index = SearchIndex(scratch / "search.sqlite3")
    build = index.catch_up(catalog.sessions())
    report.line(f"index built in {C.fmt_time(build.seconds)}: {build.entries:,} entries")

    baseline = _baseline.load_app_module("search.index")
    if baseline is None:
        return report.finish()
    commit, old_index = baseline
    old = old_index.SearchIndex(scratch / "search.sqlite3")
    queries = _queries()
    now: dict[str, list[float]] = {}
    then: dict[str, list[float]] = {}
    capped: set[str] = set()
    for rep in range(REPS):
        for label, query, options in queries if rep % 2 == 0 else list(reversed(queries)):
            now.setdefault(label, []).append(C.timed(partial(index.search, query, **options)))
            if label in capped or (then.get(label) and C.median(then[label]) > 2):
                continue  # once is enough for a query that takes seconds
            seconds = _capped(old, partial(old.search, query, **options))
            then.setdefault(label, []).append(seconds)
            if seconds >= CAP:
                capped.add(label)

    report.line()
    report.line(f"{'query, median of ' + str(REPS):<42} {'today':>9} {'baseline ' + commit:>17} {'ratio':>9}")
    for label, _, _ in queries:
        today, before = C.median(now[label]), C.median(then[label])
        shown = f"> {CAP:.0f} s" if label in capped else C.fmt_time(before)
        ratio = f"{'> ' if label in capped else ''}{before / today:,.{0 if before >= 10 * today else 2}f}×"
        report.line(f"{label:<42} {C.fmt_time(today):>9} {shown:>17} {ratio:>9}")
    worst_label = max(now, key=lambda label: C.median(now[label]))
    worst = C.median(now[worst_label])

    full = [C.timed(partial(search, index, catalog, "a")) for _ in range(REPS)]
    report.line()
    report.line(f'today\'s whole search() for "a" (listing, catch-up, query): {C.fmt_time(C.median(full))}')
    one, three = _cpu_of(index, 1), _cpu_of(index, 3)
    report.line(f'CPU time of "a" searches at once: 1 → {C.fmt_time(one)}, 3 → {C.fmt_time(three)}')

    report.figure(f"slowest query today ({worst_label})", C.fmt_time(worst), f"≤ {TARGET:.0f} s", worst <= TARGET)
    slowest_then = max(C.median(then[label]) for label, _, _ in queries)
    report.figure(
        "slowest query, baseline",
        f"> {CAP:.0f} s (interrupted)" if capped else C.fmt_time(slowest_then),
    )
    report.figure('whole search() for "a", today', C.fmt_time(C.median(full)))
    return report.finish()


def _capped(old: Any, call: Callable[[], object]) -> float:
    """Seconds ``call`` takes, or CAP when it was interrupted there."""
    db: sqlite3.Connection = old._db()
    timer = threading.Timer(CAP, db.interrupt)
    timer.start()
    try:
        return C.timed(call)
    except Exception as error:
        if "interrupted" not in str(error):
            raise
        return CAP
    finally:
        timer.cancel()


def _cpu_of(index: SearchIndex, count: int) -> float:
    """The process's CPU time for ``count`` searches for "a" run at once, one thread each."""
    threads = [threading.Thread(target=index.search, args=("a",)) for _ in range(count)]
    start = time.process_time()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.process_time() - start


if __name__ == "__main__":
    sys.exit(main())
