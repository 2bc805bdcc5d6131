"""Small helpers shared by the benchmark scripts: project import path, timing, statistics, reporting.

Every script records its figures in a ``Report``; ``Report.finish()`` prints them with PASS/FAIL per
target and saves them as JSON under ``<bench dir>/results/`` for ``run_all.py``'s summary table.
"""

from __future__ import annotations

import gc
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from _gen import BENCH_DIR  # noqa: E402

RESULTS = BENCH_DIR / "results"


def now() -> float:
    return time.perf_counter()


def timed(fn: Callable[[], object], *, collect: bool = True) -> float:
    """Seconds one call takes. A ``gc.collect()`` first, so no earlier garbage is paid for inside; what
    the call returns is freed after the clock stops."""
    if collect:
        gc.collect()
    start = time.perf_counter()
    result = fn()
    elapsed = time.perf_counter() - start
    del result
    return elapsed


def timed_get(client: Any, url: str) -> float:
    """Seconds one GET of ``url`` through Django's test ``client`` takes; it must answer 200, so that no
    error page is timed in the page's place."""
    start = time.perf_counter()
    response = client.get(url)
    elapsed = time.perf_counter() - start
    assert response.status_code == 200, (url, response.status_code)
    return elapsed


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def pct(values: Sequence[float], p: float) -> float:
    """The p-th percentile (0–100), linear interpolation between closest ranks."""
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    k = (len(ordered) - 1) * p / 100
    lo = int(k)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def fmt_time(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds * 1e6:.0f} µs"


def proc_status_kb(field: str) -> int:
    """A ``kB`` field of /proc/self/status (VmRSS, VmHWM …)."""
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


def machine() -> dict[str, str]:
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count() or 0
    return {
        "code": code_state(),
        "cpu": cpu,
        "cores": f"{usable} usable of {os.cpu_count()}",
        "python": platform.python_version(),
        "libs": _versions(),
        "kernel": platform.release(),
        "date": time.strftime("%Y-%m-%d"),
        "load": " ".join(f"{x:.2f}" for x in os.getloadavg()),
    }


def _versions() -> str:
    import msgspec
    import orjson

    return f"orjson {orjson.__version__}, msgspec {msgspec.__version__}"


def code_state() -> str:
    """The commit measured, and whether the session core had uncommitted changes."""
    import subprocess

    try:
        head = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(ROOT), "status", "--porcelain", "--", "sessions_app/sessionfiles"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "not a git checkout"
    return f"{head}{' + uncommitted changes in sessions_app/sessionfiles' if dirty else ''}"


@dataclass
class Figure:
    name: str
    value: str  # as printed
    target: str = ""  # e.g. "≤ 0.5×"; empty for context figures
    passed: bool | None = None


class Report:
    def __init__(self, script: str, title: str) -> None:
        self.script = script
        self.title = title
        self.figures: list[Figure] = []
        print(f"== {title}")
        info = machine()
        print(
            f"   {info['cpu']}, {info['cores']} cores, Python {info['python']} ({info['libs']}), load {info['load']}; code {info['code']}"
        )

    def line(self, text: str = "") -> None:
        print(f"   {text}" if text else "", flush=True)

    def figure(self, name: str, value: str, target: str = "", passed: bool | None = None) -> None:
        self.figures.append(Figure(name, value, target, passed))

    def finish(self) -> int:
        print()
        for fig in self.figures:
            if fig.passed is None:
                continue
            verdict = "PASS" if fig.passed else "FAIL"
            print(f"   {verdict}  {fig.name}: {fig.value} (target {fig.target})")
        RESULTS.mkdir(parents=True, exist_ok=True)
        payload = {
            "script": self.script,
            "title": self.title,
            "machine": machine(),
            "figures": [asdict(f) for f in self.figures],
        }
        (RESULTS / f"{self.script}.json").write_text(json.dumps(payload, indent=1, ensure_ascii=False))
        return 0
