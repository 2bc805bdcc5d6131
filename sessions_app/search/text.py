"""Text as the full-text index sees it, and back as a reader sees it.

SQLite's ``unicode61`` tokenizer splits words at spaces and punctuation, folds case and (with
``remove_diacritics 2``) accents. Scripts written without spaces between words (Chinese, Japanese, Thai…)
would become one token per run of characters, so "编程" could not be found inside "我喜欢编程". Such
characters are set apart here with a separator before indexing, and a query goes through the same
function: each becomes its own token, and a word of them is searched as a phrase of adjacent tokens,
which finds it anywhere, whatever its length. Symbols (emoji, °, ©) are set apart too, so that they
are searchable themselves and never glue onto the word next to them.

The separator is a control character, which the tokenizer treats as a space; control characters in the
source text are turned into spaces first, so every separator in stored text is one put there here, and
can be taken out for display without touching the text.
"""

from __future__ import annotations

import re
import unicodedata

import regex

SEPARATOR = "\x1f"

# Token characters for the tokenizer: its defaults (letters, numbers, private use) plus symbols.
TOKEN_CATEGORIES = "L* N* Co So"

_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_SET_APART = regex.compile(
    r"[\p{Han}\p{Hiragana}\p{Katakana}\p{Bopomofo}\p{Hangul}\p{Thai}\p{Lao}\p{Khmer}\p{Myanmar}\p{So}]"
)
_SEARCHABLE = regex.compile(r"[\p{L}\p{N}\p{Co}\p{So}]")


def index_form(text: str) -> str:
    """``text`` as it is stored and tokenized (a query word goes through the same function).

    NFKC makes full-width letters and digits (common in CJK text) the ordinary ones."""
    text = _CONTROLS.sub(" ", text)
    if text.isascii():
        return text
    text = unicodedata.normalize("NFKC", text)
    return _SET_APART.sub(SEPARATOR + r"\g<0>" + SEPARATOR, text)


def display_form(text: str) -> str:
    """Stored text as it reads (the separators taken out)."""
    return text.replace(SEPARATOR, "")


def searchable(text: str) -> bool:
    """Whether ``text`` holds at least one character the index has tokens for."""
    return _SEARCHABLE.search(text) is not None
