"""Turns refusals (the core's, and access's) into pages a person can read, wherever in a view they
surface, and sets the headers every answer carries: its Content-Security-Policy and its
Cache-Control."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.cache import patch_cache_control
from django.utils.deprecation import MiddlewareMixin
from django_ratelimit.exceptions import Ratelimited

from .sessionfiles.errors import NotASession, SessionError
from .views.responses import form_error


class RefusalMiddleware(MiddlewareMixin):
    """Every refusal answered in one place, where the user acted: an unknown session or entry (404), a
    file that is not a session (422), another refusal of the core (409), or one of access's
    (``PermissionDenied``: a viewer writing, a folder that is not theirs; 403). The file is never
    touched. (MiddlewareMixin: sync and async, as every middleware here must be: see
    pitree_web/middleware.py.)"""

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if isinstance(exception, Http404):
            # The same page with DEBUG on as off: say what was not found.
            return render(request, "404.html", {"reason": public_message(str(exception))}, status=404)
        if isinstance(exception, NotASession):
            return render(
                request,
                "sessions_app/error.html",
                {
                    "title": "This file is not a session pitree can read",
                    "errors": [public_message(str(exception)), "The file was left exactly as it is."],
                },
                status=422,
            )
        if isinstance(exception, SessionError):
            # A write the core refused (unknown entry, read-only file, failed summary…): nothing was
            # written; say why where the user acted.
            return form_error(request, public_message(str(exception)), status=409)
        if isinstance(exception, PermissionDenied) and not isinstance(exception, Ratelimited):
            return form_error(request, str(exception) or "This is not allowed. Nothing was written.", status=403)
        return None


# An absolute path: a "/" that does not continue a word (ids such as "with/slash" stay whole).
_ABSOLUTE_PATH = re.compile(r"(?<![\w.%~-])/[^\s'\",:;]*")
# What a core message names first ("<file>: <why>"): a session file in a workspace folder, or its name
# alone (the catalog's). Greedy up to the last ".jsonl" before ": ", since a file name may hold ": " too.
_FILE = r"(?:[^/]*/)+[^/]*\.jsonl(?=: |$)"
_FILE_NAME = re.compile(r"^[^/]*\.jsonl(?=: )")
# A workspace folder alone (where a new file was to go): pi's and pitree's folder names hold no ":".
_FOLDER = r"[^/]*?(?=: |$)"


def public_message(text: str) -> str:
    """The core's message as a page may show it, to anyone: its messages name files by path for the
    command line, but a page names no file or folder, neither where the server keeps them nor what a
    workspace or a session file is called (a link holder learns nothing of the owner's folders). A
    session file is "this session's file", a workspace folder "this session's folder", the sessions
    folder itself (spelled however its path is: spaces, commas) "the sessions folder", and any other
    absolute path "a path outside the sessions folder"."""
    root = settings.PITREE_SESSIONS_DIR
    for spelling in sorted({str(root), os.path.abspath(root), os.path.realpath(root)}, key=len, reverse=True):
        inside = re.escape(os.path.join(spelling, ""))
        text = re.sub(inside + _FILE, "this session's file", text)
        text = re.sub(inside + _FOLDER, "this session's folder", text)
        text = text.replace(spelling, "the sessions folder")
    text = _FILE_NAME.sub("this session's file", text)
    return _ABSOLUTE_PATH.sub("a path outside the sessions folder", text)


CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",  # htmx runs with allowEval off; no inline scripts or handlers
        "style-src 'self' 'unsafe-inline'",  # style attributes carry tree depths
        "img-src 'self' data:",  # images inside messages are data: URLs; nothing is fetched from elsewhere
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "frame-ancestors 'none'",
        "form-action 'self'",
    ]
)


class ResponseHeadersMiddleware:
    """Headers for every answer of the app (static files are answered before this, WhiteNoise's own).

    The Content-Security-Policy is a second wall behind escaping: even if some content slipped through
    as HTML, the browser would run no script and load nothing that is not the app's own. Cache-Control
    ``private, no-store``: every page shows someone's sessions, which no cache shared between people (a
    proxy) may keep, and a page is the file as it was read, which the browser must ask for again, Back
    and Forward included (they reuse a cached page even when told ``no-cache``: a session left by a
    link came back on the branch it was first loaded at, its catching up then reading the reader's own
    switch as another tab's). A view that says otherwise keeps its own. Sync and async
    (pitree_web/middleware.py says why), without a thread hop for either."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Callable[[HttpRequest], Any]) -> None:
        self.get_response = get_response
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> Any:
        if self.is_async:
            return self.__acall__(request)
        return _with_headers(self.get_response(request))

    async def __acall__(self, request: HttpRequest) -> HttpResponse:
        return _with_headers(await self.get_response(request))


def _with_headers(response: HttpResponse) -> HttpResponse:
    response.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
    if not response.has_header("Cache-Control"):
        patch_cache_control(response, private=True, no_store=True)
    return response
