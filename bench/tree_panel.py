"""Opening the tree panel of a 100k-entry session, against opening its session page.

One copy of the 100k-entry session sits in a sessions folder that Django's settings point at. After
warm-up requests, two things are timed side by side, through Django's test client, ROUNDS times each:

- *unchanged*: the session page, then the tree panel, of the file as it is;
- *grown*: one entry is appended (as a tab sends a message), then the session page and the tree panel
  are fetched, each seeing the file one entry longer than its previous request (a live session).

Also printed, for context: the first session page of the file in the process (it builds the file's
index: the cold open), the first tree panel of the file a process draws, once its session page was
served (the filter's runs are built then, once per file and process, from that index), and the tree
panel of a 1k-entry session.

Target: tree panel / session page ≤ 2 (medians), in both cases.
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
    report = C.Report("tree_panel", "Tree panel vs session page, 100k-entry session")
    sources = {1_000: _gen.session_file(1_000, seed=3), 100_000: _gen.big_session()}
    with _gen.served_folder("pitree-tree-", sources) as (folder, paths):
        return _measure(report, folder, paths)


def _measure(report: C.Report, folder: Path, paths: dict[int, Path]) -> int:
    client = _accounts.django_client(folder, PITREE_FSYNC="0")
    from sessions_app.sessionfiles import entries as E
    from sessions_app.sessionfiles.store import SessionFile

    big = SessionFile.open(paths[100_000])
    page_url, tree_url = f"/s/{big.session_id}/", f"/s/{big.session_id}/tree/"
    small_tree = f"/s/{SessionFile.open(paths[1_000]).session_id}/tree/"

    first_page = C.timed_get(client, page_url)  # this process has not opened the file: its index is built now
    for _ in range(WARMUP):
        C.timed_get(client, page_url)
    first_tree = C.timed_get(client, tree_url)  # this process has not drawn the file's tree: its runs are built now
    for url in (tree_url, small_tree):
        for _ in range(WARMUP):
            C.timed_get(client, url)

    times: dict[str, list[float]] = {name: [] for name in ("page", "tree", "page, grown", "tree, grown", "tree, 1k")}
    for _ in range(ROUNDS):
        times["page"].append(C.timed_get(client, page_url))
        times["tree"].append(C.timed_get(client, tree_url))
        times["tree, 1k"].append(C.timed_get(client, small_tree))
    for turn in range(ROUNDS):
        big.append(E.user_message(f"one more message, number {turn}"), big.leaf_id)
        times["page, grown"].append(C.timed_get(client, page_url))
        big.append(E.user_message(f"and another, number {turn}"), big.leaf_id)
        times["tree, grown"].append(C.timed_get(client, tree_url))

    report.line(f"{'request':<40} {'median':>9} {'p90':>9}")
    for name, values in times.items():
        report.line(f"{name:<40} {C.fmt_time(C.median(values)):>9} {C.fmt_time(C.pct(values, 90)):>9}")
    report.line(f"{'first session page in this process':<40} {C.fmt_time(first_page):>9}")
    report.line(f"{'first tree panel in this process':<40} {C.fmt_time(first_tree):>9}")
    still = C.median(times["tree"]) / C.median(times["page"])
    grown = C.median(times["tree, grown"]) / C.median(times["page, grown"])
    report.line()
    report.line(f"tree / page, unchanged file: {still:.2f}×; after an append: {grown:.2f}×")
    report.figure("tree panel / session page, 100k, unchanged", f"{still:.2f}×", "≤ 2×", still <= 2)
    report.figure("tree panel / session page, 100k, after an append", f"{grown:.2f}×", "≤ 2×", grown <= 2)
    report.figure("first tree panel of the 100k file in a process", C.fmt_time(first_tree))
    report.figure("first tree panel / first session page (the cold open)", f"{first_tree / first_page:.2f}×")
    return report.finish()


if __name__ == "__main__":
    sys.exit(main())
