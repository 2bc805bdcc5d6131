"""What people type: words, "phrases", the last word as a prefix, -words left out, and input that would be
FTS5 syntax."""

from __future__ import annotations

import sqlite3
from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.properties import examples

from sessions_app.search.query import Term, fts_query, only_excluded, terms
from sessions_app.search.text import TOKEN_CATEGORIES


def test_words_and_phrases_in_order() -> None:
    assert terms('deploy "parent offset" fast') == [
        Term("deploy", phrase=False),
        Term("parent offset", phrase=True),
        Term("fast", phrase=False),
    ]


def test_an_unpaired_quote_opens_a_phrase_to_the_end() -> None:
    assert terms('fix "the build') == [Term("fix", phrase=False), Term("the build", phrase=True)]


def test_terms_without_anything_searchable_are_dropped() -> None:
    assert terms('* - "" ( ) ^ : " "') == []
    assert fts_query("  ") is None
    assert fts_query('"') is None


def test_operators_become_quoted_text() -> None:
    assert fts_query("a AND b") == '"a" "AND" "b"'
    assert fts_query("NEAR(x y)") == '"NEAR(x" "y)"'
    assert fts_query("+x") == '"+x"'


def test_the_last_word_is_a_prefix_from_its_third_character() -> None:
    assert fts_query("tree nod") == '"tree" "nod"*'
    assert fts_query("tree no") == '"tree" "no"'
    assert fts_query('"tree node"') == '"tree node"'  # a phrase is matched as written


def test_a_leading_dash_leaves_a_word_or_a_phrase_out() -> None:
    assert terms('deploy -staging -"dry run"') == [
        Term("deploy", phrase=False),
        Term("staging", phrase=False, excluded=True),
        Term("dry run", phrase=True, excluded=True),
    ]
    assert fts_query('deploy -staging -"dry run"') == '"deploy"* NOT "staging" NOT "dry run"'
    assert fts_query('-"dry run" deploy --staging') == '"deploy"* NOT "dry run" NOT "staging"'
    assert fts_query('"a"-"b c"') == '"a" NOT "b c"'  # the dash just before the quote, a word of its own


def test_a_dash_inside_a_word_alone_or_before_nothing_leaves_nothing_out() -> None:
    assert fts_query("well-known e-mail") == '"well-known" "e-mail"*'
    assert fts_query("go - to --") == '"go" "to"'
    assert fts_query('go -"" -* -" "') == '"go"'
    assert fts_query('fix - "the build"') == '"fix" "the build"'  # a space after the dash: no exclusion
    assert fts_query('fix-"the build"') == '"fix-" "the build"'  # the dash ends a word: no exclusion
    assert fts_query('exit "-1"') == '"exit" "-1"'  # quoted, a dash is text


def test_the_prefix_is_the_last_word_to_find_and_a_word_left_out_is_whole() -> None:
    assert fts_query("deplo -stag") == '"deplo"* NOT "stag"'
    assert fts_query("tree nod -x -yz") == '"tree" "nod"* NOT "x" NOT "yz"'
    assert fts_query('fix "the build" -broken') == '"fix" "the build" NOT "broken"'  # the last to find is a phrase


def test_words_left_out_alone_search_nothing() -> None:
    for query in ["-staging", '-staging -"dry run"', "-x - --y", '-"unclosed phrase']:
        assert fts_query(query) is None
        assert only_excluded(query)
    for query in ["", "- --", '-"" -*', "deploy -staging", "well-known"]:
        assert not only_excluded(query)


HOSTILE = [
    '"',
    '""',
    '"""',
    "AND",
    "OR",
    "NOT",
    "a OR b",
    "NOT x",
    "*",
    "x*",
    "*x",
    "NEAR(",
    "NEAR(a b, 2)",
    "-x",
    "-",
    "--",
    '-"',
    '-""',
    "x -",
    "x --",
    "- x",
    "-x -y",
    "x -NOT",
    "x -AND y",
    'x -"a',
    'x-"a"',
    '"a"-"b"',
    "x -*",
    "x -(",
    "x -y*",
    "x -NEAR(a b)",
    "+x",
    "^start",
    "text:word",
    "{text}: word",
    "(a",
    "a)",
    "col : x",
    "'",
    "a'b",
    "\\",
    "\x00",
    "\x02bold\x03",
    "%_",
    "; DROP TABLE entries; --",
    "a" * 500,
    " ".join(["x"] * 200),
    "🎉",
    "👨‍👩‍👧",
    "\u200b",
    "\ufeff",
    "\ud7ff",
]


@pytest.mark.parametrize("query", HOSTILE)
def test_any_input_runs_without_error(query: str, folder, find) -> None:
    folder.write("s1", folder.user("AND OR NOT NEAR a b x start word party 🎉 text"))
    find(query)  # must not raise; whatever it finds is text it contains


def test_operator_words_find_themselves_and_nothing_else(folder, find) -> None:
    folder.write("s1", folder.user("cats AND dogs"), {"id": "plain", **folder.user("cats dogs")})
    # "AND" is a word here: only the entry holding it matches, not both (as the AND operator would).
    assert find("cats AND dogs") == [("s1", "e0000001")]
    assert find("NOT dogs") == []  # no entry holds the word "not"


