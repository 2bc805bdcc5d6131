"""Snippets cut by pitree for a page's hits: the window chosen, what is marked (words, phrases, the
typed prefix, accents and case folded as the tokenizer folds them), and the ends of the text."""

from __future__ import annotations

from sessions_app.search.query import marked
from sessions_app.search.snippets import SNIPPET_TOKENS, Segment, Snippets, fold
from sessions_app.search.text import index_form


def cut(query: str, text: str) -> tuple[Segment, ...]:
    return Snippets(marked(query)).of(index_form(text))


def found(query: str, text: str) -> list[str]:
    return [piece.text for piece in cut(query, text) if piece.match]


def test_a_short_text_is_shown_whole_with_its_matches_marked() -> None:
    assert cut("parser", "Where is the Parser defined?") == (
        Segment("Where is the ", False),
        Segment("Parser", True),
        Segment(" defined?", False),
    )


def test_the_window_holding_the_most_different_words_is_chosen() -> None:
    filler = " ".join(f"w{i}" for i in range(200))
    text = f"alpha {filler} alpha {filler} alpha beta {filler}"
    assert found("alpha beta", text) == ["alpha", "beta"]
    pieces = cut("alpha beta", text)
    assert pieces[0].text.startswith("…") and pieces[-1].text.endswith("…")
    shown = "".join(piece.text for piece in pieces).strip("…").split()
    assert len(shown) == SNIPPET_TOKENS  # the matches in the middle of a window of that many words


def test_phrases_are_marked_whole_and_only_where_their_words_follow_each_other() -> None:
    assert found('"dry run"', "a run that was dry, then a dry-run") == ["dry-run"]


def test_the_last_word_marks_longer_words_from_its_third_character() -> None:
    assert found("deplo", "we deployed, then redeployed to deploy") == ["deployed", "deploy"]
    assert found("de", "de deployed") == ["de"]


def test_words_left_out_are_not_marked() -> None:
    assert found("deploy -staging", "deploy to staging") == ["deploy"]


def test_case_and_accents_fold_as_the_index_folds_them() -> None:
    assert found('"cafe"', "Un CAFÉ, un café, une cafetière") == ["CAFÉ", "café"]
    assert found("cafe", "un café, une cafetière") == ["café", "cafetière"]  # the last word typed: a prefix
    assert found("überprüfung", "die Ueberpruefung, die Überprüfung") == ["Überprüfung"]


def test_cjk_words_are_marked_as_written() -> None:
    assert cut("编程", "我喜欢编程语言") == (Segment("我喜欢", False), Segment("编程", True), Segment("语言", False))


def test_a_text_without_a_match_shows_its_start() -> None:
    words = " ".join(f"w{i}" for i in range(100))
    pieces = cut("absent", words)
    assert not any(piece.match for piece in pieces)
    assert pieces[0].text.split() == [f"w{i}" for i in range(SNIPPET_TOKENS - 1)] + [f"w{SNIPPET_TOKENS - 1}…"]


def test_folding_keeps_every_offset() -> None:
    text = "İstanbul ŒUVRE straße ǅemal ﬁne Ａ x\u0301y"
    assert len(fold(text)) == len(text)
    assert fold("İSTANBUL Café") == "istanbul cafe"
