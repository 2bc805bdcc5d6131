"""Memory of an open 100k-entry session: RSS growth while opening it, as a ratio to the file size.

Each measurement runs in a fresh subprocess: imports first, ``gc.collect()``, then the peak-RSS mark is
reset (``/proc/self/clear_refs`` ← 5) and VmRSS read; after the open, VmHWM gives the peak growth and
VmRSS the growth still held (again after ``gc.collect()``). Side by side, in their own subprocesses:
- ``SessionFile(path)`` — the index only, bodies stay on disk;
- reading the file into one ``bytes`` (≈ 1.0× by construction: checks the method);
- ``orjson.loads`` of every line, values kept (what holding all entries in memory costs, as pi does);
- the baseline core's ``SessionFile(path)`` (``_baseline``: the code this branch started from).

Target: the peak RSS growth of the open is ≤ 0.3× the file size.
"""

from __future__ import annotations

import gc
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _baseline
import _common as C
import _gen


def child(kind: str, path: str) -> None:
    import orjson

    from sessions_app.sessionfiles.store import SessionFile

    baseline = _baseline.load() if kind == "baseline" else None
    gc.collect()
    try:
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")  # reset VmHWM to the current RSS
        reset = True
    except OSError:
        reset = False
    before = C.proc_status_kb("VmRSS")
    hwm_before = C.proc_status_kb("VmHWM")
    held: object
    if kind == "open":
        held = opened = SessionFile(Path(path))
        rows = len(opened.index)
    elif baseline is not None:
        held = opened = baseline.store.SessionFile(Path(path))
        rows = len(opened.index)
    elif kind == "bytes":
        with open(path, "rb") as handle:
            held = data = handle.read()
        rows = data.count(b"\n")
    else:
        with open(path, "rb") as handle:
            held = values = [orjson.loads(line) for line in handle]
        rows = len(values)
    peak = C.proc_status_kb("VmHWM")
    after = C.proc_status_kb("VmRSS")
    gc.collect()
    after_gc = C.proc_status_kb("VmRSS")
    print(
        json.dumps(
            {
                "before": before,
                "hwm_before": hwm_before,
                "peak": peak,
                "after": after,
                "after_gc": after_gc,
                "rows": rows,
                "reset": reset,
            }
        )
    )
    del held


def measure(kind: str, path: Path) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--child", kind, str(path)], check=True, capture_output=True, text=True
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> int:
    report = C.Report("memory", "Peak RSS growth opening the 100k-entry session, as a ratio to its size")
    path = _gen.big_session()
    size = _gen.warm(path)
    report.line(f"file: {path} — {size / 1e6:.1f} MB (page cache warm; page cache is not RSS)")
    kinds = {"open": "SessionFile(path)", "bytes": "file read into one bytes", "orjson": "orjson.loads all lines, kept"}
    baseline = _baseline.load()
    if baseline is not None:
        kinds["baseline"] = f"SessionFile(path), {_baseline.label(baseline)}"
    results = {kind: measure(kind, path) for kind in kinds}
    if not results["open"]["reset"]:
        report.line("note: could not reset VmHWM; peaks are measured from the process start")
    report.line()
    report.line(f"{'':<32} {'peak growth':>12} {'× file':>7} {'held':>10} {'held, gc':>10} {'B/entry held':>13}")
    for kind, label in kinds.items():
        r = results[kind]
        peak = (r["peak"] - r["before"]) * 1024
        held = (r["after"] - r["before"]) * 1024
        held_gc = (r["after_gc"] - r["before"]) * 1024
        report.line(
            f"{label:<32} {peak / 1e6:>9.1f} MB {peak / size:>7.2f} {held / 1e6:>7.1f} MB "
            f"{held_gc / 1e6:>7.1f} MB {held_gc / r['rows']:>13,.0f}"
        )
    r = results["open"]
    peak_ratio = (r["peak"] - r["before"]) * 1024 / size
    held_ratio = (r["after_gc"] - r["before"]) * 1024 / size
    naive = (results["orjson"]["peak"] - results["orjson"]["before"]) * 1024 / size
    report.line()
    report.line(f"the open's peak is {peak_ratio / naive:.2f}× that of keeping every entry decoded")

    report.figure("open: peak RSS growth / file size", f"{peak_ratio:.2f}×", "≤ 0.30×", peak_ratio <= 0.3)
    report.figure("open: RSS held after gc / file size", f"{held_ratio:.2f}×")
    report.figure("open: peak RSS growth", f"{(r['peak'] - r['before']) / 1024:.1f} MB of {size / 1e6:.1f} MB")
    report.figure("orjson, all kept: peak / file size", f"{naive:.2f}×")
    if baseline is not None:
        before = results["baseline"]
        before_peak = (before["peak"] - before["before"]) * 1024 / size
        before_held = (before["after_gc"] - before["before"]) * 1024 / size
        report.line(
            f"now / {_baseline.label(baseline)}: peak {peak_ratio / before_peak:.2f}×, held {held_ratio / before_held:.2f}×"
        )
        report.figure(f"open: peak / {_baseline.label(baseline)}", f"{peak_ratio / before_peak:.2f}×")
        report.figure(f"open: held / {_baseline.label(baseline)}", f"{held_ratio / before_held:.2f}×")
    return report.finish()


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3])
        sys.exit(0)
    sys.exit(main())
