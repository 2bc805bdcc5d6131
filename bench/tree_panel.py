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

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _accounts
import _common as C
import _gen

ROUNDS = 30
WARMUP = 3


def main() -> int:
    report = C.Report("tree_panel", "Tree panel vs session page, 100k-entry session")
    folder = Path(tempfile.mkdtemp(prefix="pitree-tree-"))
    try:
        paths = {}
        for entries in (1_000, 100_000):
            source = _gen.big_session() if entries == 100_000 else _gen.session_file(entries, seed=3)
            target = folder / "--bench--" / source.name
            target.parent.mkdir(exist_ok=True)
            shutil.copy(source, target)
            _gen.warm(target)
            paths[entries] = target
        return _measure(report, folder, paths)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _measure(report: C.Report, folder: Path, paths: dict[int, Path]) -> int:
    os.environ.update(
        DJANGO_SETTINGS_MODULE="pitree_web.settings",
        PITREE_SESSIONS_DIR=str(folder),
        PITREE_DEBUG="0",
        PITREE_FSYNC="0",
    )
    import django

    _accounts.use_scratch_database()
    django.setup()
    from django.test.utils import setup_test_environment

    from sessions_app.sessionfiles import entries as E
    from sessions_app.sessionfiles.store import SessionFile

    setup_test_environment()
    client = _accounts.signed_in_client()
    big = SessionFile.open(paths[100_000])
    page_url, tree_url = f"/s/{big.session_id}/", f"/s/{big.session_id}/tree/"
    small_tree = f"/s/{SessionFile.open(paths[1_000]).session_id}/tree/"

    def get(url: str) -> float:
        start = time.perf_counter()
        response = client.get(url)
        elapsed = time.perf_counter() - start
        assert response.status_code == 200, (url, response.status_code)
        return elapsed

    first_page = get(page_url)  # this process has not opened the file: its index is built now
    for _ in range(WARMUP):
        get(page_url)
    first_tree = get(tree_url)  # this process has not drawn the file's tree: its runs are built now
    for url in (tree_url, small_tree):
        for _ in range(WARMUP):
            get(url)

    times: dict[str, list[float]] = {name: [] for name in ("page", "tree", "page, grown", "tree, grown", "tree, 1k")}
    for _ in range(ROUNDS):
        times["page"].append(get(page_url))
        times["tree"].append(get(tree_url))
        times["tree, 1k"].append(get(small_tree))
    for turn in range(ROUNDS):
        big.append(E.user_message(f"one more message, number {turn}"), big.leaf_id)
        times["page, grown"].append(get(page_url))
        big.append(E.user_message(f"and another, number {turn}"), big.leaf_id)
        times["tree, grown"].append(get(tree_url))

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
