"""The write transaction of pitree's SQLite caches (the listing cache, the search index).

Their connections run in autocommit mode (``isolation_level=None``) so that reads take no lock; a write
says where it begins and ends. ``BEGIN IMMEDIATE`` takes the write lock at once, so two processes never
both read a file's cached state and then collide when upgrading to write.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def write_transaction(db: sqlite3.Connection) -> Iterator[None]:
    """One write transaction, waiting its turn behind other writers; rolled back on any exception."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
