"""Markdown to HTML for message text, safe against whatever the text contains; and Markdown to plain
text for one-line previews.

Content comes from a file anyone (a model, pi, a teammate) may have written, so it is never trusted
as HTML: raw HTML in the text is escaped (``html: False``), and markdown-it's link validation refuses
``javascript:``, ``vbscript:``, ``file:`` and non-image ``data:`` URLs. Images from elsewhere become
links: an image the browser fetches by itself is how a prompt-injected reply would leak data through
its URL, and pitree's pages load nothing from outside (inline ``data:`` images still show).

Fenced code is highlighted here, on the server, by Pygments (through markdown-it's ``highlight``
option): token ``<span>``s with classes (``tok-k``…) that ``static/pitree/highlight.css`` colours for
both themes, so no script and no inline style is needed. Each block gets a copy button, and a long
one a button that unfolds it (``copy.js`` and ``folds.js`` give them their behaviour); the block is
a labelled region in the tab order, since it may scroll.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from functools import lru_cache

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict
from pygments import highlight as pygments_highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

from ..sessionfiles.entries import clip, one_line
from ..sessionfiles.listing import NO_MESSAGES

TOKEN_CLASS_PREFIX = "tok-"
LONG_CODE_LINES = 30  # a code block longer than this is shown folded, with a button that unfolds it
PREVIEW_SOURCE_CHARS = 600  # a preview reads only the start of a message: its cost stays bounded
# Markdown costs 2 µs a character of prose, and up to 25 of text made to be slow ("![" repeated): a
# longer text shows as plain text, so that one text costs at most about a second.
MARKDOWN_CHARS = 40_000
# What the cache of rendered texts may hold, texts and HTML together (characters): entries are
# immutable, so a text is rendered once while it stays there. It was 2,048 texts whatever their size:
# forty crafted answers of 200 kB, rendered to 800 kB each, held 2 GB.
CACHE_CHARS = 32_000_000

_formatter = HtmlFormatter(nowrap=True, classprefix=TOKEN_CLASS_PREFIX)


@lru_cache(maxsize=256)
def _lexer(language: str) -> Lexer | None:
    """Pygments' lexer for a fence's language name; None for names it does not know (no guessing: a
    wrong guess colours prose as code, and guessing costs more than the rest of the rendering)."""
    try:
        return get_lexer_by_name(language, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None


def _highlight(code: str, language: str, _attrs: object) -> str:
    """Token spans for markdown-it to wrap in ``<pre><code>``; "" lets it escape the code itself."""
    lexer = _lexer(language.strip().lower()) if language else None
    return pygments_highlight(code, lexer, _formatter) if lexer else ""


_md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False, "highlight": _highlight})
_md.enable("table")


def _image_or_link(
    renderer: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    token = tokens[idx]
    src = str(token.attrGet("src") or "")
    if src.startswith("data:image/"):
        return renderer.image(tokens, idx, options, env)
    label = escape(token.content or src)
    return f'<a href="{escape(src)}" rel="nofollow noopener noreferrer">[image: {label}]</a>'


def _code_block(renderer: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    """A fenced block in a frame with its buttons; a long one starts folded."""
    code = renderer.fence(tokens, idx, options, env)
    lines = tokens[idx].content.count("\n")
    language = escape(tokens[idx].info.strip().split(" ", 1)[0]) if tokens[idx].info else ""
    tools = '<button type="button" class="code__copy" data-copy-code>Copy</button>'
    long = lines > LONG_CODE_LINES
    if long:
        tools += f'<button type="button" class="code__expand" data-expand-code aria-expanded="false">Show all {lines} lines</button>'
    head = f'<div class="code__head"><span class="code__lang">{language}</span>{tools}</div>'
    # A block may scroll (a wide line, a folded long one): keyboard users reach it to scroll it.
    label = f"Code, {language}" if language else "Code"
    code = code.replace("<pre>", f'<pre tabindex="0" role="region" aria-label="{label}">', 1)
    return f'<div class="code{" code--long" if long else ""}">{head}{code}</div>\n'


def _table_open(renderer: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    """A table in a frame that scrolls sideways: on a phone a table of many columns keeps its words
    whole instead of squeezing each cell to a few letters; keyboard users reach the frame to scroll it."""
    return '<div class="md-table" tabindex="0" role="region" aria-label="Table">' + renderer.renderToken(
        tokens, idx, options, env
    )


def _table_close(renderer: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    return renderer.renderToken(tokens, idx, options, env) + "</div>\n"


_md.add_render_rule("image", _image_or_link)
_md.add_render_rule("fence", _code_block)
_md.add_render_rule("table_open", _table_open)
_md.add_render_rule("table_close", _table_close)

# What a text reads as is taken from a parser that accepts every link target: nothing it parses is
# ever rendered as HTML, and a link the renderer refuses (``[text](javascript:…)``) still reads as its
# text, not as its Markdown source.
_words = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
_words.enable("table")
_words.validateLink = lambda url: True  # type: ignore[method-assign]


class _RenderedCache:
    """The HTML of the texts rendered last, least recently used dropped first, within ``CACHE_CHARS``."""

    def __init__(self, limit: int) -> None:
        self.limit, self.size = limit, 0
        self.items: OrderedDict[str, SafeString] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, text: str) -> SafeString | None:
        with self.lock:
            found = self.items.get(text)
            if found is not None:
                self.items.move_to_end(text)
            return found

    def put(self, text: str, html: SafeString) -> None:
        with self.lock:
            if text in self.items:
                return
            self.items[text] = html
            self.size += len(text) + len(html)
            while self.size > self.limit:
                old, old_html = self.items.popitem(last=False)
                self.size -= len(old) + len(old_html)


_rendered = _RenderedCache(CACHE_CHARS)


def render_markdown(text: str) -> SafeString:
    """HTML for ``text`` (cached); a text over ``MARKDOWN_CHARS`` as plain text."""
    if len(text) > MARKDOWN_CHARS:
        return mark_safe(f'<div class="plain">{escape(text)}</div>')
    html = _rendered.get(text)
    if html is None:
        html = mark_safe(_md.render(text))
        _rendered.put(text, html)
    return html


def markdown_text(text: str, width: int | None = None) -> str:
    """What ``text`` reads as once rendered, on one line: no ``**``, backticks, link targets or
    heading marks (for the tree panel, titles and choices). With a ``width``, only the start of a
    long text is read."""
    return one_line(_plain(text[:PREVIEW_SOURCE_CHARS] if width is not None else text), width)


@lru_cache(maxsize=8192)
def _plain(source: str) -> str:
    words: list[str] = []
    for token in _words.parse(source):
        if token.type == "inline":
            for child in token.children or ():
                if child.type in ("text", "code_inline"):
                    words.append(child.content)
                elif child.type in ("softbreak", "hardbreak"):
                    words.append(" ")
                elif child.type == "image":
                    words.append(child.content)
            words.append(" ")
        elif token.type in ("fence", "code_block"):
            words.append(token.content)
            words.append(" ")
    return "".join(words)


NEW_SESSION = "New session"


def title_text(name: str | None, first_message: str, width: int) -> str:
    """A session's title as text: its name as written (a name is not Markdown), else the words of its
    first message; one with neither is a "New session" (the listing's "(no messages)" is pi's wording,
    which the command line keeps)."""
    if name:
        return clip(name, width)
    return NEW_SESSION if first_message == NO_MESSAGES else markdown_text(first_message, width)
