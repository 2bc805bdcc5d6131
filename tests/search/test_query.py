"""What people type: words, "phrases", the last word as a prefix, and input that would be FTS5 syntax."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.properties import examples

from sessions_app.search.query import Term, fts_query, terms


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
    assert fts_query("-x") == '"-x"'


def test_the_last_word_is_a_prefix_from_its_third_character() -> None:
    assert fts_query("tree nod") == '"tree" "nod"*'
    assert fts_query("tree no") == '"tree" "no"'
    assert fts_query('"tree node"') == '"tree node"'  # a phrase is matched as written


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


@settings(max_examples=examples(150), deadline=None)
@given(st.text(max_size=60))
def test_any_text_makes_a_query_or_none(query: str) -> None:
    expression = fts_query(query)
    if expression is not None:
        # Every part is one quoted FTS5 string (optionally with a prefix star): no operator can leak.
        for part in _quoted_parts(expression):
            assert part.startswith('"') and part.rstrip("*").endswith('"')


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
