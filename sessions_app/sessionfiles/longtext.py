"""Long texts of long lines, read in pieces: an entry whose line holds megabytes of text is decoded
without those texts (its *outline*: each long string stored as a marker), and each text is decoded
afterwards piece by piece straight from the file. Decoding a whole line costs about four times its size
at its peak (the bytes, the string, the parser's scratch); read this way, a reader holds a piece.

A JSON string's stored form (what lies between its quotes) is cut into pieces only where each piece is
a valid string on its own that decodes to its share of the whole: never inside a UTF-8 sequence, an
escape, or between the two escapes of a surrogate pair. Each piece is decoded by ``lines.loads_line``,
the one judge of what a line holds, so a lone surrogate escape gets U+FFFD as it does in a whole line.
"""

from __future__ import annotations

import os
import re
import secrets
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from .lines import loads_line

LONG_LINE = 1 << 20
"""A line this long or longer is read as an outline."""
LONG_STRING = 64 * 1024
"""A string whose stored form is this long or longer is left out of an outline, and read in pieces."""
READ_BYTES = 256 * 1024  # what an outline reads of the file at a time
PIECE_BYTES = 64 * 1024  # what a long text is decoded from at a time (its stored bytes)

_MARK = f"\ue000{secrets.token_hex(8)}:"
"""What each marker starts with: a private-use character and a random word drawn once per process, so
that no stored text holds one by chance."""
_MARKERS = re.compile(f"{_MARK}([0-9]+)\ue001")
_BACKSLASH, _QUOTE = 0x5C, b'"'


@dataclass(frozen=True, slots=True)
class Span:
    """Where a long string's stored form lies in the file: the bytes between its quotes."""

    offset: int
    length: int


@dataclass(frozen=True, slots=True)
class Outline:
    """A line with each long string replaced by the string ``marker(n)``, and where string n lies."""

    line: bytes
    spans: tuple[Span, ...]


def marker(n: int) -> str:
    """What an outline holds in place of its n-th long string."""
    return f"{_MARK}{n}\ue001"


def split_markers(text: str) -> list[str | int]:
    """``text`` as its plain parts (strings) and the numbers of the markers between them, in order."""
    parts: list[str | int] = []
    at = 0
    for found in _MARKERS.finditer(text):
        parts += [text[at : found.start()], int(found.group(1))]
        at = found.end()
    parts.append(text[at:])
    return [part for part in parts if part != ""]


def holds_marker(text: str) -> bool:
    return _MARK in text


def outline(fd: int, offset: int, length: int) -> Outline:
    """The outline of the line of ``length`` bytes at ``offset`` in ``fd``, read ``READ_BYTES`` at a time.
    Only strings are looked at (a quote outside a string opens one; a quote after an even run of
    backslashes closes it): a line that is no JSON gives an outline that is none either."""
    kept: list[bytes] = []
    spans: list[Span] = []
    opened = -1  # file offset of the open string's first stored byte; -1 outside strings
    held: list[bytes] | None = []  # the open string's stored bytes while it is short; None once long
    held_bytes = 0
    carry = b""  # the open string's trailing backslashes, judged with what follows them
    at, end = offset, offset + length
    while at < end:
        chunk = os.pread(fd, min(READ_BYTES, end - at), at)
        if not chunk:
            break  # the file is shorter than its index says: the outline is cut, so no JSON
        base = at - len(carry)  # file offset of buf[0]
        buf, carry = carry + chunk, b""
        at += len(chunk)
        i = 0
        while i < len(buf):
            if opened < 0:
                quote = buf.find(_QUOTE, i)
                if quote < 0:
                    kept.append(buf[i:])
                    break
                kept.append(buf[i:quote])
                opened, held, held_bytes, i = base + quote + 1, [], 0, quote + 1
                continue
            quote = _closing_quote(buf, i)
            stop = quote if quote >= 0 else _before_backslashes(buf, i)
            if held is not None:
                held.append(buf[i:stop])
                held_bytes += stop - i
                if held_bytes >= LONG_STRING:
                    held = None
            if quote < 0:
                carry = buf[stop:]
                break
            if held is None:
                kept.append(f'"{marker(len(spans))}"'.encode())
                spans.append(Span(opened, base + quote - opened))
            else:
                kept += [_QUOTE, *held, _QUOTE]
            opened, i = -1, quote + 1
    return Outline(b"".join(kept), tuple(spans))


