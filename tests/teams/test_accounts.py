"""Accounts: the owner made on the first run with a one-time link, signing in (and being locked out for
guessing), workspaces and where new sessions go, who wrote what, the command line as a user, and the
settings that keep cookies and tokens safe."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import timedelta
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.utils import timezone
from support.described import Controls
from support.teams import CREW_CWD, CREW_FOLDER, LEAF, LINEAR, World, copy_sample

from sessions_app.access import signin
from sessions_app.models import Authorship, SignInLink, Workspace
from sessions_app.sessionfiles.fork import encode_cwd

HX = {"HTTP_HX_REQUEST": "true"}
REPO = Path(__file__).resolve().parents[2]


def _accounts(*args: str) -> str:
    out = StringIO()
    call_command("accounts", "--url", "http://pitree.test", *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def _pitree(*args: str) -> str:
    out = StringIO()
    call_command("pitree", *args, stdout=out, stderr=StringIO())
    return out.getvalue()


# ------------------------------------------------------------------------------------- the first run


def test_the_first_run_makes_the_owner_and_prints_a_one_time_link(transactional_db: Any) -> None:
    printed = _accounts("first-run")
    owner = User.objects.get()
    assert owner.is_superuser and not owner.has_usable_password()
    url = next(word for word in printed.split() if word.startswith("http://pitree.test/accounts/once/"))
    token = url.rstrip("/").rsplit("/", 1)[1]
    assert SignInLink.objects.get().token_hash != token  # stored hashed
    assert _accounts("first-run") == ""  # a later run prints nothing secret
    client = Client()
    response = client.get(url.removeprefix("http://pitree.test"))
    assert response.status_code == 302 and response["Location"] == "/accounts/password/"
    assert client.get("/").status_code == 200
    assert Client().get(url.removeprefix("http://pitree.test")).status_code == 404  # single use


@pytest.mark.processes
def test_scripts_run_prints_the_link_once(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "PITREE_DB": str(tmp_path / "db.sqlite3"),
        "PITREE_SESSIONS_DIR": str(tmp_path / "sessions"),
        "DJANGO_SETTINGS_MODULE": "pitree_web.settings",
    }
    run = [sys.executable, "manage.py"]
    subprocess.run([*run, "migrate", "--noinput", "-v0"], cwd=REPO, env=env, check=True)
    first = subprocess.run(
        [*run, "accounts", "first-run"], cwd=REPO, env=env, capture_output=True, text=True, check=False
    )
    second = subprocess.run(
        [*run, "accounts", "first-run"], cwd=REPO, env=env, capture_output=True, text=True, check=False
    )
    assert "/accounts/once/" in first.stdout and second.stdout == "" and second.returncode == 0
    assert "accounts --url" in (REPO / "scripts" / "run").read_text()


def test_links_name_the_address_the_app_listens_on(transactional_db: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without ``--url``: ``PITREE_URL``, else the ``PITREE_BIND`` that ``./scripts/run`` listens on."""
    User.objects.create_user("frank")

    def link() -> str:
        out = StringIO()
        call_command("accounts", "sign-in-link", "frank", stdout=out, stderr=StringIO())
        return out.getvalue().strip()

    monkeypatch.delenv("PITREE_URL", raising=False)
    monkeypatch.setenv("PITREE_BIND", "127.0.0.1:8769")
    assert link().startswith("http://127.0.0.1:8769/accounts/once/")
    monkeypatch.setenv("PITREE_URL", "https://pitree.example")
    assert link().startswith("https://pitree.example/accounts/once/")


def test_a_sign_in_link_expires(transactional_db: Any) -> None:
    user = User.objects.create_user("frank")
    token = signin.mint(user)
    SignInLink.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    assert Client().get(f"/accounts/once/{token}/").status_code == 404
    fresh = _accounts("sign-in-link", "frank").strip()
    assert Client().get(fresh.removeprefix("http://pitree.test")).status_code == 302


def test_an_inactive_user_s_link_signs_nobody_in(transactional_db: Any) -> None:
    user = User.objects.create_user("gone", is_active=False)
    client = Client()
    assert client.get(f"/accounts/once/{signin.mint(user)}/").status_code == 404
    assert client.get("/").status_code == 302


def test_setting_a_password_after_a_link(transactional_db: Any) -> None:
    user = User.objects.create_user("hana")
    client = Client()
    client.get(f"/accounts/once/{signin.mint(user)}/")
    response = client.post(
        "/accounts/password/", {"new_password1": "a long pass phrase 42", "new_password2": "a long pass phrase 42"}
    )
    assert response.status_code == 302
    assert _signs_in("hana", "a long pass phrase 42")


