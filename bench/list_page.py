"""The first screen of the session list over 5,000 sessions, next to a session page in the same folder.

Both are fetched through Django's test client, warm (listing and index cached), alternating, ROUNDS
times; the list shows one page of ``LIST_PAGE_SIZE`` sessions. Also timed, for context: the list's
last page and a search.

Target: list, first screen / session page ≤ 1 (the list costs no more than a session page).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _accounts
import _common as C
import _gen

FILES = 5_000
ROUNDS = 30
WARMUP = 3


def main() -> int:
    report = C.Report("list_page", f"Session list (first screen) over {FILES:,} sessions vs a session page")
    folder = _gen.sessions_folder(FILES)
    client = _accounts.django_client(folder, test_environment=False)
    from sessions_app.partials.listing import LIST_PAGE_SIZE

    largest = max(folder.rglob("*.jsonl"), key=lambda path: path.stat().st_size)
    with open(largest, "rb") as handle:
        session_id = json.loads(handle.readline())["id"]
    last_page = -(-FILES // LIST_PAGE_SIZE)
    urls = {
        "list, first screen": "/",
        "session page": f"/s/{session_id}/",
        f"list, page {last_page}": f"/?page={last_page}",
        "list, search": "/?q=test",
    }

    for url in urls.values():
        for _ in range(WARMUP):
            C.timed_get(client, url)
    times: dict[str, list[float]] = {name: [] for name in urls}
    for round_no in range(ROUNDS):
        order = list(urls.items()) if round_no % 2 == 0 else list(reversed(urls.items()))
        for name, url in order:
            times[name].append(C.timed_get(client, url))

    report.line(f"{'request (warm)':<24} {'median':>9} {'p90':>9}")
    for name, values in times.items():
        report.line(f"{name:<24} {C.fmt_time(C.median(values)):>9} {C.fmt_time(C.pct(values, 90)):>9}")
    ratios = [a / b for a, b in zip(times["list, first screen"], times["session page"])]
    ratio = C.median(ratios)
    report.line()
    report.line(f"list first screen / session page: {ratio:.2f}×")
    report.figure("list first screen / session page (warm)", f"{ratio:.2f}×", "≤ 1×", ratio <= 1)
    report.figure(
        "list first screen / session page, median",
        f"{C.fmt_time(C.median(times['list, first screen']))} / {C.fmt_time(C.median(times['session page']))}",
    )
    return report.finish()


if __name__ == "__main__":
    sys.exit(main())
