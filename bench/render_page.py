"""Rendering the session page for a 1k- and a 100k-entry session, warm.

Both files sit in one sessions folder that Django's settings point at. After a few warm-up requests
(the index is cached per process, the listing too), the page ``/s/<id>/`` of each session is fetched
through Django's test client, alternating, ROUNDS times; the median of each is compared. The tree
panel is a separate request the page loads afterwards, so it is timed apart, for context. Also timed:
a permalink to an entry in the middle of the 100k session, and one page of older entries.

Target: page(100k) / page(1k) ≤ 2 (the page's cost must not grow with the session).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _accounts
import _common as C
import _gen

ROUNDS = 30
WARMUP = 3


def main() -> int:
    report = C.Report("render_page", "Session page render, 1k- vs 100k-entry session (warm)")
    sources = {1_000: _gen.session_file(1_000, seed=3), 100_000: _gen.big_session()}
    with _gen.served_folder("pitree-render-", sources) as (folder, sessions):
        return _measure(report, folder, sessions)


def _measure(report: C.Report, folder: Path, sessions: dict[int, Path]) -> int:
    client = _accounts.django_client(folder)
    from sessions_app.sessionfiles.store import SessionFile
    from sessions_app.sessionfiles.tree import ancestors

    ids = {n: SessionFile.open(path).session_id for n, path in sessions.items()}
    big = SessionFile.open(sessions[100_000])
    assert big.index.leaf_row is not None
    middle = list(ancestors(big.index, big.index.leaf_row))[len(big.index) // 4]
    middle_id = big.index.ids[middle]

    urls = {
        "page, 1k entries": f"/s/{ids[1_000]}/",
        "page, 100k entries": f"/s/{ids[100_000]}/",
        "permalink mid-way, 100k": f"/s/{ids[100_000]}/e/{middle_id}/",
        "older entries page, 100k": f"/s/{ids[100_000]}/older/?before={middle_id}",
        "tree panel, 1k": f"/s/{ids[1_000]}/tree/",
        "tree panel, 100k": f"/s/{ids[100_000]}/tree/",
    }
    for url in urls.values():
        for _ in range(WARMUP):
            C.timed_get(client, url)
    times: dict[str, list[float]] = {name: [] for name in urls}
    for _ in range(ROUNDS):
        for name, url in urls.items():
            if name.startswith("tree panel, 100k") and len(times[name]) >= 5:
                continue  # it is O(n) by nature; five samples are enough for context
            times[name].append(C.timed_get(client, url))

    report.line(f"{'request (warm)':<30} {'median':>9} {'p90':>9}")
    for name, values in times.items():
        report.line(f"{name:<30} {C.fmt_time(C.median(values)):>9} {C.fmt_time(C.pct(values, 90)):>9}")
    small, large = C.median(times["page, 1k entries"]), C.median(times["page, 100k entries"])
    ratio = large / small
    report.line()
    report.line(f"page(100k) / page(1k): {ratio:.2f}×")
    report.figure("page render 100k / 1k (warm)", f"{ratio:.2f}×", "≤ 2×", ratio <= 2)
    report.figure("page render, 1k / 100k median", f"{C.fmt_time(small)} / {C.fmt_time(large)}")
    report.figure(
        "tree panel 1k / 100k median (lazy request)",
        f"{C.fmt_time(C.median(times['tree panel, 1k']))} / {C.fmt_time(C.median(times['tree panel, 100k']))}",
    )
    return report.finish()


if __name__ == "__main__":
    sys.exit(main())