def test_the_password_form_ties_each_error_to_its_field(transactional_db: Any) -> None:
    client = Client()
    client.force_login(User.objects.create_user("ines"))
    sent = {"new_password1": "a long pass phrase 42", "new_password2": "another pass phrase 42"}
    page = Controls(client.post("/accounts/password/", sent).content.decode())
    assert page.missing() == {} and page.invalid() == {"new_password2"}
    assert "didn’t match" in page.description("new_password2")


def _signs_in(name: str, password: str) -> bool:
    response = Client().post("/accounts/login/", {"username": name, "password": password})
    return response.status_code == 302 and response["Location"] == "/"


# -------------------------------------------------------------------------------------------- sign-in


def test_signing_in_with_a_password(world: World) -> None:
    assert _signs_in("alice", "alice-pw-1234")
    assert not _signs_in("alice", "wrong")


def test_guessing_passwords_locks_out(world: World, settings: Any) -> None:
    settings.AXES_FAILURE_LIMIT = 3
    guesser = Client()
    answers = [
        guesser.post("/accounts/login/", {"username": "bob", "password": f"guess{n}"}).status_code for n in range(4)
    ]
    assert answers[:2] == [200, 200] and answers[-1] == 429
    # Even the right password is refused from there for a while.
    assert guesser.post("/accounts/login/", {"username": "bob", "password": "bob-pw-1234"}).status_code == 429


LOGIN = "/accounts/login/"


def test_spraying_one_password_over_many_names_is_refused_from_that_address(world: World, settings: Any) -> None:
    settings.PITREE_SIGNIN_ADDRESS_ATTEMPTS = 4
    sprayer = Client(REMOTE_ADDR="192.0.2.50")
    answers = [sprayer.post(LOGIN, {"username": f"user{n}", "password": "Summer2026!"}).status_code for n in range(6)]
    assert answers == [200, 200, 200, 200, 429, 429]
    # Even a right password, from there, for a while; nor does the admin's sign-in page get round it.
    assert sprayer.post(LOGIN, {"username": "alice", "password": "alice-pw-1234"}).status_code == 429
    sprayer.post("/admin/login/", {"username": "alice", "password": "alice-pw-1234"})
    assert "_auth_user_id" not in sprayer.session
    # Another address signs in.
    assert (
        Client(REMOTE_ADDR="192.0.2.51").post(LOGIN, {"username": "alice", "password": "alice-pw-1234"}).status_code
        == 302
    )


def test_behind_a_proxy_visitors_are_counted_by_the_address_it_forwards(world: World, settings: Any) -> None:
    """Every request comes from the proxy's address: the one it adds to X-Forwarded-For is counted, and
    what a client puts before it is not."""
    settings.PITREE_BEHIND_TLS_PROXY = True
    settings.AXES_FAILURE_LIMIT = 3
    settings.PITREE_LINK_RATE = "2/m"
    right, wrong = {"username": "bob", "password": "bob-pw-1234"}, {"username": "bob", "password": "guess"}
    one = Client(REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR="10.9.9.9, 198.51.100.1")
    two = Client(REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR="198.51.100.2")
    forger = Client(REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR="10.1.1.1, 198.51.100.1")
    assert [one.post(LOGIN, wrong).status_code for _ in range(3)] == [200, 200, 429]
    assert one.post(LOGIN, right).status_code == 429
    assert forger.post(LOGIN, right).status_code == 429  # a forged first address changes nothing
    assert two.post(LOGIN, right).status_code == 302  # another visitor behind the same proxy
    assert [one.get(f"/l/guess-{n}/").status_code for n in range(3)] == [404, 404, 429]
    assert two.get("/l/guess-x/").status_code == 404


def test_csrf_guards_the_share_form(world: World) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(world.users["owner"])
    response = client.post(world.url("share/"), {"audience": "link", "role": "viewer", "mode": "live"})
    assert response.status_code == 403 and not response.content.decode().count("/l/")


# ----------------------------------------------------------------------------------------- workspaces


def test_new_sessions_go_to_the_user_s_own_workspace(world: World, settings: Any) -> None:
    erin = world.client("stranger")
    page = erin.get("/").content.decode()
    personal = Workspace.objects.get(owner=world.users["stranger"], personal=True)
    assert personal.cwd == os.path.join(os.path.abspath(settings.PITREE_DEFAULT_CWD), "erin")
    assert f'value="{personal.cwd}"' in page
    response = erin.post("/new/", {"cwd": personal.cwd, "name": "mine"}, **HX)
    assert response.status_code == 200
    (path,) = (world.root / personal.folder).glob("*.jsonl")
    assert path.parent.name == encode_cwd(personal.cwd)
    new_id = response["HX-Redirect"].strip("/").split("/")[1]
    assert erin.get(f"/s/{new_id}/").status_code == 200
    assert world.client("owner").get(f"/s/{new_id}/").status_code == 404
    assert Authorship.objects.get(session_id=new_id, entry_id="").user == world.users["stranger"]


