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
from pathlib import Path
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


def commit(ref: str | None = None) -> str | None:
    """The baseline's short sha (``ref``'s when given), or None (with the reason printed) when git cannot tell it."""
    try:
        ref = ref or os.environ.get("PITREE_BENCH_BASELINE") or _git("merge-base", "HEAD", "main")
        return _git("rev-parse", "--short", ref)
    except (OSError, subprocess.CalledProcessError) as error:
        print(f"   no baseline to compare with ({error}); set PITREE_BENCH_BASELINE=<commit>")
        return None


def load() -> Baseline | None:
    """The baseline core, or None (with the reason printed) when git cannot provide it."""
    sha = commit()
    if sha is None:
        return None
    names = _git("ls-tree", "--name-only", f"{sha}:{CORE}").split()
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


def load_app_module(name: str) -> tuple[str, Any] | None:
    """The baseline's commit and its module ``sessions_app.<name>`` (``search.index``), imported as
    ``baseline_app.<name>`` with its package and the session core it imports relatively; None (with the
    reason printed) when git cannot provide it."""
    package = name.partition(".")[0]
    sha = commit()
    if sha is None:
        return None
    folder = BENCH_DIR / f"baseline-app-{sha}"
    for copied in (package, "sessionfiles"):
        target = folder / "baseline_app" / copied
        if not (target / "__init__.py").exists():
            target.mkdir(parents=True, exist_ok=True)
            for file in _git("ls-tree", "--name-only", f"{sha}:sessions_app/{copied}").split():
                if file.endswith(".py"):
                    (target / file).write_text(_git("show", f"{sha}:sessions_app/{copied}/{file}", strip=False))
    (folder / "baseline_app" / "__init__.py").touch()
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
    return sha, importlib.import_module(f"baseline_app.{name}")


def source_tree(ref: str | None = None) -> tuple[str, Path] | None:
    """The baseline's commit (``ref``'s when given) and a copy of its whole tree (``git archive``,
    extracted once under the bench folder), to run a server of the baseline next to today's; None (with
    the reason printed) when git cannot provide it."""
    sha = commit(ref)
    if sha is None:
        return None
    tree = BENCH_DIR / f"baseline-tree-{sha}"
    if not (tree / "manage.py").exists():
        tree.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "-C", str(C.ROOT), "archive", sha], capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    return sha, tree


def _git(*args: str, strip: bool = True) -> str:
    out = subprocess.run(["git", "-C", str(C.ROOT), *args], capture_output=True, text=True, check=True).stdout
    return out.strip() if strip else out


def label(baseline: Baseline) -> str:
    return f"baseline {baseline.commit}"
