"""``search``: the entries matching a query in every session, as text or as one JSON object."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from typing import Any

from ..search.index import Hit, Segment
from ..search.results import Results
from .listing import short_id_length
from .transcript import terminal_line

TITLE_WIDTH = 60
# Control characters (C0 and C1) could drive the terminal: text from session files never carries them out.
_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def search_lines(results: Results, among: Sequence[str]) -> Iterator[str]:
    """Per hit: ``short-session-id  entry-id  kind  time  title``, then the snippet indented, the
    matched words in ``**``; a last line says how to get the next page. Session ids are cut as ``ls``
    cuts them, as short as tells them apart ``among`` every session the reader sees, so that the
    other commands take them."""
    if not results.hits:
        yield "no more entries match" if results.page > 1 else f"no entry matches {results.query!r}"
        return
    width = short_id_length([*among, *(hit.session_id for hit in results.hits)])
    for hit in results.hits:
        title = _safe(terminal_line(hit.title, TITLE_WIDTH))
        fields = (hit.session_id[:width], hit.entry_id, hit.kind, hit.when)  # any strings of the file
        yield "  ".join([*(_safe(terminal_line(field)) for field in fields), title])
        yield "    " + _safe(terminal_line("".join(f"**{s.text}**" if s.match else s.text for s in hit.snippet)))
    if results.has_next:
        yield f"(more: --page {results.page + 1})"


def search_json(results: Results) -> dict[str, Any]:
    """The page as one object; each hit's snippet as plain text with the matched ranges (start, end) in it."""
    return {
        "query": results.query,
        "session": results.session,
        "page": results.page,
        "hasNext": results.has_next,
        "hits": [_hit_json(hit) for hit in results.hits],
    }


def _hit_json(hit: Hit) -> dict[str, Any]:
    text, highlights = _plain(hit.snippet)
    return {
        "sessionId": hit.session_id,
        "sessionTitle": hit.title,
        "path": os.fsencode(hit.path).decode("utf-8", "replace"),  # JSON holds no undecodable name
        "entryId": hit.entry_id,
        "kind": hit.kind,
        "timestamp": hit.timestamp,
        "snippet": text,
        "highlights": highlights,
    }


def _plain(snippet: tuple[Segment, ...]) -> tuple[str, list[tuple[int, int]]]:
    text, ranges = "", []
    for piece in snippet:
        if piece.match:
            ranges.append((len(text), len(text) + len(piece.text)))
        text += piece.text
    return text, ranges


def _safe(text: str) -> str:
    return _CONTROLS.sub(" ", text)
