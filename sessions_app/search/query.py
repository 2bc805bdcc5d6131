"""What a person types, as an FTS5 query that cannot fail.

The syntax is small on purpose: words (all must match; the last one, from its third character on,
also matches longer words that start with it, so results follow typing), "quoted phrases", and a word
or phrase with a ``-`` before it (``-staging``, ``-"dry run"``), which leaves out the entries holding
it. A ``-`` counts only at the start of a word: ``well-known`` and ``e-mail`` are words to find, and a
``-`` with nothing searchable after it is nothing. The prefix rule takes the last word to *find*, not
a word left out: ``deplo -staging`` finds "deployed" without the entries saying "staging", and a word
left out is always a whole word (while it is being typed, ``-st`` does not hide every word starting
"st"). Words that are all left out have nothing to take them from: such a query searches nothing, as
an empty one does. To find a word that starts with ``-`` as text, quote it: ``"-1"``.

Nothing else is an operator: every word and phrase is passed to FTS5 as a quoted string, joined by
FTS5's ``NOT`` for those left out (``"a" "b" NOT "c" NOT "d"``), so ``AND``, ``NEAR(``, ``*``, ``+x``
or a lone ``"`` are searched as the text they are, and no input is a syntax error.
"""

from __future__ import annotations

from dataclasses import dataclass

from .snippets import Wanted
from .text import index_form, searchable

# A shorter last word is matched whole: "t*" or "se*" stand for so many words that ranking them all
# takes longer than a keystroke should (bench/search.py).
PREFIX_MIN_CHARS = 3
EXCLUDE = "-"


@dataclass(frozen=True)
class Term:
    text: str
    phrase: bool
    excluded: bool = False  # written with a leading "-": entries holding it are left out


def terms(query: str) -> list[Term]:
    """The words and phrases of ``query``, in order, without those holding nothing searchable.

    Quotes pair up from the left; an unpaired last quote opens a phrase that runs to the end. A phrase
    is left out when the word just before its opening quote is only dashes (``-"a b"``)."""
    found: list[Term] = []
    before = ""
    for number, part in enumerate(query.split('"')):
        if number % 2:
            found.append(Term(part.strip(), phrase=True, excluded=_ends_with_dashes(before)))
        else:
            found.extend(_word(word) for word in part.split())
            before = part
    return [term for term in found if searchable(term.text)]


def _word(word: str) -> Term:
    """A word as typed: leading dashes leave it out."""
    rest = word.lstrip(EXCLUDE)
    return Term(rest, phrase=False, excluded=rest != word)


def _ends_with_dashes(text: str) -> bool:
    """Whether ``text`` ends, with no space after, in a word made of dashes alone."""
    return text.endswith(EXCLUDE) and not text.rsplit(maxsplit=1)[-1].strip(EXCLUDE)


def only_excluded(query: str) -> bool:
    """Whether ``query`` has words to leave out and none to find (so it searches nothing): the page
    and the command line then say that a word to find is missing, rather than how to search."""
    found = terms(query)
    return bool(found) and all(term.excluded for term in found)


def fts_query(query: str) -> str | None:
    """The FTS5 MATCH expression for ``query``, or None when it has nothing to find."""
    found = terms(query)
    wanted = [term for term in found if not term.excluded]
    if not wanted:
        return None
    parts = [_quoted(term) for term in wanted]
    if _prefix(wanted[-1]):
        parts[-1] += "*"
    parts.extend("NOT " + _quoted(term) for term in found if term.excluded)
    return " ".join(parts)


def marked(query: str) -> list[Wanted]:
    """What a hit of ``query`` shows marked: the words and phrases to find (not those left out), the
    last one also as a prefix when ``fts_query`` searches it so."""
    wanted = [term for term in terms(query) if not term.excluded]
    return [Wanted(index_form(term.text), term is wanted[-1] and _prefix(term)) for term in wanted]


def _prefix(term: Term) -> bool:
    return not term.phrase and len(term.text) >= PREFIX_MIN_CHARS


def _quoted(term: Term) -> str:
    return '"' + index_form(term.text).replace('"', '""') + '"'
