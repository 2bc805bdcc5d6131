"""The default cache when several processes share a Redis (``PITREE_REDIS_URL``): Django's Redis cache,
which a Redis that dies costs only the sharing of what it counts.

What the default cache holds are counts: share and sign-in links opened, failed sign-ins per address
(django-ratelimit), searches and downloads under way (``sessions_app.views.busy``); and the marks of
replies being written (``sessions_app.services.replies.answering``). With Django's own
Redis cache, a dead Redis made every one of those requests answer 500: signing in, opening a share
link, a one-time link. Here a call that Redis cannot answer (refused, or not within ``SOCKET_SECONDS``)
is made in this process's memory instead, and so is every call for ``RETRY_SECONDS`` after it (so
that a Redis that hangs costs one wait, not one per request); then Redis is asked again. Meanwhile
each process counts on its own, as without Redis; one warning says so when it begins, one when it
ends.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

from django.core.cache.backends.locmem import LocMemCache
from django.core.cache.backends.redis import RedisCache
from redis.exceptions import RedisError

log = logging.getLogger(__name__)

SOCKET_SECONDS = 0.5  # what a call waits for Redis (a few milliseconds when it is well)
RETRY_SECONDS = 10.0  # how long the process's memory answers alone after Redis failed

F = TypeVar("F", bound=Callable[..., Any])


def _or_local(method: F) -> F:
    name = method.__name__

    @wraps(method)
    def call(self: FallbackRedisCache, *args: Any, **kwargs: Any) -> Any:
        if time.monotonic() >= self.down_until:
            try:
                answer = method(self, *args, **kwargs)
            except RedisError as error:
                self.failed(error)
            else:
                if self.failing:
                    self.answered()
                return answer
        return getattr(self.local, name)(*args, **kwargs)

    return call  # type: ignore[return-value]


class FallbackRedisCache(RedisCache):
    """Django's ``RedisCache`` answering from this process's memory while Redis does not."""

    def __init__(self, server: str, params: dict[str, Any]) -> None:
        options = {"socket_connect_timeout": SOCKET_SECONDS, "socket_timeout": SOCKET_SECONDS}
        super().__init__(server, {**params, "OPTIONS": {**options, **params.get("OPTIONS", {})}})
        self.local = LocMemCache("pitree-redis-fallback", {"TIMEOUT": params.get("TIMEOUT", 300)})
        self.down_until = 0.0  # until then, the process's memory answers without asking Redis
        self.failing = False

    def failed(self, error: RedisError) -> None:
        self.down_until = time.monotonic() + RETRY_SECONDS
        if not self.failing:
            self.failing = True
            log.warning(
                "the cache's Redis does not answer (%s): this process counts in its own memory meanwhile "
                "(links opened, sign-ins, searches under way, replies being written), asking Redis again every %s s",
                error,
                RETRY_SECONDS,
            )

    def answered(self) -> None:
        self.failing = False
        log.warning("the cache's Redis answers again: counts are shared by the processes again")

    add = _or_local(RedisCache.add)
    get = _or_local(RedisCache.get)
    set = _or_local(RedisCache.set)
    touch = _or_local(RedisCache.touch)
    delete = _or_local(RedisCache.delete)
    get_many = _or_local(RedisCache.get_many)
    has_key = _or_local(RedisCache.has_key)
    incr = _or_local(RedisCache.incr)
    set_many = _or_local(RedisCache.set_many)
    delete_many = _or_local(RedisCache.delete_many)
    clear = _or_local(RedisCache.clear)
