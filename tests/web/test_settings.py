"""Settings come from the environment: a value that does not parse stops the start and names the
variable; a blank one means the default. The settings module is run afresh for each case."""

from __future__ import annotations

import os
import runpy
from pathlib import Path
from typing import Any

import pytest
from django.core.exceptions import ImproperlyConfigured
from environs import EnvValidationError

import pitree_web.settings

SETTINGS_FILE = Path(pitree_web.settings.__file__)


def _settings(monkeypatch: pytest.MonkeyPatch, **env: str) -> dict[str, Any]:
    for name in [name for name in os.environ if name.startswith("PITREE_")]:
        monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return runpy.run_path(str(SETTINGS_FILE))


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("PITREE_DEBUG", "maybe"),
        ("PITREE_FSYNC", "2"),
        ("PITREE_MAX_MESSAGE_BYTES", "1MB"),
        ("PITREE_MAX_MESSAGE_BYTES", "0"),
        ("PITREE_OFFLINE_DELAY", "-1"),
        ("PITREE_OPENAI_TIMEOUT", "0"),
        ("PITREE_ASSISTANT", "gpt"),
    ],
)
def test_invalid_values_stop_the_start_naming_the_variable(monkeypatch, name, value) -> None:
    with pytest.raises((EnvValidationError, ImproperlyConfigured), match=name):
        _settings(monkeypatch, **{name: value})


def test_defaults_and_blank_values(monkeypatch) -> None:
    defaults = _settings(monkeypatch)
    assert (defaults["DEBUG"], defaults["PITREE_FSYNC"]) == (False, True)
    assert defaults["PITREE_MAX_BODY_BYTES"] == defaults["DATA_UPLOAD_MAX_MEMORY_SIZE"] == 3 * 1_048_576 + 64 * 1024
    blank = _settings(monkeypatch, PITREE_DEBUG="", PITREE_FSYNC=" ")
    assert (blank["DEBUG"], blank["PITREE_FSYNC"]) == (False, True)
    chosen = _settings(monkeypatch, PITREE_DEBUG="on", PITREE_FSYNC="no", PITREE_MAX_MESSAGE_BYTES="1000")
    assert (chosen["DEBUG"], chosen["PITREE_FSYNC"], chosen["PITREE_MAX_BODY_BYTES"]) == (True, False, 3000 + 65536)
