"""Accounts for pitree servers that tests run as processes of their own (daphne): a database of their
own, migrated, with the owner made as ``./scripts/run`` makes it, and a signed-in session cookie got
by opening the owner's one-time link, as a person would."""

from __future__ import annotations

import http.cookiejar
import os
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.parse
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# One database per test process, migrated and with the owner in it, copied for each server: the owner's
# one-time link is unused in each copy (a link is a row of the database, not a signature).
_template: list[tuple[Path, str]] = []  # (the database, the owner's link path)


def _manage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=REPO, env=env, capture_output=True, text=True, check=False
    )
    if done.returncode:
        raise AssertionError(f"manage.py {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")
    return done.stdout


def prepare(env: dict[str, str], folder: Path) -> str:
    """Point ``env`` at a fresh database in ``folder`` with the owner in it (or, when ``env`` names a
    PostgreSQL database, an empty one, migrated there); returns the path of the owner's one-time
    sign-in link."""
    base = {**os.environ, "DJANGO_SETTINGS_MODULE": "pitree_web.settings", **env}
    if env.get("PITREE_DATABASE_URL"):
        _manage(base, "migrate", "--noinput", "-v0")
        return link_from(_manage(base, "accounts", "--url", "", "first-run"))
    base.pop("PITREE_DATABASE_URL", None)
    if not _template:
        made = {**base, "PITREE_DB": str(Path(tempfile.mkdtemp(prefix="pitree-db-")) / "db.sqlite3")}
        _manage(made, "migrate", "--noinput", "-v0")
        _template.append((Path(made["PITREE_DB"]), link_from(_manage(made, "accounts", "--url", "", "first-run"))))
    template, link = _template[0]
    db = folder / "db.sqlite3"
    shutil.copyfile(template, db)
    env["PITREE_DB"] = str(db)
    return link


def session_cookie(base_url: str, link_path: str) -> str:
    """Open a one-time sign-in link; returns the ``Cookie`` header value of the session it signs in."""
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    with opener.open(base_url + link_path, timeout=20) as response:
        response.read()
    cookies = {cookie.name: cookie.value for cookie in jar}
    assert "sessionid" in cookies, cookies
    return "; ".join(f"{name}={value}" for name, value in cookies.items() if name == "sessionid")


def link_from(output: str) -> str:
    """The sign-in path ``accounts first-run`` printed."""
    found = re.search(r"/accounts/once/[^\s/]+/", output)
    assert found, output
    return found.group()


def signed_in_opener(cookie: str, host: str = "127.0.0.1") -> urllib.request.OpenerDirector:
    """A urllib opener that keeps cookies, holding the session ``cookie`` (a ``name=value`` header)."""
    jar = http.cookiejar.CookieJar()
    name, _, value = cookie.partition("=")
    jar.set_cookie(
        http.cookiejar.Cookie(
            0, name, value, None, False, host, False, False, "/", True, False, None, False, None, None, {}
        )
    )
    return urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))


def form_post(
    url: str, cookie: str, session_id: str, action: str, fields: dict[str, str], timeout: float
) -> tuple[urllib.request.OpenerDirector, urllib.request.Request]:
    """A browser's form post on a session's page (``send``, ``stop``…), ready to open: the page fetched
    first for its CSRF token, which the post carries as htmx does, in a header."""
    opener = signed_in_opener(cookie)
    page = opener.open(f"{url}/s/{session_id}/", timeout=timeout).read().decode()
    token = re.search(r'"x-csrftoken": "([^"]+)"', page)
    assert token is not None
    request = urllib.request.Request(
        f"{url}/s/{session_id}/{action}/",
        data=urllib.parse.urlencode(fields).encode(),
        headers={"X-CSRFToken": token.group(1), "HX-Request": "true"},
    )
    return opener, request
