"""The permission matrix: every route of the URLconf (listed from it, so that a new route without a rule
fails here) and both websockets, for every kind of person, with the answer each must get.

``login`` stands for a redirect to the sign-in page, ``admin-login`` to the admin's own. A stranger
gets 404 for everything about a session: the same answer as for a session that does not exist, and
so does a browser whose link was revoked or expired. Besides the world's people (``support.teams``)
the matrix has browsers without an account holding a link to branch A only (``branch_link``), to a
snapshot at branch A's end (``snapshot_link``), a collaborator's link (``collab_link``), a revoked
link (``revoked_link``) and an expired one (``expired_link``), and a superuser (``root``), who is also
asked about a session in a folder nobody owns. A write refused changes no file.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import Group, User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver
from django.utils import timezone
from support.pushes import Push, parse
from support.teams import (
    BRANCH_A,
    CREW_CWD,
    LEAF,
    MEMBERS,
    READERS,
    ROLES,
    SAMPLES,
    WRITERS,
    World,
    build_world,
    copy_sample,
)

from pitree_web.asgi import application
from sessions_app.access.shares import BRANCH, SNAPSHOT, revoke
from sessions_app.access.workspaces import assign
from sessions_app.models import Share
from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles.store import SessionFile

HX = {"HTTP_HX_REQUEST": "true"}
CSRF = re.compile(r'"x-csrftoken": "[^"]+"|name="csrfmiddlewaretoken" value="[^"]+"')
Expected = dict[str, int | str]

SCOPED_LINKS = ("branch_link", "snapshot_link")  # viewers of part of the session
LINKS = (*SCOPED_LINKS, "collab_link")  # working links besides the world's viewer link
DEAD_LINKS = ("revoked_link", "expired_link")
MORE = (*LINKS, *DEAD_LINKS, "root")
EVERYONE = (*ROLES, *MORE)
ANONYMOUS_LINKS = ("link", *LINKS)
UNOWNED_ID = "019cadd4-cb50-74dd-b0a5-3da75cdfe1ff"  # sample 02 again, in a folder nobody owns


@dataclass(frozen=True)
class Rule:
    method: str
    target: Callable[[World], str]  # the URL, for this world
    expected: Expected
    data: Callable[[World], dict[str, Any]] | None = None
    htmx: bool = True


def each(readers: int | str, others: dict[str, int | str] | None = None) -> Expected:
    """``readers`` for everyone who may read the session, 404 for the stranger and dead links, login
    for the anonymous."""
    found: Expected = dict.fromkeys((*READERS, *LINKS, "root"), readers)
    found.update(stranger=404, anonymous="login", **dict.fromkeys(DEAD_LINKS, 404))
    found.update(others or {})
    return found


def writes(ok: int | str) -> Expected:
    """A write to the session: ``ok`` for those who write it, 403 for those who only read it."""
    return each(ok, dict.fromkeys(("viewer", "link", *SCOPED_LINKS), 403))


def members(ok: int | str) -> Expected:
    return each(ok, dict.fromkeys(("collaborator", "viewer", "link", *LINKS), 403))


def signed_in(ok: int | str, link: int | str = "login") -> Expected:
    found: Expected = dict.fromkeys(EVERYONE, ok)
    found.update(dict.fromkeys(ANONYMOUS_LINKS, link))
    found.update(anonymous="login", **dict.fromkeys(DEAD_LINKS, "login"))
    return found


def everyone(answer: int | str) -> Expected:
    return dict.fromkeys(EVERYONE, answer)


def hidden_from_scopes(answer: int | str) -> dict[str, int | str]:
    """What those who see branch A only get for something of branch B."""
    return dict.fromkeys(SCOPED_LINKS, answer)


def session(rest: str) -> Callable[[World], str]:
    return lambda world: world.url(rest)


def fixed(url: str) -> Callable[[World], str]:
    return lambda world: url


def _revocable(world: World) -> str:
    made = world.share(Share.VIEWER, link=True)
    return world.url(f"share/{made.share.pk}/revoke/")


RULES: dict[str, Rule] = {
    "favicon": Rule("get", fixed("/favicon.ico"), everyone(301)),
    "sessions:list": Rule("get", fixed("/"), signed_in(200, link=200)),
    "sessions:new": Rule(
        "post",
        fixed("/new/"),
        {**signed_in(403, link=403), "owner": 200, "member": 200, "root": 200},
        data=lambda w: {"cwd": CREW_CWD, "name": "new"},
    ),
    "sessions:search": Rule("get", fixed("/search/?q=pydantic"), signed_in(200, link=200)),
    "sessions:sidebar": Rule("get", fixed("/sidebar/"), signed_in(200, link=200)),
    "sessions:session": Rule("get", session(""), each(200)),
    "sessions:entry": Rule("get", session(f"e/{BRANCH_A[0]}/"), each(200)),
    "sessions:travel": Rule("get", session("travel/?line=3"), each(302, hidden_from_scopes(404)), htmx=False),
    "sessions:older": Rule("get", session("older/?before=c2ecb522"), each(200)),
    "sessions:newer": Rule("get", session("newer/?after=97690895&until=8aabce23"), each(200)),
    "sessions:jumps": Rule("get", session("jumps/"), each(200)),
    "sessions:jump": Rule("get", session("jump/?date=2026-03-02"), each(302), htmx=False),
    "sessions:tree": Rule("get", session("tree/"), each(200)),
    "sessions:tree_run": Rule("get", session("tree/run/?first=97690895&last=8aabce23&filter=all"), each(200)),
    "sessions:block": Rule("get", session("e/2f760a8d/block/0/"), each(200)),
    "sessions:raw": Rule("get", session("e/2f760a8d/raw/"), each(200)),
    "sessions:text": Rule("get", session("e/2f760a8d/text/"), each(200)),
    "sessions:actions": Rule("get", session("e/2f760a8d/actions/"), each(200)),
    "sessions:send": Rule("post", session("send/"), writes(200), data=lambda w: {"text": "hi", "parent": LEAF}),
    "sessions:regenerate": Rule("post", session("regenerate/"), writes(200), data=lambda w: {"entry": "e65e9e73"}),
    "sessions:stop": Rule("post", session("stop/"), writes(409), data=lambda w: {"reply": "not-running"}),
    "sessions:compact": Rule(
        "post", session("compact/"), writes(200), data=lambda w: {"keep_from": "ab506f7f", "at": LEAF}
    ),
    # A beam of one model is refused once the permission check passed: no reply outlives the request.
    "sessions:beam": Rule(
        "post", session("beam/"), writes(422), data=lambda w: {"text": "hi", "ask": ["offline-echo"]}
    ),
    "sessions:beam_stop": Rule("post", session("beam/stop/"), writes(204), data=lambda w: {"reply": ["not-running"]}),
    "sessions:beam_fuse": Rule(
        "post",
        session("beam/fuse/"),
        writes(409),  # these are not answers to that message
        data=lambda w: {"prompt": BRANCH_A[0], "answer": [LEAF, "e65e9e73"], "model": "offline-echo"},
    ),
    "sessions:navigate": Rule(
        "post", session("navigate/"), each(200), data=lambda w: {"to": "de4f0d3a", "mode": "exact", "at": LEAF}
    ),
    "sessions:label": Rule(
        "post", session("label/"), writes(200), data=lambda w: {"entry": "2f760a8d", "label": "x", "at": LEAF}
    ),
    "sessions:rename": Rule("post", session("rename/"), writes(200), data=lambda w: {"name": "Renamed", "at": LEAF}),
    "sessions:settings": Rule("get", session("settings/"), each(200)),
    "sessions:model": Rule(
        "post", session("model/"), writes(200), data=lambda w: {"model": "offline-echo", "at": LEAF}
    ),
    "sessions:thinking": Rule("post", session("thinking/"), writes(200), data=lambda w: {"level": "high", "at": LEAF}),
    "sessions:fork": Rule(
        "post", session("fork/"), each(200, dict.fromkeys(ANONYMOUS_LINKS, 403)), data=lambda w: {"entry": "c2ecb522"}
    ),
    "sessions:tail_fork": Rule(
        "post",
        session("tail-fork/"),
        each(200, dict.fromkeys(ANONYMOUS_LINKS, 403)),
        data=lambda w: {"entry": "c2ecb522", "turns": 1},
    ),
    "sessions:compare": Rule(
        "get", session("compare/?e=97690895&e=07721729"), each(200, hidden_from_scopes(404)), htmx=False
    ),
    "sessions:map": Rule("get", session("map/"), each(200), htmx=False),
    "sessions:map_data": Rule("get", session("map/data/"), each(200), htmx=False),
    "sharing:share": Rule("get", session("share/"), members(200), htmx=False),
    "sharing:revoke": Rule("post", _revocable, members(302), htmx=False),
    "sharing:download_jsonl": Rule("get", session("download.jsonl"), each(200), htmx=False),
    "sharing:download_md": Rule("get", session("download.md"), each(200), htmx=False),
    "sharing:author": Rule("get", session("e/2f760a8d/author/"), each(200)),
    "sharing:link": Rule("get", lambda w: f"/l/{w.token}/", everyone(302), htmx=False),
    "sharing:upload": Rule("get", fixed("/upload/"), signed_in(200), htmx=False),
    "sharing:import": Rule("get", fixed("/import/"), signed_in(200), htmx=False),
    "sharing:import_start": Rule(
        "post",
        fixed("/import/start/"),
        {**signed_in(403), "owner": 200, "member": 200, "root": 200},
        data=lambda w: {"name": "chat.json", "size": 10, "cwd": CREW_CWD},
        htmx=False,
    ),
    # Someone's import (an id of 22 characters) is theirs alone: anyone else, owner included, finds none.
    "sharing:import_status": Rule("get", fixed("/import/AAAAAAAAAAAAAAAAAAAAAA/"), signed_in(404)),
    "sharing:import_piece": Rule("post", fixed("/import/AAAAAAAAAAAAAAAAAAAAAA/piece/?offset=0"), signed_in(404)),
    "sharing:import_run": Rule("post", fixed("/import/AAAAAAAAAAAAAAAAAAAAAA/run/"), signed_in(404)),
    "accounts:login": Rule(
        "get",
        fixed("/accounts/login/"),
        {**signed_in(302), **dict.fromkeys((*ANONYMOUS_LINKS, *DEAD_LINKS, "anonymous"), 200)},
    ),
    "accounts:logout": Rule("post", fixed("/accounts/logout/"), everyone("login"), htmx=False),
    "accounts:once": Rule("get", fixed("/accounts/once/not-a-token/"), everyone(404), htmx=False),
    "accounts:password": Rule("get", fixed("/accounts/password/"), signed_in(200), htmx=False),
    # Django's admin, one rule for all its routes: staff only, with its own sign-in page.
    "admin": Rule("get", fixed("/admin/"), {**everyone("admin-login"), "root": 200}, htmx=False),
}


def route_names() -> set[str]:
    """Every route of the URLconf: ``namespace:name``, Django's admin as one."""

    def walk(patterns: list[Any], namespace: str) -> list[str]:
        found = []
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                inner = pattern.namespace or namespace
                if inner == "admin":
                    found.append("admin")
                    continue
                found += walk(pattern.url_patterns, inner)
            elif isinstance(pattern, URLPattern):
                assert pattern.name, f"a route without a name: {pattern.pattern}"
                found.append(f"{namespace}:{pattern.name}" if namespace else pattern.name)
        return found

    return set(walk(get_resolver().url_patterns, ""))


