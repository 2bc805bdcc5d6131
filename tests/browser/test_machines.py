"""Two machines, one site: two daphne processes serving one sessions folder with one PostgreSQL and one
Redis, as the README's recipe sets them up (the same PITREE_SECRET_KEY; each with a listing cache and
search index of its own), behave as one server to the people using them.

Each machine is a real server on a port of its own. A browser keeps cookies per host name, not per
port, so a browser signed in on one is signed in on the other too, as behind a proxy that sends each
request to either. What the tests look at is what people see (pages, the tab's own notes) and the
session file: nothing here depends on how the sockets' messages are written.

The guessing test comes last: every test here signs in from 127.0.0.1, which it locks out.
"""

from __future__ import annotations

import json
import re
import secrets
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect
from support.daphne import Daphne, launch_daphne
from support.postgres import postgres_server
from support.redisserver import redis_server

REPO = Path(__file__).resolve().parents[2]
LEAF = "db26dc72"  # 01-linear's leaf
ATTEMPTS = 3  # failed sign-ins for a user name before it is locked out (PITREE_SIGNIN_ATTEMPTS)


@dataclass
class Machines:
    one: Daphne
    two: Daphne
    root: Path  # the sessions folder both serve

    def manage(self, *args: str) -> str:
        """``manage.py`` on the first machine (its database is the second's)."""
        done = subprocess.run(
            [sys.executable, "manage.py", *args], cwd=REPO, env=self.one.env, capture_output=True, text=True, check=True
        )
        return done.stdout

    def sign_in_link(self, name: str) -> str:
        """A new superuser ``name``; the path of their one-time sign-in link."""
        found = re.search(
            r"/accounts/once/[^\s/]+/", self.manage("accounts", "--url", "", "add-user", name, "--superuser")
        )
        assert found, name
        return found.group()


@dataclass
class Server:
    """What tests/browser/conftest.py's fixtures need of a server: the first machine."""

    url: str
    root: Path
    daphne: Daphne

    def log_tail(self, chars: int = 4000) -> str:
        return self.daphne.log_tail(chars)


@pytest.fixture(scope="module")
def machines(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Machines]:
    with ExitStack() as stack:
        database = stack.enter_context(postgres_server())
        redis = stack.enter_context(redis_server(tmp_path_factory.mktemp("redis")))
        root = tmp_path_factory.mktemp("shared") / "sessions"
        root.mkdir()
        env = {
            "PITREE_SESSIONS_DIR": str(root),
            "PITREE_DATABASE_URL": database,
            "PITREE_REDIS_URL": redis,
            "PITREE_SECRET_KEY": secrets.token_urlsafe(40),
            "PITREE_FSYNC": "0",
            "PITREE_ASSISTANT": "offline",
            "PITREE_OFFLINE_DELAY": "0.15",  # a reply takes seconds: long enough to watch it being written
            "PITREE_SIGNIN_ATTEMPTS": str(ATTEMPTS),
        }
        one = launch_daphne(env, tmp_path_factory.mktemp("machine-one") / "daphne.log")
        stack.callback(one.stop)
        two = launch_daphne(env, tmp_path_factory.mktemp("machine-two") / "daphne.log", site=one)
        stack.callback(two.stop)
        yield Machines(one, two, root)


@pytest.fixture(scope="module")
def server(machines: Machines) -> Server:
    return Server(url=machines.one.url, root=machines.root, daphne=machines.one)


@pytest.fixture
def browsers(chromium: Any) -> Iterator[Any]:
    """``browsers()``: a browser of someone's own (a context: cookies and storage apart from others)."""
    made: list[Any] = []

    def new() -> Any:
        made.append(chromium.new_context())
        made[-1].set_default_timeout(20_000)
        return made[-1]

    yield new
    for ctx in made:
        ctx.close()


def _live(page: Any) -> None:
    page.wait_for_function("() => document.getElementById('live')?.dataset.live === 'live'")


def _share_link(page: Any, machine: Daphne, session_id: str) -> str:
    """A viewer's live link made on ``machine``'s share page; its path."""
    page.goto(f"{machine.url}/s/{session_id}/share/")
    page.locator("select[name=audience]").select_option("link")
    page.locator("input[name=role][value=viewer]").check()
    page.locator("input[name=mode][value=live]").check()
    page.get_by_role("button", name="Share", exact=True).click()
    link = str(page.locator("#share-link-url").input_value())
    assert link.startswith(machine.url + "/l/"), link
    return link.removeprefix(machine.url)


def _link_holder(machines: Machines, browsers: Any, session_id: str, *, share_on: Daphne, follow_on: Daphne) -> Any:
    """An owner signed in on ``share_on``, who shares the session there by link, and a stranger's tab
    of that link on ``follow_on``, live: (the owner's page, the stranger's)."""
    owner = browsers().new_page()
    owner.goto(share_on.url + machines.sign_in_link(f"ada-{uuid.uuid4().hex[:6]}"))
    link = _share_link(owner, share_on, session_id)
    holder = browsers().new_page()
    holder.goto(follow_on.url + link)
    _live(holder)
    return owner, holder


