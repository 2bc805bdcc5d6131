"""Settings come from the environment: a value that does not parse stops the start and names the
variable; a blank one means the default."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SHOW = "import django; django.setup(); from django.conf import settings as s; print(s.DEBUG, s.PITREE_FSYNC, s.PITREE_MAX_BODY_BYTES)"


def _start(**env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("PITREE_")}
    return subprocess.run(
        [sys.executable, "-c", SHOW],
        cwd=REPO,
        env={**clean, "DJANGO_SETTINGS_MODULE": "pitree_web.settings", **env},
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("PITREE_DEBUG", "maybe"),
        ("PITREE_FSYNC", "2"),
        ("PITREE_MAX_MESSAGE_BYTES", "1MB"),
        ("PITREE_MAX_MESSAGE_BYTES", "0"),
        ("PITREE_OFFLINE_DELAY", "-1"),
        ("PITREE_ASSISTANT", "gpt"),
    ],
)
def test_invalid_values_stop_the_start_naming_the_variable(name, value) -> None:
    result = _start(**{name: value})
    assert result.returncode != 0
    assert name in result.stderr.strip().splitlines()[-1]


def test_defaults_and_blank_values() -> None:
    assert _start().stdout.split() == ["False", "True", str(3 * 1_048_576 + 64 * 1024)]
    assert _start(PITREE_DEBUG="", PITREE_FSYNC=" ").stdout.split()[:2] == ["False", "True"]
    assert _start(PITREE_DEBUG="on", PITREE_FSYNC="no", PITREE_MAX_MESSAGE_BYTES="1000").stdout.split() == [
        "True",
        "False",
        str(3000 + 64 * 1024),
    ]
