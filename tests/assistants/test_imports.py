"""Processes that never talk to a model do not import the ``openai`` SDK: it and pydantic cost tens of
milliseconds at the start of every command and server process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.processes  # imports the app in a fresh Python

REPO = Path(__file__).resolve().parents[2]

# What a command and a server process load: the command line's ``ls``, the ASGI app and every view (a
# server's first request loads the URLconf), and the backend the settings pick.
PROCESS = """
import os, sys
os.environ["DJANGO_SETTINGS_MODULE"] = "pitree_web.settings"
from django.core.management import call_command
from django.urls import get_resolver
from pitree_web.asgi import application
from sessions_app.assistants import get_assistant
call_command("pitree", "ls")
get_resolver().url_patterns
get_assistant()
print("openai" in sys.modules)
"""


@pytest.mark.parametrize(("assistant", "imported"), [("offline", False), ("openai", True)])
def test_the_sdk_is_imported_only_for_the_openai_backend(tmp_path: Path, assistant: str, imported: bool) -> None:
    env = {**os.environ, "PITREE_SESSIONS_DIR": str(tmp_path), "PITREE_ASSISTANT": assistant}
    run = subprocess.run(
        [sys.executable, "-c", PROCESS], cwd=REPO, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[-1] == str(imported)
