"""The session core as it was at another commit, imported next to today's, so that a benchmark times
both in one process, interleaved, and prints their ratio ("before / after" measured side by side).

``load()`` copies ``sessions_app/sessionfiles`` at a commit into ``<bench dir>/baseline-<sha>/`` as a
package named ``baseline_sessionfiles`` and imports it (the core's modules import one another
relatively, so the copy works as it is). The commit is ``$PITREE_BENCH_BASELINE`` if set, else where
this branch left ``main`` (``git merge-base HEAD main``). On ``main`` itself that is the code being
measured, and every ratio is about 1: set ``PITREE_BENCH_BASELINE`` to an older commit there.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from dataclasses import dataclass
from typing import Any

import _common as C
from _gen import BENCH_DIR

PACKAGE = "baseline_sessionfiles"
CORE = "sessions_app/sessionfiles"


@dataclass(frozen=True)
class Baseline:
    commit: str  # short sha
    store: Any  # the baseline's ``store`` module
    catalog: Any  # and its ``catalog`` module


def load() -> Baseline | None:
    """The baseline core, or None (with the reason printed) when git cannot provide it."""
    try:
        ref = os.environ.get("PITREE_BENCH_BASELINE") or _git("merge-base", "HEAD", "main")
        sha = _git("rev-parse", "--short", ref)
        names = _git("ls-tree", "--name-only", f"{sha}:{CORE}").split()
    except (OSError, subprocess.CalledProcessError) as error:
        print(f"   no baseline to compare with ({error}); set PITREE_BENCH_BASELINE=<commit>")
        return None
    folder = BENCH_DIR / f"baseline-{sha}"
    package = folder / PACKAGE
    if not (package / "store.py").exists():
        package.mkdir(parents=True, exist_ok=True)
        for name in names:
            if name.endswith(".py"):
                (package / name).write_text(_git("show", f"{sha}:{CORE}/{name}", strip=False), encoding="utf-8")
    sys.path.insert(0, str(folder))
    store = importlib.import_module(f"{PACKAGE}.store")
    catalog = importlib.import_module(f"{PACKAGE}.catalog")
    return Baseline(sha, store, catalog)


def _git(*args: str, strip: bool = True) -> str:
    out = subprocess.run(["git", "-C", str(C.ROOT), *args], capture_output=True, text=True, check=True).stdout
    return out.strip() if strip else out


def label(baseline: Baseline) -> str:
    return f"baseline {baseline.commit}"
