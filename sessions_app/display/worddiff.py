"""A word-level diff of two texts, as HTML that marks what only the left has (``<del>``) and what only
the right has (``<ins>``), with long unchanged runs folded.

Texts are cut into tokens that never split a grapheme (a user-perceived character: a letter with its
combining marks, an emoji ZWJ sequence, a flag): runs of word graphemes; single graphemes of scripts
written without spaces (CJK, Thai …), so that a changed character is not a changed sentence; runs of
spaces; line breaks on their own, so that lines stay lines; and any other grapheme alone (punctuation,
emoji). Concatenated, the tokens give back the text exactly, so whitespace in Markdown and code
survives. Tokens are compared in Unicode's composed form (NFC), so ``café`` typed with a combining
accent equals ``café`` typed with a precomposed one; what is shown is always the text as written, and
a passage that differs only in that form is marked as such (``form``), never as a change.

The diff itself is diff-match-patch (its C++ port), in two passes, as its own line mode does: first
whole lines (each distinct line one code point), then, inside each run of changed lines, tokens (each
distinct token one code point), with its semantic cleanup merging scattered one-word coincidences into
readable blocks. A changed run of more than SKIP_WORDS words whose two sides share fewer than half of
them is shown replaced whole without the second pass: measured on regenerated answers, the cleanup
keeps under 5% of such a run anyway, and skipping it is most of what makes those diffs fast. Myers'
algorithm costs O(N·D); two long texts that share almost nothing line by line would take seconds, so
diff-match-patch gets DIFF_SECONDS per diff, both passes together (less when the ``Budget`` shared by
all diffs of one page runs out): when they are spent it returns what is left as whole replaced
passages, and the runs not yet compared are replaced whole. Such a diff is marked ``coarse``.
"""

from __future__ import annotations

import functools
import html
import itertools
import operator
import re
import time
import unicodedata
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

import fast_diff_match_patch as dmp
import regex
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
# On ASCII text ``_TOKEN`` comes down to this (no combining marks, no other whitespace, no scripts
# without spaces): the same tokens, about three times faster with the standard engine.
_ASCII_TOKEN = re.compile(r"[A-Za-z0-9_]+|[ \t\x0b\x0c]+|\r\n|[\s\S]")
# A line with its line break. Line breaks are grapheme boundaries on both sides (controls never combine)
# and \r\n stays one, so lines cut here are whole runs of tokens.
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")

# Unchanged runs longer than this many tokens are folded, keeping CONTEXT tokens at each end.
FOLD_TOKENS = 60
CONTEXT_TOKENS = 16
# diff-match-patch's time for one diff (its line pass and its word passes together); tokenising and the
# HTML, linear in the texts, come on top: two 50 KB texts that defeat the line pass stay under 100 ms.
DIFF_SECONDS = 0.04
# A run of changed lines with more than SKIP_WORDS words on a side is compared word by word only when
# its sides share at least MIN_SHARED_WORDS of them (shorter runs are cheap to compare anyway).
SKIP_WORDS = 20
MIN_SHARED_WORDS = 0.5
# Longer pairs are shown replaced whole, untokenised: this bounds the work, and keeps the count of
# distinct tokens below the number of code points available to encode them.
MAX_DIFF_CHARS = 1_000_000
_FIRST_CODE_POINT = 0x20
_NFC = functools.partial(unicodedata.normalize, "NFC")
_SURROGATES = range(0xD800, 0xE000)


def tokenize(text: str) -> list[str]:
    """``text`` as diff tokens; ``"".join(tokenize(text)) == text``."""
    return _ASCII_TOKEN.findall(text) if text.isascii() else _line_tokens(_LINE.findall(text))


def _line_tokens(lines: list[str]) -> list[str]:
    """The tokens of whole lines, line by line: a few lines with an accent or an arrow leave the others
    to the fast ASCII pattern."""
    return [token for line in lines for token in (_ASCII_TOKEN if line.isascii() else _TOKEN).findall(line)]


# Diff time is the calling thread's CPU time, not the wall clock: on a busy server a thread paused by
# the scheduler in the middle of a two-word diff would otherwise find its time spent and show the turn
# replaced whole. What is bounded is the work, which is what a hard pair of texts makes grow.
_cpu_time = time.thread_time


class Budget:
    """The time the diffs of one response may take together, in the CPU time of the thread that makes
    them (a page's diffs are made by its view, in one thread): each diff gets what is left (at most
    DIFF_SECONDS), so a page comparing many long turns still answers in bounded time."""

    def __init__(self, seconds: float) -> None:
        self._deadline = _cpu_time() + seconds

    def allowance(self) -> float:
        """Seconds the next diff may take; 0 when the budget is spent (the diff is then coarse)."""
        return max(0.0, min(DIFF_SECONDS, self._deadline - _cpu_time()))


