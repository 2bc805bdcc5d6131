"""The cache of rendered Markdown holds at most its size in characters, texts and HTML together,
dropping the least recently used first (it held 2,048 texts whatever their size: 2 GB of crafted ones)."""

from __future__ import annotations

from django.utils.safestring import mark_safe

from sessions_app.display import markdown
from sessions_app.display.markdown import MARKDOWN_CHARS, _RenderedCache, render_markdown


def test_the_cache_stays_within_its_size_and_drops_the_least_recently_used() -> None:
    cache = _RenderedCache(limit=100)
    for name in "abcd":
        cache.put(name * 10, mark_safe(name * 10))  # 20 characters each
    assert cache.get("a" * 10) == "a" * 10  # used again: now the newest
    for name in "efg":
        cache.put(name * 10, mark_safe(name * 10))
    assert cache.size <= 100
    assert cache.get("b" * 10) is None and cache.get("c" * 10) is None  # the oldest went first
    assert cache.get("a" * 10) is not None and cache.get("g" * 10) is not None


def test_a_text_is_rendered_once_while_cached_and_a_text_too_long_never(monkeypatch) -> None:
    calls: list[int] = []
    render = markdown._md.render
    monkeypatch.setattr(markdown._md, "render", lambda text: calls.append(len(text)) or render(text))
    text = "A *cached* answer, long enough to be one of the usual ones. " * 300  # 18 kB: cached too now
    assert render_markdown(text) == render_markdown(text) and calls == [len(text)]
    long = "x" * (MARKDOWN_CHARS + 1)
    assert render_markdown(long).startswith('<div class="plain">') and calls == [len(text)]