def test_signed_in_on_one_machine_a_link_shared_on_the_other_opens_on_either(
    machines: Machines, sessions: Any, browsers: Any
) -> None:
    seeded = sessions.seed("01-linear")
    name = f"ada-{uuid.uuid4().hex[:6]}"
    owner = browsers().new_page()
    owner.goto(machines.one.url + machines.sign_in_link(name))
    expect(owner.locator(".user-menu__name")).to_have_text(name)

    # The other machine knows the browser: the same account, signed in, no sign-in page.
    owner.goto(f"{machines.two.url}/s/{seeded.id}/")
    expect(owner.locator(".user-menu__name")).to_have_text(name)
    expect(owner.locator("#entries")).to_contain_text("Add a DELETE endpoint too.")
    link = _share_link(owner, machines.two, seeded.id)

    # A stranger opens the link made on the second machine through the first.
    stranger = browsers().new_page()
    stranger.goto(machines.one.url + link)
    expect(stranger).to_have_url(re.compile(rf"{re.escape(machines.one.url)}/s/{seeded.id}/$"))
    expect(stranger.locator(".composer--readonly")).to_contain_text("You can read this session")
    _live(stranger)


def test_a_reply_one_machine_writes_streams_into_a_tab_of_the_other(
    machines: Machines, sessions: Any, browsers: Any
) -> None:
    seeded = sessions.seed("01-linear")
    owner, reader = _link_holder(machines, browsers, seeded.id, share_on=machines.one, follow_on=machines.two)

    owner.goto(f"{machines.one.url}/s/{seeded.id}/")
    _live(owner)
    owner.locator("#composer textarea[name=text]").fill("Is anyone reading along?")
    owner.locator("#composer button[type=submit]").click()

    # The reply shows on the second machine while the first is still writing it: its words are on the
    # reader's screen before it is in the file (its last line is still the question).
    expect(reader.locator("#entries")).to_contain_text("Offline responder", timeout=20_000)
    last = json.loads(seeded.path.read_bytes().splitlines()[-1])
    assert last["message"]["role"] == "user" and last["message"]["content"] == "Is anyone reading along?"
    expect(reader.locator("#entries")).not_to_contain_text("Set PITREE_ASSISTANT=openai")

    # Then the stored reply, whole, in both tabs.
    deadline = time.monotonic() + 30
    while (reply := seeded.entries()[-1])["id"] == last["id"]:
        assert time.monotonic() < deadline, "the reply was never stored"
        time.sleep(0.1)
    assert reply["message"]["role"] == "assistant" and reply["parentId"] == last["id"]
    expect(reader.locator("#entries")).to_contain_text("Set PITREE_ASSISTANT=openai")
    expect(reader.locator(f"#entry-{reply['id']}")).to_be_visible()
    expect(owner.locator(f"#entry-{reply['id']}")).to_be_visible()


def test_revoking_on_one_machine_ends_the_link_holder_s_tab_on_the_other(
    machines: Machines, sessions: Any, browsers: Any
) -> None:
    seeded = sessions.seed("01-linear")
    owner, holder = _link_holder(machines, browsers, seeded.id, share_on=machines.two, follow_on=machines.one)

    owner.get_by_role("button", name="Revoke").first.click()  # on the second machine's share page
    holder.wait_for_function("() => document.getElementById('live')?.dataset.live === 'stopped'")
    expect(holder.locator("#flash")).to_contain_text("not available to you any more")
    # And neither machine shows it to that browser any more.
    for machine in (machines.one, machines.two):
        answer = holder.request.get(f"{machine.url}/s/{seeded.id}/")
        assert answer.status == 404, (machine.url, answer.status)


def test_a_guesser_is_locked_out_of_both_machines(machines: Machines, browsers: Any) -> None:
    name = f"bob-{uuid.uuid4().hex[:6]}"
    password = "bob-Pa55-phrase"
    machines.sign_in_link(name)
    machines.manage("shell", "-c", _set_password(name, password))
    guesser = browsers().new_page()

    def sign_in(machine: Daphne, secret: str) -> None:
        guesser.goto(f"{machine.url}/accounts/login/")
        guesser.locator("input[name=username]").fill(name)
        guesser.locator("input[name=password]").fill(secret)
        guesser.get_by_role("button", name="Sign in").click()

    # Wrong guesses, taking turns between the machines: the one that reaches the limit locks the name
    # out, though neither machine saw that many by itself.
    for attempt in range(ATTEMPTS):
        sign_in((machines.one, machines.two)[attempt % 2], f"guess-{attempt}")
        heading = expect(guesser.locator("h1"))
        if attempt < ATTEMPTS - 1:
            heading.not_to_have_text("Too many attempts")
        else:
            heading.to_have_text("Too many attempts")
    # Then neither lets the name in from there, even with the right password.
    for machine in (machines.one, machines.two):
        sign_in(machine, password)
        expect(guesser.locator("h1")).to_have_text("Too many attempts")
        expect(guesser.locator(".user-menu__name")).to_have_count(0)


def _set_password(name: str, password: str) -> str:
    return (
        "from django.contrib.auth import get_user_model; "
        f"user = get_user_model().objects.get(username={name!r}); user.set_password({password!r}); user.save()"
    )
