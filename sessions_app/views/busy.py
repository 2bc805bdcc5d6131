"""Expensive requests (full-text search, downloads, uploads) one person may have under way at once.

Each can keep a core busy for a while (a search over a large folder, a download of a 30 MB session, an
upload read whole to check it); a few of them at once from one person (a script, a stuck key) would
take the server from everyone else. So each person has ``PITREE_BUSY_PER_USER`` of them under way at
most; one more is answered 429 at once, saying why, with nothing done. A person is a signed-in user
(every browser and tab of theirs counts together), or a browser holding share links (its Django
session), which opens links no faster than ``PITREE_LINK_RATE``.

They are counted in Django's default cache: per process, or shared by every process through Redis
(``PITREE_REDIS_URL``). A count lives ``BUSY_SECONDS`` past its last use, so that a process killed
while it counted leaves nothing behind for long. A download counts until its last byte is sent.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Iterator
from functools import wraps
from typing import Any, TypeVar, cast

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest, HttpResponseBase, StreamingHttpResponse

from .responses import form_error

BUSY_SECONDS = 15 * 60
RETRY_AFTER = 5  # seconds a refused request is told to wait

View = TypeVar("View", bound=Callable[..., Any])


def few_at_once(view: View) -> View:
    """An async view of which each person may have ``PITREE_BUSY_PER_USER`` under way (with every other
    view so marked); more are answered 429."""

    @wraps(view)
    async def limited(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        key = await _key(request)
        if not await asyncio.to_thread(_take, key):
            return await asyncio.to_thread(_refused, request)
        try:
            response = await view(request, *args, **kwargs)
        except BaseException:
            await asyncio.to_thread(_give_back, key)
            raise
        if isinstance(response, StreamingHttpResponse):
            content = response.streaming_content
            if response.is_async:
                response.streaming_content = _async_then_give_back(cast(AsyncIterator[bytes], content), key)
            else:
                response.streaming_content = _then_give_back(cast(Iterator[bytes], content), key)
        else:
            await asyncio.to_thread(_give_back, key)
        return response

    return cast(View, limited)


async def _key(request: HttpRequest) -> str:
    user = await request.auser()
    if user.is_authenticated:
        return f"pitree:busy:user:{user.pk}"
    return f"pitree:busy:browser:{request.session.session_key or ''}"


def _take(key: str) -> bool:
    cache.add(key, 0, BUSY_SECONDS)
    if cache.incr(key) <= settings.PITREE_BUSY_PER_USER:
        cache.touch(key, BUSY_SECONDS)
        return True
    _give_back(key)
    return False


def _give_back(key: str) -> None:
    with contextlib.suppress(ValueError):  # forgotten meanwhile (BUSY_SECONDS passed): nothing to give back
        cache.decr(key)


def _refused(request: HttpRequest) -> HttpResponseBase:
    busy = settings.PITREE_BUSY_PER_USER
    response = form_error(
        request,
        f"You have {busy} searches, downloads or uploads under way already; "
        "this one was not started. Try again when one of them is done.",
        status=429,
    )
    response["Retry-After"] = str(RETRY_AFTER)
    return response


async def _async_then_give_back(content: AsyncIterator[bytes], key: str) -> AsyncIterator[bytes]:
    try:
        async for part in content:
            yield part
    finally:
        await asyncio.to_thread(_give_back, key)


def _then_give_back(content: Iterator[bytes], key: str) -> Iterator[bytes]:
    try:
        yield from content
    finally:
        _give_back(key)
