"""WhiteNoise, with its index of static files made once per process.

Django builds a middleware chain for every handler it makes: each ASGI application instance, and every
test client. WhiteNoise's middleware walks every static files finder and stats every file as it is
built (about 60 ms here, the admin's files included), so a test suite that makes a thousand clients
spent a minute indexing the same files. The files do not change while a process runs unless
``WHITENOISE_AUTOREFRESH`` (on with ``PITREE_DEBUG``) asks WhiteNoise to look for them on each request,
in which case it builds no index at all.
"""

from __future__ import annotations

from typing import Any, ClassVar

from whitenoise.middleware import WhiteNoiseMiddleware


class StaticFilesMiddleware(WhiteNoiseMiddleware):
    _indexed: ClassVar[dict[str, Any] | None] = None  # url -> WhiteNoise's responder for that file

    def add_files_from_finders(self) -> None:
        indexed = StaticFilesMiddleware._indexed
        if indexed is None:
            super().add_files_from_finders()
            StaticFilesMiddleware._indexed = indexed = dict(self.files)
        self.files.update(indexed)
