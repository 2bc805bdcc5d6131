"""Template filters for entries: safe Markdown, ages, role names."""

from __future__ import annotations

from datetime import UTC, datetime

from django import template
from django.urls import NoReverseMatch, reverse
from django.utils.safestring import SafeString
from django.utils.timesince import timesince

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
