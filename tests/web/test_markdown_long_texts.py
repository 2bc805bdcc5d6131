"""The Markdown download reads the texts of a long line a piece at a time (``SessionFile.outlines``,
``long_text``), and writes byte for byte what decoding each entry whole writes: for every sample (each
of its strings read as a long one), and for a session of megabyte texts of every kind, with escapes,
surrogate pairs and lone surrogates, blank replies, fenced outputs and quoted summaries."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from support.pi_expected import SAMPLES_DIR

from sessions_app.sessionfiles import longtext, store
from sessions_app.sessionfiles.store import SessionFile
from sessions_app.sessionfiles.tree import path as tree_path
from sessions_app.transfer import markdown
from sessions_app.transfer.downloads import in_pieces

SAMPLES = sorted(path.name for path in SAMPLES_DIR.glob("*.jsonl"))


def _decoded_whole(self: SessionFile, rows: Any) -> list[tuple[dict[str, Any], tuple[longtext.Span, ...]]]:
    return [(entry, ()) for entry in self.entries(rows)]


class Spy:
    """Counts the long strings outlines left out, and those read in pieces."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.outlined = self.texts = 0
        outlines, long_text = SessionFile.outlines, SessionFile.long_text

        def outlined(session: SessionFile, rows: Any) -> Any:
            found = outlines(session, rows)
            self.outlined += sum(len(spans) for _, spans in found)
            return found

        def counted(session: SessionFile, span: longtext.Span) -> Any:
            self.texts += 1
            return long_text(session, span)

        monkeypatch.setattr(SessionFile, "outlines", outlined)
        monkeypatch.setattr(SessionFile, "long_text", counted)


def _every_branch(path: Path) -> list[str]:
    session = SessionFile(path)
    index = session.index
    return [
        b"".join(in_pieces(markdown._parts(session, tree_path(index, row), "# t\n"))).decode()
        for row in range(len(index))
        if index.is_node(row)
    ]


@pytest.mark.parametrize("sample", SAMPLES)
def test_every_sample_s_markdown_is_the_same_with_its_strings_read_in_pieces(
    sample: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / sample
    shutil.copy(SAMPLES_DIR / sample, path)
    with monkeypatch.context() as patch:
        patch.setattr(store, "LONG_LINE", 1)
        patch.setattr(longtext, "LONG_STRING", 24)  # longer than any type, role or reason a line holds
        patch.setattr(store, "PIECE_BYTES", 5)
        spy = Spy(patch)
        in_pieces_ = _every_branch(path)
    assert spy.outlined > 0  # its timestamps at least
    monkeypatch.setattr(SessionFile, "outlines", _decoded_whole)
    assert in_pieces_ == _every_branch(path)


TEXT = 'é, "quoted", back\\slash, a tab\there, 😀 and 中文\n' * 4000  # ~200 KB of stored text
FENCED = "``` a fence ```` inside\n" * 8000


def _line(entry_id: str, parent: str | None, ascii_only: bool = False, **fields: Any) -> bytes:
    entry = {"id": entry_id, "parentId": parent, "timestamp": "2026-01-01T00:00:01.000Z", **fields}
    return json.dumps(entry, ensure_ascii=ascii_only).encode()


def _message(entry_id: str, parent: str | None, ascii_only: bool = False, **message: Any) -> bytes:
    return _line(entry_id, parent, ascii_only, type="message", message={"timestamp": 1, **message})


def _session(folder: Path) -> Path:
    header = {"type": "session", "version": 3, "id": "long0", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}
    reply = [
        {"type": "thinking", "thinking": TEXT},
        {"type": "text", "text": TEXT},
        {"type": "toolCall", "id": "c1", "name": "write", "arguments": {"path": "a.txt"}},
        {"type": "text", "text": TEXT},
    ]
    shown_otherwise = [  # a blank text (left out), a long argument (as JSON), a long error (on one line)
        {"type": "text", "text": " \n\t" * 60000},
        {"type": "toolCall", "id": "c2", "name": "write", "arguments": {"content": TEXT}},
    ]
    image = {"type": "image", "mimeType": "image/png", "data": "A" * 90000}
    lines = [
        json.dumps(header).encode(),
        _message("e1", None, role="user", content=TEXT),
        _message("e2", "e1", True, role="user", content=TEXT + "\ud83d lone, and \udc00 lone"),
        _message("e3", "e2", role="assistant", content=reply, stopReason="aborted", errorMessage="stopped"),
        _message("e4", "e3", role="assistant", content=shown_otherwise, stopReason="error", errorMessage="x" * 70000),
        _message(
            "e5", "e4", role="toolResult", toolCallId="c1", toolName="write", content=[{"type": "text", "text": FENCED}]
        ),
        _line("e6", "e5", type="compaction", summary=TEXT, firstKeptEntryId="e1", tokensBefore=5),
        _line("e7", "e6", type="custom_message", customType="note", content=TEXT, display=True),
        _message("e8", "e7", role="assistant", content=[{"type": "text", "text": " " * 150000}], stopReason="stop"),
        _message("e9", "e8", role="user", content=[{"type": "text", "text": TEXT}, image]),
    ]
    path = folder / "--w--" / "2026-01-01T00-00-00-000Z_long0.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def test_a_session_of_long_texts_downloads_as_the_same_markdown(client, sessions_dir, monkeypatch) -> None:
    _session(sessions_dir)
    monkeypatch.setattr(store, "LONG_LINE", 100_000)  # each line here is longer: each is outlined
    spy = Spy(monkeypatch)
    read_in_pieces = b"".join(client.get("/s/long0/download.md"))
    # Two user messages' texts, a reply's two texts, a note's and a user's text beside an image; for the
    # three replies, whether their texts are blank (the two that hold a blank one are read whole); and
    # the title's first characters, from the first message.
    assert spy.texts == 11
    monkeypatch.setattr(SessionFile, "outlines", _decoded_whole)
    read_whole = b"".join(client.get("/s/long0/download.md"))
    assert read_in_pieces == read_whole
    text = read_whole.decode()
    assert "😀 and 中文" in text and "\ufffd lone, and \ufffd lone" in text and "> **Summary" in text
