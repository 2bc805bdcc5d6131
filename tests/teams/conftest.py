"""Fixtures of the permission tests: a world of people around one session (``support.teams``), and
no cached file, view, fragment or rate count left from another test.

The world is built once per module (``built_world``) and each test gets it as built (``world``): its
rows written back into the database (put back as migrated after the test), its files copied
into the test's own sessions folder, each person a browser of its own holding the cookies it was
signed in with."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.core.cache import caches
from django.test import override_settings
from support.database import Saved
from support.teams import World, build_world

from sessions_app.access import changes, scoped
from sessions_app.services import replies
from sessions_app.services.lookup import _catalog_for
from sessions_app.sessionfiles.store import clear_cache

TEST_SETTINGS: dict[str, Any] = {
    "PASSWORD_HASHERS": ["django.contrib.auth.hashers.MD5PasswordHasher"],  # test passwords, quickly
    "PITREE_OFFLINE_DELAY": 0,
    "PITREE_ASSISTANT": "offline",
    "PITREE_FSYNC": False,
}


@pytest.fixture(autouse=True)
def _fresh(settings: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr(replies, "STOP_WAIT", 0.05)  # a Stop of a reply nobody writes answers at once
    for name, value in TEST_SETTINGS.items():
        setattr(settings, name, value)
    clear_cache()
    scoped.clear_cache()
    caches["fragments"].clear()
    caches["default"].clear()  # what django-ratelimit counted
    _catalog_for.cache_clear()
    # The grants' generation is written back with the world's rows, so each test counts the same
    # numbers again: none may pass for one an earlier test told through the channel layer.
    changes._told.clear()
    yield
    clear_cache()
    scoped.clear_cache()


@pytest.fixture(scope="module")
def build() -> Callable[[Path], World]:
    """What ``built_world`` builds (a module may build more around the world)."""
    return build_world


@pytest.fixture(scope="module")
def built_world(
    build: Callable[[Path], World],
    django_db_setup: Any,
    django_db_blocker: Any,
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[World, Saved]:
    """The world built once for the module, and the database as built (then put back as it was)."""
    root = tmp_path_factory.mktemp("world") / "sessions"
    root.mkdir()
    cache = root.parent / "cache"
    with (
        django_db_blocker.unblock(),
        override_settings(
            PITREE_SESSIONS_DIR=root, PITREE_CACHE_DIR=cache, PITREE_SEARCH_DB=cache / "search.sqlite3", **TEST_SETTINGS
        ),
    ):
        found = Saved()
        made = build(root)
        built = Saved()
        found.restore()
    return made, built


@pytest.fixture
def world(built_world: tuple[World, Saved], sessions_dir: Path, transactional_db: Any) -> World:
    """The world as built, for this test alone."""
    made, built = built_world
    built.restore()
    return made.copy(sessions_dir)
