"""Time travel: a session opened as it was after line N, or at a moment, against a reference that
replays the file line by line — the first N lines written to a file of their own and opened as any
file is. Every N, on generated files of every kind (branches, moves, labels, names, compactions, odd
lines, pitree's own writes)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from support.session_fuzz import generate

from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles import tree
from sessions_app.sessionfiles.errors import NotASession, ReadOnlySession
from sessions_app.sessionfiles.instants import iso_to_ms
from sessions_app.sessionfiles.past import PastSession, last_line, line_at
from sessions_app.sessionfiles.store import SessionFile


def _state(session: SessionFile) -> dict[str, object]:
    index = session.index
    nodes = [row for row in range(len(index)) if index.is_node(row)]
    return {
        "leaf": index.leaf_id,
        "name": index.name,
        "labels": dict(index.labels),
        "tree": tree.tree(index),
        "context": session.context().as_json() if index.leaf_id is not None or not nodes else None,
        "messages": index.message_count,
        "skipped": index.skipped(),
    }


@pytest.mark.parametrize("seed", range(24))
def test_every_state_is_the_file_of_its_first_lines(tmp_path: Path, seed: int) -> None:
    made = generate(random.Random(seed), scratch=tmp_path)
    path = tmp_path / "session.jsonl"
    path.write_bytes(made.data())
    source = SessionFile(path, fsync=False)
    lines = path.read_bytes().split(b"\n")
    for line in range(1, last_line(source.index) + 1):
        past = PastSession(source, line)
        reference = tmp_path / f"first-{line}.jsonl"
        reference.write_bytes(b"".join(raw + b"\n" for raw in lines[:line]))
        try:
            replayed = SessionFile(reference, fsync=False)
        except NotASession:  # the header not yet written (junk before it)
            assert len(past.index) == 0
            continue
        expected, got = _state(replayed), _state(past)
        # Lines that are no entries change no state: a state ends with its last entry's line.
        shown = last_line(past.index)
        expected["skipped"] = [s for s in expected["skipped"] if s[0] <= shown and "unterminated" not in s[1]]
        got["skipped"] = [s for s in got["skipped"] if s[0] <= shown]
        assert got == expected, (seed, line)


def test_a_state_is_read_only_and_stays_as_it_was(new_session) -> None:
    session = new_session(name="Then")
    session.append(E.user_message("first"))
    past = PastSession(session, 3)
    session.append(E.user_message("second"))
    session.rename("Now")
    assert past.refresh() == [] and past.index.name == "Then" and len(past.index) == 2
    with pytest.raises(ReadOnlySession, match="a past state of the session is read-only"):
        past.append(E.user_message("into the past"))


def test_the_state_at_a_moment(tmp_path: Path) -> None:
    path = tmp_path / "timed.jsonl"
    stamps = ["2026-03-02T09:00:00.000Z", "2026-03-02T10:00:00.000Z", "2026-03-02T11:00:00.000Z"]
    lines = ['{"type":"session","version":3,"id":"s","timestamp":"2026-03-02T08:00:00.000Z","cwd":"/x"}']
    for number, stamp in enumerate(stamps):
        parent = f'"e{number - 1}"' if number else "null"
        lines.append(
            f'{{"type":"message","id":"e{number}","parentId":{parent},"timestamp":"{stamp}","message":{{"role":"user","content":"{number}","timestamp":0}}}}'
        )
    path.write_text("\n".join(lines) + "\n")
    index = SessionFile(path, fsync=False).index
    assert line_at(index, iso_to_ms("2026-03-02T10:30:00Z") or 0) == 3  # header, e0, e1
    assert line_at(index, iso_to_ms("2026-03-02T08:30:00Z") or 0) == 1
    assert line_at(index, iso_to_ms("2027-01-01T00:00:00Z") or 0) == 4