def test_a_personal_workspace_is_never_a_folder_already_on_disk(world: World, settings: Any) -> None:
    """Sessions pi left for the working directory a new user's workspace would have stay theirs."""
    taken = os.path.join(os.path.abspath(settings.PITREE_DEFAULT_CWD), "frank")
    path = copy_sample(world.root, LINEAR, encode_cwd(taken))
    frank = Client()
    frank.force_login(User.objects.create_user("frank"))
    assert path.stem.split("_", 1)[1] not in frank.get("/").content.decode()
    personal = Workspace.objects.get(owner__username="frank", personal=True)
    assert personal.cwd == taken + "-2"


def test_a_folder_nobody_owns_is_the_superusers_until_assigned(world: World) -> None:
    path = copy_sample(world.root, LINEAR, "--home-pi-agent--")
    session_id = path.stem.split("_", 1)[1]
    root = User.objects.create_superuser("root", password=None)
    superuser = Client()
    superuser.force_login(root)
    assert superuser.get(f"/s/{session_id}/").status_code == 200
    assert session_id in superuser.get("/").content.decode()
    for role in ("owner", "member", "stranger"):
        assert world.client(role).get(f"/s/{session_id}/").status_code == 404
        assert session_id not in world.client(role).get("/").content.decode()
    # Typing its working directory does not make it one's own (pi may be writing there).
    assert world.client("owner").post("/new/", {"cwd": "/home/pi/agent"}, **HX).status_code == 403
    assert _accounts("assign", "--team", "crew", "--", "--home-pi-agent--").strip() == "--home-pi-agent--: team crew"
    assert world.client("member").get(f"/s/{session_id}/").status_code == 200
    assert "--home-pi-agent--\tteam crew" in _accounts("folders")


def test_a_superuser_is_told_why_a_folder_file_does_not_open(world: World) -> None:
    folder = world.root / CREW_FOLDER
    (folder / "2026-01-01T00-00-00-000Z_broken.jsonl").write_bytes(b"not json\n")
    root = User.objects.create_superuser("root", password=None)
    client = Client()
    client.force_login(root)
    assert client.get("/s/broken/").status_code == 422
    assert world.client("member").get("/s/broken/").status_code == 404


# ----------------------------------------------------------------------------------------- authorship


def test_who_wrote_an_entry_shows_on_hover(world: World) -> None:
    carol = world.client("collaborator")
    response = carol.post(world.url("send/"), {"text": "carol was here", "parent": LEAF}, **HX)
    assert response.status_code == 200
    user_entry, reply = world.lines()[-2:]
    authors = {row.entry_id: row.user for row in Authorship.objects.filter(session_id=world.session_id)}
    assert authors[user_entry["id"]] == authors[reply["id"]] == world.users["collaborator"]
    hover = world.client("viewer").get(world.url(f"e/{user_entry['id']}/author/"), **HX).content.decode()
    assert "carol" in hover
    page = world.client("viewer").get(world.url()).content.decode()
    assert f'hx-get="/s/{world.session_id}/e/{user_entry["id"]}/author/"' in page
    assert "not written through pitree" in world.client("viewer").get(world.url("e/2f760a8d/author/")).content.decode()
    holder = world.holder(world.share("collaborator", link=True).token)
    holder.post(world.url("label/"), {"entry": LEAF, "label": "by link", "at": LEAF}, **HX)
    label = world.lines()[-1]
    assert Authorship.objects.get(session_id=world.session_id, entry_id=label["id"]).user is None
    assert "someone with a share link" in holder.get(world.url(f"e/{label['id']}/author/")).content.decode()


def test_nothing_pi_reads_changes(world: World) -> None:
    """Authorship lives in the database: the lines written are the lines pi would write."""
    world.client("owner").post(world.url("label/"), {"entry": LEAF, "label": "mine", "at": LEAF}, **HX)
    label = world.lines()[-1]
    assert set(label) == {"type", "id", "parentId", "timestamp", "targetId", "label"}


# ------------------------------------------------------------------------------------ the command line


def test_the_command_line_as_a_user(world: World) -> None:
    assert world.session_id[:8] in _pitree("ls")  # the local owner: everything
    assert world.session_id[:8] in _pitree("--as", "dave", "ls")
    assert world.session_id[:8] not in _pitree("--as", "erin", "ls")
    assert "Write a function" in _pitree("--as", "dave", "show", world.session_id)
    with pytest.raises(CommandError, match="no such file"):
        _pitree("--as", "erin", "show", world.session_id)
    with pytest.raises(CommandError, match="no such file"):
        _pitree("--as", "erin", "show", str(world.path))  # a path does not get round it
    with pytest.raises(CommandError, match="no such file"):
        _pitree("--as", "erin", "show", world.session_id[:4])  # nor does a prefix
    before = world.bytes()
    with pytest.raises(CommandError, match="may read this session but not write"):
        _pitree("--as", "dave", "append", world.session_id, "--role", "user", "--text", "x")
    assert world.bytes() == before
    written = _pitree("--as", "carol", "append", world.session_id, "--role", "user", "--text", "from the shell").strip()
    assert Authorship.objects.get(session_id=world.session_id, entry_id=written).user == world.users["collaborator"]
    with pytest.raises(CommandError, match="no active user"):
        _pitree("--as", "nobody", "ls")


