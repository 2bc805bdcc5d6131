"""An entry's fragment (``_entry.html``), rendered once and kept in the ``fragments`` cache: the page's
transcript shows it (``templatetags.pitree.entry_html``) and the push sends the same fragment
(``live/fragments.py``), so a pushed entry looks exactly like a loaded one.

A stored line never changes, so its fragment depends only on what the key holds: the line itself, its
label and navigator, and the page's session and read-only state. The per-request parts are cached as
slots and filled in on the way out: the tools the reader may use (the others are cut out,
``display.tools``), the CSRF token of its forms, and the tab's position, which its forms and links
name (``at``) and which marks the entry the tab stands on (``is-position``). So a tab that moves (every
message sent) renders only its new entries: rendering forty entries through the template engine was
most of a session page's cost.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Container
from dataclasses import astuple
from typing import Any
from urllib.parse import quote

from django.core.cache import caches
from django.template.loader import render_to_string
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from ..display.entries import EntryView
from ..display.tools import READING, SIBLING, offered

# Stand for the request's CSRF token and the tab's position inside a cached fragment. (Hex: escaping and
# URL-encoding leave them as they are.)
_CSRF_SLOT = secrets.token_hex(16)
_CSRF_INPUT = f'<input type="hidden" name="csrfmiddlewaretoken" value="{_CSRF_SLOT}">'
_POSITION_SLOT = secrets.token_hex(16)


def entry_fragment(
    e: EntryView,
    session_id: str,
    read_only: bool,
    *,
    position: str = "",
    csrf_token: Any = None,
    tools: frozenset[str] = READING,
    trunk: Container[str] = (),
) -> SafeString:
    """``_entry.html`` for ``e``: for the tab at ``position`` (none: a push, whose tab marks the entry it
    stands on and names it when a form is sent), whose reader is offered ``tools`` (less Edit and
    Regenerate at the entries of ``trunk``), with the request's ``csrf_token`` (none: a push, whose
    forms post through htmx, which sends the page's token as a header)."""
    values = {"e": e, "session_id": session_id, "position": _POSITION_SLOT, "read_only": read_only}
    parts: tuple[Any, ...] = (e.line, e.id, e.label, astuple(e.navigator) if e.navigator else None)
    key = "entry:" + hashlib.blake2b(repr((*parts, session_id, read_only)).encode()).hexdigest()
    cache = caches["fragments"]
    html = cache.get(key)
    if html is None:
        html = render_to_string("sessions_app/partials/_entry.html", {**values, "csrf_token": _CSRF_SLOT})
        cache.set(key, html)
    if e.id in trunk:
        tools -= {SIBLING}  # its sibling would be outside the branch shared with the reader
    html = offered(html, tools)
    html = html.replace(_CSRF_SLOT, str(csrf_token)) if csrf_token else html.replace(_CSRF_INPUT, "")
    # In a query string (links' ``at=``) the position is URL-encoded; elsewhere (inputs) it is text.
    html = html.replace(f"at={_POSITION_SLOT}", f"at={escape(quote(position, safe=''))}")
    html = html.replace(_POSITION_SLOT, escape(position))
    if position and e.id == position:
        tag_end = f'" id="{escape(e.dom_id)}"'
        html = html.replace(tag_end, f" is-position{tag_end}", 1)
    return mark_safe(html)
