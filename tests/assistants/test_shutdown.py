"""A server stopped (SIGTERM) while a reply is being written and tabs are open stops within 2 s, and
stores that reply as aborted: with the in-memory channel layer and with Redis."""

from __future__ import annotations

import contextlib
import json
import logging
import shutil
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.core.handlers.asgi import ASGIHandler
from support import accounts
from support.daphne import Daphne, launch_daphne
from support.pushes import parse
from support.redisserver import redis_server
from websockets.sync.client import ClientConnection, connect

from sessions_app.assistants.base import RESTART_MESSAGE

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "sessions_app" / "samples" / "pi" / "01-linear.jsonl"
STOP_WITHIN = 2.0  # seconds: the requirement for SIGTERM
TIMEOUT = 30  # seconds a step may take before the test fails (never a speed assertion)


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


@pytest.fixture(params=["memory", "redis"])
def layer_env(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[dict[str, str]]:
    if request.param == "memory":
        yield {}
    else:
        with redis_server(tmp_path) as url:
            yield {"PITREE_REDIS_URL": url}


@pytest.mark.processes
def test_sigterm_with_a_reply_being_written_and_tabs_open_stops_quickly_and_stores_it_aborted(
    tmp_path: Path, layer_env: dict[str, str]
) -> None:
    folder = tmp_path / "sessions" / "--tmp-project--"
    folder.mkdir(parents=True)
    session_file = folder / "2025-11-20T08-00-00-000Z_5f0c2a9e-1b7d-4c1e-9a43-2d8f6e1b0c70.jsonl"
    shutil.copy(SAMPLE, session_file)
    session_id = _lines(session_file)[0]["id"]
    env = {
        "PITREE_SESSIONS_DIR": str(tmp_path / "sessions"),
        "PITREE_OFFLINE_DELAY": "30",  # the reply is still being written when the server is stopped
        "PITREE_FSYNC": "0",
        "PITREE_ASSISTANT": "offline",
        **layer_env,
    }
    server = launch_daphne(env, tmp_path / "daphne.log")
    try:
        with contextlib.ExitStack() as sockets:
            # What a browser keeps open: a session page's socket and the session list's.
            hello = {"v": 1, "cursor": session_file.stat().st_size, "at": "db26dc72", "notes": "none"}
            tab = _socket(sockets, server, f"/ws/s/{session_id}/", hello)
            _socket(sockets, server, "/ws/sessions/", {"q": "", "resume": False})
            elapsed, code = _stop_while_a_reply_is_written(server, session_id, tab)
    finally:
        server.stop()
    assert elapsed < STOP_WITHIN, f"daphne took {elapsed:.2f} s to stop:\n{server.log_tail()}"
    assert code == 0, server.log_tail()

    user, reply = _lines(session_file)[-2:]
    assert user["message"]["content"] == "Still there?"
    assert reply["parentId"] == user["id"] and reply["message"]["role"] == "assistant"
    # Stopped by the server, not by the user: the stored words say so.
    assert (reply["message"]["stopReason"], reply["message"]["errorMessage"]) == ("aborted", RESTART_MESSAGE)
    text = "".join(block["text"] for block in reply["message"]["content"])
    assert text.startswith("**Offline responder**")  # the first chunk, shown and kept


def _stop_while_a_reply_is_written(server: Daphne, session_id: str, tab: ClientConnection) -> tuple[float, int]:
    """Send a message, wait until the reply's first chunk is on the tab (the next is 30 s away), SIGTERM:
    how long the server took to exit, and its exit status."""
    sending = threading.Thread(target=_send_and_lose_the_answer, args=(server, session_id), daemon=True)
    sending.start()
    deadline = time.monotonic() + TIMEOUT
    while True:
        message = parse(tab.recv(timeout=TIMEOUT))
        if "Offline responder" in message.raw:  # the reply, shown where it answers
            break
        assert time.monotonic() < deadline, "the reply did not begin"
    started = time.monotonic()
    server.process.send_signal(signal.SIGTERM)
    code = server.process.wait(timeout=TIMEOUT)
    return time.monotonic() - started, code


def _socket(sockets: contextlib.ExitStack, server: Daphne, path: str, hello: dict) -> ClientConnection:
    """A socket as a page opens it: it says what it shows and waits until it is live."""
    url, headers = server.ws + path, {"Cookie": server.cookie}
    socket = sockets.enter_context(connect(url, origin=server.url, additional_headers=headers, open_timeout=TIMEOUT))
    socket.send(json.dumps(hello))
    while not parse(socket.recv(timeout=TIMEOUT)).live:
        pass
    return socket


def _send_and_lose_the_answer(server: Daphne, session_id: str) -> None:
    """A browser's send (the page for the CSRF token, then the form post); the server goes away
    mid-request, which is the point."""
    fields = {"text": "Still there?", "parent": "db26dc72"}
    opener, request = accounts.form_post(server.url, server.cookie, session_id, "send", fields, TIMEOUT)
    with contextlib.suppress(OSError):
        opener.open(request, timeout=TIMEOUT).read()


def test_no_middleware_puts_the_async_views_in_a_worker_thread(caplog: pytest.LogCaptureFixture, settings) -> None:
    """One sync-only middleware would run every async view under it through ``async_to_sync`` in a
    thread, which kept the server from exiting on SIGTERM while a reply was written. (Django says
    which middleware it adapts when DEBUG is on.)"""
    settings.DEBUG = True
    caplog.set_level(logging.DEBUG, logger="django.request")
    ASGIHandler()
    adapted = [record.getMessage() for record in caplog.records if "adapted for middleware" in record.getMessage()]
    assert adapted == []


@pytest.mark.processes
def test_sigkill_while_a_reply_is_written_loses_none_of_its_text(tmp_path: Path) -> None:
    """SIGTERM and a client gone keep a reply as stopped; a killed process (kill -9, a crash) lost it
    whole. Its text streams into a journal, which the next start stores as a stopped reply under the
    message it answered, once, whatever number of starts follow."""
    folder = tmp_path / "sessions" / "--tmp-project--"
    folder.mkdir(parents=True)
    session_file = folder / "2025-11-20T08-00-00-000Z_5f0c2a9e-1b7d-4c1e-9a43-2d8f6e1b0c70.jsonl"
    shutil.copy(SAMPLE, session_file)
    session_id = _lines(session_file)[0]["id"]
    journals = tmp_path / "replies"
    env = {
        "PITREE_SESSIONS_DIR": str(tmp_path / "sessions"),
        "PITREE_JOURNAL_DIR": str(journals),
        "PITREE_OFFLINE_DELAY": "0.05",  # many pieces: the kill lands in the middle of the reply
        "PITREE_FSYNC": "0",
        "PITREE_ASSISTANT": "offline",
    }
    server = launch_daphne(env, tmp_path / "daphne.log")
    try:
        threading.Thread(target=_send_and_lose_the_answer, args=(server, session_id), daemon=True).start()
        deadline = time.monotonic() + TIMEOUT
        while not (journal := next(journals.glob("*.journal"), None)) or journal.read_bytes().count(b"\n") < 10:
            assert time.monotonic() < deadline, "the reply did not stream"
            time.sleep(0.05)
        server.process.send_signal(signal.SIGKILL)
        server.process.wait(timeout=TIMEOUT)
    finally:
        server.stop()
    user = _lines(session_file)[-1]
    assert user["message"]["content"] == "Still there?"  # the reply was not stored: its process died
    kept = _journal_text(journal)
    assert kept.startswith("**Offline responder**")

    for start in range(2):  # the next start stores it; the one after finds nothing more to do
        again = launch_daphne(env, tmp_path / f"again-{start}.log", site=server)
        again.stop()
        replies = [line for line in _lines(session_file) if line.get("parentId") == user["id"]]
        assert len(replies) == 1, replies
        message = replies[0]["message"]
        assert message["role"] == "assistant" and message["stopReason"] == "aborted"
        assert message["errorMessage"] == RESTART_MESSAGE
        assert "".join(block["text"] for block in message["content"]) == kept
        assert not journal.exists()


def _journal_text(journal: Path) -> str:
    """The text a journal holds (its whole lines after the header), read as the next start reads it."""
    lines = journal.read_bytes().split(b"\n")[1:-1]
    return "".join(json.loads(line)["t"] for line in lines)
