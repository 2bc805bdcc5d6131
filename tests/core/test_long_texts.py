"""Long texts read in pieces (sessionfiles/longtext.py): a JSON string's stored form, handed in chunks
cut anywhere and decoded a piece at a time, gives exactly what decoding it whole gives (orjson, and
U+FFFD for a lone surrogate as ``loads_line`` repairs it), whatever the piece size; a stored form that
is no string fails as it fails whole. An outline of a line is the line with its long strings as
markers, and the spans it names hold exactly those strings."""

from __future__ import annotations

import itertools
import json
import os
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.properties import examples

from sessions_app.sessionfiles import listing, longtext, store
from sessions_app.sessionfiles.entries import joined_text, js_trim
from sessions_app.sessionfiles.lines import BadLine, loads_line
from sessions_app.sessionfiles.longtext import marker, outline, split_markers, string_pieces

CHARACTERS = st.characters(codec="utf-8", exclude_characters='"\\', min_codepoint=0x20)
SHORT_ESCAPES = st.sampled_from([b'\\"', b"\\\\", b"\\/", b"\\b", b"\\f", b"\\n", b"\\r", b"\\t"])
HEX_CASES = st.sampled_from(["%04x", "%04X"])


@st.composite
def unicode_escapes(draw: st.DrawFn, low: int = 0, high: int = 0xFFFF) -> bytes:
    return (b"\\u" + (draw(HEX_CASES) % draw(st.integers(low, high))).encode()).replace(b"\\U", b"\\u")


PAIRS = st.tuples(unicode_escapes(0xD800, 0xDBFF), unicode_escapes(0xDC00, 0xDFFF)).map(b"".join)
LONE = st.one_of(unicode_escapes(0xD800, 0xDBFF), unicode_escapes(0xDC00, 0xDFFF))
VALID_UNITS = st.one_of(
    CHARACTERS.map(str.encode), CHARACTERS.map(str.encode), SHORT_ESCAPES, unicode_escapes(), PAIRS, LONE
)
# What makes a stored form no string: a quote or a control character as is, a bad or cut escape, a
# byte no UTF-8 text holds or a cut sequence.
INVALID_UNITS = st.sampled_from([b'"', b"\x01", b"\n", b"\\x", b"\\u12", b"\\", b"\xc3", b"\x80", b"\xff", b"\xe2\x82"])


def cut(data: bytes, places: list[int]) -> list[bytes]:
    """``data`` in chunks, cut at ``places`` (taken modulo its length)."""
    points = sorted({place % (len(data) + 1) for place in places} | {0, len(data)})
    return [data[a:b] for a, b in itertools.pairwise(points)]


def whole(stored: bytes) -> str:
    value = loads_line(b'"' + stored + b'"')
    assert isinstance(value, str)
    return value


def pieces_of(stored: bytes, places: list[int], piece_bytes: int) -> list[str]:
    return list(string_pieces(cut(stored, places), piece_bytes))


@settings(max_examples=examples(400))
@given(st.lists(VALID_UNITS, max_size=60).map(b"".join), st.lists(st.integers(0, 400)), st.integers(1, 40))
def test_pieces_join_to_the_whole_string_whatever_the_cuts(stored: bytes, places: list[int], piece_bytes: int) -> None:
    assert "".join(pieces_of(stored, places, piece_bytes)) == whole(stored)


@settings(max_examples=examples(200))
@given(
    st.lists(st.one_of(CHARACTERS.map(str.encode), SHORT_ESCAPES, unicode_escapes(0, 0xD7FF), PAIRS), max_size=60).map(
        b"".join
    ),
    st.lists(st.integers(0, 400)),
    st.integers(1, 40),
)
def test_without_lone_surrogates_the_pieces_are_orjson_s_string(
    stored: bytes, places: list[int], piece_bytes: int
) -> None:
    assert "".join(pieces_of(stored, places, piece_bytes)) == orjson.loads(b'"' + stored + b'"')


@settings(max_examples=examples(300))
@given(
    st.lists(st.one_of(VALID_UNITS, VALID_UNITS, INVALID_UNITS), max_size=40).map(b"".join),
    st.lists(st.integers(0, 300)),
    st.integers(1, 30),
)
def test_a_stored_form_that_is_no_string_fails_in_pieces_too(
    stored: bytes, places: list[int], piece_bytes: int
) -> None:
    try:
        expected = whole(stored)
    except BadLine:
        with pytest.raises(BadLine):
            pieces_of(stored, places, piece_bytes)
    else:
        assert "".join(pieces_of(stored, places, piece_bytes)) == expected


def test_pieces_are_cut_near_the_size_asked_for() -> None:
    """A piece holds about ``piece_bytes`` of the stored form: the text is never held whole."""
    stored = ("é" * 1000 + "\\ud83d\\ude00" * 100 + "\\\\" * 1000).encode()
    pieces = pieces_of(stored, [], 64)
    assert "".join(pieces) == whole(stored)
    assert max(len(piece.encode("utf-8", "surrogatepass")) for piece in pieces) <= 64
    assert len(pieces) > len(stored) // 80


def test_a_run_of_lone_high_surrogates_is_cut_between_them() -> None:
    stored = b"\\ud800" * 200 + b"\\udc00"
    pieces = pieces_of(stored, [], 30)
    assert "".join(pieces) == "\ufffd" * 199 + "\U00010000" and len(pieces) > 30


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.text(max_size=12) | st.text(max_size=60),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=20), children, max_size=4),
    max_leaves=12,
)


