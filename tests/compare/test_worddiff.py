"""The word diff: tokens that never split a character, diffs that give both texts back, escaping,
folding, and the deadline."""

from __future__ import annotations

import html
import re
import time

import regex
from hypothesis import given, settings
from hypothesis import strategies as st
from support.properties import examples

from sessions_app.display import worddiff
from sessions_app.display.worddiff import Budget, WordDiff, tokenize, word_diff

# Text drawn from pieces that stress tokenising: CJK, combining marks, ZWJ emoji, flags, CRLF.
PIECES = [
    "the",
    "cat",
    " ",
    "  ",
    "\n",
    "\r\n",
    "\t",
    "日",
    "本",
    "語",
    "e\u0301",
    "👨\u200d👩\u200d👧",
    "🇯🇵",
    "🇫🇷",
    "é",
    "<",
    "&",
    "x",
    "1",
    ".",
    "\u0301",
]
texts = st.one_of(st.text(max_size=60), st.lists(st.sampled_from(PIECES), max_size=40).map("".join))


def sides(diff: WordDiff) -> tuple[str, str]:
    """The left and the right text, read back from the segments."""
    left = "".join(s.text for s in diff.segments if s.kind in ("equal", "fold", "form", "delete"))
    right = "".join(s.other if s.kind == "form" else s.text for s in diff.segments if s.kind != "delete")
    return left, right


def grapheme_bounds(text: str) -> set[int]:
    return {match.end() for match in regex.finditer(r"\X", text)} | {0}


@given(texts)
def test_tokens_give_the_text_back_and_never_split_a_grapheme(text: str) -> None:
    tokens = tokenize(text)
    assert "".join(tokens) == text
    bounds = grapheme_bounds(text)
    at = 0
    for token in tokens:
        assert token
        at += len(token)
        assert at in bounds, (text, tokens)


@settings(max_examples=examples(200))
@given(texts, texts)
def test_a_diff_gives_both_texts_back(left: str, right: str) -> None:
    diff = word_diff(left, right)
    assert sides(diff) == (left, right)
    assert diff.identical == (left == right)


def test_words_that_changed_are_marked_and_the_rest_is_kept() -> None:
    diff = word_diff("the cat sat on the mat", "the dog sat on a mat")
    assert diff.html == "the <del>cat</del><ins>dog</ins> sat on <del>the</del><ins>a</ins> mat"
    assert (diff.deleted, diff.inserted) == (2, 2)


def test_cjk_is_compared_character_by_character() -> None:
    assert tokenize("日本語のテキスト") == ["日", "本", "語", "の", "テ", "キ", "ス", "ト"]
    diff = word_diff("日本語のテキスト", "日本語テキスト")
    assert diff.html == "日本語<del>の</del>テキスト"


def test_emoji_sequences_flags_and_combining_marks_stay_whole() -> None:
    family, other_family = "👨\u200d👩\u200d👧", "👨\u200d👩\u200d👦"
    diff = word_diff(f"{family} in 🇯🇵", f"{other_family} in 🇫🇷")
    assert diff.html == f"<del>{family}</del><ins>{other_family}</ins> in <del>🇯🇵</del><ins>🇫🇷</ins>"
    decomposed = "cafe\u0301"
    assert tokenize(f"{decomposed} noir") == [decomposed, " ", "noir"]
    diff = word_diff(f"{decomposed} noir", f"{decomposed} blanc")
    assert diff.html == f"{decomposed} <del>noir</del><ins>blanc</ins>"


def test_markdown_and_code_keep_their_whitespace() -> None:
    left = "## Plan\n\n```python\ndef f(x):\n    return x + 1\n```\n\n- one\n- two\n"
    right = "## Plan\n\n```python\ndef f(x):\n    return x * 2\n```\n\n- one\n- three\n"
    diff = word_diff(left, right)
    assert sides(diff) == (left, right)
    assert "    return x <del>+ 1</del><ins>* 2</ins>\n```" in diff.html
    assert "\n    return x " in html.unescape(diff.html)
    assert "- <del>two</del><ins>three</ins>\n" in diff.html


def test_hostile_text_stays_text() -> None:
    diff = word_diff("<b>bold</b>", '<script>alert("x")</script><img src=x onerror=alert(1)>')
    assert "<script" not in diff.html and "<img" not in diff.html and "<b>" not in diff.html
    assert "script&gt;alert(&quot;x&quot;)&lt;/script&gt;&lt;img src=x onerror=alert(1)" in diff.html
    assert set(re.findall(r"</?(\w+)", diff.html)) <= {"del", "ins"}


