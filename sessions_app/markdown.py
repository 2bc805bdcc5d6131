"""Markdown to HTML for message text, safe against whatever the text contains.

Content comes from a file anyone (a model, pi, a teammate) may have written, so it is never trusted
as HTML: raw HTML in the text is escaped (``html: False``), and markdown-it's link validation refuses
``javascript:``, ``vbscript:``, ``file:`` and non-image ``data:`` URLs.
"""

from __future__ import annotations

from functools import lru_cache

from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt

_md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable("table")


@lru_cache(maxsize=2048)
def render_markdown(text: str) -> SafeString:
    """HTML for ``text`` (cached: entries are immutable, so the same text is rendered once)."""
    return mark_safe(_md.render(text))  # noqa: S308 - markdown-it escapes all raw HTML (html=False)
