"""A hit's snippet: the few words of its entry around what the query found, the found words marked.

FTS5 finds and ranks the hits; the snippets of a page's hits are cut here. FTS5's own ``snippet()`` and
``highlight()`` take time growing with the square of the matches in one text: a 200,000-character
entry holding "a" 100,000 times kept a core busy for minutes (``bench/search.py``, the probe's shapes).
Here the cost is linear in the text read: the query's words are found by one regular expression over
the text folded as the tokenizer folds it, the first ``MAX_MATCHES`` of them are weighed, and only the
chosen window is cut out and marked.

The tokenizer's rules are followed closely enough to mark what it matched (case and accents folded
letter by letter, words made of letters, numbers, symbols and combining marks); where the two differ,
a snippet shows the start of its text, unmarked, and the hit is still the tokenizer's.
"""

from __future__ import annotations

import itertools
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

import regex

from .text import display_form

SNIPPET_TOKENS = 24  # words a snippet shows (its window), as FTS5's snippet() counts them
SNIPPET_PIECE_CHARS = 160  # what a snippet shows of one run of text, matched or between matches
MAX_MATCHES = 1000  # matches weighed to choose the window: enough for any text a person reads
_LOOK = 4096  # characters looked at before and after the window's matches for the words around them

_WORD_CHARS = r"\p{L}\p{N}\p{Co}\p{So}\p{Mn}"  # the index's tokenizer's, plus the marks it folds away
_WORD = regex.compile(f"[{_WORD_CHARS}]+")
ELLIPSIS = "…"
_Match = tuple[int, int, str | None]  # start, end, which of the query's words


@dataclass(frozen=True)
class Segment:
    """A piece of a snippet; ``match`` pieces are what the query found."""

    text: str
    match: bool


@dataclass(frozen=True)
class Wanted:
    """A word or phrase to mark, as the index stores text (``index_form``); ``prefix``: its last word
    also marks longer words that start with it."""

    text: str
    prefix: bool


class Snippets:
    """Cuts the snippets of one query's hits (the pattern is built once per query)."""

    def __init__(self, wanted: list[Wanted]) -> None:
        alternatives = []
        for number, term in enumerate(wanted):
            words = [regex.escape(word) for word in _WORD.findall(fold(term.text))]
            if words:
                end = f"[{_WORD_CHARS}]*" if term.prefix else f"(?![{_WORD_CHARS}])"
                alternatives.append(f"(?P<t{number}>(?<![{_WORD_CHARS}]){f'[^{_WORD_CHARS}]+'.join(words)}{end})")
        self._pattern = regex.compile("|".join(alternatives)) if alternatives else None

    def of(self, text: str) -> tuple[Segment, ...]:
        """The snippet of ``text`` (as stored): the window of ``SNIPPET_TOKENS`` words holding the most
        different words of the query (the first such), the matches marked, each piece cut to
        ``SNIPPET_PIECE_CHARS``; with no match, the start of the text."""
        folded = fold(text)
        matches: list[_Match] = []
        if self._pattern is not None:
            for found in self._pattern.finditer(folded):
                matches.append((found.start(), found.end(), found.lastgroup))
                if len(matches) == MAX_MATCHES:
                    break
        if not matches:
            start, end = _from_start(folded)
        else:
            first, last = _best_window(folded, matches)
            start, end = _around(folded, matches[first][0], matches[last][1], _words_in(folded, matches, first, last))
        pieces: list[tuple[str, bool]] = []
        at = start
        if self._pattern is not None:
            for found in self._pattern.finditer(folded, start, end):
                if found.start() > at:
                    pieces.append((text[at : found.start()], False))
                pieces.append((text[found.start() : found.end()], True))
                at = found.end()
        if at < end:
            pieces.append((text[at:end], False))
        if start > 0:
            pieces[:1] = [(ELLIPSIS + pieces[0][0], False)] if not pieces[0][1] else [(ELLIPSIS, False), pieces[0]]
        if end < len(text):
            pieces[-1:] = [(pieces[-1][0] + ELLIPSIS, False)] if not pieces[-1][1] else [pieces[-1], (ELLIPSIS, False)]
        last = len(pieces) - 1
        return tuple(Segment(display_form(_cut(piece, at, last)), match) for at, (piece, match) in enumerate(pieces))


