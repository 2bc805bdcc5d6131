"""Private by default: what a real server creates is its owner's alone (files 0600, folders 0700), and
what an older start left readable by others is tightened at the next start, in one log line; in a
sessions folder that may be pi's, only the files pitree created. Behind TLS, browsers are told to keep
to https (HSTS)."""

from __future__ import annotations

import os
import re
import runpy
import sqlite3
import stat
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from support import accounts
from support.daphne import launch_daphne

import pitree_web.settings

TIMEOUT = 20


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _post(server, path: str, fields: dict[str, str]) -> None:
    opener = accounts.signed_in_opener(server.cookie)
    page = opener.open(f"{server.url}/", timeout=TIMEOUT).read().decode()
    token = re.search(r'"x-csrftoken": "([^"]+)"', page)
    assert token is not None
    request = urllib.request.Request(
        server.url + path, data=urllib.parse.urlencode(fields).encode(), headers={"X-CSRFToken": token.group(1)}
    )
    with opener.open(request, timeout=TIMEOUT) as response:
        response.read()


def _get(server, path: str) -> None:
    with accounts.signed_in_opener(server.cookie).open(server.url + path, timeout=TIMEOUT) as response:
        response.read()


@pytest.mark.processes
def test_what_the_server_creates_is_private_and_what_was_left_readable_is_tightened(tmp_path: Path) -> None:
    sessions = tmp_path / "pi-sessions"  # outside var/: may be pi's folder, shared with pi
    pis_folder = sessions / "--home-pi-work--"
    pis_folder.mkdir(parents=True)
    pis_folder.chmod(0o755)
    pis = pis_folder / "2026-01-01T00-00-00-000Z_pi.jsonl"
    pis.write_bytes(b'{"type":"session","version":3,"id":"pi","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}\n')
    pis.chmod(0o644)
    env = {"PITREE_SESSIONS_DIR": str(sessions), "PITREE_DEFAULT_CWD": "/home/me/proj"}
    logs = tmp_path / "first"
    logs.mkdir()
    server = launch_daphne(env, logs / "daphne.log")
    try:
        _post(server, "/new/", {"cwd": "/home/me/proj"})
        _get(server, "/search/?q=hello")
    finally:
        server.stop()
    (ours,) = (sessions / "--home-me-proj--").glob("*.jsonl")
    db = Path(server.env["PITREE_DB"])
    cache = Path(server.env["PITREE_CACHE_DIR"])
    search = Path(server.env["PITREE_SEARCH_DB"])
    created = [ours, db, search, cache / "listing.sqlite3"]
    assert {path.name: oct(_mode(path)) for path in created} == {path.name: "0o600" for path in created}
    assert _mode(ours.parent) == 0o700
    assert (_mode(pis), _mode(pis_folder)) == (0o644, 0o755)  # pi's own: left as pi made them

    # As an older pitree (or another umask) left them: readable by others. The next start tightens them.
    loose = [ours, db, search, cache / "listing.sqlite3"]
    with sqlite3.connect(db) as database:  # a write-ahead log beside the database, as a server leaves it
        database.execute("PRAGMA journal_mode = WAL")
        database.execute("CREATE TABLE IF NOT EXISTS pitree_test_wal (x)")
    wal = Path(f"{db}-wal")
    if wal.exists():
        loose.append(wal)
    for path in loose:
        path.chmod(0o644)
    again = launch_daphne({**env, "PITREE_DB": str(db)}, tmp_path / "second.log", site=server)
    again.stop()
    assert {path.name: oct(_mode(path)) for path in loose} == {path.name: "0o600" for path in loose}
    assert (_mode(pis), _mode(pis_folder)) == (0o644, 0o755)
    said = [line for line in again.log_tail(20_000).splitlines() if "now their owner's alone" in line]
    assert len(said) == 1  # one line, however many were tightened


def test_hsts_behind_a_tls_proxy_only(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [name for name in os.environ if name.startswith("PITREE_")]:
        monkeypatch.delenv(name)
    plain = runpy.run_path(pitree_web.settings.__file__)
    assert plain.get("SECURE_HSTS_SECONDS", 0) == 0
    monkeypatch.setenv("PITREE_BEHIND_TLS_PROXY", "1")
    assert runpy.run_path(pitree_web.settings.__file__)["SECURE_HSTS_SECONDS"] == 365 * 24 * 3600
    monkeypatch.setenv("PITREE_HSTS_SECONDS", "0")
    assert runpy.run_path(pitree_web.settings.__file__)["SECURE_HSTS_SECONDS"] == 0


def test_an_https_answer_behind_the_proxy_carries_hsts(client, settings) -> None:
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    settings.SECURE_HSTS_SECONDS = 31536000
    secure = client.get("/", HTTP_X_FORWARDED_PROTO="https")
    assert secure["Strict-Transport-Security"] == "max-age=31536000"
    assert "Strict-Transport-Security" not in client.get("/")  # plain http: a browser would ignore it anyway
