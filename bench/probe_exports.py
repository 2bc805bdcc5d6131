"""Downloads of the probe's shapes (issue 26), through a real server: today's next to the baseline's
(``git merge-base HEAD main``, or ``$PITREE_BENCH_BASELINE``), one after the other on the same folder.

For each server: the peak growth of its resident memory while one client downloads, whole and as fast
as it reads, the Markdown and the ``.jsonl`` of the session of one 31 MB message and the Markdown of the
one of 2,000 × 8 KB entries (as a ratio to the file's size), and how long each took; then the session
list page, alone (median of ``LIST_ROUNDS``) and while ``PARALLEL`` clients of one user download the
31 MB session's Markdown at once (today a person has ``PITREE_BUSY_PER_USER`` = 4 such requests under
way at most: the others are answered 429 at once).

Targets: today, peak memory per download ≤ 3× the largest entry's size for the one-message session
and ≤ 0.25× the file for the many-entry one; the list page beside the parallel downloads ≤ 0.5 s.
"""

from __future__ import annotations

import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _accounts
import _common as C
import _gen
import _servers

PARALLEL = 6
LIST_ROUNDS = 10
PIECE = 1 << 20


def main() -> int:
    report = C.Report("probe_exports", "Downloads of the probe's shapes: memory, and another page beside six at once")
    folder = _gen.probe_folder()
    sessions = {name: _gen.probe_session(name) for name in ("message", "entries")}
    sizes = {name: path.stat().st_size for name, (_, path) in sessions.items()}
    cases = [
        ("Markdown, one 31 MB message", sessions["message"][0], "download.md", sizes["message"]),
        (".jsonl, one 31 MB message", sessions["message"][0], "download.jsonl", sizes["message"]),
        ("Markdown, 2,000 × 8 KB", sessions["entries"][0], "download.md", sizes["entries"]),
    ]
    results: dict[str, dict[str, str]] = {}
    figures: dict[str, dict[str, float]] = {}
    for label, tree in _servers.trees():
        row = results[label] = {}
        numbers = figures[label] = {}
        with _servers.serving(tree, folder) as server:
            opener = _accounts.signed_in_opener(server.cookie)
            for _ in range(3):
                _get(opener, server.url + "/")  # warm: listing, templates
            for case, session_id, name, size in cases:
                server.reset_peak()
                before = server.status_kb("VmRSS")
                seconds, _ = _timed_download(opener, f"{server.url}/s/{session_id}/{name}")
                grown = (server.status_kb("VmHWM") - before) * 1024
                numbers[case] = grown / size
                row[case] = f"{grown / 1e6:,.0f} MB = {grown / size:.2f}×, {C.fmt_time(seconds)}"
            alone = C.median([_timed_get(opener, server.url + "/") for _ in range(LIST_ROUNDS)])
            url = f"{server.url}/s/{sessions['message'][0]}/download.md"
            statuses: list[int] = []
            downloads = [threading.Thread(target=_download_into, args=(statuses, opener, url)) for _ in range(PARALLEL)]
            for thread in downloads:
                thread.start()
            time.sleep(0.2)
            beside = C.median([_timed_get(opener, server.url + "/") for _ in range(LIST_ROUNDS // 2)])
            for thread in downloads:
                thread.join()
            numbers["list beside"] = beside
            row["list page alone"] = C.fmt_time(alone)
            row[f"list page beside {PARALLEL} Markdown downloads"] = (
                f"{C.fmt_time(beside)} ({sorted(statuses).count(200)} downloads ran, {statuses.count(429)} refused 429)"
            )
    labels = list(results)
    report.line(
        f"files: one 31 MB message {sizes['message'] / 1e6:.1f} MB; 2,000 × 8 KB {sizes['entries'] / 1e6:.1f} MB"
    )
    report.line()
    report.line(f"{'':<44}" + "".join(f"{label:>44}" for label in labels))
    for key in results[labels[0]]:
        report.line(f"{key:<44}" + "".join(f"{results[label][key]:>44}" for label in labels))
    today = figures["today"]
    one = today["Markdown, one 31 MB message"]
    many = today["Markdown, 2,000 × 8 KB"]
    report.figure("peak memory, Markdown of one 31 MB message (× the file)", f"{one:.2f}×", "≤ 3×", one <= 3)
    report.figure("peak memory, Markdown of 2,000 × 8 KB (× the file)", f"{many:.2f}×", "≤ 0.25×", many <= 0.25)
    report.figure(
        f"list page beside {PARALLEL} Markdown downloads",
        C.fmt_time(today["list beside"]),
        "≤ 0.5 s",
        today["list beside"] <= 0.5,
    )
    if len(labels) > 1:
        then = figures[labels[1]]
        report.figure(
            f"the same three, {labels[1]}",
            f"{then['Markdown, one 31 MB message']:.2f}× / {then['Markdown, 2,000 × 8 KB']:.2f}× / {C.fmt_time(then['list beside'])}",
        )
    return report.finish()


def _get(opener: urllib.request.OpenerDirector, url: str) -> None:
    with opener.open(url, timeout=300) as response:
        response.read()


def _timed_get(opener: urllib.request.OpenerDirector, url: str) -> float:
    start = time.perf_counter()
    _get(opener, url)
    return time.perf_counter() - start


def _download_into(statuses: list[int], opener: urllib.request.OpenerDirector, url: str) -> None:
    statuses.append(_timed_download(opener, url)[1])


def _timed_download(opener: urllib.request.OpenerDirector, url: str) -> tuple[float, int]:
    """Seconds a download took, read whole, and its status."""
    start = time.perf_counter()
    try:
        with opener.open(url, timeout=600) as response:
            while response.read(PIECE):
                pass
            status = response.status
    except urllib.error.HTTPError as error:
        status = error.code
    return time.perf_counter() - start, status


if __name__ == "__main__":
    sys.exit(main())
