"""A word-level diff of two texts, as HTML that marks what only the left has (``<del>``) and what only
the right has (``<ins>``), with long unchanged runs folded.

Texts are cut into tokens that never split a grapheme (a user-perceived character: a letter with its
combining marks, an emoji ZWJ sequence, a flag): runs of word graphemes; single graphemes of scripts
written without spaces (CJK, Thai …), so that a changed character is not a changed sentence; runs of
spaces; line breaks on their own, so that lines stay lines; and any other grapheme alone (punctuation,
emoji). Concatenated, the tokens give back the text exactly, so whitespace in Markdown and code
survives.

The diff itself is diff-match-patch (its C++ port): every distinct token becomes one code point, line
breaks stay ``\\n`` so that its line mode first matches whole lines and then words inside the lines
that differ, and its semantic cleanup merges scattered one-word coincidences into readable blocks.
Myers' algorithm costs O(N·D); two long texts that share almost nothing would take seconds, so every
diff runs against a deadline (a ``Budget`` shared by all diffs of one page), after which
diff-match-patch returns what is left as whole replaced passages. Such a diff is marked ``coarse``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass

import fast_diff_match_patch as dmp
import regex
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

_NO_SPACE_SCRIPTS = r"\p{Han}\p{Hiragana}\p{Katakana}\p{Bopomofo}\p{Thai}\p{Lao}\p{Khmer}\p{Myanmar}"
# Every alternative consumes whole graphemes, so no token boundary falls inside one: the first three
# are runs of ASCII that no combining character follows (the common case, matched fast), the others
# take ``\X`` units.
_TOKEN = regex.compile(
    rf"""
      (?>[A-Za-z0-9_]+)(?=[\x00-\x7f]|\Z)           # an ASCII word (atomic: "caf" of "café" is no word)
    | (?>[ \t\x0b\x0c]+)(?=[\x00-\x7f]|\Z)           # ASCII spaces
    | [!-/:-@\[-`{{-~](?=[\x00-\x7f]|\Z)              # ASCII punctuation
    | (?=[\r\n])\X                                  # a line break (\n, \r\n, \r)
    | (?:(?=[^\S\r\n])\X)+                          # a run of other whitespace
    | (?=[{_NO_SPACE_SCRIPTS}])\X                   # one grapheme of a script without spaces
    | (?:(?=[\p{{L}}\p{{N}}\p{{M}}\p{{Pc}}])(?![{_NO_SPACE_SCRIPTS}])\X)+   # a word
    | \X                                            # anything else, one grapheme at a time
    """,
    regex.VERBOSE,
)

# Unchanged runs longer than this many tokens are folded, keeping CONTEXT tokens at each end.
FOLD_TOKENS = 60
CONTEXT_TOKENS = 16
# One diff never takes longer than this (plus tokenising): two 50 KB texts in well under 100 ms.
DIFF_SECONDS = 0.05
# Longer pairs are shown replaced whole, untokenised: this bounds the work, and keeps the count of
# distinct tokens below the number of code points available to encode them.
MAX_DIFF_CHARS = 1_000_000
_FIRST_CODE_POINT = 0x20
_SURROGATES = range(0xD800, 0xE000)


def tokenize(text: str) -> list[str]:
    """``text`` as diff tokens; ``"".join(tokenize(text)) == text``."""
    return _TOKEN.findall(text)


class Budget:
    """The time the diffs of one response may take together: each diff gets what is left (at most
    DIFF_SECONDS), so a page comparing many long turns still answers in bounded time."""

    def __init__(self, seconds: float) -> None:
        self._deadline = time.monotonic() + seconds

    def allowance(self) -> float:
        """Seconds the next diff may take; 0 when the budget is spent (the diff is then coarse)."""
        return max(0.0, min(DIFF_SECONDS, self._deadline - time.monotonic()))


@dataclass(frozen=True)
class Segment:
    kind: str  # equal | delete | insert | fold (an unchanged run, folded)
    text: str
    words: int = 0  # for a fold: how many words it hides


@dataclass(frozen=True)
class WordDiff:
    segments: list[Segment]
    deleted: int  # words (non-space tokens) only in the left text
    inserted: int  # words only in the right text
    coarse: bool = False  # the deadline came first: some passages are replaced whole

    @property
    def identical(self) -> bool:
        return all(segment.kind in ("equal", "fold") for segment in self.segments)

    @property
    def html(self) -> SafeString:
        """The segments as HTML; every piece of text is escaped."""
        parts = []
        for segment in self.segments:
            text = escape(segment.text)
            if segment.kind == "delete":
                parts.append(f"<del>{text}</del>")
            elif segment.kind == "insert":
                parts.append(f"<ins>{text}</ins>")
            elif segment.kind == "fold":
                parts.append(
                    f'<details class="diff__fold"><summary>… {segment.words} unchanged '
                    f"word{'s' if segment.words != 1 else ''} …</summary>{text}</details>"
                )
            else:
                parts.append(text)
        return mark_safe("".join(parts))


def word_diff(left: str, right: str, budget: Budget | None = None) -> WordDiff:
    """The diff from ``left`` to ``right``, word by word."""
    allowance = (budget or Budget(DIFF_SECONDS)).allowance()
    if len(left) + len(right) > MAX_DIFF_CHARS:
        return _replaced(left, right)
    left_tokens, right_tokens = tokenize(left), tokenize(right)
    if left == right:
        return _build([("=", left_tokens)], coarse=False)
    if not left or not right or allowance == 0:
        return _build([("-", left_tokens), ("+", right_tokens)], coarse=bool(left and right))
    encoded_left, encoded_right = _encode(left_tokens, right_tokens)
    started = time.monotonic()
    changes = dmp.diff(encoded_left, encoded_right, timelimit=allowance, checklines=True, cleanup="Semantic")
    coarse = time.monotonic() - started >= allowance
    runs: list[tuple[str, list[str]]] = []
    left_at = right_at = 0
    for op, length in changes:
        if op == "+":
            runs.append(("+", right_tokens[right_at : right_at + length]))
            right_at += length
        else:
            runs.append((op, left_tokens[left_at : left_at + length]))
            left_at += length
            if op == "=":
                right_at += length
    return _build(runs, coarse=coarse)


def _replaced(left: str, right: str) -> WordDiff:
    """Two texts too long to diff: the left one deleted, the right one inserted, marked coarse."""
    segments = [Segment(kind, text) for kind, text in (("delete", left), ("insert", right)) if text]
    return WordDiff(segments, len(left.split()), len(right.split()), coarse=left != right)


def _encode(left: list[str], right: list[str]) -> tuple[str, str]:
    """Each distinct token as one code point (``\\n`` stays itself, for diff-match-patch's line mode)."""
    table: dict[str, str] = {"\n": "\n"}
    points = _code_points()

    def encode(tokens: list[str]) -> str:
        out = []
        for token in tokens:
            char = table.get(token)
            if char is None:
                char = table[token] = chr(next(points))
            out.append(char)
        return "".join(out)

    return encode(left), encode(right)


def _code_points() -> Iterator[int]:
    """Code points for tokens: all but controls and surrogates, about 1.1 million, more than the
    tokens two texts within MAX_DIFF_CHARS can hold (a token is at least one character)."""
    for point in range(_FIRST_CODE_POINT, 0x110000):
        if point not in _SURROGATES:
            yield point


def _words(tokens: list[str]) -> int:
    return sum(1 for token in tokens if not token.isspace())


def _build(runs: list[tuple[str, list[str]]], *, coarse: bool) -> WordDiff:
    """Segments from runs of tokens, long unchanged runs folded (at the ends of the text only the side
    that touches a change keeps context)."""
    segments: list[Segment] = []
    deleted = inserted = 0
    runs = [(op, tokens) for op, tokens in runs if tokens]
    last = len(runs) - 1
    for position, (op, tokens) in enumerate(runs):
        if op == "-":
            deleted += _words(tokens)
            segments.append(Segment("delete", "".join(tokens)))
        elif op == "+":
            inserted += _words(tokens)
            segments.append(Segment("insert", "".join(tokens)))
        else:
            segments.extend(_equal(tokens, head=position > 0, tail=position < last))
    return WordDiff(segments, deleted, inserted, coarse)


def _equal(tokens: list[str], *, head: bool, tail: bool) -> list[Segment]:
    """An unchanged run: whole when short, else its ends (next to the changes) around a fold."""
    if len(tokens) <= FOLD_TOKENS:
        return [Segment("equal", "".join(tokens))]
    start = CONTEXT_TOKENS if head else 0
    stop = len(tokens) - CONTEXT_TOKENS if tail else len(tokens)
    middle = tokens[start:stop]
    out = []
    if start:
        out.append(Segment("equal", "".join(tokens[:start])))
    out.append(Segment("fold", "".join(middle), words=_words(middle)))
    if stop < len(tokens):
        out.append(Segment("equal", "".join(tokens[stop:])))
    return out
