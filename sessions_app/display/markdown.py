"""Markdown to HTML for message text, safe against whatever the text contains.

Content comes from a file anyone (a model, pi, a teammate) may have written, so it is never trusted
as HTML: raw HTML in the text is escaped (``html: False``), and markdown-it's link validation refuses
``javascript:``, ``vbscript:``, ``file:`` and non-image ``data:`` URLs. Images from elsewhere become
links: an image the browser fetches by itself is how a prompt-injected reply would leak data through
its URL, and pitree's pages load nothing from outside (inline ``data:`` images still show).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

_md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable("table")


def _image_or_link(
    renderer: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    token = tokens[idx]
    src = str(token.attrGet("src") or "")
    if src.startswith("data:image/"):
        return renderer.image(tokens, idx, options, env)
    label = escape(token.content or src)
    return f'<a href="{escape(src)}" rel="nofollow noopener noreferrer">[image: {label}]</a>'


_md.add_render_rule("image", _image_or_link)


@lru_cache(maxsize=2048)
def render_markdown(text: str) -> SafeString:
    """HTML for ``text`` (cached: entries are immutable, so the same text is rendered once)."""
    return mark_safe(_md.render(text))