def _best_window(folded: str, matches: list[_Match]) -> tuple[int, int]:
    """The first and last match of the window that starts at a match and holds the most different
    words of the query within ``SNIPPET_TOKENS`` words (then the most matches; the first of equals)."""
    positions = [0]  # the words before each match, counted from the first match
    for (start, _, _), (following, _, _) in itertools.pairwise(matches):
        positions.append(positions[-1] + _count(folded, start, following))
    best = (-1, 0, 0)
    seen: dict[str | None, int] = {}
    last = 0
    for first in range(len(matches)):
        while last < len(matches) and positions[last] < positions[first] + SNIPPET_TOKENS:
            seen[matches[last][2]] = seen.get(matches[last][2], 0) + 1
            last += 1
        score = 1000 * len(seen) + (last - first)
        if score > best[0]:
            best = (score, first, last - 1)
        term = matches[first][2]
        seen[term] -= 1
        if not seen[term]:
            del seen[term]
    return best[1], best[2]


def _count(folded: str, start: int, end: int) -> int:
    return sum(1 for _ in _WORD.finditer(folded, start, end))


def _words_in(folded: str, matches: list[_Match], first: int, last: int) -> int:
    return _count(folded, matches[first][0], matches[last][1])


def _around(folded: str, start: int, end: int, inside: int) -> tuple[int, int]:
    """The window (character offsets) of ``SNIPPET_TOKENS`` words with the matched span from ``start`` to
    ``end`` (``inside`` words) in its middle: from the text's start when no word is left out before it,
    to the text's end when none is left out after."""
    spare = max(0, SNIPPET_TOKENS - inside)
    before = [found.start() for found in _WORD.finditer(folded, max(0, start - _LOOK), start)]
    if before and before[0] == max(0, start - _LOOK) > 0:
        before = before[1:]  # cut in the middle of a word
    after = [found.end() for found in _WORD.finditer(folded, end, min(len(folded), end + _LOOK))]
    lead = min(len(before), spare // 2)
    trail = min(len(after), spare - lead)
    lead = min(len(before), spare - trail)
    first = before[-lead] if lead else start
    if lead == len(before) and not _WORD.search(folded, 0, first):
        first = 0
    last = after[trail - 1] if trail else end
    if trail == len(after) and not _WORD.search(folded, last):
        last = len(folded)
    return first, last


def _from_start(folded: str) -> tuple[int, int]:
    """The text's first ``SNIPPET_TOKENS`` words (all of it when it has no more)."""
    for words, found in enumerate(_WORD.finditer(folded), start=1):
        if words == SNIPPET_TOKENS:
            return 0, found.end() if _WORD.search(folded, found.end()) else len(folded)
    return 0, len(folded)


def _cut(text: str, at: int, last: int) -> str:
    """A snippet's piece at position ``at`` (of ``last + 1``), its middle left out when long: the start
    of the last piece, the end of the first, both ends of the others (next to the matches around it).
    Words are counted, not characters: what lies between two (a run of punctuation, of spaces) can be a
    whole entry's text."""
    if len(text) <= SNIPPET_PIECE_CHARS:
        return text
    half = SNIPPET_PIECE_CHARS // 2
    if at == 0 and last > 0:
        return ELLIPSIS + text[-half:]
    if at == last and last > 0:
        return text[:half] + ELLIPSIS
    return text[:half] + ELLIPSIS + text[-half:]


def fold(text: str) -> str:
    """``text`` with case and accents folded letter by letter, as the tokenizer folds them; the same
    length, so that offsets in it are offsets in ``text``."""
    if text.isascii():
        return text.lower()
    table = {ord(char): _folded(char) for char in set(text) if not char.isascii() or char.isupper()}
    return text.translate(table)


@lru_cache(maxsize=8192)
def _folded(char: str) -> str:
    base = unicodedata.normalize("NFD", char)[0]
    lower = base.lower()
    return lower if len(lower) == 1 else base
