"""These tests are PostgreSQL's: ``./scripts/test`` runs them in its PostgreSQL pass, on a cluster of
their own (tests/support/postgres.py). On SQLite, the other passes' database, they are not collected:
there is no pool to test there, and SQLite serialises the writes whose races they make happen."""

from django.db import connection

collect_ignore_glob = [] if connection.vendor == "postgresql" else ["test_*.py"]
