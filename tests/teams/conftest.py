"""Fixtures of the permission tests: a world of people around one session (``support.teams``), and
no cached file, view, fragment or rate count left from another test."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.core.cache import caches
from support.teams import World, build_world

from sessions_app.access import scoped
from sessions_app.services import replies
from sessions_app.services.lookup import _catalog_for
from sessions_app.sessionfiles.store import clear_cache


@pytest.fixture(autouse=True)
def _fresh(settings: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr(replies, "STOP_WAIT", 0.05)  # a Stop of a reply nobody writes answers at once
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # test passwords, quickly
    settings.PITREE_OFFLINE_DELAY = 0
    settings.PITREE_ASSISTANT = "offline"
    settings.PITREE_FSYNC = False
    clear_cache()
    scoped.clear_cache()
    caches["fragments"].clear()
    caches["default"].clear()  # what django-ratelimit counted

    _catalog_for.cache_clear()
    yield
    clear_cache()
    scoped.clear_cache()


@pytest.fixture
def world(sessions_dir: Path, transactional_db: Any) -> World:
    return build_world(sessions_dir)
