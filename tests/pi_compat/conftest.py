"""Fixtures for the pi compatibility tests.

pytest runs with ``--import-mode=importlib``, so this folder is not on sys.path and the
test files cannot simply ``import pi_node``. This conftest loads the module by path and
hands tests a ``pi`` fixture instead.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest

_HERE = Path(__file__).resolve().parent
SAMPLES_DIR = _HERE.parents[1] / "sessions_app" / "samples" / "pi"


def _load_pi_node() -> Any:
    """Import pi_node.py from this folder under a fixed, unique module name."""
    name = "pitree_pi_compat_pi_node"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, _HERE / "pi_node.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


pi_node = _load_pi_node()


@pytest.fixture(scope="session")
def pi() -> Any:
    """pi's own SessionManager, callable as ``pi(paths) -> list[dict]`` (see pi_node.open_in_pi).

    Fails instead of skipping when pi is missing: a skipped compatibility check would
    look green while proving nothing, and CI installs pi with scripts/install-pi.
    """
    reason = pi_node.pi_unavailable_reason()
    if reason is not None:
        pytest.fail(
            f"pi is not available ({reason}). Run scripts/install-pi "
            f"(it installs {pi_node.PI_PACKAGE}@{pi_node.PI_VERSION} into {pi_node.pi_dir()}).",
            pytrace=False,
        )
    return pi_node.PiHarness(pi_node.pi_dir())


@pytest.fixture(scope="session")
def pi_samples_dir() -> Path:
    """sessions_app/samples/pi: session files written by pi itself, plus expected.json."""
    return SAMPLES_DIR


@pytest.fixture(scope="session")
def pi_expected() -> dict[str, Any]:
    """expected.json: what pi computed for each sample (keys are file stems)."""
    return json.loads((SAMPLES_DIR / "expected.json").read_text(encoding="utf-8"))
