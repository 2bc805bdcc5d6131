"""Listing 3,000 sessions in pi's layout with ``Catalog(root).sessions()``, cold and warm, and ``forest()``.

The folder (generated once): 3,000 small/medium sessions (median ~20 entries, a tail to several
hundred) in 12 ``--<cwd>--`` folders, ~12 % of them forks whose header names their source in
``parentSession``. Files are in the page cache (one untimed listing first), so this measures Python,
not the disk. Side by side:
- cold: a new ``Catalog`` each time, without a cache folder — every file opened and read
  (``listing.read_info``: the facts a list shows, no index);
- restart: a new ``Catalog`` given a cache folder that an earlier listing filled (``listcache``):
  what a process restarted on an unchanged folder pays;
- first listing with an empty cache folder: cold, plus writing the cache;
- warm: the same ``Catalog`` again — every file only stat'ed, unchanged ones reused;
- the floor under warm: ``os.scandir`` of the folders + ``stat`` of every ``.jsonl`` file;
- the floor under cold: every file read whole and each line's head decoded by the index's typed
  decoder, nothing checked or kept — what any reader that counts a file's messages must at least do
  (a line that is no JSON must not count, so every line is parsed);
- the validating floor: what any reader that validates a file as the listing does must at least do
  (``validating_floor``): read it, check its UTF-8, decode the header and every line's head, and tell
  a reused id; nothing else (no facts, no ``SessionInfo``, no folder scan);
- ``forest(infos)`` (nesting forks under their parents, from a listing in hand) and ``forest()``;
- cold and warm listings by the baseline core (``_baseline``: the code this branch started from);
- what a session page asks of the catalog on each view: ``locate(id)`` and the page's lineage
  (``parent_of`` + ``forks_of`` of a fork), warm, next to what the page did at the baseline (a full
  warm listing, then the lineage from it).

Targets: a cold listing (nothing remembered) takes ≤ 300 ms, a warm one ≤ 100 ms.
"""

from __future__ import annotations

import io
import os
import shutil
import sys
import tempfile
from itertools import filterfalse
from operator import attrgetter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _baseline
import _common as C
import _gen

from sessions_app.sessionfiles.catalog import Catalog, session_info
from sessions_app.sessionfiles.lines import decode_known_head, loads_line
from sessions_app.sessionfiles.store import SessionFile

COLD_REPS = 5
COLD_PAIRS = 7  # cold listings next to the baseline's, back to back
CACHE_REPS = 7
WARM_REPS = 20
_ID = attrgetter("id")


def bare_walk(root: Path) -> int:
    count = 0
    with os.scandir(root) as it:
        folders = [e.path for e in it if e.is_dir()]
    for folder in folders:
        with os.scandir(folder) as it:
            for entry in it:
                if entry.name.endswith(".jsonl"):
                    entry.stat()
                    count += 1
    return count


def read_and_decode(files: list[Path]) -> int:
    """The floor under a cold listing: read each file, decode every entry line's head, keep nothing."""
    lines = 0
    for path in files:
        with open(path, "rb") as handle:
            entries = handle.read().split(b"\n")[1:-1]
        lines += len(list(map(decode_known_head, entries)))
    return lines


def validating_floor(files: list[Path]) -> int:
    """The floor under a cold listing that checks each file as the listing does: read it whole (one
    ``read``), cut its lines (``readlines``, as the listing does), decode the lines that are not ASCII
    (the UTF-8 check), the header with orjson and every other line's head, and count the distinct ids.
    Nothing else: no counts, times, names or labels, no first message, no ``SessionInfo``."""
    valid = 0
    for path in files:
        fd = os.open(path, os.O_RDONLY)
        try:
            data = os.read(fd, os.fstat(fd).st_size)
        finally:
            os.close(fd)
        lines = io.BytesIO(data).readlines()
        for _ in map(bytes.decode, filterfalse(bytes.isascii, lines)):
            pass
        loads_line(lines[0])
        heads = list(map(decode_known_head, lines[1:]))
        valid += len(set(map(_ID, heads))) == len(heads)
    return valid


