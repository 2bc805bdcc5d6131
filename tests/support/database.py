"""Copies of the test database: the database as migrated, put back after each test that commits
(tests/conftest.py's ``transactional_db``), and rows a module builds once and each of its tests starts
from (the permission tests' people and shares, tests/teams/conftest.py).

A copy taken with SQLite's backup API and written back takes a fraction of a millisecond, and what
it writes back is committed: every thread sees it (views, sockets and replies read from threads of
their own). The test database is SQLite in memory, as pytest-django makes it from the settings.
"""

from __future__ import annotations

import sqlite3

from django.contrib.contenttypes.models import ContentType
from django.db import connection


class Saved:
    """The test database as it was when this was made; ``restore()`` writes it back, whole."""

    def __init__(self) -> None:
        connection.ensure_connection()
        assert connection.is_in_memory_db(), f"not a test database: {connection.settings_dict['NAME']}"
        self._copy = sqlite3.connect(":memory:")
        connection.connection.backup(self._copy)

    def restore(self) -> None:
        connection.ensure_connection()
        self._copy.backup(connection.connection)
        ContentType.objects.clear_cache()  # the ids it holds may be those of rows the copy replaced
