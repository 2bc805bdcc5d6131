"""Stop in the browser: shown only while this tab's reply is written; the text so far is kept.

This module runs its own server whose offline responder waits a second between chunks, so that a
reply is reliably still being written when the test presses Stop.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import expect
from support import accounts

REPO = Path(__file__).resolve().parents[2]


@dataclass
class SlowServer:
    url: str
    root: Path
    log: Path
    cookie: str = ""  # the owner's signed-in session

    def log_tail(self, chars: int = 4000) -> str:
        return self.log.read_text(errors="replace")[-chars:] if self.log.exists() else ""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SlowServer]:
    """pitree under daphne with a slow offline responder (overrides the suite's ``server`` here)."""
    base = tmp_path_factory.mktemp("pitree-stop")
    (base / "sessions").mkdir()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**os.environ, "PITREE_SESSIONS_DIR": str(base / "sessions"), "PITREE_OFFLINE_DELAY": "1"}
    env.update(DJANGO_SETTINGS_MODULE="pitree_web.settings", PITREE_FSYNC="0", PITREE_ASSISTANT="offline")
    env.pop("PITREE_ALLOWED_HOSTS", None)
    link = accounts.prepare(env, base)
    srv = SlowServer(f"http://127.0.0.1:{port}", base / "sessions", base / "daphne.log")
    with open(srv.log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), "pitree_web.asgi:application"],
            cwd=REPO,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 30
        while True:
            assert proc.poll() is None, srv.log_tail()
            try:
                with urllib.request.urlopen(srv.url + "/", timeout=2):
                    srv.cookie = accounts.session_cookie(srv.url, link)
                    break
            except OSError:
                assert time.monotonic() < deadline, srv.log_tail()
                time.sleep(0.1)
        yield srv
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


def test_stop_keeps_the_text_so_far_and_hides_again(page, ui, sessions, record):
    seeded = sessions.seed("01-linear")
    ui.open(page, seeded.url)
    stop = page.locator("#stop-reply")
    expect(stop).to_be_hidden()

    page.locator("#composer textarea[name=text]").fill("Tell me slowly")
    page.locator("#composer button[type=submit]").click()
    expect(stop).to_be_visible()
    expect(page.locator("#entries article.is-pending .stream")).to_contain_text("Offline responder")
    stop.get_by_role("button", name="Stop").click()

    reply_id = ui.wait_position_change(page, "db26dc72")
    user, reply = seeded.entries()[-2:]
    assert user["message"]["content"] == "Tell me slowly" and reply["id"] == reply_id
    assert reply["parentId"] == user["id"] and reply["message"]["stopReason"] == "aborted"
    kept = reply["message"]["content"][0]["text"]
    assert kept.startswith("**Offline responder**") and "Regenerate writes another" not in kept  # cut short
    expect(page.locator(f"#entry-{reply_id}")).to_contain_text("Offline responder")
    expect(page.locator("#stop-reply")).to_be_hidden()
    expect(page.locator("#flash")).to_be_empty()
    assert not record.errors