def test_a_word_left_out_removes_the_entries_holding_it(folder, find, run) -> None:
    folder.write(
        "s1",
        {"id": "prod", **folder.user("deploy to production")},
        {"id": "stage", **folder.user("deploy to staging")},
        {"id": "dry", **folder.user("deploy as a dry run")},
        {"id": "apart", **folder.user("a dry deploy, then a run")},
    )

    def ids(query: str) -> set[str]:
        return {entry_id for _, entry_id in find(query)}

    assert ids("deploy") == {"prod", "stage", "dry", "apart"}
    assert ids("deploy -staging") == {"prod", "dry", "apart"}
    assert ids("deploy -staging -production") == {"dry", "apart"}
    assert ids('deploy -"dry run"') == {"prod", "stage", "apart"}  # a phrase: "dry" and "run" apart stay
    assert ids("deplo -staging") == {"prod", "dry", "apart"}  # the word to find is still a prefix
    assert ids("deploy -stag") == {"prod", "stage", "dry", "apart"}  # a word left out is whole
    # Only what was found is marked: never a word left out, not even one present outside its phrase.
    assert {hit.marks for hit in run('deploy -"dry run"').hits} == {"deploy"}


def test_a_dash_inside_a_word_finds_the_word(folder, find) -> None:
    folder.write("s1", {"id": "hit", **folder.user("a well-known fix")}, {"id": "miss", **folder.user("well said")})
    assert find("well-known") == [("s1", "hit")]
    assert find("well -known") == [("s1", "miss")]


def test_words_left_out_alone_read_no_file(folder, run, index) -> None:
    folder.write("s", folder.user("text"))
    results = run("-text")
    assert results.hits == [] and not results.searched and results.only_excluded
    assert not index.path.exists()


# Queries built from what could be syntax, dashes and quotes most of all, beside any text at all.
SYNTAX = st.lists(
    st.sampled_from(["-", "--", '"', " ", "a", "bc", "NOT", "AND", "OR", "*", "(", ")", ":", "^", "é", "编程", "\t"]),
    max_size=16,
).map("".join)


@settings(max_examples=examples(300), deadline=None)
@given(st.one_of(st.text(max_size=60), SYNTAX))
def test_any_text_makes_a_query_or_none(query: str) -> None:
    expression = fts_query(query)
    if expression is not None:
        # Every part is one quoted FTS5 string (optionally with a prefix star) or NOT between two of
        # them: no other operator can leak.
        parts = _quoted_parts(expression)
        assert parts[0] != "NOT" and parts[-1] != "NOT"
        for number, part in enumerate(parts):
            if part == "NOT":
                assert parts[number + 1] != "NOT"
            else:
                assert part.startswith('"') and part.rstrip("*").endswith('"')
        _fts().execute("SELECT rowid FROM fts WHERE fts MATCH ?", [expression]).fetchall()  # no syntax error


VOCABULARY = ["alpha", "bravo", "charlie", "delta"]  # none starts another: a prefix matches its word only


@settings(max_examples=examples(150), deadline=None)
@given(
    st.lists(
        st.tuples(st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=2), st.booleans()),
        min_size=1,
        max_size=4,
    )
)
def test_an_entry_is_found_when_it_holds_every_term_to_find_and_none_left_out(
    query_terms: list[tuple[list[str], bool]],
) -> None:
    """Against every combination of the words in order: the terms to find all in it, those left out
    none, and words left out alone finding nothing (no query)."""
    query = " ".join(
        ("-" if left_out else "") + (f'"{" ".join(words)}"' if len(words) > 1 else words[0])
        for words, left_out in query_terms
    )
    expression = fts_query(query)
    if all(left_out for _, left_out in query_terms):
        assert expression is None
        return
    assert expression is not None
    found = {row for (row,) in _fts().execute("SELECT text FROM fts WHERE fts MATCH ?", [expression])}

    def holds(row: list[str], words: list[str]) -> bool:
        return any(row[at : at + len(words)] == words for at in range(len(row)))

    expected = {
        " ".join(row)
        for row in _combinations()
        if all(holds(row, words) != left_out for words, left_out in query_terms)
    }
    assert found == expected


def _combinations() -> list[list[str]]:
    return [[word for bit, word in enumerate(VOCABULARY) if mask >> bit & 1] for mask in range(1, 2 ** len(VOCABULARY))]


@cache
def _fts() -> sqlite3.Connection:
    """An FTS5 table tokenized as the index is, holding every combination of ``VOCABULARY`` in order."""
    db = sqlite3.connect(":memory:")
    db.execute(
        f"""CREATE VIRTUAL TABLE fts USING fts5(text, tokenize="unicode61 remove_diacritics 2 categories '{TOKEN_CATEGORIES}'")"""
    )
    db.executemany("INSERT INTO fts (text) VALUES (?)", [[" ".join(row)] for row in _combinations()])
    return db


def _quoted_parts(expression: str) -> list[str]:
    parts, current, inside = [], "", False
    i = 0
    while i < len(expression):
        char = expression[i]
        if char == '"' and inside and expression[i + 1 : i + 2] == '"':
            current += '""'
            i += 2
            continue
        if char == '"':
            inside = not inside
        if char == " " and not inside:
            parts.append(current)
            current = ""
        else:
            current += char
        i += 1
    parts.append(current)
    return parts