def _closing_quote(buf: bytes, start: int) -> int:
    """The first quote at or after ``start`` that no backslash escapes, or -1; ``start`` is where an
    escape cannot be under way (a string's first byte, or a run of backslashes' first)."""
    at = start
    while (quote := buf.find(_QUOTE, at)) >= 0:
        if _backslashes_before(buf, quote, start) % 2 == 0:
            return quote
        at = quote + 1
    return -1


def _before_backslashes(buf: bytes, start: int) -> int:
    """Where the run of backslashes that ends ``buf`` begins (``len(buf)`` if none), not before ``start``."""
    end = len(buf)
    while end > start and buf[end - 1] == _BACKSLASH:
        end -= 1
    return end


def _backslashes_before(buf: bytes, at: int, floor: int) -> int:
    run = at
    while run > floor and buf[run - 1] == _BACKSLASH:
        run -= 1
    return at - run


def string_pieces(stored: Iterable[bytes], piece_bytes: int = PIECE_BYTES) -> Iterator[str]:
    """The text of a JSON string from its stored form, given in chunks cut anywhere: decoded about
    ``piece_bytes`` at a time, so that the text is never held whole. Joined, the pieces are what
    ``loads_line`` reads from the whole string; a stored form that is no valid string raises BadLine."""
    buf = b""
    for chunk in stored:
        buf = buf + chunk if buf else chunk
        while len(buf) > piece_bytes and (cut := safe_cut(buf, piece_bytes)) is not None:
            yield _decoded(buf[:cut])
            buf = buf[cut:]
    if buf:
        yield _decoded(buf)


def safe_cut(stored: bytes, at: int) -> int | None:
    """Where ``stored``, the start of a string's stored form, may be cut: the last place at or before
    ``at`` (0 < ``at`` < ``len(stored)``) or else the first after it; None when ``stored`` is too short
    to tell. A valid string may be cut at least every 12 bytes (a surrogate pair's two escapes), so
    a stored form with no such place near ``at`` is invalid, and is cut at ``at`` (its pieces fail to
    decode, as it would whole)."""
    for cut in range(at, max(0, at - _NEAR), -1):
        if _may_cut(stored, cut):
            return cut
    for cut in range(at + 1, min(len(stored), at + _NEAR)):
        if _may_cut(stored, cut):
            return cut
    return at if len(stored) >= at + 2 * _NEAR else None


_NEAR = 16


def _may_cut(stored: bytes, cut: int) -> bool:
    """Whether ``stored[:cut]`` and what follows decode apart as they do together (the place is known
    to be outside escapes as far back as ``stored[0]``)."""
    if 0x80 <= stored[cut] < 0xC0:  # a UTF-8 sequence's continuation byte
        return False
    for start in range(max(0, cut - 6), cut):
        if stored[start] != _BACKSLASH or _backslashes_before(stored, start, 0) % 2:
            continue  # no escape starts here
        unicode = stored[start + 1] == ord("u")
        ends = start + (6 if unicode else 2)
        if ends > cut:
            return False  # inside the escape
        if ends == cut and unicode and _surrogate(stored, start, b"89abAB"):
            # After a high surrogate: not if a low one follows (a pair), or may (not read yet).
            if len(stored) < cut + 6:
                return False
            return not (
                stored[cut] == _BACKSLASH and stored[cut + 1] == ord("u") and _surrogate(stored, cut, b"cdefCDEF")
            )
    return True


def _surrogate(stored: bytes, escape: int, second: bytes) -> bool:
    """Whether the ``\\uXXXX`` escape at ``escape`` is a surrogate whose second hex digit is in ``second``."""
    return stored[escape + 2] in b"dD" and stored[escape + 3] in second


def _decoded(piece: bytes) -> str:
    # Quoted, a piece is JSON only as one string: a quote no backslash escapes would end it early.
    text: str = loads_line(b'"' + piece + b'"')
    return text
