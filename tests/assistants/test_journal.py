"""The replies' journal: a running reply's text is kept, as it streams, in a file of its own, deleted
once the reply is stored; what a killed process left is stored at the next start as a stopped reply,
under the entry it answered, exactly once."""

from __future__ import annotations

import asyncio
import fcntl
import logging
import os
from pathlib import Path

import pytest

from sessions_app.assistants import OfflineAssistant
from sessions_app.assistants.base import RESTART_MESSAGE
from sessions_app.services import replies
from sessions_app.services.journal import SUFFIX, Journal, recover
from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles.errors import WriteFailed
from sessions_app.sessionfiles.store import SessionFile

SLOW = 30.0


@pytest.fixture
def journals(settings, tmp_path: Path) -> Path:
    settings.PITREE_JOURNAL_DIR = tmp_path / "replies"
    return tmp_path / "replies"


def _reply(delay: float = 0):
    return OfflineAssistant(delay=delay).reply([{"role": "user", "content": "Hello there?"}])


def _assistants(path: Path) -> list[dict]:
    index = SessionFile(path).index
    return [
        entry
        for entry in SessionFile(path).entries(range(len(index)))
        if entry.get("message", {}).get("role") == "assistant"
    ]


async def test_a_running_reply_keeps_its_text_in_a_journal_until_it_is_stored(session, journals) -> None:
    parent = session.leaf_id
    running = replies.start(session, parent, _reply(delay=0.02))
    while len(running.reply.text) < 20:
        await asyncio.sleep(0.01)
    (journal,) = journals.glob(f"*{SUFFIX}")
    assert oct(journal.stat().st_mode & 0o777) == "0o600"
    assert "Offline" in journal.read_text()  # what streamed so far is on disk, before any append
    entry = await running.join()
    assert not list(journals.glob(f"*{SUFFIX}"))  # stored: the journal is gone
    assert entry["id"] == running.journal.entry_id and entry["parentId"] == parent


def _left_behind(journals: Path, session: SessionFile, text_lines: list[bytes]) -> Journal:
    """A journal as a killed process leaves it: header, pieces of text, maybe a line cut short."""
    journal = Journal(journals, session, session.leaf_id or "", session.file_position, _reply())
    for line in text_lines:
        os.write(journal._fd or 0, line)
    journal.close(stored=False)
    return journal


def test_the_next_start_stores_a_left_journal_once(session, journals, caplog) -> None:
    parent = session.leaf_id
    before = session.path.read_bytes()
    journal = _left_behind(journals, session, [b'{"t":"Half of "}\n', b'{"t":"an answer"}\n', b'{"t":"cut'])
    with caplog.at_level(logging.WARNING):
        (entry,) = recover(journals, sessions=session.path.parent, fsync=False)
    assert entry["id"] == journal.entry_id and entry["parentId"] == parent
    message = entry["message"]
    assert message["content"] == [{"type": "text", "text": "Half of an answer"}]  # the cut last line left out
    # pi knows "aborted"; the message says the server restarted, not that the user stopped it
    assert (message["stopReason"], message["errorMessage"]) == ("aborted", RESTART_MESSAGE)
    assert RESTART_MESSAGE.encode() in session.path.read_bytes()
    assert "cut short when its server stopped, was stored as stopped" in caplog.text
    assert not journal.path.exists()
    assert session.path.read_bytes().startswith(before)
    assert recover(journals, sessions=session.path.parent, fsync=False) == []
    assert [e["id"] for e in _assistants(session.path)] == [journal.entry_id]


def test_a_reply_stored_before_its_process_died_is_not_stored_again(session, journals) -> None:
    """Killed between the append and the journal's deletion: the entry with the journal's id is there."""
    journal = _left_behind(journals, session, [b'{"t":"All of it"}\n'])
    session.append(E.assistant_message("All of it", provider="p", model="m", api="a"), entry_id=journal.entry_id)
    assert recover(journals, sessions=session.path.parent, fsync=False) == []
    assert not journal.path.exists()
    assert len(_assistants(session.path)) == 1


def test_a_journal_a_live_process_holds_is_left_alone(session, journals) -> None:
    journal = _left_behind(journals, session, [b'{"t":"still streaming"}\n'])
    fd = os.open(journal.path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # as the process writing the reply holds it
        assert recover(journals, sessions=session.path.parent, fsync=False) == []
        assert journal.path.exists()
    finally:
        os.close(fd)


def test_a_journal_that_cannot_be_stored_yet_is_kept(session, journals, caplog) -> None:
    journal = _left_behind(journals, session, [b'{"t":"kept"}\n'])
    moved = session.path.with_suffix(".away")
    session.path.rename(moved)
    with caplog.at_level(logging.WARNING):
        assert recover(journals, sessions=session.path.parent, fsync=False) == []
    assert journal.path.exists() and "is kept and tried again at the next start" in caplog.text
    moved.rename(session.path)
    assert len(recover(journals, sessions=session.path.parent, fsync=False)) == 1


async def test_a_reply_that_could_not_be_stored_leaves_its_journal(session, journals, monkeypatch) -> None:
    """A full disk at the append: the text stays in the journal, which the next start stores."""

    def refuse(*args, **kwargs):
        raise WriteFailed(session.path, "the disk is full")

    monkeypatch.setattr(session, "append", refuse)
    running = replies.start(session, session.leaf_id, _reply())
    with pytest.raises(WriteFailed):
        await running.join()
    (journal,) = journals.glob(f"*{SUFFIX}")
    monkeypatch.undo()
    (entry,) = recover(journals, sessions=session.path.parent, fsync=False)
    assert "Offline" in entry["message"]["content"][0]["text"] and not journal.exists()
