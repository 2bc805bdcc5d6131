"""A Redis that dies under the default cache costs only the sharing of its counts: signing in, share
links, one-time links and the rate limits keep working, counted in each process's memory, and the
counts are shared again once Redis answers."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.cache import caches
from django.test import Client
from redis.exceptions import ConnectionError as RedisConnectionError
from support.redisserver import redis_server, shut_down
from support.teams import World

from pitree_web import cache as fallback
from sessions_app.access import signin

pytestmark = pytest.mark.processes  # the tests start servers of their own (tests/support/tiers.py)


@pytest.fixture
def redis_cache(tmp_path: Path, settings: Any) -> Iterator[Any]:
    """The default cache on a redis-server of the test's own, as PITREE_REDIS_URL sets it; yields a
    function that stops that server."""
    with redis_server(tmp_path) as url:
        settings.CACHES = {
            **settings.CACHES,
            "default": {"BACKEND": "pitree_web.cache.FallbackRedisCache", "LOCATION": url},
        }
        caches["default"].clear()

        def stop() -> None:
            caches["default"].get("anything")  # connected while Redis is well
            shut_down(url)

        yield stop


def test_sign_in_share_links_and_one_time_links_work_with_redis_dead(
    world: World, redis_cache: Any, caplog: pytest.LogCaptureFixture
) -> None:
    assert isinstance(caches["default"], fallback.FallbackRedisCache)
    redis_cache()
    with caplog.at_level(logging.WARNING, logger="pitree_web.cache"):
        signed = Client().post("/accounts/login/", {"username": "alice", "password": "alice-pw-1234"})
        assert signed.status_code == 302 and signed["Location"] == "/"
        holder = Client()
        assert holder.get(f"/l/{world.token}/").status_code == 302
        assert holder.get(world.url()).status_code == 200
        once = Client().get(f"/accounts/once/{signin.mint(world.users['viewer'])}/")
        assert once.status_code == 302
    said = [record.getMessage() for record in caplog.records if "does not answer" in record.getMessage()]
    assert len(said) == 1  # said once, not at every request


def test_the_limits_still_count_with_redis_dead(world: World, redis_cache: Any, settings: Any) -> None:
    settings.AXES_FAILURE_LIMIT = 3
    redis_cache()
    guesser = Client()
    answers = [guesser.post("/accounts/login/", {"username": "bob", "password": f"g{n}"}).status_code for n in range(4)]
    assert answers[-1] == 429  # django-axes, in the database


def test_counts_are_shared_again_once_redis_answers(tmp_path: Path, settings: Any, monkeypatch) -> None:
    monkeypatch.setattr(fallback, "RETRY_SECONDS", 0.0)
    with redis_server(tmp_path) as url:
        settings.CACHES = {
            **settings.CACHES,
            "default": {"BACKEND": "pitree_web.cache.FallbackRedisCache", "LOCATION": url},
        }
        cache = caches["default"]
        cache.set("n", 1)
        client = cache._cache  # Django's Redis client: the one that talks to Redis
        real = client.get_client
        failing = [True]

        def get_client(*args: Any, **kwargs: Any) -> Any:
            if failing[0]:
                raise RedisConnectionError("refused")
            return real(*args, **kwargs)

        monkeypatch.setattr(client, "get_client", get_client)
        assert cache.get("n") is None  # the process's own memory, which holds nothing of it
        failing[0] = False
        assert cache.get("n") == 1  # Redis again
