"""Append latency and throughput through the store, next to a bare locked write loop.

Each variant appends to its own fresh copy of a 10,000-entry session, so every append's catch-up
(refresh before and after the write) runs against a realistic index. Variants, interleaved in blocks
so that they share the machine's noise:
- store, fsync on:  ``SessionFile.open(path, fsync=True).append(entries.user_message(...))``;
- store, fsync off: the same with ``fsync=False``;
- store, fsync off, after a foreign line: before each (timed) append, another writer's line is added
  (untimed), so the append's catch-up really parses one line;
- bare, fsync on/off: one ``O_APPEND`` descriptor opened once; per append ``flock`` + ``os.write`` of a
  prepared line of the same size (+ ``fdatasync``) + unlock;
- the baseline core's store (``_baseline``: the code this branch started from), fsync on and off.

Target: p50 ≤ 1 ms with fsync on.
"""

from __future__ import annotations

import fcntl
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _baseline
import _common as C
import _gen

from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles.store import SessionFile

PER_VARIANT = 1000
BLOCK = 50
TEXT = (
    "Now make the /todos endpoint paginate: accept ?page= and ?per_page= (default 20, max 100), "
    "return a Link header, and add tests for the first, middle and last page."
)


def main() -> int:
    report = C.Report("append", "Append latency: store (flock + catch-up + write [+ fdatasync]) vs bare locked write")
    source = _gen.session_file(10_000)
    report.line(
        f"each variant appends to its own copy of {source.name} "
        f"({source.stat().st_size / 1e6:.1f} MB, 10k entries); {PER_VARIANT} appends each, blocks of {BLOCK}"
    )
    initial = len(SessionFile(source).index)
    baseline = _baseline.load()
    before_names = (
        [f"{_baseline.label(baseline)} fsync on", f"{_baseline.label(baseline)} fsync off"] if baseline else []
    )
    line = E.dump_line(E.user_message(TEXT).build("0123abcd", "fedc9876", E.now_iso()))
    report.line(f"appended line: {len(line)} B")

    paths = {
        name: _gen.scratch_copy(source, f"append-{i}.jsonl")
        for i, name in enumerate(
            [
                "store fsync on",
                "store fsync off",
                "store fsync off, foreign line first",
                "bare fsync on",
                "bare fsync off",
                *before_names,
            ]
        )
    }
    for path in paths.values():
        _gen.warm(path)
    fds = {name: os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC) for name, path in paths.items()}
    perf = time.perf_counter

    def store(name: str, fsync: bool, foreign: bool, session_file: Any = SessionFile) -> list[float]:
        session = session_file.open(paths[name], fsync=fsync)
        out = []
        for _ in range(BLOCK):
            if foreign:
                other = E.user_message("a line from another writer").build(
                    E.new_entry_id(session.index.by_id), session.leaf_id, E.now_iso()
                )
                fd = fds[name]
                fcntl.flock(fd, fcntl.LOCK_EX)
                os.write(fd, E.dump_line(other))
                fcntl.flock(fd, fcntl.LOCK_UN)
            draft = E.user_message(TEXT)
            start = perf()
            session.append(draft)
            out.append(perf() - start)
        return out

    def bare(name: str, fsync: bool) -> list[float]:
        fd = fds[name]
        out = []
        for _ in range(BLOCK):
            start = perf()
            fcntl.flock(fd, fcntl.LOCK_EX)
            os.write(fd, line)
            if fsync:
                os.fdatasync(fd)
            fcntl.flock(fd, fcntl.LOCK_UN)
            out.append(perf() - start)
        return out

    runs = {
        "store fsync on": lambda: store("store fsync on", True, False),
        "store fsync off": lambda: store("store fsync off", False, False),
        "store fsync off, foreign line first": lambda: store("store fsync off, foreign line first", False, True),
        "bare fsync on": lambda: bare("bare fsync on", True),
        "bare fsync off": lambda: bare("bare fsync off", False),
    }
    if baseline is not None:
        old = baseline.store.SessionFile
        runs[before_names[0]] = lambda: store(before_names[0], True, False, old)
        runs[before_names[1]] = lambda: store(before_names[1], False, False, old)
    for run in runs.values():  # warm-up block, not counted: caches the SessionFiles, faults pages in
        run()
    lat: dict[str, list[float]] = {name: [] for name in runs}
    names = list(runs)
    for block in range(PER_VARIANT // BLOCK):
        for name in names[block % len(names) :] + names[: block % len(names)]:
            lat[name].extend(runs[name]())
    for fd in fds.values():
        os.close(fd)

    report.line()
    report.line(f"{'variant':<38} {'p50':>8} {'p90':>8} {'p99':>8} {'appends/s':>10}")
    for name in names:
        values = lat[name]
        report.line(
            f"{name:<38} {C.fmt_time(C.pct(values, 50)):>8} {C.fmt_time(C.pct(values, 90)):>8} "
            f"{C.fmt_time(C.pct(values, 99)):>8} {len(values) / sum(values):>10,.0f}"
        )
    on, off = C.pct(lat["store fsync on"], 50), C.pct(lat["store fsync off"], 50)
    bare_on, bare_off = C.pct(lat["bare fsync on"], 50), C.pct(lat["bare fsync off"], 50)
    report.line()
    report.line(
        f"p50 store / bare: fsync on {on / bare_on:.2f}×, fsync off {off / bare_off:.1f}×; "
        f"store overhead beyond the bare write ≈ {C.fmt_time(off - bare_off)} per append"
    )
    for name, path in paths.items():  # every store append must have landed, one line each
        if name.startswith(("store", "baseline")):
            expect = initial + (PER_VARIANT + BLOCK) * (2 if "foreign" in name else 1)
            assert len(SessionFile(path).index) == expect, name
        path.unlink(missing_ok=True)

    report.figure("append p50, fsync on", C.fmt_time(on), "≤ 1 ms", on <= 1e-3)
    report.figure(
        "append p90 / p99, fsync on",
        f"{C.fmt_time(C.pct(lat['store fsync on'], 90))} / {C.fmt_time(C.pct(lat['store fsync on'], 99))}",
    )
    report.figure("append p50, fsync off", C.fmt_time(off))
    report.figure(
        "append p50 after a foreign line, fsync off", C.fmt_time(C.pct(lat["store fsync off, foreign line first"], 50))
    )
    report.figure(
        "append throughput fsync on / off",
        f"{len(lat['store fsync on']) / sum(lat['store fsync on']):,.0f} / "
        f"{len(lat['store fsync off']) / sum(lat['store fsync off']):,.0f} per s",
    )
    report.figure("store / bare p50, fsync on", f"{on / bare_on:.2f}×")
    report.figure("store / bare p50, fsync off", f"{off / bare_off:.1f}×")
    if baseline is not None:
        before_on, before_off = (C.pct(lat[name], 50) for name in before_names)
        label = _baseline.label(baseline)
        report.line(f"p50 now / {label}: fsync on {on / before_on:.2f}×, fsync off {off / before_off:.2f}×")
        report.figure(f"append p50 now / {label}, fsync on / off", f"{on / before_on:.2f}× / {off / before_off:.2f}×")
    return report.finish()


if __name__ == "__main__":
    sys.exit(main())
