"""Signing the benchmarks in: every page needs a signed-in user since accounts came in.

Each benchmark gets a scratch database of its own (never the project's ``var/db.sqlite3``) holding one
superuser, who sees every folder of the benchmark's sessions folder as an instance's owner does.

- In process (Django's test client): ``django_client(sessions_dir)`` sets Django up on a scratch
  database (``use_scratch_database()`` before ``django.setup()``) and returns ``signed_in_client()``.
- A server in another process (daphne): ``prepare_server_env(env)`` before starting it, then
  ``session_cookie(url, link)`` once it answers; the cookie comes from opening the owner's one-time
  sign-in link, as a person does.
"""

from __future__ import annotations

import http.cookiejar
import os
import re
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def use_scratch_database(env: dict[str, str] | os._Environ[str] = os.environ) -> None:
    """Point ``env``'s database and caches (listing, search) at a new temporary folder, so that no
    benchmark writes the project's ``var/``."""
    scratch = Path(tempfile.mkdtemp(prefix="pitree-bench-db-"))
    env["PITREE_DB"] = str(scratch / "db.sqlite3")
    env["PITREE_CACHE_DIR"] = str(scratch)
    env["PITREE_SEARCH_DB"] = str(scratch / "search.sqlite3")


def django_client(sessions_dir: Path, *, test_environment: bool = True, **env: str) -> Any:
    """Django set up in this process to serve ``sessions_dir`` with DEBUG off (as deployed), and a test
    client signed in: the start of every benchmark that times pages through the test client. ``env``
    adds settings variables (``PITREE_FSYNC="0"`` where one appends between requests);
    ``test_environment=False`` skips ``setup_test_environment()`` (its instrumented template rendering)
    for a benchmark whose figures were taken without it."""
    os.environ.update(
        DJANGO_SETTINGS_MODULE="pitree_web.settings", PITREE_SESSIONS_DIR=str(sessions_dir), PITREE_DEBUG="0", **env
    )
    import django

    use_scratch_database()
    django.setup()
    if test_environment:
        from django.test.utils import setup_test_environment

        setup_test_environment()
    return signed_in_client()


def signed_in_client() -> Any:
    """Django's test client signed in as a superuser of the (migrated) scratch database."""
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.test import Client

    call_command("migrate", verbosity=0, interactive=False)
    user = get_user_model().objects.create_superuser("bench", password=None)
    client = Client()
    client.force_login(user)
    return client


def prepare_server_env(env: dict[str, str], tree: Path = ROOT) -> str:
    """Give ``env`` (a server's environment) a migrated scratch database with the owner in it, by the
    code of ``tree`` (a checkout of pitree: this one, or a baseline's); returns the path of the owner's
    one-time sign-in link."""
    use_scratch_database(env)
    _manage(env, tree, "migrate", "--noinput", "-v0")
    output = _manage(env, tree, "accounts", "--url", "", "first-run")
    found = re.search(r"/accounts/once/[^\s/]+/", output)
    if found is None:
        raise RuntimeError(f"accounts first-run printed no sign-in link:\n{output}")
    return found.group()


def session_cookie(base_url: str, link: str) -> str:
    """Open a one-time sign-in ``link``; returns the ``Cookie`` header value of the session it made."""
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    with opener.open(base_url + link, timeout=30) as response:
        response.read()
    for cookie in jar:
        if cookie.name == "sessionid":
            return f"sessionid={cookie.value}"
    raise RuntimeError(f"opening {link} signed nobody in")


def signed_in_opener(cookie: str) -> urllib.request.OpenerDirector:
    """A urllib opener that keeps cookies (CSRF's too), starting with the session ``cookie``."""
    jar = http.cookiejar.CookieJar()
    name, _, value = cookie.partition("=")
    jar.set_cookie(
        http.cookiejar.Cookie(
            0, name, value, None, False, "127.0.0.1", False, False, "/", True, False, None, False, None, None, {}
        )
    )
    return urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))


def _manage(env: dict[str, str], tree: Path, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=tree, env=env, capture_output=True, text=True, check=False
    )
    if done.returncode:
        raise RuntimeError(f"manage.py {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")
    return done.stdout
