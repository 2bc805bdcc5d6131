"""What a person types, as an FTS5 query that cannot fail.

The syntax is small on purpose: words (all must match; the last one, from its third character on,
also matches longer words that start with it, so results follow typing) and "quoted phrases". Nothing
else is an operator: every word and phrase is passed to FTS5 as a quoted string, so ``AND``, ``NEAR(``,
``*``, ``-x`` or a lone ``"`` are searched as the text they are, and no input is a syntax error.
"""

from __future__ import annotations

from dataclasses import dataclass

from .text import index_form, searchable

# A shorter last word is matched whole: "t*" or "se*" stand for so many words that ranking them all
# takes longer than a keystroke should (bench/search.py).
PREFIX_MIN_CHARS = 3


@dataclass(frozen=True)
class Term:
    text: str
    phrase: bool


def terms(query: str) -> list[Term]:
    """The words and phrases of ``query``, in order, without those holding nothing searchable.

    Quotes pair up from the left; an unpaired last quote opens a phrase that runs to the end."""
    found: list[Term] = []
    for number, part in enumerate(query.split('"')):
        if number % 2:
            found.append(Term(part.strip(), phrase=True))
        else:
            found.extend(Term(word, phrase=False) for word in part.split())
    return [term for term in found if searchable(term.text)]


def fts_query(query: str) -> str | None:
    """The FTS5 MATCH expression for ``query``, or None when it has nothing to search for."""
    found = terms(query)
    if not found:
        return None
    parts = ['"' + index_form(term.text).replace('"', '""') + '"' for term in found]
    last = found[-1]
    if not last.phrase and len(last.text) >= PREFIX_MIN_CHARS:
        parts[-1] += "*"
    return " ".join(parts)
