"""Fixtures shared by every test folder, and the Hypothesis profiles.

Hypothesis runs the quick ``ci`` profile unless ``HYPOTHESIS_PROFILE=thorough`` asks for many more
examples (see README, "Tests").
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings
from support.daphne import Daphne, launch_daphne

hypothesis_settings.register_profile("ci", max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
hypothesis_settings.register_profile("thorough", max_examples=1000, deadline=None)
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def sessions_dir(tmp_path: Path, settings) -> Path:
    """An empty sessions folder that settings.PITREE_SESSIONS_DIR points at for one test."""
    path = tmp_path / "sessions"
    path.mkdir()
    settings.PITREE_SESSIONS_DIR = path
    return path


# --- a real server ---------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def start_daphne(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[dict[str, str]], Daphne]]:
    """Start pitree under daphne with extra environment variables; every server stops at the end."""
    started: list[Daphne] = []

    def start(env: dict[str, str]) -> Daphne:
        server = launch_daphne(env, tmp_path_factory.mktemp("daphne") / "daphne.log")
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()