def test_the_command_line_searches_as_a_user(world: World) -> None:
    assert "pydantic" in _pitree("search", "pydantic")
    assert "pydantic" in _pitree("--as", "dave", "search", "pydantic")
    assert _pitree("--as", "erin", "search", "pydantic").strip() == "no entry matches 'pydantic'"


def test_the_command_line_forks_into_the_user_s_workspace(world: World) -> None:
    printed = _pitree("--as", "dave", "fork", world.session_id, "c2ecb522").strip()
    personal = Workspace.objects.get(owner=world.users["viewer"], personal=True)
    assert Path(printed).parent.name == personal.folder
    with pytest.raises(CommandError, match="only in their own"):
        _pitree("--as", "dave", "new", "--cwd", CREW_CWD)


def test_teams_from_the_command_line(world: World) -> None:
    assert "crew: alice, bob, erin" in _accounts("join", "crew", "erin")
    assert world.client("stranger").get(world.url()).status_code == 200
    assert "crew: alice, bob" in _accounts("leave", "crew", "erin")
    assert world.client("stranger").get(world.url()).status_code == 404
    printed = _accounts("add-user", "ivan", "--team", "crew")
    assert "sign in once at http://pitree.test/accounts/once/" in printed
    with pytest.raises(CommandError, match="exists already"):
        _accounts("add-user", "ivan")


# ---------------------------------------------------------------------------------------------- settings


def _setting(name: str, **env: str) -> str:
    code = f"import django; django.setup(); from django.conf import settings; print(settings.{name})"
    environment = {k: v for k, v in os.environ.items() if not k.startswith("PITREE_")}
    environment.update(DJANGO_SETTINGS_MODULE="pitree_web.settings", **env)
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=environment, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.processes
def test_cookies_are_secure_unless_debugging_or_said_otherwise() -> None:
    """Unset, ``PITREE_SECURE_COOKIES`` leaves it to each request (below); how the server was started
    (``PITREE_BIND``, daphne by hand) does not matter."""
    assert _setting("PITREE_SECURE_COOKIES_AUTO") == "True"
    assert _setting("PITREE_SECURE_COOKIES_AUTO", PITREE_BIND="127.0.0.1:8000") == "True"
    assert _setting("SESSION_COOKIE_SECURE", PITREE_BEHIND_TLS_PROXY="1") == "True"
    assert _setting("CSRF_COOKIE_SECURE", PITREE_SECURE_COOKIES="1") == "True"
    assert _setting("SESSION_COOKIE_SECURE", PITREE_SECURE_COOKIES="0") == "False"
    assert _setting("PITREE_SECURE_COOKIES_AUTO", PITREE_SECURE_COOKIES="0") == "False"
    assert _setting("PITREE_SECURE_COOKIES_AUTO", PITREE_DEBUG="1") == "False"
    assert _setting("SECURE_REFERRER_POLICY") == "same-origin"


@pytest.mark.parametrize(
    ("how", "secure"),
    [
        ({"REMOTE_ADDR": "127.0.0.1"}, False),  # ./scripts/run, a browser on this machine
        ({"REMOTE_ADDR": "::1"}, False),
        ({"REMOTE_ADDR": "192.0.2.10"}, True),  # daphne on every interface, reached over the network
        ({"REMOTE_ADDR": "127.0.0.1", "HTTP_X_FORWARDED_FOR": "198.51.100.7"}, True),  # through a proxy
        ({"REMOTE_ADDR": "127.0.0.1", "secure": True}, True),  # https
    ],
)
def test_each_request_decides_whether_cookies_are_secure(
    world: World, settings: Any, how: dict[str, Any], secure: bool
) -> None:
    settings.PITREE_SECURE_COOKIES_AUTO = True
    options = dict(how)
    https = options.pop("secure", False)
    client = Client(**options)
    page = client.get("/accounts/login/", secure=https)
    signed_in = client.post("/accounts/login/", {"username": "alice", "password": "alice-pw-1234"}, secure=https)
    assert signed_in.status_code == 302
    assert bool(page.cookies["csrftoken"]["secure"]) is secure
    assert bool(signed_in.cookies["sessionid"]["secure"]) is secure