def test_long_unchanged_runs_are_folded_with_context_next_to_changes() -> None:
    shared = " ".join(f"w{i}" for i in range(200))
    diff = word_diff(f"start {shared} old end", f"begin {shared} new end")
    kinds = [s.kind for s in diff.segments]
    assert kinds == ["delete", "insert", "equal", "fold", "equal", "delete", "insert", "equal"]
    fold = diff.segments[3]
    assert fold.words == len(fold.text.split())
    assert diff.segments[2].text.startswith(" w0 w1")  # context after the first change
    assert diff.segments[4].text.endswith("w199 ")  # context before the second
    assert f'<details class="diff__fold"><summary>… {fold.words} unchanged words …</summary>' in diff.html
    assert sides(diff) == (f"start {shared} old end", f"begin {shared} new end")


def test_identical_and_empty_texts() -> None:
    same = " ".join(["word"] * 100)
    diff = word_diff(same, same)
    assert diff.identical and [s.kind for s in diff.segments] == ["fold"]
    assert word_diff("", "").segments == [] and word_diff("", "").identical
    added = word_diff("", "new text")
    assert [s.kind for s in added.segments] == ["insert"] and added.inserted == 2 and not added.coarse
    removed = word_diff("old text", "")
    assert [s.kind for s in removed.segments] == ["delete"] and removed.deleted == 2


def test_a_spent_budget_gives_a_coarse_diff_that_still_reads_both_texts() -> None:
    spent = Budget(0)
    diff = word_diff("one two three", "one two four", spent)
    assert diff.coarse
    assert sides(diff) == ("one two three", "one two four")


def test_a_thread_paused_by_a_busy_machine_still_gets_a_word_diff(monkeypatch) -> None:
    """The time a diff may take is CPU time: a pause longer than the whole allowance, as a loaded
    server's scheduler makes, must not turn a two-word change into a turn replaced whole."""
    real_diff = worddiff.dmp.diff

    def paused(*args: object, **kwargs: object) -> object:
        time.sleep(3 * worddiff.DIFF_SECONDS)  # wall time passes, this thread computes nothing
        return real_diff(*args, **kwargs)

    monkeypatch.setattr(worddiff.dmp, "diff", paused)
    diff = word_diff("Make it about rain\nand wind", "Make it about snow\nand wind", Budget(5 * worddiff.DIFF_SECONDS))
    assert not diff.coarse
    assert [(s.kind, s.text) for s in diff.segments if s.kind in ("delete", "insert")] == [
        ("delete", "rain"),
        ("insert", "snow"),
    ]


def test_texts_beyond_the_size_limit_are_replaced_whole(monkeypatch) -> None:
    monkeypatch.setattr(worddiff, "MAX_DIFF_CHARS", 20)
    diff = word_diff("a b c d e f g h i j k", "a b c d e f g h i j x")
    assert diff.coarse and [s.kind for s in diff.segments] == ["delete", "insert"]
    assert (diff.deleted, diff.inserted) == (11, 11)


@given(texts)
def test_the_fast_paths_cut_exactly_as_the_full_pattern(text: str) -> None:
    # ASCII lines go through the standard engine's simpler pattern; the tokens must not change.
    assert tokenize(text) == worddiff._TOKEN.findall(text)
    ascii_text = text.encode("ascii", "replace").decode()
    assert tokenize(ascii_text) == worddiff._TOKEN.findall(ascii_text)


def test_the_same_word_in_another_unicode_form_is_no_change() -> None:
    composed, decomposed = "caf\u00e9 noir", "cafe\u0301 noir"
    diff = word_diff(composed, decomposed)
    assert (diff.deleted, diff.inserted) == (0, 0) and not diff.identical
    assert "<del>" not in diff.html and "<ins>" not in diff.html
    assert diff.html == '<span class="diff__form" title="The same text in another Unicode form">caf\u00e9</span> noir'
    assert sides(diff) == (composed, decomposed)  # each side keeps the text as written
    # Next to a real change, the change alone is marked.
    diff = word_diff("un caf\u00e9 noir", "un cafe\u0301 blanc")
    assert diff.deleted == diff.inserted == 1 and "<del>noir</del><ins>blanc</ins>" in diff.html
    assert sides(diff) == ("un caf\u00e9 noir", "un cafe\u0301 blanc")


def test_changed_lines_that_share_few_words_are_replaced_whole_without_a_word_diff() -> None:
    kept = "".join(f"Line {i} stays exactly as it was written.\n" for i in range(20))
    old = "the quick brown fox jumps over the lazy dog near the river bank today " * 2
    new = "an entirely different sentence about compilers parsers and their many intermediate forms " * 2
    similar = old.replace("lazy", "sleepy")
    rewritten = word_diff(kept + old + "\n" + kept, kept + new + "\n" + kept)
    assert not rewritten.coarse
    assert [s.kind for s in rewritten.segments if s.kind in ("delete", "insert")] == ["delete", "insert"]
    assert [s.text for s in rewritten.segments if s.kind == "delete"] == [old + "\n"]
    edited = word_diff(kept + old + "\n" + kept, kept + similar + "\n" + kept)
    assert [s.text for s in edited.segments if s.kind in ("delete", "insert")] == ["lazy", "sleepy"] * 2
    assert (edited.deleted, edited.inserted) == (2, 2)
