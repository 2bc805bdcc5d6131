"""Template tags and filters for entries: the entry fragment and tree rows (cached), safe Markdown,
plain-text previews, ages, role names."""

from __future__ import annotations

from datetime import UTC, datetime
from functools import lru_cache
from typing import Any
from urllib.parse import urlencode

from django import template
from django.template.loader import render_to_string
from django.templatetags.static import static
from django.urls import reverse
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from django.utils.timesince import timesince

from ..converters import reverse_entry
from ..display.entries import EntryView
from ..display.markdown import markdown_text, render_markdown, title_text
from ..display.tools import READING
from ..display.treepanel import TreeRow
from ..partials.entries import entry_fragment

register = template.Library()

_ROLE_NAMES = {
    "user": "You",
    "assistant": "Assistant",
    "toolResult": "Tool result",
    "bashExecution": "Shell",
    "custom": "Extension",
    "custom_message": "Extension",
    "system": "System",
    "system_prompt": "System prompt",
    "compaction": "Compaction",
    "branch_summary": "Branch summary",
    "model_change": "Model change",
    "thinking_level_change": "Thinking level",
    "session_info": "Name",
    "label": "Label",
    "silent": "Bookkeeping entry",
    "custom_state": "Extension state",
    "context_edit": "Context edit",
    "unknown": "Entry of an unknown type",
}


@register.filter
def markdown(text: str) -> SafeString:
    return render_markdown(text or "")


@register.filter
def plaintext(text: str, width: int = 80) -> str:
    """Markdown as the words it shows, on one line (previews, titles, choices)."""
    return markdown_text(text or "", width)


@register.filter
def session_title(info: Any, width: int = 80) -> str:
    """A session's title (a ``SessionInfo``): its name, else its first message's words."""
    return title_text(info.name, info.first_message, width)


@register.filter
def workspace_name(cwd: str) -> str:
    """A workspace folder as the sidebar names it: its last two parts (the full path is its title)."""
    parts = [part for part in cwd.split("/") if part]
    return "/".join(parts[-2:]) if parts else cwd


@register.filter
def workspace_of(info: Any, where: dict[str, str]) -> str:
    """The workspace a listed session is in: its folder's, as the list names it (``where``)."""
    return where.get(info.path.parent.name, info.cwd)


@register.filter
def ago(epoch_ms: int) -> str:
    """ "3 minutes ago" for a time in epoch milliseconds; "just now" under a minute ago (and for a time
    ahead of the clock)."""
    moment = datetime.fromtimestamp(epoch_ms / 1000, UTC)
    since = timesince(moment).split(",")[0]
    return "just now" if since.startswith("0\xa0") else f"{since} ago"


@register.filter
def role_name(kind: str) -> str:
    return _ROLE_NAMES.get(kind, kind)


@register.simple_tag
def icon(name: str) -> SafeString:
    """One of ``static/pitree/icons.svg``'s symbols, drawn in the text's colour and hidden from assistive
    technology (the control it is in carries the words). A tag, not an include: every entry has seven."""
    return mark_safe(_ICON.format(sprite=_sprite(), name=escape(name)))


_ICON = '<svg class="icon" aria-hidden="true" focusable="false"><use href="{sprite}#i-{name}"></use></svg>'


@lru_cache(maxsize=1)
def _sprite() -> str:
    return escape(static("pitree/icons.svg"))


@register.simple_tag
def entry_url(name: str, session_id: str, entry_id: str | None, *args: object) -> str:
    """``{% url %}`` for a URL naming an entry, or "" without an entry or for the rare id no URL can
    carry (see ``converters.usable_id``): such an entry is shown without links."""
    if not entry_id:
        return ""
    return reverse_entry(name, session_id, entry_id, *args) or ""


@register.simple_tag(takes_context=True)
def entry_html(context: template.Context, e: EntryView) -> SafeString:
    """``_entry.html`` for ``e`` as this page shows it: rendered once, then taken from the
    ``fragments`` cache, with the page's position, tools and CSRF token filled in
    (``partials.entries``)."""
    return entry_fragment(
        e,
        str(context.get("session_id")),
        bool(context.get("read_only")),
        position=context.get("position") or "",
        csrf_token=context.get("csrf_token"),
        tools=context.get("tools") or READING,
        trunk=context.get("trunk") or (),
    )


@register.simple_tag(takes_context=True)
def tree_rows(context: template.Context, rows: list[TreeRow]) -> SafeString:
    """The tree panel's rows, each rendered once per (row, session, filter) and then reused: a row
    depends on nothing else (its forms take the tab's position when sent), and a long session's panel
    draws hundreds of them."""
    session_id, mode = str(context.get("session_id")), str(context.get("mode"))
    return mark_safe("".join(_tree_row(row, session_id, mode) for row in rows))


@lru_cache(maxsize=20_000)
def _tree_row(row: TreeRow, session_id: str, mode: str) -> str:
    context: dict[str, Any] = {"r": row}
    if row.kind in ("fold", "earlier"):
        query = urlencode({"first": row.first_id, "last": row.last_id, "filter": mode})
        query += "&earlier=1" if row.kind == "earlier" else ""
        context["run_url"] = f"{reverse('sessions:tree_run', args=[session_id])}?{query}"
    if row.compare:
        query = urlencode([("e", entry_id) for entry_id in row.compare])
        context["compare_url"] = f"{reverse('sessions:compare', args=[session_id])}?{query}"
    return render_to_string("sessions_app/partials/_tree_row.html", context)
