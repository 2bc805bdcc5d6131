"""What one page may carry of its messages' text, and spend on their Markdown.

A page shows up to forty entries, each up to ``LAZY_TEXT_CHARS`` of text: forty messages just under
that size made a page of 64 MB, and forty texts made to be slow for Markdown took a core for minutes.
The page's texts are fitted newest first, as the reader reads them: each is carried whole while the
page stays under ``PAGE_TEXT_CHARS`` and its Markdown is rendered while ``MARKDOWN_SECONDS`` last;
past either, a text shows its head and a fold that loads it (as a text too large for any page does),
a summary its head and its raw line. The newest text is always whole. What is rendered here is kept
on its block or view, for the templates.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from .entries import MESSAGE_KINDS, EntryView, head_of
from .markdown import render_markdown

PAGE_TEXT_CHARS = 400_000
MARKDOWN_SECONDS = 0.3
_SUMMARIES = frozenset({"branch_summary", "compaction"})


class PageBudget:
    """What is left of one page's budget, however many runs of entries it is fitted to (the columns of
    a comparison share one)."""

    def __init__(self) -> None:
        self.chars = PAGE_TEXT_CHARS
        self.deadline = time.monotonic() + MARKDOWN_SECONDS
        self.first = True

    def fit(self, views: Iterable[EntryView]) -> None:
        """Fit ``views`` (newest first): render what the page carries as Markdown, fold the rest."""
        for view in views:
            # Tool output is folded whole past a few kB already (``LAZY_BLOCK_CHARS``).
            blocks = [b for b in view.blocks if b.kind == "text" and not b.lazy] if view.kind in MESSAGE_KINDS else []
            summary = view.kind in _SUMMARIES and not view.text_cut
            size = sum(len(block.text) for block in blocks) + (len(view.text) if summary else 0)
            if not size:
                continue
            rendered = view.kind == "assistant" or summary  # as Markdown; other texts are plain
            if self.first or (size <= self.chars and (not rendered or time.monotonic() < self.deadline)):
                self.chars -= size
                if view.kind == "assistant":
                    for block in blocks:
                        block.html = render_markdown(block.text)
                elif summary:
                    view.html = render_markdown(view.text)
            else:
                for block in blocks:
                    block.lazy, block.head = True, head_of(block.text)
                if summary:
                    view.text, view.text_cut = head_of(view.text), True
            self.first = False
