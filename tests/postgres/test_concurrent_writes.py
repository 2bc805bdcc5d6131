"""Writes that race on PostgreSQL, where SQLite would have made them take turns.

SQLite's transactions take the write lock as they begin (``transaction_mode: IMMEDIATE``,
tests/web/test_database_locking.py), so a transaction that reads, then writes, runs alone. PostgreSQL
lets two run at once and sees neither's rows until they commit: two first changes both find no row to
update, two first starts both find no account. Each test holds one transaction open after its write
(``hold``) while a second thread does the same work, which then meets the first's uncommitted row:
what PostgreSQL does there is what the code must survive.

They run in ./scripts/test's PostgreSQL run (with the permission matrix); on SQLite, which makes them
take turns, they are not collected (conftest.py).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import connections, transaction
from django.utils import timezone

from sessions_app.access import changes, signin
from sessions_app.access.shares import revoke
from sessions_app.access.workspaces import personal_workspace
from sessions_app.models import GrantGeneration, Share, SignInLink, Workspace

pytestmark = pytest.mark.django_db(transaction=True)

HOLD = 0.5  # seconds the first transaction stays open after its write, while the second meets it


def _race(first: Callable[[], Any], second: Callable[[], Any]) -> tuple[Any, Any]:
    """Run ``first`` in a transaction held open for ``HOLD`` seconds after it returns, and ``second``
    in another thread once ``first`` has returned; both results (an exception is re-raised)."""
    written = threading.Event()
    results: dict[str, Any] = {}

    def run(name: str, work: Callable[[], Any], hold: bool) -> None:
        try:
            if hold:
                with transaction.atomic():
                    results[name] = work()
                    written.set()
                    time.sleep(HOLD)
            else:
                written.wait(10)
                results[name] = work()
        except Exception as error:
            results[name] = error
            written.set()
        finally:
            connections.close_all()

    threads = [
        threading.Thread(target=run, args=("first", first, True)),
        threading.Thread(target=run, args=("second", second, False)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)
    for name in ("first", "second"):
        if isinstance(results.get(name), Exception):
            raise results[name]
    return results["first"], results["second"]


def test_two_first_changes_to_grants_at_once_both_count() -> None:
    GrantGeneration.objects.all().delete()
    first, second = _race(changes.bump, changes.bump)
    assert second == first + 1
    assert GrantGeneration.objects.get(pk=1).value == first + 1


def test_two_first_starts_at_once_make_one_owner() -> None:
    first, second = _race(signin.first_owner, signin.first_owner)
    assert first is not None and second is None
    assert get_user_model().objects.count() == 1


def test_a_share_revoked_twice_at_once_keeps_the_first_time() -> None:
    owner = get_user_model().objects.create_user("owner")
    made = Share.objects.create(session_id="s1", user=get_user_model().objects.create_user("friend"), created_by=owner)
    first_copy, second_copy = Share.objects.get(pk=made.pk), Share.objects.get(pk=made.pk)
    _race(lambda: revoke(first_copy), lambda: revoke(second_copy))
    stored = Share.objects.get(pk=made.pk).revoked_at
    assert stored is not None and stored == first_copy.revoked_at == second_copy.revoked_at


def test_a_personal_workspace_made_twice_at_once_is_one(settings: Any, tmp_path: Any) -> None:
    settings.PITREE_SESSIONS_DIR = tmp_path
    settings.PITREE_DEFAULT_CWD = "/srv/work"
    user = get_user_model().objects.create_user("ada")
    first, second = _race(lambda: personal_workspace(user), lambda: personal_workspace(user))
    assert first.pk == second.pk
    assert list(Workspace.objects.filter(owner=user).values_list("folder", flat=True)) == [first.folder]


def test_a_sign_in_link_opened_twice_at_once_signs_in_once() -> None:
    user = get_user_model().objects.create_user("ada")
    token = signin.mint(user)
    first, second = _race(lambda: signin.redeem(token), lambda: signin.redeem(token))
    assert [first, second] == [user, None]
    assert SignInLink.objects.get().used_at is not None
    assert SignInLink.objects.get().expires_at > timezone.now() + timedelta(hours=1)
