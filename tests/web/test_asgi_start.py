"""What a server process does once, when daphne imports the ASGI application."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.processes  # the ASGI application started in a fresh Python

REPO = Path(__file__).resolve().parents[2]

START = """
import gc, sys
from pitree_web.asgi import application
print(gc.get_freeze_count() > 1000, "sessions_app.views.pages" in sys.modules)
"""


def test_what_start_up_built_is_frozen_out_of_the_garbage_collector(tmp_path: Path) -> None:
    """The views loaded and the start-up's objects frozen (``gc.freeze``): full collections would walk
    them all while serving, pauses that held pushed lines back from open tabs."""
    env = {**os.environ, "PITREE_SESSIONS_DIR": str(tmp_path), "DJANGO_SETTINGS_MODULE": "pitree_web.settings"}
    run = subprocess.run(
        [sys.executable, "-c", START], cwd=REPO, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["True", "True"]
