"""The accounts database under concurrent writers, as daphne's threads use it: a transaction that
reads, then writes (a sign-in link redeemed, a grant changed) while others do the same. SQLite's
default transactions fail such a write at once with "database is locked" when another wrote since
the read (a sign-in answered 500 under load); the project's settings make each wait its turn."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import connections, transaction


def _read_then_write(path: Path, options: dict[str, Any], workers: int = 6) -> list[str]:
    """Errors of ``workers`` threads, each in a transaction (``atomic``, as the views use it) reading a
    counter, pausing, then writing it back; through Django's connections, as the app's are made."""
    setup = sqlite3.connect(path)
    setup.execute("CREATE TABLE IF NOT EXISTS counter (n INTEGER)")
    setup.execute("INSERT INTO counter VALUES (0)")
    setup.commit()
    setup.close()
    alias = f"locking-{path.stem}"
    connections.settings[alias] = {**connections.settings["default"], "NAME": str(path), "OPTIONS": options}
    errors: list[str] = []

    def work() -> None:
        try:
            with transaction.atomic(using=alias), connections[alias].cursor() as cursor:
                cursor.execute("SELECT n FROM counter")
                (n,) = cursor.fetchone()
                time.sleep(0.05)
                cursor.execute("UPDATE counter SET n = %s", [n + 1])
        except Exception as error:
            errors.append(str(error))
        finally:
            connections[alias].close()

    threads = [threading.Thread(target=work) for _ in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    del connections.settings[alias]
    return errors


def test_writers_wait_their_turn_with_the_projects_settings(tmp_path: Path, django_db_blocker: Any) -> None:
    with django_db_blocker.unblock():  # connections of its own, to a file of its own
        assert _read_then_write(tmp_path / "project.sqlite3", settings.DATABASES["default"]["OPTIONS"]) == []
    with sqlite3.connect(tmp_path / "project.sqlite3") as db:
        assert db.execute("SELECT n FROM counter").fetchone() == (6,)  # no update lost either
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_sqlite_s_default_transactions_fail_there(tmp_path: Path, django_db_blocker: Any) -> None:
    """What the settings are for: the same work with SQLite's default (deferred) transactions."""
    with django_db_blocker.unblock():
        errors = _read_then_write(tmp_path / "default.sqlite3", {"timeout": 20})
    assert errors and all("locked" in error for error in errors)
