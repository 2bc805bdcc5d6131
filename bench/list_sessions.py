"""Listing 3,000 sessions in pi's layout with ``Catalog(root).sessions()``, cold and warm, and ``forest()``.

The folder (generated once): 3,000 small/medium sessions (median ~20 entries, a tail to several
hundred) in 12 ``--<cwd>--`` folders, ~12 % of them forks whose header names their source in
``parentSession``. Files are in the page cache (one untimed listing first), so this measures Python,
not the disk. Side by side:
- cold: a new ``Catalog`` each time — every file opened and indexed;
- warm: the same ``Catalog`` again — every file only stat'ed, unchanged ones reused;
- the floor under warm: ``os.scandir`` of the folders + ``stat`` of every ``.jsonl`` file;
- ``forest(infos)`` (nesting forks under their parents, from a listing in hand) and ``forest()``.

Target: a warm listing takes ≤ 100 ms.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C
import _gen

from sessions_app.sessionfiles.catalog import Catalog

COLD_REPS = 3
WARM_REPS = 20


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

    cold = [C.timed(lambda: Catalog(root).sessions()) for _ in range(COLD_REPS)]
    catalog = Catalog(root)
    infos = catalog.sessions()
    warm, walk, forest_given, forest_full = [], [], [], []
    for _ in range(WARM_REPS):
        warm.append(C.timed(catalog.sessions))
        walk.append(C.timed(lambda: bare_walk(root)))
        forest_given.append(C.timed(lambda: catalog.forest(infos)))
        forest_full.append(C.timed(catalog.forest))
    forest = catalog.forest(infos)
    nested = sum(1 for _, depth in forest if depth > 0)
    assert len(forest) == len(infos)

    cold_med, warm_med, walk_med = C.median(cold), C.median(warm), C.median(walk)
    report.line(f"{len(infos):,} sessions listed, {nested} nested as forks (deepest: {max(d for _, d in forest)})")
    report.line()
    report.line(f"{'':<40} {'median':>9} {'p90':>9}")
    rows = [
        (f"cold: new Catalog().sessions() ×{COLD_REPS}", cold),
        (f"warm: same Catalog .sessions() ×{WARM_REPS}", warm),
        ("floor: scandir + stat every file", walk),
        ("forest(infos)", forest_given),
        ("forest()  (= sessions() + forest)", forest_full),
    ]
    for name, values in rows:
        report.line(f"{name:<40} {C.fmt_time(C.median(values)):>9} {C.fmt_time(C.pct(values, 90)):>9}")
    report.line()
    report.line(
        f"warm / cold: {warm_med / cold_med:.3f}×; warm / floor: {warm_med / walk_med:.1f}×; "
        f"cold per file: {cold_med / len(files) * 1e6:.0f} µs, warm per file: {warm_med / len(files) * 1e6:.1f} µs"
    )

    report.figure("list 3,000 sessions, warm", C.fmt_time(warm_med), "≤ 100 ms", warm_med <= 0.1)
    report.figure("list 3,000 sessions, cold", C.fmt_time(cold_med))
    report.figure("warm / cold", f"{warm_med / cold_med:.3f}×")
    report.figure("warm / scandir+stat floor", f"{warm_med / walk_med:.1f}×")
    report.figure(
        "forest(infos) / forest()", f"{C.fmt_time(C.median(forest_given))} / {C.fmt_time(C.median(forest_full))}"
    )
    return report.finish()


if __name__ == "__main__":
    sys.exit(main())