def main() -> int:
    report = C.Report("list_sessions", "Listing 3,000 sessions: Catalog.sessions() cold and warm, forest()")
    root = _gen.sessions_folder()
    files = list(root.rglob("*.jsonl"))
    total = sum(_gen.warm(f) for f in files)
    report.line(
        f"root: {root} — {len(files):,} files in {len({f.parent for f in files})} folders, {total / 1e6:.1f} MB"
    )

    infos = Catalog(root).sessions()  # untimed: imports, page cache
    assert len(infos) == len(files), f"listed {len(infos)} of {len(files)}"

    baseline = _baseline.load()
    old = baseline.catalog.Catalog if baseline is not None else None
    assert validating_floor(files) == len(files)
    cold, cold_before, decode_floor, validating = [], [], [], []
    for number in range(COLD_REPS if old is None else COLD_PAIRS):
        if old is not None and number % 2:
            cold_before.append(C.timed(lambda: old(root).sessions()))
        cold.append(C.timed(lambda: Catalog(root).sessions()))
        decode_floor.append(C.timed(lambda: read_and_decode(files)))
        validating.append(C.timed(lambda: validating_floor(files)))
        if old is not None and not number % 2:
            cold_before.append(C.timed(lambda: old(root).sessions()))
    scratch = Path(tempfile.mkdtemp(prefix="pitree-bench-listcache-"))
    filled = scratch / "filled"
    assert Catalog(root, cache_folder=filled).sessions() == infos
    restart, first_with_cache = [], []
    for number in range(CACHE_REPS):
        restart.append(C.timed(lambda: Catalog(root, cache_folder=filled).sessions()))
        empty = scratch / f"empty-{number}"
        first_with_cache.append(C.timed(lambda: Catalog(root, cache_folder=empty).sessions()))  # noqa: B023
    cache_size = (filled / "listing.sqlite3").stat().st_size
    shutil.rmtree(scratch)
    catalog = Catalog(root)
    infos = catalog.sessions()
    old_catalog = old(root) if old is not None else None
    if old_catalog is not None:
        old_catalog.sessions()
    fork = next(info for info in infos if info.parent_session_path and catalog.parent_of(info) is not None)
    fork_file = SessionFile.open(fork.path)

    def page_lineage() -> object:
        """What the session page asks on each view: the file of its id, then its parent and forks."""
        catalog.locate(fork.id)
        info = session_info(fork_file)
        return catalog.parent_of(info), catalog.forks_of(info)

    def page_lineage_before() -> object:
        """The same at the baseline: a warm listing of every file, then the lineage from it."""
        assert old_catalog is not None
        old_catalog.locate(fork.id)
        listing = old_catalog.sessions()
        info = next(i for i in listing if i.path == fork.path)
        return old_catalog.parent_of(info, listing), old_catalog.forks_of(info, listing)

    page_lineage()
    warm, walk, forest_given, forest_full, warm_before, page, page_before = [], [], [], [], [], [], []
    for _ in range(WARM_REPS):
        warm.append(C.timed(catalog.sessions))
        walk.append(C.timed(lambda: bare_walk(root)))
        forest_given.append(C.timed(lambda: catalog.forest(infos)))
        forest_full.append(C.timed(catalog.forest))
        page.append(C.timed(page_lineage))
        if old_catalog is not None:
            warm_before.append(C.timed(old_catalog.sessions))
            page_before.append(C.timed(page_lineage_before))
    forest = catalog.forest(infos)
    nested = sum(1 for _, depth in forest if depth > 0)
    assert len(forest) == len(infos)

    cold_med, warm_med, walk_med = C.median(cold), C.median(warm), C.median(walk)
    report.line(f"{len(infos):,} sessions listed, {nested} nested as forks (deepest: {max(d for _, d in forest)})")
    report.line()
    report.line(f"{'':<40} {'median':>9} {'p90':>9}")
    rows = [
        (f"cold: new Catalog().sessions() ×{len(cold)}", cold),
        (f"restart: new Catalog, cache filled ×{CACHE_REPS}", restart),
        (f"first listing, empty cache folder ×{CACHE_REPS}", first_with_cache),
        (f"warm: same Catalog .sessions() ×{WARM_REPS}", warm),
        ("floor: scandir + stat every file", walk),
        ("floor under cold: read + decode heads", decode_floor),
        ("validating floor: + UTF-8, header, ids", validating),
        ("forest(infos)", forest_given),
        ("forest()  (= sessions() + forest)", forest_full),
        ("session page: locate + parent + forks", page),
    ]
    if baseline is not None:
        rows += [
            (f"{_baseline.label(baseline)}: cold", cold_before),
            (f"{_baseline.label(baseline)}: warm", warm_before),
            (f"{_baseline.label(baseline)}: session page", page_before),
        ]
    for name, values in rows:
        report.line(f"{name:<40} {C.fmt_time(C.median(values)):>9} {C.fmt_time(C.pct(values, 90)):>9}")
    report.line()
    report.line(
        f"warm / cold: {warm_med / cold_med:.3f}×; warm / floor: {warm_med / walk_med:.1f}×; "
        f"cold per file: {cold_med / len(files) * 1e6:.0f} µs, warm per file: {warm_med / len(files) * 1e6:.1f} µs"
    )

    report.line(f"cache file: {cache_size / 1e6:.1f} MB for {len(infos):,} sessions")
    report.figure("list 3,000 sessions, warm", C.fmt_time(warm_med), "≤ 100 ms", warm_med <= 0.1)
    report.figure("list 3,000 sessions, cold (nothing remembered)", C.fmt_time(cold_med), "≤ 300 ms", cold_med <= 0.3)
    report.figure("list 3,000 sessions, restart from the cache", C.fmt_time(C.median(restart)))
    report.figure("list 3,000 sessions, first listing writing the cache", C.fmt_time(C.median(first_with_cache)))
    report.figure(
        "cold / read+decode floor",
        f"{cold_med / C.median(decode_floor):.2f}× (floor {C.fmt_time(C.median(decode_floor))})",
    )
    report.figure(
        "cold / validating floor",
        f"{cold_med / C.median(validating):.2f}× (floor {C.fmt_time(C.median(validating))})",
    )
    report.figure("warm / cold", f"{warm_med / cold_med:.3f}×")
    report.figure("warm / scandir+stat floor", f"{warm_med / walk_med:.1f}×")
    report.figure(
        "forest(infos) / forest()", f"{C.fmt_time(C.median(forest_given))} / {C.fmt_time(C.median(forest_full))}"
    )
    report.figure("session page's catalog work (locate + lineage), warm", C.fmt_time(C.median(page)))
    if baseline is not None:
        label = _baseline.label(baseline)
        ratios = {
            "cold": C.median([a / b for a, b in zip(cold, cold_before)]),
            "warm": C.median([a / b for a, b in zip(warm, warm_before)]),
            "session page": C.median([a / b for a, b in zip(page, page_before)]),
        }
        report.line("now / " + label + ": " + ", ".join(f"{name} {value:.2f}×" for name, value in ratios.items()))
        report.figure(f"list cold now / {label}", f"{ratios['cold']:.2f}×")
        report.figure(f"list warm now / {label}", f"{ratios['warm']:.2f}×")
        report.figure(
            f"session page's catalog work now / {label}",
            f"{ratios['session page']:.3f}× ({C.fmt_time(C.median(page))} vs {C.fmt_time(C.median(page_before))})",
        )
    return report.finish()


if __name__ == "__main__":
    sys.exit(main())
