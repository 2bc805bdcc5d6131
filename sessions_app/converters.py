"""URL converters: what a session or entry id may look like in a URL (pi's own id rule for sessions).

Entry ids are 8 hex digits when pi or pitree write them, but a reader accepts any string, so an entry's
URL must carry any string in one path segment. The server decodes the path once before routing, so a
percent-encoded ``/`` would come back as a ``/`` and split the segment. The converter therefore escapes
``%`` and ``/`` itself (and an id that is only dots, which browsers would resolve as ``.``/``..``)
before Django percent-encodes the URL: what the server decodes is the escaped form, which ``to_python``
turns back into the id. ``with/slash`` travels as ``with%252Fslash``; ordinary ids are unchanged.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

from django.urls import NoReverseMatch, register_converter, reverse

# Longest id a URL or a form may name: far beyond any id pi writes, short enough that the worst case
# (every character escaped and percent-encoded) stays within the server's request-line limit.
MAX_ID_CHARS = 1024
_UNUSABLE = re.compile(r"[\x00-\x1f]")


def usable_id(value: str) -> bool:
    """An id a URL or form can carry: 1 to MAX_ID_CHARS characters, no control characters. Entries
    whose ids are not usable are still shown, without links or actions."""
    return 0 < len(value) <= MAX_ID_CHARS and not _UNUSABLE.search(value)


class SessionIdConverter:
    """pi's custom session id rule: letters, digits, ``.``, ``_``, ``-``; alphanumeric at both ends."""

    regex = r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,126}[A-Za-z0-9])?"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


class SessionStateIdConverter(SessionIdConverter):
    """A session id, or a session as it was after a line of its file: ``<id>@<line>`` (time travel;
    pi's ids hold no ``@``). Websockets follow sessions as they are, and take ``SessionIdConverter``."""

    regex = SessionIdConverter.regex + r"(?:@[0-9]{1,12})?"


class EntryIdConverter:
    """Any usable entry id, escaped so that it stays one path segment (see the module's docstring)."""

    regex = r"[^/]+"

    def to_python(self, value: str) -> str:
        entry_id = unquote(value)
        if not usable_id(entry_id):
            raise ValueError(entry_id)  # no match: a 404
        return entry_id

    def to_url(self, value: str) -> str:
        if not usable_id(value):
            raise ValueError(value)  # NoReverseMatch: the entry is shown without a link
        if value in (".", ".."):
            return value.replace(".", "%2E")
        return value.replace("%", "%25").replace("/", "%2F")


# The names the URL patterns use (urls.py, sharing_urls.py), registered with the converters themselves
# so that every URL module finds them whichever loads first.
register_converter(SessionStateIdConverter, "sid")
register_converter(EntryIdConverter, "eid")


def reverse_entry(name: str, session_id: str, entry_id: str, *args: object) -> str | None:
    """``reverse`` for a URL naming an entry, or None for the rare id no URL can carry (``usable_id``):
    the caller shows that entry without a link, or links something else."""
    try:
        return reverse(name, args=[session_id, entry_id, *args])
    except NoReverseMatch:
        return None