@settings(max_examples=examples(200))
@given(JSON, st.booleans(), st.integers(1, 40), st.integers(0, 30))
def test_an_outline_is_the_line_with_its_long_strings_as_markers(
    tmp_path_factory: pytest.TempPathFactory, value: Any, ascii_only: bool, read_bytes: int, offset: int
) -> None:
    line = json.dumps(value, ensure_ascii=ascii_only).encode()
    path = tmp_path_factory.mktemp("outline") / "line"
    path.write_bytes(b"x" * offset + line + b"\n")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(longtext, "LONG_STRING", 16)
        patch.setattr(longtext, "READ_BYTES", read_bytes)
        found = _outline(path, offset, len(line))
    stored = path.read_bytes()
    texts = [whole(stored[span.offset : span.offset + span.length]) for span in found.spans]
    assert _filled(loads_line(found.line), texts) == loads_line(line)
    assert all(span.length >= 16 for span in found.spans)
    assert len(found.line) <= len(line) + 40 * len(found.spans)


def _outline(path: Path, offset: int, length: int) -> longtext.Outline:
    fd = os.open(path, os.O_RDONLY)
    try:
        return outline(fd, offset, length)
    finally:
        os.close(fd)


def _filled(value: Any, texts: list[str]) -> Any:
    """``value`` with each marker in a string (a key or a value) as the text it stands for."""
    if isinstance(value, str):
        return "".join(texts[part] if isinstance(part, int) else part for part in split_markers(value))
    if isinstance(value, list):
        return [_filled(item, texts) for item in value]
    if isinstance(value, dict):
        return {_filled(key, texts): _filled(item, texts) for key, item in value.items()}
    return value


def test_a_marker_is_found_among_text_and_only_as_itself() -> None:
    assert split_markers(f"a{marker(0)}b{marker(12)}") == ["a", 0, "b", 12]
    assert split_markers("\ue000 plain \ue001") == ["\ue000 plain \ue001"]


@settings(max_examples=examples(200))
@given(st.lists(st.binary(max_size=400).map(lambda line: line.replace(b"\n", b"")), max_size=10), st.integers(1, 64))
def test_the_file_reader_hands_on_each_line_whole_however_long(
    tmp_path_factory: pytest.TempPathFactory, lines: list[bytes], chunk: int
) -> None:
    """Lines longer than four chunks are read again in one piece, not joined from the chunks: the
    buffers are still the file's bytes where they say, and hold every line whole."""
    data = b"".join(line + b"\n" for line in lines) + b"tail"
    path = tmp_path_factory.mktemp("chunks") / "s.jsonl"
    path.write_bytes(data)
    whole: list[bytes] = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(store, "_CHUNK", chunk)
        fd = os.open(path, os.O_RDONLY)
        try:
            for piece in store.read_chunks(fd, 0, len(data), max_line=10**6):
                assert not isinstance(piece, store.LongLine)
                buf, base, end = piece
                assert data[base : base + len(buf)] == buf
                whole += buf[:end].split(b"\n")[:-1] if end else [buf]
        finally:
            os.close(fd)
    assert whole == [*lines, b"tail"]


BLANKS = st.sampled_from([" ", "\n", "\t", "\u00a0", "\u2028", "\ufeff", "\u3000"])
WORDS = st.one_of(
    st.lists(BLANKS, max_size=30).map("".join),  # blank: the list looks on to the next message
    st.lists(st.one_of(BLANKS, BLANKS, st.text(max_size=30)), max_size=8).map("".join),
)
CONTENTS = st.one_of(
    WORDS,
    st.lists(st.one_of(WORDS.map(lambda text: {"type": "text", "text": text}), st.just({"type": "image"})), max_size=3),
)


@settings(max_examples=examples(100))
@given(st.lists(CONTENTS, min_size=1, max_size=3), st.integers(1, 12))
def test_a_session_s_first_message_read_in_pieces_is_the_one_read_whole(
    tmp_path_factory: pytest.TempPathFactory, contents: list[Any], first_chars: int
) -> None:
    """The first user message pi's list shows (its first characters, the first that is not blank) is
    the same when its long texts are read a piece at a time as when the line is decoded whole."""
    header = {"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}
    lines = [header] + [
        {"type": "message", "id": f"m{n}", "parentId": f"m{n - 1}" if n else None, "timestamp": "2026-01-01T00:00:01Z"}
        | {"message": {"role": "user", "content": content, "timestamp": 1}}
        for n, content in enumerate(contents)
    ]
    path = tmp_path_factory.mktemp("first") / "s.jsonl"
    path.write_bytes(b"".join(json.dumps(line).encode() + b"\n" for line in lines))
    texts = (joined_text(content) for content in contents)
    expected = next((text[:first_chars] for text in texts if js_trim(text)), listing.NO_MESSAGES)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(listing, "FIRST_MESSAGE_CHARS", first_chars)
        assert listing.read_info(path).first_message == expected  # each line decoded whole
        patch.setattr(store, "LONG_LINE", 1)
        patch.setattr(longtext, "LONG_STRING", 8)
        patch.setattr(store, "PIECE_BYTES", 3)
        assert listing.session_info(store.SessionFile(path, fsync=False)).first_message == expected
