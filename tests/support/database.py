"""Copies of the test database, for rows a module builds once and each of its tests starts from.

pytest-django's ``transactional_db`` empties every table after each test, so rows a test needs were
built again for each (the permission tests' people and shares: most of their time). A test that
starts by writing back a copy taken with SQLite's backup API has them again, committed and seen by
every thread (views, sockets and replies read from threads of their own), in a few milliseconds.
The test database is SQLite in memory, as pytest-django makes it from the settings.
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
