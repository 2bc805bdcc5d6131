"""Third-party middleware made async-capable, keeping each library's own code for the work.

Why: under ASGI, Django runs the middleware chain asynchronously only if every middleware can; one
sync-only middleware makes the chain below it run in a worker thread, and an async view under it
through ``async_to_sync``. The send view then held that thread for as long as the reply took, and on
SIGTERM the thread waited for an event loop that had stopped: the process never exited (threading's
shutdown joins it). WhiteNoise's and django-ratelimit's middleware are sync-only; these add the
async path. ``tests/assistants/test_shutdown.py`` checks that Django adapts nothing.
"""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.http import HttpRequest
from django.utils.deprecation import MiddlewareMixin
from django_ratelimit import middleware as ratelimit
from whitenoise import middleware as whitenoise


class WhiteNoiseMiddleware(whitenoise.WhiteNoiseMiddleware):
    """Static files as WhiteNoise serves them; every other request goes on, sync or async.

    Its index of the files is made once per process: Django builds a middleware chain for every handler
    it makes (each test client among them), and WhiteNoise walks every finder and stats every file as
    it is built (about 60 ms here, the admin's files included). The files do not change while a
    process runs, unless ``WHITENOISE_AUTOREFRESH`` (on with ``PITREE_DEBUG``) has WhiteNoise look for
    them on each request, and then it builds no index at all."""

    sync_capable = True
    async_capable = True
    _indexed: ClassVar[dict[str, Any] | None] = None  # url -> WhiteNoise's responder for that file

    def __init__(self, get_response: Any) -> None:
        super().__init__(get_response)
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)

    def add_files_from_finders(self) -> None:
        indexed = WhiteNoiseMiddleware._indexed
        if indexed is None:
            super().add_files_from_finders()
            WhiteNoiseMiddleware._indexed = indexed = dict(self.files)
        self.files.update(indexed)

    def __call__(self, request: HttpRequest) -> Any:
        if self.is_async:
            return self.__acall__(request)
        return super().__call__(request)

    async def __acall__(self, request: HttpRequest) -> Any:
        if self.autorefresh:  # DEBUG: looks on disk
            static_file = await asyncio.to_thread(self.find_file, request.path_info)
        else:
            static_file = self.files.get(request.path_info)
        if static_file is not None:
            return self.serve(static_file, request)
        return await self.get_response(request)


class RatelimitMiddleware(MiddlewareMixin):
    """django-ratelimit's answer to a ``Ratelimited`` refusal (``RATELIMIT_VIEW``, 429)."""

    process_exception = ratelimit.RatelimitMiddleware.process_exception
