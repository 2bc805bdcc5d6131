"""A request's thread gives its pooled connection back before an async view (pitree_web/dbthreads.py):
an async view lasts as long as the reply it waits for or the download it streams, and twenty of them
held every connection of the pool, so that the next request waited 30 s for one and failed (500).

They run in ./scripts/test's PostgreSQL run (the pool is PostgreSQL's); on SQLite they are not collected (conftest.py).
"""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection
from django.http import HttpRequest, HttpResponse
from django.test import RequestFactory

from pitree_web.dbthreads import ConnectionGivenBack

pytestmark = pytest.mark.django_db(transaction=True)


async def async_view(request: HttpRequest) -> HttpResponse:
    return HttpResponse()


def sync_view(request: HttpRequest) -> HttpResponse:
    return HttpResponse()


def _after_the_middleware(view: Any) -> Any:
    """The request's thread as the middleware leave it (they queried), once the last has run."""
    get_user_model().objects.exists()
    assert connection.connection is not None
    ConnectionGivenBack(view).process_view(RequestFactory().get("/"), view, (), {})
    return connection.connection


def test_the_last_middleware_gives_the_connection_back_before_an_async_view() -> None:
    assert settings.MIDDLEWARE[-1] == "pitree_web.dbthreads.ConnectionGivenBack"
    assert _after_the_middleware(async_view) is None  # back in the pool
    assert get_user_model().objects.count() >= 0  # and lent again when the thread queries again


def test_a_sync_view_keeps_it_for_its_own_queries() -> None:
    assert _after_the_middleware(sync_view) is not None