@dataclass(frozen=True)
class Segment:
    kind: str  # equal | delete | insert | fold (an unchanged run, folded) | form (see ``other``)
    text: str  # the left text (the right one for an insert)
    words: int = 0  # for a fold: how many words it hides
    other: str = ""  # for a form: the right text, the same words in another Unicode form


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
        """The segments as HTML; every piece of text is escaped (as Django escapes: ``html.escape``,
        called directly, which thousands of segments notice)."""
        parts = []
        for segment in self.segments:
            text = html.escape(segment.text)
            if segment.kind == "delete":
                parts.append(f"<del>{text}</del>")
            elif segment.kind == "insert":
                parts.append(f"<ins>{text}</ins>")
            elif segment.kind == "fold":
                parts.append(
                    f'<details class="diff__fold"><summary>… {segment.words} unchanged '
                    f"word{'s' if segment.words != 1 else ''} …</summary>{text}</details>"
                )
            elif segment.kind == "form":
                parts.append(f'<span class="diff__form" title="The same text in another Unicode form">{text}</span>')
            else:
                parts.append(text)
        return mark_safe("".join(parts))


# A run of the diff: (op, left tokens, right tokens); op is "=" (the same tokens on both sides), "-"
# (left only), "+" (right only) or "~" (the same words, written in different Unicode forms).
Run = tuple[str, list[str], list[str]]


def word_diff(left: str, right: str, budget: Budget | None = None) -> WordDiff:
    """The diff from ``left`` to ``right``, word by word."""
    allowance = (budget or Budget(DIFF_SECONDS)).allowance()
    if len(left) + len(right) > MAX_DIFF_CHARS:
        return _replaced(left, right)
    if left == right:
        tokens = tokenize(left)
        return _build([("=", tokens, tokens)], coarse=False)
    if not left or not right or allowance == 0:
        return _build([("-", tokenize(left), []), ("+", [], tokenize(right))], coarse=bool(left and right))
    left_lines, right_lines = _LINE.findall(left), _LINE.findall(right)
    encoded_left, encoded_right, _ = _encode(left_lines, right_lines)
    started = _cpu_time()
    changes = dmp.diff(encoded_left, encoded_right, timelimit=allowance, checklines=False, cleanup="No")
    spent = _cpu_time() - started  # the allowance is diff-match-patch's time: the rest is linear
    runs: list[Run] = []
    coarse = spent >= allowance
    for removed, added in _line_runs(changes, left_lines, right_lines):
        left_tokens = _line_tokens(removed)
        if removed == added:
            runs.append(("=", left_tokens, left_tokens))
            continue
        right_tokens = _line_tokens(added)
        if left_tokens and right_tokens and spent < allowance:
            found, took = _token_runs(left_tokens, right_tokens, allowance - spent)
            runs += found
            spent += took
            coarse = coarse or spent >= allowance
        else:
            coarse = coarse or bool(left_tokens and right_tokens)  # both sides, but no time left
            runs += [("-", left_tokens, []), ("+", [], right_tokens)]
    return _build(runs, coarse=coarse)


def _line_runs(
    changes: list[tuple[str, int]], left: list[str], right: list[str]
) -> Iterator[tuple[list[str], list[str]]]:
    """The line diff as (left lines, right lines) pairs: each run of equal lines (``left == right``
    unless their Unicode forms differ), and each run of changed lines between two of them."""
    left_at = right_at = 0
    removed: list[str] = []
    added: list[str] = []
    for op, length in changes:
        if op == "-":
            removed += left[left_at : left_at + length]
            left_at += length
        elif op == "+":
            added += right[right_at : right_at + length]
            right_at += length
        else:
            if removed or added:
                yield removed, added
                removed, added = [], []
            yield left[left_at : left_at + length], right[right_at : right_at + length]
            left_at += length
            right_at += length
    if removed or added:
        yield removed, added


def _token_runs(left: list[str], right: list[str], seconds: float) -> tuple[list[Run], float]:
    """The token diff of two runs of changed lines, and the seconds diff-match-patch took (given at most
    ``seconds``). Runs that share too few words are replaced whole without one."""
    encoded_left, encoded_right, spaces = _encode(left, right)
    if not _comparable(encoded_left, encoded_right, spaces):
        return [("-", left, []), ("+", [], right)], 0.0
    started = _cpu_time()
    changes = dmp.diff(encoded_left, encoded_right, timelimit=seconds, checklines=False, cleanup="Semantic")
    took = _cpu_time() - started
    runs: list[Run] = []
    left_at = right_at = 0
    for op, length in changes:
        if op == "+":
            runs.append(("+", [], right[right_at : right_at + length]))
            right_at += length
        elif op == "-":
            runs.append(("-", left[left_at : left_at + length], []))
            left_at += length
        else:
            runs += _same_words(left[left_at : left_at + length], right[right_at : right_at + length])
            left_at += length
            right_at += length
    return runs, took


