"""The permission matrix: every route of the URLconf (listed from it, so that a new route without a rule
fails here) and both websockets, for every kind of person, with the answer each must get.

``login`` stands for a redirect to the sign-in page, ``admin-login`` to the admin's own. A stranger
gets 404 for everything about a session: the same answer as for a session that does not exist.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson
import pytest
from channels.testing import WebsocketCommunicator
from django.urls import URLPattern, URLResolver, get_resolver
from support.teams import BRANCH_A, CREW_CWD, LEAF, MEMBERS, READERS, ROLES, WRITERS, World

from sessions_app.models import Share

HX = {"HTTP_HX_REQUEST": "true"}
CSRF = re.compile(r'"x-csrftoken": "[^"]+"|name="csrfmiddlewaretoken" value="[^"]+"')
Expected = dict[str, int | str]


@dataclass(frozen=True)
class Rule:
    method: str
    target: Callable[[World], str]  # the URL, for this world
    expected: Expected
    data: Callable[[World], dict[str, Any]] | None = None
    htmx: bool = True


def each(readers: int | str, others: dict[str, int | str] | None = None) -> Expected:
    """``readers`` for everyone who may read the session, 404 for the stranger, login for the anonymous."""
    found: Expected = dict.fromkeys(READERS, readers)
    found.update(stranger=404, anonymous="login")
    found.update(others or {})
    return found


def writes(ok: int | str) -> Expected:
    """A write to the session: ``ok`` for those who write it, 403 for those who only read it."""
    return each(ok, {"viewer": 403, "link": 403})


def members(ok: int | str) -> Expected:
    return each(ok, {"collaborator": 403, "viewer": 403, "link": 403})


def signed_in(ok: int | str, link: int | str = "login") -> Expected:
    found: Expected = dict.fromkeys(ROLES, ok)
    found.update(link=link, anonymous="login")
    return found


def everyone(answer: int | str) -> Expected:
    return dict.fromkeys(ROLES, answer)


def session(rest: str) -> Callable[[World], str]:
    return lambda world: world.url(rest)


def fixed(url: str) -> Callable[[World], str]:
    return lambda world: url


def _revocable(world: World) -> str:
    made = world.share(Share.VIEWER, link=True)
    return world.url(f"share/{made.share.pk}/revoke/")


RULES: dict[str, Rule] = {
    "sessions:list": Rule("get", fixed("/"), signed_in(200, link=200)),
    "sessions:new": Rule(
        "post",
        fixed("/new/"),
        {**signed_in(403, link=403), "owner": 200, "member": 200},
        data=lambda w: {"cwd": CREW_CWD, "name": "new"},
    ),
    "sessions:search": Rule("get", fixed("/search/?q=pydantic"), signed_in(200, link=200)),
    "sessions:sidebar": Rule("get", fixed("/sidebar/"), signed_in(200, link=200)),
    "sessions:session": Rule("get", session(""), each(200)),
    "sessions:entry": Rule("get", session(f"e/{BRANCH_A[0]}/"), each(200)),
    "sessions:older": Rule("get", session("older/?before=c2ecb522"), each(200)),
    "sessions:tree": Rule("get", session("tree/"), each(200)),
    "sessions:tree_run": Rule("get", session("tree/run/?first=97690895&last=8aabce23&filter=all"), each(200)),
    "sessions:block": Rule("get", session("e/2f760a8d/block/0/"), each(200)),
    "sessions:raw": Rule("get", session("e/2f760a8d/raw/"), each(200)),
    "sessions:actions": Rule("get", session("e/2f760a8d/actions/"), each(200)),
    "sessions:send": Rule("post", session("send/"), writes(200), data=lambda w: {"text": "hi", "parent": LEAF}),
    "sessions:regenerate": Rule("post", session("regenerate/"), writes(200), data=lambda w: {"entry": "e65e9e73"}),
    "sessions:stop": Rule("post", session("stop/"), writes(409), data=lambda w: {"reply": "not-running"}),
    "sessions:compact": Rule(
        "post", session("compact/"), writes(200), data=lambda w: {"keep_from": "ab506f7f", "at": LEAF}
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
    "sessions:fork": Rule("post", session("fork/"), each(200, {"link": 403}), data=lambda w: {"entry": "c2ecb522"}),
    "sessions:compare": Rule("get", session("compare/?e=97690895&e=07721729"), each(200), htmx=False),
    "sessions:map": Rule("get", session("map/"), each(200), htmx=False),
    "sessions:map_data": Rule("get", session("map/data/"), each(200), htmx=False),
    "teams:share": Rule("get", session("share/"), members(200), htmx=False),
    "teams:revoke": Rule("post", _revocable, members(302), htmx=False),
    "teams:download_jsonl": Rule("get", session("download.jsonl"), each(200), htmx=False),
    "teams:download_md": Rule("get", session("download.md"), each(200), htmx=False),
    "teams:author": Rule("get", session("e/2f760a8d/author/"), each(200)),
    "teams:link": Rule("get", lambda w: f"/l/{w.token}/", everyone(302), htmx=False),
    "teams:upload": Rule("get", fixed("/upload/"), signed_in(200), htmx=False),
    "accounts:login": Rule("get", fixed("/accounts/login/"), {**signed_in(302), "link": 200, "anonymous": 200}),
    "accounts:logout": Rule("post", fixed("/accounts/logout/"), everyone("login"), htmx=False),
    "accounts:once": Rule("get", fixed("/accounts/once/not-a-token/"), everyone(404), htmx=False),
    "accounts:password": Rule("get", fixed("/accounts/password/"), signed_in(200), htmx=False),
    # Django's admin, one rule for all its routes: staff only, with its own sign-in page.
    "admin": Rule("get", fixed("/admin/"), everyone("admin-login"), htmx=False),
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


@pytest.mark.parametrize("route", sorted(RULES))
def test_matrix(world: World, route: str) -> None:
    rule = RULES[route]
    got: Expected = {}
    for role in ROLES:
        client = world.client(role)
        url = rule.target(world)
        data = rule.data(world) if rule.data else {}
        headers = HX if rule.htmx else {}
        response = client.get(url, data, **headers) if rule.method == "get" else client.post(url, data, **headers)
        got[role] = _answer(response)
        if route == "accounts:logout":
            world.clients[role] = _signed_in_again(world, role)
    assert got == rule.expected


def _signed_in_again(world: World, role: str) -> Any:
    from django.test import Client

    if role in world.users:
        client = Client()
        client.force_login(world.users[role])
        return client
    return world.holder(world.token) if role == "link" else Client()


def test_a_stranger_sees_what_an_unknown_session_shows(world: World) -> None:
    """404 for a session that exists but is not theirs reads exactly as for one that does not exist."""
    stranger = world.client("stranger")
    unknown_id = "00000000-0000-0000-0000-000000000000"
    pages = [stranger.get(f"/s/{session_id}/") for session_id in (world.session_id, unknown_id)]
    assert [page.status_code for page in pages] == [404, 404]
    theirs, unknown = (CSRF.sub("", page.content.decode()) for page in pages)
    assert theirs.replace(world.session_id, "ID") == unknown.replace(unknown_id, "ID")


def test_the_admin_is_for_superusers(world: World, django_user_model: Any) -> None:
    from django.test import Client

    root = django_user_model.objects.create_superuser("root", password=None)
    client = Client()
    client.force_login(root)
    assert client.get("/admin/").status_code == 200
    assert client.get("/admin/sessions_app/share/").status_code == 200


# ------------------------------------------------------------------------------------- websockets

ORIGIN = (b"origin", b"http://testserver")
HOST = (b"host", b"testserver")


async def _socket(world: World, role: str, path: str, hello: dict[str, Any]) -> tuple[str, Any]:
    from pitree_web.asgi import application

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
            message = orjson.loads(output["text"])
            if message["t"] == "live":
                return "live", None
    finally:
        await communicator.disconnect()


@pytest.mark.parametrize("role", ROLES)
async def test_the_session_socket(world: World, role: str) -> None:
    answer = await _socket(world, role, f"/ws/s/{world.session_id}/", {"cursor": len(world.bytes())})
    assert answer == (("live", None) if role in READERS else ("closed", 4404))


@pytest.mark.parametrize("role", ROLES)
async def test_the_session_list_socket(world: World, role: str) -> None:
    answer = await _socket(world, role, "/ws/sessions/", {"q": "", "resume": True})
    assert answer == (("closed", 4404) if role == "anonymous" else ("live", None))


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
