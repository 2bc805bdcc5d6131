"""Fixtures shared by every test folder."""

from pathlib import Path

import pytest


@pytest.fixture
def sessions_dir(tmp_path: Path, settings) -> Path:
    """An empty sessions folder that settings.PITREE_SESSIONS_DIR points at for one test."""
    path = tmp_path / "sessions"
    path.mkdir()
    settings.PITREE_SESSIONS_DIR = path
    return path
