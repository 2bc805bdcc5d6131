"""Fixtures for the assistant tests: a fake OpenAI-compatible server, a port nothing listens on, and a
session file with one user message to answer."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.fake_openai import FakeOpenAI, running_fake

from sessions_app.services import replies
from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles.store import SessionFile, create_file


@pytest.fixture(autouse=True)
def _no_reply_left_running() -> Iterator[None]:
    """Every test waits for the replies it starts: one left running would leak into the next test."""
    yield
    left = list(replies._running)
    replies._running.clear()
    assert not left, f"replies left running: {left}"


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with running_fake() as server:
        yield server


@pytest.fixture
def closed_port() -> int:
    """A local port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def session(tmp_path: Path) -> SessionFile:
    """A v3 session holding one user message ("Hello there?"), its leaf. It is named, so that a reply
    stored here is the last line (an untitled session gets a title below its first answer:
    tests/web/test_titles.py)."""
    path = tmp_path / "2026-01-01T00-00-00-000Z_0a1b2c3d-0000-4000-8000-000000000001.jsonl"
    header = {"type": "session", "version": 3, "id": "0a1b2c3d-0000-4000-8000-000000000001"}
    create_file(path, [{**header, "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/tmp/project"}], fsync=False)
    session = SessionFile(path, fsync=False)
    session.rename("Replies")
    session.append(E.user_message("Hello there?"))
    return session
