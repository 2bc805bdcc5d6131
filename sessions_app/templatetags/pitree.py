"""Template tags and filters for entries: the entry fragment (cached), safe Markdown, ages, role names."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import astuple
from datetime import UTC, datetime
from typing import Any

from django import template
from django.core.cache import caches
from django.template.loader import render_to_string
from django.urls import NoReverseMatch, reverse
from django.utils.safestring import SafeString, mark_safe
from django.utils.timesince import timesince

from ..display.entries import EntryView
from ..display.markdown import render_markdown

register = template.Library()

_ROLE_NAMES = {
    "user": "You",
    "assistant": "Assistant",
    "toolResult": "Tool result",
    "bashExecution": "Shell",
    "custom": "Extension",
    "custom_message": "Extension",
    "system": "System",
}


@register.filter
def markdown(text: str) -> SafeString:
    return render_markdown(text or "")


@register.filter
def ago(epoch_ms: int) -> str:
    """ "3 minutes ago" for a time in epoch milliseconds."""
    moment = datetime.fromtimestamp(epoch_ms / 1000, UTC)
    return f"{timesince(moment).split(',')[0]} ago"


@register.filter
def role_name(kind: str) -> str:
    return _ROLE_NAMES.get(kind, kind)


@register.simple_tag
def entry_url(name: str, session_id: str, entry_id: str | None, *args: object) -> str:
    """``{% url %}`` for a URL naming an entry, or "" without an entry or for the rare id no URL can
    carry (see ``converters.usable_id``): such an entry is shown without links."""
    if not entry_id:
        return ""
    try:
        return reverse(name, args=[session_id, entry_id, *args])
    except NoReverseMatch:
        return ""


# Stands for the request's CSRF token inside a cached fragment; replaced on the way out.
_CSRF_SLOT = secrets.token_hex(16)


@register.simple_tag(takes_context=True)
def entry_html(context: template.Context, e: EntryView) -> SafeString:
    """``_entry.html`` for ``e``, rendered once and then taken from the ``fragments`` cache.

    A stored line never changes, so its fragment depends only on what the key holds: the line itself,
    its label and navigator, the tab's position, and the page's session and read-only state. The CSRF
    token of the navigator form is the one per-request part: it is cached as a slot and filled in
    here. Rendering forty entries through the template engine was most of a session page's cost."""
    position = context.get("position")
    values = {
        "e": e,
        "session_id": context.get("session_id"),
        "position": position,
        "read_only": context.get("read_only"),
    }
    parts: tuple[Any, ...] = (e.line, e.id, e.label, astuple(e.navigator) if e.navigator else None, position)
    key = "entry:" + hashlib.blake2b(repr((*parts, values["session_id"], values["read_only"])).encode()).hexdigest()
    cache = caches["fragments"]
    html = cache.get(key)
    if html is None:
        html = render_to_string("sessions_app/partials/_entry.html", {**values, "csrf_token": _CSRF_SLOT})
        cache.set(key, html)
    token = context.get("csrf_token")
    return mark_safe(html.replace(_CSRF_SLOT, str(token) if token else ""))
