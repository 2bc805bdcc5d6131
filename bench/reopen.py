"""Re-open of a cached 100k-entry session after another process appended one entry.

The file is opened once through the per-process cache (``SessionFile.open``). Then, ROUNDS times,
a separate writer process appends one user message through the store (flock, catch-up, one write),
and this process times ``SessionFile.open(path)``: a cache hit plus a refresh that parses only the
appended bytes. Side by side, in the same rounds:
- ``SessionFile.open(path)`` again with nothing new (stat, compare, return);
- a bare floor: open the file, ``fstat``, ``pread`` the new bytes, ``orjson.loads`` them, close.
The cold open of the same file (no cache) is measured too, for the ratio.

The same rounds also time the baseline core (``_baseline``: the code this branch started from) with
its own cache, reading the same appended line, in alternating order: "now / baseline" is the cost of
what changed (snapshots for threads, the regular-file check, the bounded reader).

Target: the cache-hit-plus-refresh re-open takes ≤ 5 ms (median).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _baseline
import _common as C
import _gen
import orjson

from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles.store import SessionFile

ROUNDS = 200
COLD_REPS = 3


def writer(path: str) -> None:
    """The other process: append one entry per request read from stdin."""
    session = SessionFile.open(path, fsync=False)
    print("ready", flush=True)
    for n, _ in enumerate(sys.stdin):
        session.append(E.user_message(f"appended by another process, round {n}"))
        print("ok", flush=True)


def timed_open(session_file: Any, path: Path) -> float:
    start = time.perf_counter()
    session_file.open(path)
    return time.perf_counter() - start


def bare_refresh(path: Path, offset: int) -> int:
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        size = os.fstat(fd).st_size
        data = os.pread(fd, size - offset, offset)
        for line in data.split(b"\n"):
            if line:
                orjson.loads(line)
        return size
    finally:
        os.close(fd)


def main() -> int:
    report = C.Report("reopen", "Re-open (cache hit + refresh) after another process appended one entry")
    path = _gen.scratch_copy(_gen.big_session(), "reopen.jsonl")
    size = _gen.warm(path)
    report.line(f"file: {path} — {size / 1e6:.1f} MB (a fresh copy of the 100k-entry session)")

    cold = [C.timed(lambda: SessionFile(path)) for _ in range(COLD_REPS)]
    session = SessionFile.open(path)
    rows = len(session.index)
    baseline = _baseline.load()
    if baseline is not None:
        baseline.store.SessionFile.open(path)

    proc = subprocess.Popen(
        [sys.executable, __file__, "--writer", str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        bufsize=1,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        assert proc.stdout.readline().strip() == "ready"
        reopen, unchanged, bare, reopen_before, unchanged_before = [], [], [], [], []
        for number in range(ROUNDS):
            before = path.stat().st_size
            proc.stdin.write("append\n")
            proc.stdin.flush()
            assert proc.stdout.readline().strip() == "ok"
            if baseline is not None and number % 2:
                reopen_before.append(timed_open(baseline.store.SessionFile, path))
            start = time.perf_counter()
            session = SessionFile.open(path)
            reopen.append(time.perf_counter() - start)
            if baseline is not None and not number % 2:
                reopen_before.append(timed_open(baseline.store.SessionFile, path))
            rows += 1
            assert len(session.index) == rows, "the refresh did not pick up the appended entry"
            start = time.perf_counter()
            SessionFile.open(path)
            unchanged.append(time.perf_counter() - start)
            if baseline is not None:
                unchanged_before.append(timed_open(baseline.store.SessionFile, path))
            start = time.perf_counter()
            bare_refresh(path, before)
            bare.append(time.perf_counter() - start)
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)

    cold_med = C.median(cold)
    med, p90 = C.median(reopen), C.pct(reopen, 90)
    report.line(f"cold open (no cache), median of {COLD_REPS}: {C.fmt_time(cold_med)}")
    report.line()
    report.line(f"{'over ' + str(ROUNDS) + ' rounds':<44} {'median':>8} {'p90':>8} {'max':>8}")
    rows_shown = [
        ("SessionFile.open after a foreign append", reopen),
        ("SessionFile.open, nothing new", unchanged),
        ("bare: open+fstat+pread+orjson.loads", bare),
    ]
    if baseline is not None:
        rows_shown += [
            (f"{_baseline.label(baseline)}: after the append", reopen_before),
            (f"{_baseline.label(baseline)}: nothing new", unchanged_before),
        ]
    for name, values in rows_shown:
        report.line(
            f"{name:<44} {C.fmt_time(C.median(values)):>8} {C.fmt_time(C.pct(values, 90)):>8} "
            f"{C.fmt_time(max(values)):>8}"
        )
    report.line()
    report.line(
        f"re-open / cold open: {med / cold_med:.1e}× (1/{cold_med / med:,.0f}); "
        f"re-open / bare floor: {med / C.median(bare):.1f}×"
    )

    report.figure("re-open after 1 foreign append, median", C.fmt_time(med), "≤ 5 ms", med <= 5e-3)
    report.figure("re-open p90", C.fmt_time(p90))
    report.figure("re-open / cold open", f"{med / cold_med:.1e}× (1/{cold_med / med:,.0f})")
    report.figure("re-open / bare refresh floor", f"{med / C.median(bare):.1f}×")
    if baseline is not None:
        after_append = C.median([a / b for a, b in zip(reopen, reopen_before)])
        nothing_new = C.median([a / b for a, b in zip(unchanged, unchanged_before)])
        report.line(
            f"now / {_baseline.label(baseline)} (same rounds): after an append {after_append:.2f}×, "
            f"nothing new {nothing_new:.2f}×"
        )
        report.figure(f"re-open now / {_baseline.label(baseline)}, after an append", f"{after_append:.2f}×")
        report.figure(f"re-open now / {_baseline.label(baseline)}, nothing new", f"{nothing_new:.2f}×")
    path.unlink(missing_ok=True)
    return report.finish()


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--writer":
        writer(sys.argv[2])
        sys.exit(0)
    sys.exit(main())
