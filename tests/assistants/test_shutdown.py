"""A server stopped (SIGTERM) while a reply is being written stores that reply as aborted, and exits."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlencode

from support import accounts

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "sessions_app" / "samples" / "pi" / "01-linear.jsonl"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _request(port: int, method: str, path: str, body: str = "", headers: dict[str, str] | None = None) -> tuple:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        connection.request(method, path, body or None, headers or {})
        response = connection.getresponse()
        return response.status, response.getheader("Set-Cookie") or "", response.read()
    finally:
        connection.close()


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def test_sigterm_stores_the_reply_being_written_as_aborted(tmp_path: Path) -> None:
    folder = tmp_path / "sessions" / "--tmp-project--"
    folder.mkdir(parents=True)
    session_file = folder / "2025-11-20T08-00-00-000Z_5f0c2a9e-1b7d-4c1e-9a43-2d8f6e1b0c70.jsonl"
    shutil.copy(SAMPLE, session_file)
    session_id = _lines(session_file)[0]["id"]
    port = _free_port()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "pitree_web.settings",
        "PITREE_SESSIONS_DIR": str(tmp_path / "sessions"),
        "PITREE_OFFLINE_DELAY": "30",  # the reply is still being written when the server is stopped
        "PITREE_FSYNC": "0",
        "PITREE_ASSISTANT": "offline",
    }
    link = accounts.prepare(env, tmp_path)
    server = subprocess.Popen(
        [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), "pitree_web.asgi:application"],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                _request(port, "GET", "/")
                break
            except OSError:
                assert time.monotonic() < deadline, "daphne did not start"
                time.sleep(0.1)
        signed_in = accounts.session_cookie(f"http://127.0.0.1:{port}", link)
        status, cookie, _ = _request(port, "GET", f"/s/{session_id}/", headers={"Cookie": signed_in})
        assert status == 200
        token = cookie.split("csrftoken=", 1)[1].split(";", 1)[0]
        headers = {
            "Cookie": f"csrftoken={token}; {signed_in}",
            "X-CSRFToken": token,
            "Content-Type": "application/x-www-form-urlencoded",
        }
        body = urlencode({"text": "Still there?", "parent": "db26dc72"})
        sending = threading.Thread(
            target=_send_and_lose_the_answer, args=(port, session_id, body, headers), daemon=True
        )
        sending.start()
        while _lines(session_file)[-1].get("message", {}).get("content") != "Still there?":
            assert time.monotonic() < deadline, "the message was not sent"
            time.sleep(0.05)
        time.sleep(0.5)  # let the reply begin; it then waits 30 s for its next chunk

        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=20) is not None
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()

    user, reply = _lines(session_file)[-2:]
    assert user["message"]["content"] == "Still there?"
    assert reply["parentId"] == user["id"] and reply["message"]["role"] == "assistant"
    assert reply["message"]["stopReason"] == "aborted" and reply["message"]["errorMessage"]
    text = "".join(block["text"] for block in reply["message"]["content"])
    assert text.startswith("**Offline responder**")  # the first chunk, shown and kept


def _send_and_lose_the_answer(port: int, session_id: str, body: str, headers: dict[str, str]) -> None:
    with contextlib.suppress(OSError):  # the server goes away mid-request: that is the point
        _request(port, "POST", f"/s/{session_id}/send/", body, headers)