def test_every_route_has_a_rule() -> None:
    assert route_names() == set(RULES), "routes without a rule, or rules of no route"


def _answer(response: Any) -> int | str:
    if response.status_code == 302:
        location = response["Location"]
        if location.startswith("/accounts/login/"):
            return "login"
        if location.startswith("/admin/login/"):
            return "admin-login"
    return int(response.status_code)


def _build_people(root: Path) -> World:
    """The world with the matrix's further people (the module's docstring), and a copy of the session
    in a folder nobody owns."""
    world = build_world(root)
    made = {
        "branch_link": world.share(Share.VIEWER, mode=BRANCH, entry=BRANCH_A[0], link=True),
        "snapshot_link": world.share(Share.VIEWER, mode=SNAPSHOT, entry=LEAF, link=True),
        "collab_link": world.share(Share.COLLABORATOR, link=True),
        "revoked_link": world.share(Share.VIEWER, link=True),
        "expired_link": world.share(Share.VIEWER, link=True),
    }
    for role, share in made.items():
        world.clients[role] = world.holder(share.token)
    revoke(made["revoked_link"].share)
    Share.objects.filter(pk=made["expired_link"].share.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    world.users["root"] = User.objects.create_superuser("root", password=None)
    world.clients["root"] = Client()
    world.clients["root"].force_login(world.users["root"])
    copied = copy_sample(world.root, "02-tree-branches", "--home-someone-unowned--")
    unowned = copied.with_name(copied.name.replace(world.session_id, UNOWNED_ID))
    unowned.write_bytes(copied.read_bytes().replace(world.session_id.encode(), UNOWNED_ID.encode(), 1))
    copied.unlink()
    return world


@pytest.fixture(scope="module")
def build() -> Callable[[Path], World]:
    """The matrix's world: built once for the module (tests/teams/conftest.py), as each test finds it."""
    return _build_people


@pytest.fixture
def people(world: World) -> World:
    return world


REFUSED = {400, 403, 404, 405, 409, 422, 429, "login", "admin-login"}


def _files(world: World) -> dict[Any, bytes]:
    return {path: path.read_bytes() for path in world.root.rglob("*.jsonl")}


def _ask(world: World, rule: Rule, role: str, url: str) -> int | str:
    """One cell: the answer ``role`` gets; a refused write leaves every file as it was."""
    client = world.client(role)
    data = rule.data(world) if rule.data else {}
    headers = HX if rule.htmx else {}
    before = _files(world) if rule.method == "post" else None
    response = client.get(url, data, **headers) if rule.method == "get" else client.post(url, data, **headers)
    answer = _answer(response)
    if before is not None and answer in REFUSED:
        assert _files(world) == before, (role, url, answer)
    return answer


@pytest.mark.parametrize("route", sorted(RULES))
def test_matrix(people: World, route: str) -> None:
    rule = RULES[route]
    got: Expected = {}
    for role in EVERYONE:
        got[role] = _ask(people, rule, role, rule.target(people))
        if route == "accounts:logout":
            people.clients[role] = _signed_in_again(people, role)
    assert got == rule.expected


def _signed_in_again(world: World, role: str) -> Any:
    """A browser like ``role``'s again after signing out (the further link holders' without their link:
    no rule is asked after the sign-out's)."""
    if role in world.users:
        client = Client()
        client.force_login(world.users[role])
        return client
    return world.holder(world.token) if role == "link" else Client()


@pytest.mark.parametrize("route", sorted(name for name in RULES if name != "sharing:revoke"))
def test_a_folder_nobody_owns_is_the_superusers_only(people: World, route: str) -> None:
    """The same session in a folder nobody owns: the superuser gets what the owner gets of the crew's
    session, everyone else 404 (sign-in for the anonymous)."""
    rule = RULES[route]
    url = rule.target(people)
    if people.session_id not in url:
        return  # not a session's URL: the matrix above has it
    url = url.replace(people.session_id, UNOWNED_ID)
    got = {role: _ask(people, rule, role, url) for role in EVERYONE}
    expected: Expected = dict.fromkeys(EVERYONE, 404)
    expected.update(anonymous="login", root=rule.expected["owner"])
    assert got == expected


def test_a_stranger_sees_what_an_unknown_session_shows(world: World) -> None:
    """404 for a session that exists but is not theirs reads exactly as for one that does not exist."""
    stranger = world.client("stranger")
    unknown_id = "00000000-0000-0000-0000-000000000000"
    pages = [stranger.get(f"/s/{session_id}/") for session_id in (world.session_id, unknown_id)]
    assert [page.status_code for page in pages] == [404, 404]
    theirs, unknown = (CSRF.sub("", page.content.decode()) for page in pages)
    assert theirs.replace(world.session_id, "ID") == unknown.replace(unknown_id, "ID")


def test_the_admin_is_for_superusers(people: World) -> None:
    client = people.client("root")
    assert client.get("/admin/").status_code == 200
    assert client.get("/admin/sessions_app/share/").status_code == 200


# ------------------------------------------------------------------------------------- websockets

ORIGIN = (b"origin", b"http://testserver")
HOST = (b"host", b"testserver")


async def _socket(world: World, role: str, path: str, hello: dict[str, Any]) -> tuple[str, Any]:
    headers = [ORIGIN, HOST] + ([world.cookie(role)] if role != "anonymous" else [])
    communicator = WebsocketCommunicator(application, path, headers=headers)
    connected, _ = await communicator.connect(timeout=10)
    assert connected  # accepted first, refused with a close code (htmx does not retry 4xxx)
    await communicator.send_json_to(hello)
    try:
        while True:
            output = await communicator.receive_output(timeout=10)
            if output["type"] == "websocket.close":
                return "closed", output["code"]
            if parse(output["text"]).live:
                return "live", None
    finally:
        await communicator.disconnect()


WHOLE_READERS = (*READERS, "collab_link", "root")


def _append(world: World, text: str, parent: str) -> str:
    return SessionFile(world.path, fsync=False).append(E.user_message(text), parent)["id"]


@pytest.mark.parametrize("role", EVERYONE)
async def test_the_session_socket(people: World, role: str) -> None:
    """Who may follow the session is pushed what they may see of what it gains: everything, branch A
    only, or (a snapshot) nothing; the others are closed with 4404."""
    headers = [ORIGIN, HOST] + ([people.cookie(role)] if role != "anonymous" else [])
    tab = WebsocketCommunicator(application, f"/ws/s/{people.session_id}/", headers=headers)
    assert (await tab.connect(timeout=10))[0]
    await tab.send_json_to(people.hello())
    first = await tab.receive_output(timeout=10)
    if role not in (*WHOLE_READERS, *SCOPED_LINKS):
        # Told, as any page whose session is not (or no longer) theirs, that it is not available: the
        # same words for a session that does not exist, nothing of this one's.
        assert first["type"] == "websocket.send" and "not available to you any more" in first["text"]
        assert people.session_id[:8] not in first["text"]
        assert await tab.receive_output(timeout=10) == {"type": "websocket.close", "code": 4404}
        return
    while not parse(first["text"]).live:  # what its page missed (nothing), then that it is live
        first = await tab.receive_output(timeout=10)
    on_a = await asyncio.to_thread(_append, people, "pushed on branch A", LEAF)
    on_b = await asyncio.to_thread(_append, people, "pushed on branch B", "de4f0d3a")
    if role == "snapshot_link":
        assert await tab.receive_nothing(timeout=0.5)
    else:
        received: list[Push] = []
        while not any(on_a in message.entries for message in received):  # where the tab stands
            received.append(parse(await tab.receive_from(timeout=10)))
        # A reader of the whole file is told it grew past branch B's line too (its page reflects it).
        size = str(len(people.bytes()))
        while role in WHOLE_READERS and not any(message.state.get("cursor") == size for message in received):
            received.append(parse(await tab.receive_from(timeout=10)))
        if role == "branch_link":
            assert await tab.receive_nothing(timeout=0.5)
            assert not any(on_b in message.raw or "branch B" in message.raw for message in received)
    await tab.disconnect()


@pytest.mark.parametrize("role", EVERYONE)
async def test_the_session_list_socket(people: World, role: str) -> None:
    answer = await _socket(people, role, "/ws/sessions/", {"q": "", "resume": True})
    refused = role == "anonymous" or role in DEAD_LINKS
    assert answer == (("closed", 4404) if refused else ("live", None))


def test_the_roles_of_the_world(world: World) -> None:
    """The matrix's people are who they say: only members share, only writers write."""
    for role in ("owner", "member", "collaborator", "viewer", "stranger"):
        if role == "stranger":
            continue
        grant = world.view(role).grant
        assert grant.can_share == (role in MEMBERS)
        assert grant.can_write == (role in WRITERS)


def test_the_list_and_the_sidebar_show_a_session_only_to_those_who_see_it(world: World) -> None:
    """The app shell's sidebar lists what the session list lists: nothing of a session to a stranger."""
    for role, sees in (("owner", True), ("viewer", True), ("link", True), ("stranger", False)):
        client = world.client(role)
        for url in ("/", "/sidebar/"):
            html = client.get(url, headers={"HX-Request": "true"} if url == "/sidebar/" else {}).content.decode()
            assert (world.session_id in html) is sees, (role, url)


# --------------------------------------------------------------------- writes into workspaces, hostile

SIGNED_IN = (*ROLES[:-1], "root")  # everyone with an account ("anonymous" is last in ROLES)
NOT_SIGNED_IN = (*ANONYMOUS_LINKS, *DEAD_LINKS, "anonymous")
READERS_CWD = "/srv/readers/app"  # the team "readers" (dave) has a workspace too


def _outside(
    ok: tuple[str, ...], status: int | str = 200, refused: int | str = 403, *, links: bool = False
) -> Expected:
    """``status`` for the roles in ``ok``, ``refused`` for the others signed in (and, with ``links``,
    for browsers with a working link, which the view itself refuses), sign-in for the rest."""
    found: Expected = dict.fromkeys(SIGNED_IN, refused)
    found.update(dict.fromkeys(NOT_SIGNED_IN, "login"))
    if links:
        found.update(dict.fromkeys(ANONYMOUS_LINKS, refused))
    found.update(dict.fromkeys(ok, status))
    return found


NEW_CELLS: dict[str, tuple[dict[str, str], Expected]] = {
    "their team's workspace": ({"cwd": CREW_CWD}, _outside(("owner", "member", "root"), links=True)),
    "another team's": ({"cwd": READERS_CWD}, _outside(("viewer", "root"), links=True)),
    "a folder nobody owns": ({"cwd": "/home/someone/unowned"}, _outside(("root",), links=True)),
    "a relative path climbing out": ({"cwd": "../../../etc"}, _outside((), refused=422, links=True)),
    "a NUL byte": ({"cwd": CREW_CWD + "\x00"}, _outside((), refused=422, links=True)),
    # New chat: no folder named is the maker's own workspace, which the
    # account that holds only a link ("link") has not.
    "no folder": ({"cwd": ""}, _outside(tuple(role for role in SIGNED_IN if role != "link"), links=True)),
    "a name of control characters": ({"cwd": CREW_CWD, "name": "\x1b[2J\x00"}, _outside((), refused=422, links=True)),
}


@pytest.fixture
def readers_workspace(people: World) -> World:
    assign("--srv-readers-app--", team=Group.objects.get(name="readers"), cwd=READERS_CWD)
    return people


@pytest.mark.parametrize("cell", sorted(NEW_CELLS))
def test_new_sessions_go_only_where_their_maker_may_write(readers_workspace: World, cell: str) -> None:
    world = readers_workspace
    data, expected = NEW_CELLS[cell]
    got: Expected = {}
    for role in EVERYONE:
        before = _files(world)
        answer = _answer(world.client(role).post("/new/", {"name": "new", **data}, **HX))
        added = set(_files(world)) - set(before)
        assert {p: b for p, b in _files(world).items() if p in before} == before, (role, cell)
        assert len(added) == (1 if answer == 200 else 0), (role, cell)
        got[role] = answer
    assert got == expected


def _linear() -> bytes:
    return (SAMPLES / "01-linear.jsonl").read_bytes()


UPLOAD_CELLS: dict[str, tuple[Callable[[World], bytes], str, Expected]] = {
    "a pi session into their team's workspace": (lambda w: _linear(), CREW_CWD, _outside(("owner", "member", "root"))),
    "not a session": (lambda w: b"\x00\xffnot json\n", CREW_CWD, _outside(("owner", "member", "root"), 422)),
    "a header and nothing else that parses": (
        lambda w: b'{"type":"session"}\n{oops\n',
        CREW_CWD,
        _outside(("owner", "member", "root"), 422),
    ),
    "the id of a session here": (lambda w: w.bytes(), CREW_CWD, _outside(("owner", "member", "root"))),
    "into another team's workspace": (lambda w: _linear(), READERS_CWD, _outside(("viewer", "root"))),
    "into a folder nobody owns": (lambda w: _linear(), "/home/someone/unowned", _outside(("root",))),
    "a relative path climbing out": (lambda w: _linear(), "../../../etc", _outside(("root",))),
    "a NUL byte in the folder": (lambda w: _linear(), CREW_CWD + "\x00", _outside((), refused=422)),
}


@pytest.mark.parametrize("cell", sorted(UPLOAD_CELLS))
def test_uploads_go_only_where_their_maker_may_write_and_replace_nothing(readers_workspace: World, cell: str) -> None:
    world = readers_workspace
    content, cwd, expected = UPLOAD_CELLS[cell]
    got: Expected = {}
    for role in EVERYONE:
        before = _files(world)
        upload = SimpleUploadedFile("hostile.jsonl", content(world))
        response = world.client(role).post("/upload/", {"file": upload, "cwd": cwd})
        made = response.status_code == 302 and response["Location"].startswith("/s/")  # opens what it made
        answer = 200 if made else _answer(response)
        added = set(_files(world)) - set(before)
        assert {p: b for p, b in _files(world).items() if p in before} == before, (role, cell)
        assert len(added) == (1 if answer == 200 else 0), (role, cell)
        got[role] = answer
    assert got == expected


# --- pi at the wheel (PITREE_ASSISTANT=pi) ----------------------------------------------------------
# pi runs commands on the server: only the members of the session's workspace (and superusers) may
# have it work, never a collaborator, a link or a share. The sample's working folder does not exist
# here, so those who pass the permission check are told that (409) and no pi starts: a test of who
# passes, not of pi. Every refusal leaves the files as they were (``_ask``).

PI_WRITES: dict[str, dict[str, Any]] = {
    "sessions:send": {"text": "hi", "parent": LEAF},
    "sessions:regenerate": {"entry": "e65e9e73"},
    "sessions:stop": {"reply": "pi"},
    "sessions:compact": {"keep_from": "ab506f7f", "at": LEAF},
    "sessions:model": {"model": "fake/fake-model", "at": LEAF},
    "sessions:thinking": {"level": "high", "at": LEAF},
}


@pytest.mark.parametrize("route", sorted(PI_WRITES))
def test_only_the_workspaces_members_may_have_pi_work(people: World, settings: Any, route: str) -> None:
    settings.PITREE_ASSISTANT = "pi"
    settings.PITREE_PI_ROOTS = [people.root.parent]
    rule = Rule("post", session(f"{route.removeprefix('sessions:')}/"), members(409), data=lambda w: PI_WRITES[route])
    got: Expected = {role: _ask(people, rule, role, rule.target(people)) for role in EVERYONE}
    assert got == rule.expected
    said = people.client("member").post(rule.target(people), PI_WRITES[route], **HX).content.decode()
    assert "working folder does not exist" in said  # past the permission check, stopped at the folder


def test_pis_pickers_are_shown_to_every_reader_and_offer_models_to_members_only(people: World, settings: Any) -> None:
    settings.PITREE_ASSISTANT = "pi"
    url = people.url("settings/")
    got = {role: _answer(people.client(role).get(url, **HX)) for role in EVERYONE}
    assert got == each(200)
    member = people.client("member").get(url, **HX).content.decode()
    viewer = people.client("viewer").get(url, **HX).content.decode()
    assert "models could not be listed" in member and "working folder does not exist" in member
    assert "<select" not in viewer
