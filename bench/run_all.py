"""Run every benchmark, one fresh process each, one after the other, then print a summary table.

    python bench/run_all.py            # all of them
    python bench/run_all.py memory     # only the named ones

The datasets are generated first (once; cached under $PITREE_BENCH_DIR, default /tmp/pitree-bench/).
Exit status: 0 when every script ran (whatever PASS/FAIL says), 1 when one crashed.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _common as C  # noqa: E402
import _gen  # noqa: E402

SCRIPTS = [
    "open_cold",
    "reopen",
    "append",
    "list_sessions",
    "memory",
    "render_page",
    "tree_panel",
    "load",
    "list_page",
    "search",
    "live_push",
    "worddiff",
    "treemap",
    "scoped_view",
    "import_throughput",
    "time_travel",
    "probe_search",
    "probe_exports",
    "slow_clients",
    "pi_turn",
    "pi_stream",
    "beam",
]


def main(argv: list[str]) -> int:
    chosen = [name for name in SCRIPTS if not argv or name in argv]
    _gen.big_session()
    _gen.session_file(10_000)
    _gen.sessions_folder()
    _gen.sessions_folder(5_000)
    _gen.session_file(1_000, seed=3)
    crashed = []
    started = time.perf_counter()
    for name in chosen:
        (C.RESULTS / f"{name}.json").unlink(missing_ok=True)
        print(flush=True)
        code = subprocess.run([sys.executable, str(HERE / f"{name}.py")], cwd=C.ROOT, check=False).returncode
        if code != 0:
            crashed.append(name)
    elapsed = time.perf_counter() - started

    info = C.machine()
    print()
    print(
        f"## Summary — {info['date']}, {info['cpu']}, {info['cores']} cores, Python {info['python']} ({info['libs']}), "
        f"Linux {info['kernel']}; code {info['code']}; {elapsed:.0f} s"
    )
    print()
    print("| script | figure | measured | target | result |")
    print("| --- | --- | --- | --- | --- |")
    for name in chosen:
        result_file = C.RESULTS / f"{name}.json"
        if not result_file.exists():
            print(f"| {name} | (crashed: no results) | | | |")
            continue
        for fig in json.loads(result_file.read_text())["figures"]:
            verdict = "" if fig["passed"] is None else ("PASS" if fig["passed"] else "**FAIL**")
            print(f"| {name} | {fig['name']} | {fig['value']} | {fig['target']} | {verdict} |")
    if crashed:
        print(f"\ncrashed: {', '.join(crashed)}")
    return 1 if crashed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
