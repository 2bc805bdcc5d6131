"""Copies of the test database's rows: the database as migrated, put back after each test that commits
(tests/conftest.py's ``transactional_db``), and rows a module builds once and each of its tests starts
from (the permission tests' people and shares, tests/teams/conftest.py).

Putting a few hundred rows back takes a few milliseconds, and what it writes is committed: every
thread sees it (views, sockets and replies read from threads of their own). It is plain SQL through
Django's connection, so it works on SQLite (the suite) and PostgreSQL (the permission matrix's second
run) alike.
"""

from __future__ import annotations

import os
from typing import Any

from django.apps import apps
from django.contrib.contenttypes.models import ContentType
from django.core.management.color import no_style
from django.db import connection, transaction


class Saved:
    """Every row of the test database's tables as they were when this was made; ``restore()`` puts
    them back, in one transaction (foreign keys are checked at its end)."""

    def __init__(self) -> None:
        name = os.path.basename(connection.settings_dict["NAME"])
        assert name.startswith("test_"), f"not a test database: {name}"
        self._rows: dict[str, tuple[list[str], list[tuple[Any, ...]]]] = {}
        with connection.cursor() as cursor:
            for table in sorted(connection.introspection.django_table_names(only_existing=True)):
                cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)}")
                self._rows[table] = ([column[0] for column in cursor.description], cursor.fetchall())

    def restore(self) -> None:
        quote = connection.ops.quote_name
        with transaction.atomic(), connection.cursor() as cursor:
            for sql in connection.ops.sql_flush(no_style(), list(self._rows), reset_sequences=True):
                cursor.execute(sql)
            for table, (columns, rows) in self._rows.items():
                if rows:
                    marks = ", ".join(["%s"] * len(columns))
                    insert = f"INSERT INTO {quote(table)} ({', '.join(map(quote, columns))}) VALUES ({marks})"
                    cursor.executemany(insert, rows)
            for sql in connection.ops.sequence_reset_sql(no_style(), apps.get_models(include_auto_created=True)):
                cursor.execute(sql)
        ContentType.objects.clear_cache()  # the ids it holds may be those of rows put back otherwise
