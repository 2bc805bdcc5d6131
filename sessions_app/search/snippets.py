"""A hit's snippet: the few words of its entry around what the query found, the found words marked.

FTS5 finds and ranks the hits; the snippets of a page's hits are cut here. FTS5's own ``snippet()`` and
``highlight()`` take time growing with the square of the matches in one text: a 200,000-character
entry holding "a" 100,000 times kept a core busy for minutes (``bench/probe_search.py``). Here the cost
is bounded whatever the text holds: one regular expression finds the query's first ``MAX_MATCHES``
matches in the text (folded as the tokenizer folds it: lower case, accents taken off), the
window of ``SNIPPET_TOKENS`` words holding the most different words of the query is chosen among them
(as FTS5 chooses; the words between two matches are counted only when they are near, as farther ones
share no window anyway), then cut out and marked.

The tokenizer's rules are followed closely enough to mark what it matched (case and accents folded
letter by letter, words made of letters, numbers, symbols and combining marks); where the two differ,
a snippet shows the start of its text, unmarked, and the hit is still the tokenizer's.
"""

from __future__ import annotations

import itertools
import unicodedata
from dataclasses import dataclass
from functools import cache, lru_cache

import regex

from .text import display_form

SNIPPET_TOKENS = 24  # words a snippet shows (its window), as FTS5's snippet() counts them
SNIPPET_PIECE_CHARS = 160  # what a snippet shows of one run of text, matched or between matches
FAR_CHARS = SNIPPET_TOKENS * 16  # characters of a gap past which its words are not counted
MAX_MATCHES = 64  # matches weighed to choose the window: a few windows full of the query's words
_ACCENTED = range(0x80, 0x2000)  # Latin, Greek, Cyrillic…: where letters carry accents

_WORD_CHARS = r"\p{L}\p{N}\p{Co}\p{So}\p{Mn}"  # the index's tokenizer's, plus the marks it folds away
_WORD = regex.compile(f"[{_WORD_CHARS}]+")
_WORD_BACKWARDS = regex.compile(f"[{_WORD_CHARS}]+", flags=regex.REVERSE)
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
        """The snippet of ``text`` (as stored), each piece cut to ``SNIPPET_PIECE_CHARS``; with no
        match, the start of the text."""
        lowered = text.lower()  # all of it at C speed; letter by letter only for a rare letter whose
        if len(lowered) != len(text):  # lower case is longer (İ): offsets in it must be offsets in ``text``
            lowered = fold(text)
        elif not lowered.isascii():
            lowered = lowered.translate(_unaccented())
        pattern = self._pattern
        found = itertools.islice(pattern.finditer(lowered), MAX_MATCHES) if pattern is not None else ()
        matches = [(match.start(), match.end(), match.lastgroup) for match in found]
        if pattern is None or not matches:
            start, end = _from_start(lowered)
        else:
            head, tail = _best_window(lowered, matches)
            start, end = _around(
                lowered, matches[head][0], matches[tail][1], _count(lowered, matches[head][0], matches[tail][1])
            )
        pieces: list[tuple[str, bool]] = []
        at = start
        if pattern is not None:
            for match in pattern.finditer(lowered, start, end):
                if match.start() > at:
                    pieces.append((text[at : match.start()], False))
                pieces.append((text[match.start() : match.end()], True))
                at = match.end()
        if at < end:
            pieces.append((text[at:end], False))
        if start > 0:
            pieces[:1] = [(ELLIPSIS + pieces[0][0], False)] if not pieces[0][1] else [(ELLIPSIS, False), pieces[0]]
        if end < len(text):
            pieces[-1:] = [(pieces[-1][0] + ELLIPSIS, False)] if not pieces[-1][1] else [pieces[-1], (ELLIPSIS, False)]
        last = len(pieces) - 1
        return tuple(Segment(display_form(_cut(piece, at, last)), match) for at, (piece, match) in enumerate(pieces))


@cache
def _unaccented() -> str:
    """For ``translate``: each code point below ``_ACCENTED``'s end, the letter an accented lower-case
    one folds to (``é``: ``e``), itself otherwise. A string, not a dict: ``translate`` looks every
    character up, and a dict's misses (most characters) cost it a raised ``KeyError`` each."""
    return "".join(
        _folded(char) if code in _ACCENTED and char.lower() == char else char
        for code, char in ((code, chr(code)) for code in range(_ACCENTED.stop))
    )


def _best_window(lowered: str, matches: list[_Match]) -> tuple[int, int]:
    """The first and last match of the window that starts at a match and holds the most different
    words of the query within ``SNIPPET_TOKENS`` words (then the most matches; the first of equals)."""
    positions = [0]  # the words before each match, counted from the first match (gaps up to a window)
    for (start, _, _), (following, _, _) in itertools.pairwise(matches):
        positions.append(positions[-1] + _gap(lowered, start, following))
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


def _count(text: str, start: int, end: int) -> int:
    return len(_WORD.findall(text, start, end))


def _gap(text: str, start: int, end: int) -> int:
    """The words from one match's start to the next's, up to ``SNIPPET_TOKENS`` (a gap wider than
    ``FAR_CHARS`` counts as that many without being counted: two matches so far apart share no window)."""
    return SNIPPET_TOKENS if end - start > FAR_CHARS else min(SNIPPET_TOKENS, _count(text, start, end))


def _around(text: str, start: int, end: int, inside: int) -> tuple[int, int]:
    """The window (character offsets) of ``SNIPPET_TOKENS`` words with the matched span from ``start`` to
    ``end`` (``inside`` words) in its middle: from the text's start when no word is left out before it,
    to the text's end when none is left out after. Only the words taken (and one more) are looked for."""
    spare = max(0, SNIPPET_TOKENS - inside)
    before = list(itertools.islice(_WORD_BACKWARDS.finditer(text, 0, start), spare + 1))  # nearest first
    after = list(itertools.islice(_WORD.finditer(text, end), spare + 1))
    lead = min(len(before), spare // 2)
    trail = min(len(after), spare - lead)
    lead = min(len(before), spare - trail)
    first = 0 if lead == len(before) else before[lead - 1].start() if lead else start
    last = len(text) if trail == len(after) else after[trail - 1].end() if trail else end
    return first, last


def _from_start(text: str) -> tuple[int, int]:
    """The text's first ``SNIPPET_TOKENS`` words (all of it when it has no more)."""
    for words, found in enumerate(_WORD.finditer(text), start=1):
        if words == SNIPPET_TOKENS:
            return 0, found.end() if _WORD.search(text, found.end()) else len(text)
    return 0, len(text)


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