def _comparable(left: str, right: str, spaces: set[str]) -> bool:
    """Whether a word diff of two encoded runs of changed lines can show more than a replacement: they
    are short, or share MIN_SHARED_WORDS of the longer side's words (spaces aside)."""
    left_words, right_words = Counter(left), Counter(right)
    for space in spaces:
        left_words.pop(space, None)
        right_words.pop(space, None)
    longer = max(left_words.total(), right_words.total())
    return longer <= SKIP_WORDS or (left_words & right_words).total() >= MIN_SHARED_WORDS * longer


def _same_words(left: list[str], right: list[str]) -> list[Run]:
    """Tokens the diff found equal (in NFC): runs of identical ones, and runs written in another form."""
    if left == right:
        return [("=", left, right)]
    runs: list[Run] = []
    for a, b in zip(left, right):
        op = "=" if a == b else "~"
        if runs and runs[-1][0] == op:
            runs[-1][1].append(a)
            runs[-1][2].append(b)
        else:
            runs.append((op, [a], [b]))
    return runs


def _replaced(left: str, right: str) -> WordDiff:
    """Two texts too long to diff: the left one deleted, the right one inserted, marked coarse."""
    segments = [Segment(kind, text) for kind, text in (("delete", left), ("insert", right)) if text]
    return WordDiff(segments, len(left.split()), len(right.split()), coarse=left != right)


class _Codes(dict[str, str]):
    """Items (lines, tokens) to the code points that stand for them, a new one for each new item."""

    def __init__(self) -> None:
        super().__init__({"\n": "\n"})  # a line break stays itself: the cleanup sees where lines end
        self._points = _code_points()

    def __missing__(self, item: str) -> str:
        char = self[item] = chr(next(self._points))
        return char


def _encode(left: list[str], right: list[str]) -> tuple[str, str, set[str]]:
    """Each distinct item (a line, a token), compared in NFC, as one code point; and the code points
    of whitespace items."""
    codes = _Codes()

    def encode(items: list[str]) -> str:
        if not all(map(str.isascii, items)):  # ASCII is its own NFC, and most text is ASCII
            items = list(map(_NFC, items))
        return "".join(map(codes.__getitem__, items))

    encoded = encode(left), encode(right)
    return *encoded, {char for item, char in codes.items() if item.isspace()}


def _code_points() -> Iterator[int]:
    """Code points for tokens: all but controls and surrogates, about 1.1 million, more than the
    tokens two texts within MAX_DIFF_CHARS can hold (a token is at least one character)."""
    for point in range(_FIRST_CODE_POINT, 0x110000):
        if point not in _SURROGATES:
            yield point


def _words(tokens: list[str]) -> int:
    return len(tokens) - sum(map(str.isspace, tokens))


def _build(runs: list[Run], *, coarse: bool) -> WordDiff:
    """Segments from runs of tokens, long unchanged runs folded (at the ends of the text only the side
    that touches a change keeps context)."""
    segments: list[Segment] = []
    deleted = inserted = 0
    runs = _merged(runs)
    last = len(runs) - 1
    for position, (op, left, right) in enumerate(runs):
        if op == "-":
            deleted += _words(left)
            segments.append(Segment("delete", "".join(left)))
        elif op == "+":
            inserted += _words(right)
            segments.append(Segment("insert", "".join(right)))
        elif op == "~":
            segments.append(Segment("form", "".join(left), other="".join(right)))
        else:
            segments.extend(_equal(left, head=position > 0, tail=position < last))
    return WordDiff(segments, deleted, inserted, coarse)


def _merged(runs: list[Run]) -> list[Run]:
    """Runs without empty ones, neighbours of one kind joined (equal lines next to the equal end of a
    changed run's word diff are one unchanged run, folded as one)."""
    kept = [run for run in runs if run[1] or run[2]]
    out: list[Run] = []
    for op, group in itertools.groupby(kept, key=operator.itemgetter(0)):
        same = list(group)
        if len(same) == 1:
            out.append(same[0])
        else:
            out.append((op, [t for run in same for t in run[1]], [t for run in same for t in run[2]]))
    return out


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
