"""The event loop's worker threads give their database connection back after each call.

Async code runs its blocking work (file reads, the permission function's queries) in asyncio's default
executor (``asyncio.to_thread``, ``sync_to_async(thread_sensitive=False)``). Django opens a connection
per thread and gives it back only where a request ends; these threads serve no request, so each would
hold the connection it first opened for as long as the process runs. With PostgreSQL's pool
(settings.py) that is a pooled connection lent for good, and one a database restart leaves broken in
its thread. So when the pool is on, daphne's loop runs that work in ``DatabaseThreads``, which hands
the thread's connection back to the pool after each call (``close_old_connections``).

A request's own thread (the one Django runs its middleware in) holds the connection the middleware
took (the session, the user, the permission checks) until the request ends; an async view lasts as
long as the reply it writes or the download it streams, so twenty people waiting for replies took
every connection of the pool, and the next request waited 30 s for one and failed (500).
``ConnectionGivenBack``, the last middleware when the pool is on, gives it back before an async view
runs: the view's own queries run in worker threads, which give theirs back after each call.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

from asgiref.sync import iscoroutinefunction
from django.db import close_old_connections
from django.http import HttpRequest
from django.utils.deprecation import MiddlewareMixin

T = TypeVar("T")


class DatabaseThreads(ThreadPoolExecutor):
    """asyncio's default executor, each call followed by its thread's connections going back."""

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        return super().submit(_then_give_back, fn, *args, **kwargs)


def _then_give_back(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    try:
        return fn(*args, **kwargs)
    finally:
        close_old_connections()


class ConnectionGivenBack(MiddlewareMixin):
    """Before an async view, the request's thread gives its connection back to the pool."""

    def process_view(self, request: HttpRequest, view: Callable[..., Any], args: Any, kwargs: Any) -> None:
        if iscoroutinefunction(view):
            close_old_connections()
