"""Settings come from the environment: a value that does not parse stops the start and names the
variable; a blank one means the default. The settings module is run afresh for each case."""

from __future__ import annotations

import os
import runpy
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.core.exceptions import ImproperlyConfigured
from environs import EnvValidationError

import pitree_web.settings

SETTINGS_FILE = Path(pitree_web.settings.__file__)
REPO = SETTINGS_FILE.parents[1]


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


@pytest.mark.processes
@pytest.mark.parametrize(("name", "value"), [("PITREE_FSYNC", "maybe"), ("PITREE_ASSISTANT", "gpt")])
def test_the_command_line_says_a_bad_value_in_one_line(name: str, value: str) -> None:
    env = {key: item for key, item in os.environ.items() if not key.startswith("PITREE_")} | {name: value}
    done = subprocess.run(
        [sys.executable, "manage.py", "pitree", "ls"], cwd=REPO, env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("pitree: ") and name in done.stderr


def test_lists_of_names_may_have_spaces_after_the_commas(monkeypatch) -> None:
    chosen = _settings(
        monkeypatch,
        PITREE_ALLOWED_HOSTS="pitree.test, other.test ,",
        PITREE_TRUSTED_ORIGINS=" https://a.test, https://b.test",
    )
    assert chosen["ALLOWED_HOSTS"] == ["pitree.test", "other.test"]
    assert chosen["CSRF_TRUSTED_ORIGINS"] == ["https://a.test", "https://b.test"]


def test_defaults_and_blank_values(monkeypatch) -> None:
    defaults = _settings(monkeypatch)
    assert (defaults["DEBUG"], defaults["PITREE_FSYNC"]) == (False, True)
    assert defaults["PITREE_MAX_BODY_BYTES"] == defaults["DATA_UPLOAD_MAX_MEMORY_SIZE"] == 3 * 1_048_576 + 64 * 1024
    blank = _settings(monkeypatch, PITREE_DEBUG="", PITREE_FSYNC=" ")
    assert (blank["DEBUG"], blank["PITREE_FSYNC"]) == (False, True)
    chosen = _settings(monkeypatch, PITREE_DEBUG="on", PITREE_FSYNC="no", PITREE_MAX_MESSAGE_BYTES="1000")
    assert (chosen["DEBUG"], chosen["PITREE_FSYNC"], chosen["PITREE_MAX_BODY_BYTES"]) == (True, False, 3000 + 65536)


def test_a_database_url_chooses_postgresql_and_the_default_stays_sqlite(monkeypatch) -> None:
    assert _settings(monkeypatch)["DATABASES"]["default"]["ENGINE"] == "django.db.backends.sqlite3"
    chosen = _settings(
        monkeypatch, PITREE_DATABASE_URL="postgres://pitree:secret@db.example:5433/accounts", PITREE_SECRET_KEY="k"
    )["DATABASES"]["default"]
    assert chosen["ENGINE"] == "django.db.backends.postgresql"
    assert (chosen["HOST"], chosen["PORT"], chosen["NAME"], chosen["USER"]) == (
        "db.example",
        5433,
        "accounts",
        "pitree",
    )


@pytest.mark.parametrize(
    ("env", "refused"),
    [
        ({"PITREE_DATABASE_URL": "db.example/accounts", "PITREE_SECRET_KEY": "k"}, EnvValidationError),
        ({"PITREE_DATABASE_URL": "mysql://pitree@db.example/accounts", "PITREE_SECRET_KEY": "k"}, ImproperlyConfigured),
        # Each machine would make a key of its own: a browser signed in on one would be signed out on the next.
        ({"PITREE_DATABASE_URL": "postgres://pitree@db.example/accounts"}, ImproperlyConfigured),
    ],
)
def test_a_database_url_that_cannot_serve_several_machines_stops_the_start(monkeypatch, env, refused) -> None:
    with pytest.raises(refused, match="PITREE_DATABASE_URL"):
        _settings(monkeypatch, **env)
