"""Run pi's own SessionManager (Node) over session files and return what pi computed.

pitree claims that the files it writes open in the pi coding agent. The only convincing
proof is to open them with pi's published code, so the tests call the Node script
``pi_open.mjs`` beside this module, which loads ``@earendil-works/pi-coding-agent@1.6.0``
from the cache that ``scripts/install-pi`` fills. This module has no Django import: the
compatibility check must not depend on the web app.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

PI_PACKAGE = "@earendil-works/pi-coding-agent"
PI_VERSION = "1.6.0"
SCRIPT = Path(__file__).resolve().with_name("pi_open.mjs")
TIMEOUT_SECONDS = 120


def pi_dir() -> Path:
    """Where scripts/install-pi installs pi (same rule as the script, so both agree).

    It lives outside the repo so the 170 MB of node_modules never reach git or the
    project tree.
    """
    explicit = os.environ.get("PITREE_PI_DIR")
    if explicit:
        return Path(explicit).expanduser().resolve()
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "pitree" / f"pi-coding-agent-{PI_VERSION}"


def pi_unavailable_reason() -> str | None:
    """Say why pi cannot be run here, or return None when it can.

    Separate from pi_available() so a failing fixture can tell the developer what is
    missing rather than only that something is.
    """
    if shutil.which("node") is None:
        return "node is not on PATH"
    package_json = pi_dir() / "node_modules" / PI_PACKAGE / "package.json"
    try:
        version = json.loads(package_json.read_text(encoding="utf-8")).get("version")
    except (OSError, ValueError):
        return f"{PI_PACKAGE} is not installed in {pi_dir()}"
    if version != PI_VERSION:
        return f"{PI_PACKAGE} {version} is installed in {pi_dir()}, expected {PI_VERSION}"
    return None


def pi_available() -> bool:
    """True when node is on PATH and pi's package is installed at the pinned version."""
    return pi_unavailable_reason() is None


def nest_tree(roots: list[str], nodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rebuild pi's getTree() shape, ``[{id, type, label?, children: [...]}]``, from the
    flat form the Node script prints.

    The script prints the tree flat because deep nesting breaks JSON parsers (Python's
    json fails near 500 levels, i.e. a 250-entry linear chat). Building the nested dicts
    here is iterative and so has no depth limit, but comparing or printing a very deep
    result with ``==``/``repr`` recurses: compare ``treeNodes`` for big sessions.
    """
    by_id: dict[str, dict[str, Any]] = {}
    for record in nodes:
        node = {key: value for key, value in record.items() if key != "children"}
        node["children"] = []
        by_id[record["id"]] = node
    for record in nodes:
        by_id[record["id"]]["children"] = [by_id[child] for child in record["children"]]
    return [by_id[root] for root in roots]


def open_in_pi(paths: list[Path], *, leaf_contexts: bool = False) -> list[dict[str, Any]]:
    """Open each file with pi's SessionManager and return one result dict per path, in order.

    A result has ``file, sessionId, header, leafId, branchIds, entryCount, labels, name,
    context {thinkingLevel, model, messages}, contextEntryIds, treeRoots, treeNodes, tree,
    fileChanged, error`` (``error`` is None), or only ``file`` and ``error`` when pi
    refused the file. ``fileChanged`` tells whether pi rewrote the file on open (missing
    final newline, v1/v2 migration): the script opens a temporary copy, so the files
    given here are never modified. With ``leaf_contexts`` the result also maps every tree
    leaf id to the context pi builds for that branch.

    Raises RuntimeError when the script itself fails (pi not installed, node error).
    """
    return open_requests([{"file": str(path), "leafContexts": leaf_contexts} for path in paths])


def open_requests(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Open the files of ``requests`` (``{file, leafContexts?, positions?, listing?}``, see
    pi_open.mjs) in one node run; one result per request, in order, as ``open_in_pi`` returns them
    plus what each request asked for (``positions`` and ``entryIds``, ``listing``).

    The requests go to the script on stdin: thousands of paths would not fit a command line. Node
    runs with ``TZ=UTC``: pitree reads a date-time without an offset as UTC where JS reads local
    time (docs/format.md §11.3), so that pi's answers do not depend on the machine's zone.
    """
    if not requests:
        return []
    env = {**os.environ, "PITREE_PI_DIR": str(pi_dir()), "TZ": "UTC"}
    try:
        completed = subprocess.run(
            ["node", str(SCRIPT), "--manifest"],
            input=json.dumps(requests),
            env=env,
            capture_output=True,
            text=True,
            encoding="utf-8",
            check=True,
            timeout=TIMEOUT_SECONDS + len(requests),
        )
    except subprocess.CalledProcessError as exc:
        raise RuntimeError(f"pi_open.mjs exited with {exc.returncode}: {exc.stderr.strip()}") from exc
    # Split on "\n" only: JSON.stringify writes U+2028/U+0085 raw, and str.splitlines() splits there.
    results = [json.loads(line) for line in completed.stdout.split("\n") if line.strip()]
    if len(results) != len(requests):
        raise RuntimeError(
            f"pi_open.mjs printed {len(results)} results for {len(requests)} files: {completed.stderr.strip()}"
        )
    for result in results:
        if result.get("error") is None:
            result["tree"] = nest_tree(result["treeRoots"], result["treeNodes"])
    return results


class PiHarness:
    """What the ``pi`` fixture hands to tests: call it like open_in_pi.

    A small object rather than the bare function so tests can also open a single file
    and see where pi is installed without importing this module (pytest runs with
    importlib import mode, where test folders are not on sys.path).
    """

    def __init__(self, directory: Path) -> None:
        self.dir = directory

    def __call__(self, paths: list[Path], *, leaf_contexts: bool = False) -> list[dict[str, Any]]:
        return open_in_pi(paths, leaf_contexts=leaf_contexts)

    def open_one(self, path: Path, *, leaf_contexts: bool = False) -> dict[str, Any]:
        """Open one file; the result may carry an ``error``, which callers should check."""
        return open_in_pi([path], leaf_contexts=leaf_contexts)[0]

    def requests(self, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Open many files, asking each its own questions (``open_requests``)."""
        return open_requests(requests)
