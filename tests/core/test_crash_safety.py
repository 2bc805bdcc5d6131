"""Torn writes (docs/format.md §8.3, §9.1): a writer killed at any moment loses nothing it reported as
written, and a partial last line never glues onto the next entry."""

from __future__ import annotations

import contextlib
import json
import random
import signal
import time
from typing import Any

import pytest

from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles.store import SessionFile

ROUNDS = 30
TORN = "unterminated last line (torn write): not read"
DEAD = "skipped: not valid JSON"


@pytest.mark.processes
def test_killed_writer_loses_no_returned_append(new_session: Any, workers: Any, children: Any) -> None:
    session = new_session()
    path = session.path
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    reported: list[str] = []
    seen = path.read_bytes()

    for round_no in range(ROUNDS):
        # Every 5th entry is a 300 kB line, so that some kills land in the middle of a write.
        told, tell = children.Pipe(duplex=False)
        writer = children.Process(target=workers.write_forever, args=(str(path), 5, tell))
        writer.start()
        tell.close()  # the writer's end is the writer's alone: its death ends the pipe
        try:
            printed = [told.recv()]  # the writer is in its loop
        except EOFError:
            pytest.fail(f"round {round_no}: the writer printed nothing (seed {seed})")
        time.sleep(rng.uniform(0, 0.04))
        writer.kill()
        writer.join(timeout=30)
        assert writer.exitcode == -signal.SIGKILL
        with contextlib.suppress(EOFError):
            while True:
                printed.append(told.recv())
        told.close()
        reported += printed

        data = path.read_bytes()
        assert data.startswith(seen), f"round {round_no}: bytes already written changed (seed {seed})"
        seen = data
        reader = SessionFile(path)
        missing = [entry_id for entry_id in reported if entry_id not in reader.index.by_id]
        assert missing == [], f"round {round_no}: returned appends lost (seed {seed})"
        for line, reason in reader.index.skipped():
            assert reason in (TORN, DEAD), (line, reason, seed)

    final = SessionFile(path)
    lines = seen.split(b"\n")
    dead = [line for line, reason in final.index.skipped() if reason == DEAD]
    torn = [line for line, reason in final.index.skipped() if reason == TORN]
    assert len(dead) + len(torn) <= ROUNDS  # at most one torn line per kill
    assert torn in ([], [len(lines)])  # only the very last line can still be open
    # A torn line never swallowed the entry written after it: every whole line is an entry.
    whole = lines[:-1]  # the last piece is "" after a final newline, else the open torn line
    assert final.index.node_count == len(whole) - 1 - len(dead)
    # Each writer appended at the leaf the previous one left: one chain through every entry.
    index = final.index
    assert len(final.path_rows()) == index.node_count
    assert index.ids[final.path_rows()[-1]] == final.leaf_id
    print(f"seed {seed}: {index.node_count} entries, {len(dead)} dead torn lines, {len(torn)} open")


def test_hand_torn_tail_is_reported_then_kept_apart(write_file: Any, L: Any) -> None:
    partial = b'{"type":"message","id":"c3","parentId":"b2","timestamp":"2026-01-01T00:0'
    path = write_file(L.header(), L.user("a1", None, "ping"), L.assistant("b2", "a1", "pong"), partial)
    original = path.read_bytes()

    session = SessionFile(path, fsync=False)
    assert session.index.skipped() == [(4, TORN)]
    assert session.leaf_id == "b2"
    assert "c3" not in session.index.by_id
    assert path.read_bytes() == original  # loading repairs nothing

    added = session.append(E.user_message("after the tear"))
    data = path.read_bytes()
    assert data == original + b"\n" + E.dump_line(added)
    assert added["parentId"] == "b2"

    for view in (session, SessionFile(path)):
        assert view.index.skipped() == [(4, DEAD)]
        assert [view.index.ids[r] for r in view.path_rows()] == ["a1", "b2", added["id"]]
        assert view.context().messages[-1]["content"] == "after the tear"
    # A second append needs no repair: exactly one line more.
    second = session.append(E.user_message("again"))
    assert path.read_bytes() == data + E.dump_line(second)


def test_unterminated_but_whole_last_line_counts_and_gets_its_newline(write_file: Any, L: Any) -> None:
    path = write_file(L.header(), L.user("a1", None, "ping"), json.dumps(L.assistant("b2", "a1", "pong")).encode())
    original = path.read_bytes()

    session = SessionFile(path, fsync=False)
    assert session.index.skipped() == []  # pi parses it too
    assert session.leaf_id == "b2"
    added = session.append(E.user_message("next"))
    assert path.read_bytes() == original + b"\n" + E.dump_line(added)
    assert added["parentId"] == "b2"
    for view in (session, SessionFile(path)):
        assert view.index.skipped() == []
        assert [view.index.ids[r] for r in view.path_rows()] == ["a1", "b2", added["id"]]


def test_reader_waits_for_a_line_being_written(write_file: Any, L: Any) -> None:
    """A reader that catches a writer mid-line reads the line once it is complete, never the half."""
    path = write_file(L.header(), L.user("a1", None, "ping"))
    reader = SessionFile(path, fsync=False)
    line = E.dump_line(L.assistant("b2", "a1", "pong"))

    with open(path, "ab") as handle:
        handle.write(line[:40])
    assert reader.refresh() == []
    assert "b2" not in reader.index.by_id
    assert reader.index.skipped() == [(3, TORN)]

    with open(path, "ab") as handle:
        handle.write(line[40:])
    assert reader.refresh() == [1]
    assert reader.leaf_id == "b2"
    assert reader.index.skipped() == []
