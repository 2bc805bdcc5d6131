"""Fixtures shared by every test folder, and the Hypothesis profiles.

Hypothesis runs the quick ``ci`` profile unless ``HYPOTHESIS_PROFILE=thorough`` asks for many more
examples (see README, "Set up").
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.core.cache import caches
from django.db import connection
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings
from support.daphne import Daphne, launch_daphne
from support.database import Saved

pytest_plugins = ["support.tiers"]  # the quick tier's rule: tests that start processes are marked

# Child processes (the CLI, daphne) inherit these: their caches and journals stay out of the project's
# var/ too.
_CHILD_CACHES = tempfile.mkdtemp(prefix="pitree-test-caches-")
atexit.register(shutil.rmtree, _CHILD_CACHES, ignore_errors=True)
os.environ.setdefault("PITREE_CACHE_DIR", _CHILD_CACHES)
os.environ.setdefault("PITREE_SEARCH_DB", os.path.join(_CHILD_CACHES, "search.sqlite3"))
os.environ.setdefault("PITREE_JOURNAL_DIR", os.path.join(_CHILD_CACHES, "replies"))

# With PostgreSQL (the permission matrix's second run) the tests connect without settings.py's pool:
# each test's event loop closes with its worker threads, and a pooled connection such a thread held
# would never go back (daphne's loop gives them back after each call, pitree_web/dbthreads.py; the
# two-machine tests run it so).
django_settings.DATABASES["default"].get("OPTIONS", {}).pop("pool", None)

# On SQLite the suite's database is a file, as the app's is (WAL, settings.py): a read beside another
# thread's write goes on there, where Django's default in-memory test database, whose connections share
# one cache and lock whole tables, fails it at once ("database table is locked"), which no user can meet.
if django_settings.DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    django_settings.DATABASES["default"]["TEST"]["NAME"] = os.path.join(_CHILD_CACHES, "test_pitree.sqlite3")

hypothesis_settings.register_profile("ci", max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
hypothesis_settings.register_profile("thorough", max_examples=1000, deadline=None)
hypothesis_settings.register_profile(
    "quick", max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


# --- the database ---------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def _migrated(django_db_setup: None, django_db_blocker: Any) -> Iterator[Saved]:
    """The test database as its migrations left it. At the end, on PostgreSQL, the connections that
    worker threads of the tests' views and sockets opened (each thread its own) are ended: PostgreSQL
    drops the test database only when nobody is connected to it."""
    with django_db_blocker.unblock():
        saved = Saved()
    yield saved
    if connection.vendor == "postgresql":
        with django_db_blocker.unblock(), connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )


@pytest.fixture
def transactional_db(_migrated: Saved, django_db_blocker: Any) -> Iterator[None]:
    """pytest-django's ``transactional_db`` (what a test writes is committed: views, sockets and replies
    read it from threads of their own), with the database written back as migrated afterwards from a
    copy (0.1 ms of CPU) instead of emptied by ``flush``, which makes every content type and permission
    again (27 ms, after each of some 700 tests)."""
    with django_db_blocker.unblock():
        yield
        _migrated.restore()


# --- accounts: the existing suites act as the instance's owner ------------------------------------


@pytest.fixture
def owner(transactional_db):
    """The instance's owner (a superuser), as ``./scripts/run`` makes on the first start. The database is
    transactional: views, sockets and reply tasks read it from threads of their own. (Not through
    pytest-django's ``django_user_model``, which asks for its ``db`` and so for its ``flush``.)"""
    return get_user_model().objects.create_superuser("owner", password=None)


@pytest.fixture
def client(client, owner):
    """pytest-django's test client, signed in as the owner."""
    client.force_login(owner)
    return client


@pytest.fixture
def async_client(async_client, owner):
    """pytest-django's async test client, signed in as the owner."""
    async_client.force_login(owner)
    return async_client


@pytest.fixture
def sign_in(owner):
    """``sign_in(client)``: a test client a test made itself, signed in as the owner."""

    def signed_in(client):
        client.force_login(owner)
        return client

    return signed_in


@pytest.fixture
def owner_session(client, settings) -> tuple[str, str]:
    """The owner's signed-in session cookie, (name, value)."""
    name = settings.SESSION_COOKIE_NAME
    return name, client.cookies[name].value


@pytest.fixture
def owner_cookie(owner_session) -> tuple[bytes, bytes]:
    """A ``Cookie`` header of the owner's signed-in session (for websockets)."""
    return (b"cookie", "=".join(owner_session).encode())


@pytest.fixture
def sessions_dir(tmp_path: Path, settings) -> Path:
    """An empty sessions folder that settings.PITREE_SESSIONS_DIR points at for one test."""
    path = tmp_path / "sessions"
    path.mkdir()
    settings.PITREE_SESSIONS_DIR = path
    return path


@pytest.fixture(autouse=True)
def _nothing_counted_or_marked_by_another_test() -> None:
    """The default cache (this process's memory without Redis) holds rate counts and the marks of replies
    being written (sessions_app.services.replies), keyed by session and entry ids the samples share: a
    reply a test left running would refuse another test's message."""
    caches["default"].clear()


@pytest.fixture(autouse=True)
def _caches_beside_the_test(tmp_path: Path, settings) -> None:
    """The listing cache, the search index, the replies' journals and imports' scratch files of every
    test live in its own folder, never in var/."""
    settings.PITREE_CACHE_DIR = tmp_path / "cache"
    settings.PITREE_SEARCH_DB = tmp_path / "cache" / "search.sqlite3"
    settings.PITREE_JOURNAL_DIR = tmp_path / "cache" / "replies"
    settings.PITREE_IMPORTS_DIR = tmp_path / "imports"


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
