"""Tokens never written in plain text: daphne's access log as ``./scripts/run`` starts it, and the
database (django-axes keeps no log of sign-in paths)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from axes.models import AccessLog
from django.test import Client
from django.urls import reverse
from support import accounts
from support.daphne import free_port
from support.teams import World

from pitree_web.serve import redacted
from sessions_app.access import signin

REPO = Path(__file__).resolve().parents[2]
TOKEN = "Zm9vYmFyLXNlY3JldC10b2tlbi10aGF0LW11c3Qtbm90LWxlYWs"


def test_link_paths_lose_their_token() -> None:
    for route in ("sharing:link", "accounts:once"):
        path = reverse(route, args=[TOKEN])
        assert TOKEN not in redacted(path) and redacted(path).endswith("/[token]/"), route
    assert redacted("/s/019c/e/abc/") == "/s/019c/e/abc/"


def _get(url: str, headers: dict[str, str] | None = None) -> None:
    with contextlib.suppress(urllib.error.HTTPError):
        urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=10).read()


@pytest.mark.processes
def test_the_server_s_access_log_shows_no_token(tmp_path: Path) -> None:
    """The launcher ``./scripts/run`` execs, on a port of its own: a link opened (known or not) is
    logged without its token; a refused ``Host`` is one warning line, without a traceback."""
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "pitree_web.settings", "PYTHONUNBUFFERED": "1"}
    env.pop("PITREE_ALLOWED_HOSTS", None)
    env.update(PITREE_CACHE_DIR=str(tmp_path), PITREE_SEARCH_DB=str(tmp_path / "search.sqlite3"))
    env["PITREE_SESSIONS_DIR"] = str(tmp_path / "sessions")
    link = accounts.prepare(env, tmp_path)
    port = free_port()
    log = tmp_path / "daphne.log"
    command = [
        sys.executable,
        "-m",
        "pitree_web.serve",
        "-b",
        "127.0.0.1",
        "-p",
        str(port),
        "pitree_web.asgi:application",
    ]
    with open(log, "wb") as out:
        server = subprocess.Popen(
            command, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(base + "/accounts/login/", timeout=2).read()
                break
            except (urllib.error.URLError, ConnectionError, OSError):
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.1)
        _get(f"{base}/l/{TOKEN}/")
        _get(base + link)  # the owner's one-time link, spent
        _get(f"{base}/accounts/once/{TOKEN}/")
        _get(base + "/", {"Host": "evil.example"})
        time.sleep(0.5)
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=20)
    text = log.read_text()
    assert '"GET /l/[token]/' in text and '"GET /accounts/once/[token]/' in text
    assert TOKEN not in text and link.rstrip("/").rsplit("/", 1)[1] not in text
    refused = [line for line in text.splitlines() if "evil.example" in line]
    assert len(refused) == 1 and " WARNING  Invalid HTTP_HOST header" in refused[0], text
    assert '"GET /" 400' in text, text
    assert "Traceback" not in text, text


def test_signing_in_leaves_no_path_in_the_database(world: World) -> None:
    client = Client()
    assert client.get(signin.link_path(signin.mint(world.users["owner"]))).status_code == 302
    assert client.session.get("_auth_user_id") == str(world.users["owner"].pk)
    assert not AccessLog.objects.exists()
