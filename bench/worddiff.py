"""The word diff of two 50 KB answers: realistic pairs and adversarial ones, timed side by side.

Each pair is two texts of 50,000 UTF-8 bytes. A measurement is the whole job a page does per turn:
tokenise both texts, diff them, render the HTML (``word_diff(a, b).html``), with a fresh budget each
time. Realistic pairs: an answer edited here and there (5% of its lines touched), a regenerated answer
whose rewritten lines (30%) share nothing with the old ones, and one whose rewritten lines (30%) keep
about half their words (compared word by word). Adversarial pairs: every line edited, tokens changed
at random all through (no line survives), two unrelated texts, the same with no line breaks, a
pathologically repetitive pair, and Japanese text without a line break (one token per character).

Target: every pair in ≤ 100 ms (the median of ROUNDS runs). The result column says what the reader
gets: the number of changes marked, or "replaced whole"; and "coarse" where diff-match-patch's time
ran out first, so that passages it had not compared are shown replaced whole (a run of changed lines
that shares too few words is replaced whole by design, and is not coarse).
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C
import _gen

ROUNDS = 7
SIZE = 50_000  # bytes of UTF-8 per text
TARGET = 0.100


def _cut(text: str, size: int = SIZE) -> str:
    """``text`` cut to at most ``size`` bytes of UTF-8 (on a character boundary)."""
    return text.encode()[:size].decode(errors="ignore")


def _pairs() -> dict[str, tuple[str, str, bool]]:
    """name -> (left, right, realistic)."""
    pool = _gen._text_for(11)
    rng = random.Random(5)
    base = _cut(pool.get(SIZE + 1000))
    lines = base.split("\n")

    def edit(line: str, rate: float) -> str:
        words = line.split(" ")
        for _ in range(max(1, int(len(words) * rate))):
            words[rng.randrange(len(words))] = rng.choice(["value", "entry", "None", "tree", "offset", "return"])
        return " ".join(words)

    def per_line(change: Callable[[str], str], share: float) -> str:
        return _cut("\n".join(change(line) if rng.random() < share else line for line in lines))

    japanese = "東京の天気は晴れです。明日は雨が降るでしょう。セッションの木を比べます。"
    jp_left = _cut(japanese * (SIZE // len(japanese.encode()) + 1))
    jp_chars = list(jp_left)
    for _ in range(len(jp_chars) // 20):
        jp_chars[rng.randrange(len(jp_chars))] = rng.choice("雨雪風光木")
    tokens = base.split(" ")
    scattered = " ".join(rng.choice(tokens) if rng.random() < 0.3 else token for token in tokens)
    return {
        "edited answer (5% of lines)": (base, per_line(lambda line: edit(line, 0.2), 0.05), True),
        "regenerated answer (30% of lines rewritten)": (
            base,
            per_line(lambda line: pool.get(len(line)).replace("\n", " "), 0.3),
            True,
        ),
        "regenerated answer (30% of lines rephrased)": (base, per_line(lambda line: edit(line, 0.4), 0.3), True),
        "every line edited": (base, per_line(lambda line: edit(line, 0.2), 1.0), False),
        "30% of words changed at random": (base, _cut(scattered), False),
        "unrelated texts": (base, _cut(pool.get(SIZE + 1000)), False),
        "unrelated, no line breaks": (base.replace("\n", " "), _cut(pool.get(SIZE + 1000)).replace("\n", " "), False),
        "repetitive": (_cut("ab " * SIZE), _cut("ab ba " * SIZE), False),
        "Japanese, 5% of characters changed": (jp_left, "".join(jp_chars), False),
    }


def _outcome(diff: Any) -> str:
    """What the reader gets: how many changes are marked, or that the texts are shown replaced whole;
    "coarse" when the time ran out first."""
    changed = sum(1 for s in diff.segments if s.kind in ("delete", "insert"))
    whole = [s.kind for s in diff.segments] == ["delete", "insert"]
    what = "replaced whole" if whole else f"{changed:,} changes"
    return f"−{diff.deleted:,} +{diff.inserted:,} words, {what}{', coarse' if diff.coarse else ''}"


def main() -> int:
    report = C.Report("worddiff", "Word diff of two 50 KB answers (tokenise + diff + HTML)")
    import os

    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pitree_web.settings")
    django.setup()
    from sessions_app.display.worddiff import word_diff

    def render(left: str, right: str) -> str:
        return str(word_diff(left, right).html)

    pairs = _pairs()
    times: dict[str, list[float]] = {name: [] for name in pairs}
    outcome: dict[str, str] = {}
    for left, right, _ in pairs.values():
        render(left, right)  # warm-up (pattern compilation, first allocations)
    for _ in range(ROUNDS):
        for name, (left, right, _) in pairs.items():
            times[name].append(C.timed(partial(render, left, right)))
            outcome[name] = _outcome(word_diff(left, right))

    report.line(f"{'pair (50 KB each)':<46} {'median':>9} {'max':>9} {'÷ 100 ms':>9}  result")
    worst_realistic = 0.0
    for name, values in times.items():
        median = C.median(values)
        realistic = pairs[name][2]
        if realistic:
            worst_realistic = max(worst_realistic, median)
        report.line(
            f"{name:<46} {C.fmt_time(median):>9} {C.fmt_time(max(values)):>9} {median / TARGET:>8.2f}×  {outcome[name]}"
        )
        report.figure(
            f"word diff, {name}{'' if realistic else ' (adversarial)'}",
            f"{C.fmt_time(median)} ({median / TARGET:.2f}× target){' coarse' if 'coarse' in outcome[name] else ''}",
            "≤ 100 ms",
            median <= TARGET,
        )
    report.line()
    report.line(
        f"slowest realistic pair: {C.fmt_time(worst_realistic)} = {worst_realistic / TARGET:.2f}× the 100 ms target"
    )
    return report.finish()


if __name__ == "__main__":
    sys.exit(main())
