"""Share links: unguessable, stored hashed, expiring, revocable one by one; a dead link answers 404 at once
and closes the sockets it opened; guessing them is rate-limited."""

from __future__ import annotations

import asyncio
import hashlib
from datetime import timedelta
from typing import Any

import pytest
from channels.testing import WebsocketCommunicator
from django.test import Client
from django.utils import timezone
from support.described import Controls
from support.pushes import parse
from support.teams import LEAF, World

from pitree_web.asgi import application
from sessions_app.models import Share

ORIGIN = (b"origin", b"http://testserver")
HOST = (b"host", b"testserver")


def test_a_link_s_token_is_stored_as_its_hash_only(world: World) -> None:
    share = Share.objects.get(pk=world.link_share.pk)  # type: ignore[union-attr]
    assert share.token_hash == hashlib.sha256(world.token.encode()).hexdigest()
    assert len(world.token) >= 43  # 32 random bytes
    assert not Share.objects.filter(token_hash=world.token).exists()


def test_a_link_opens_the_session_and_nothing_else(world: World) -> None:
    holder = world.client("link")
    assert holder.get(world.url()).status_code == 200
    # Their list shows that session only; another session of the same folder is not there.
    assert world.session_id in holder.get("/").content.decode()


def test_a_revoked_link_is_404_at_once(world: World) -> None:
    holder = world.client("link")
    assert holder.get(world.url()).status_code == 200
    assert world.client("owner").post(world.url(f"share/{world.link_share.pk}/revoke/")).status_code == 302  # type: ignore[union-attr]
    _dead_link_answers(world, holder)
    assert world.holder_or_none(world.token) is None


def _dead_link_answers(world: World, holder: Any) -> None:
    """A browser whose only link died: the session and everything of it is 404, as for a stranger;
    the pages of no session (the list, search) send it to sign in, as any browser without a link."""
    for rest in ("", f"e/{LEAF}/", "tree/", f"e/{LEAF}/raw/", "download.jsonl", "map/data/"):
        assert holder.get(world.url(rest)).status_code == 404, rest
    assert holder.post(world.url("fork/"), {"entry": LEAF}).status_code == 404
    assert holder.get(f"/l/{world.token}/").status_code == 404
    for url in ("/", "/search/?q=x", "/sidebar/"):
        response = holder.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/"), url


def test_the_share_page_lists_who_has_the_session(world: World) -> None:
    html = world.client("owner").get(world.url("share/")).content.decode()
    assert "carol" in html and "team readers" in html and "link" in html
    assert html.count("you revoke it") == 3 and world.token not in html  # a link's token is shown once only
    world.client("owner").post(world.url(f"share/{world.link_share.pk}/revoke/"))  # type: ignore[union-attr]
    html = world.client("owner").get(world.url("share/")).content.decode()
    assert html.count("you revoke it") == 2 and "revoked 20" in html


def test_the_share_form_ties_its_help_and_each_error_to_the_field(world: World) -> None:
    owner = world.client("owner")
    page = Controls(owner.get(world.url("share/")).content.decode())
    assert {"audience", "name", "role", "mode", "entry", "days"} <= set(page.controls)
    assert page.missing() == {} and page.invalid() == set()
    assert page.description("name") == "for a user or a team"
    sent = {"audience": "user", "name": "x" * 151, "role": "viewer", "mode": "live", "days": "0"}
    response = owner.post(world.url("share/"), sent)
    assert response.status_code == 422
    page = Controls(response.content.decode())
    assert page.missing() == {} and page.invalid() == {"name", "days"}
    assert page.description("name").startswith("for a user or a team Ensure this value has at most 150 characters")
    assert "greater than or equal to 1" in page.description("days")
    assert page.description("role") == ""  # a field without errors says nothing of the others'
    assert "No user is named" not in response.content.decode()  # a name refused is not looked up
    for name, said in (("nobody", "No user is named 'nobody'."), ("  ", "Name the user to share with.")):
        response = owner.post(world.url("share/"), {**sent, "name": name, "days": ""})
        page = Controls(response.content.decode())
        assert response.status_code == 422 and page.invalid() == {"name"}, name
        assert page.description("name") == f"for a user or a team {said}", name


@pytest.mark.parametrize("bytes_left", [0, 40])
def test_a_link_holder_is_told_no_folder_or_file_name_when_the_file_breaks(world: World, bytes_left: int) -> None:
    """The file truncated under an open link (no header any more): whatever the page says, it names
    neither the owner's workspace folder nor the file."""
    holder = world.client("link")
    assert holder.get(world.url()).status_code == 200
    with world.path.open("r+b") as file:
        file.truncate(bytes_left)
    for url in (world.url(), world.url("tree/"), world.url("download.md")):
        response = holder.get(url)
        html = response.content.decode()
        assert response.status_code in (404, 409, 422), (url, response.status_code)
        assert world.path.parent.name not in html and world.path.name not in html, html


def test_revoking_one_link_leaves_the_others(world: World) -> None:
    second = world.share(Share.VIEWER, link=True)
    world.client("owner").post(world.url(f"share/{world.link_share.pk}/revoke/"))  # type: ignore[union-attr]
    assert world.holder(second.token).get(world.url()).status_code == 200


def test_an_expired_link_is_404(world: World) -> None:
    holder = world.client("link")
    Share.objects.filter(pk=world.link_share.pk).update(expires_at=timezone.now() - timedelta(seconds=1))  # type: ignore[union-attr]
    _dead_link_answers(world, holder)


def test_an_expired_user_share_is_404(world: World) -> None:
    Share.objects.filter(user=world.users["collaborator"]).update(expires_at=timezone.now())
    assert world.client("collaborator").get(world.url()).status_code == 404


def test_an_unknown_link_is_404_like_a_revoked_one(world: World) -> None:
    guess = Client().get("/l/" + "A" * 43 + "/")
    assert guess.status_code == 404


def test_guessing_links_is_rate_limited(world: World, settings: Any) -> None:
    settings.PITREE_LINK_RATE = "3/m"
    guesser = Client()
    answers = [guesser.get(f"/l/guess-{n}/").status_code for n in range(4)]
    assert answers == [404, 404, 404, 429]
    assert guesser.get(f"/l/{world.token}/").status_code == 429  # even a right one, from that address, for now
    assert guesser.get("/accounts/once/guess/").status_code == 429


def test_the_referrer_policy_keeps_tokens_on_the_site(world: World) -> None:
    response = world.client("link").get(world.url())
    assert response["Referrer-Policy"] == "same-origin"


# ------------------------------------------------------------------------------------------ sockets


async def _live_tab(world: World, cookie: tuple[bytes, bytes]) -> WebsocketCommunicator:
    tab = WebsocketCommunicator(application, world.url().replace("/s/", "/ws/s/"), headers=[ORIGIN, HOST, cookie])
    assert (await tab.connect(timeout=10))[0]
    await tab.send_json_to(world.hello())
    while not parse(await tab.receive_from(timeout=10)).live:
        pass
    return tab


async def _closed_with(tab: WebsocketCommunicator) -> int:
    while True:
        output = await tab.receive_output(timeout=10)
        if output["type"] == "websocket.close":
            return int(output["code"])


async def test_revoking_a_link_closes_its_open_sockets(world: World) -> None:
    link_tab = await _live_tab(world, world.cookie("link"))
    owner_tab = await _live_tab(world, world.cookie("owner"))
    share = world.link_share
    assert share is not None
    await asyncio.to_thread(world.client("owner").post, world.url(f"share/{share.pk}/revoke/"))
    assert await _closed_with(link_tab) == 4404
    assert await owner_tab.receive_nothing(timeout=0.2)  # the owner's own socket stays
    await owner_tab.disconnect()


async def test_deleting_a_share_closes_its_sockets(world: World) -> None:
    tab = await _live_tab(world, world.cookie("collaborator"))
    await asyncio.to_thread(lambda: Share.objects.filter(user=world.users["collaborator"]).delete())
    assert await _closed_with(tab) == 4404


async def test_a_link_s_socket_closes_when_it_expires(world: World) -> None:
    share = world.link_share
    assert share is not None
    soon = timezone.now() + timedelta(seconds=1)
    await asyncio.to_thread(lambda: Share.objects.filter(pk=share.pk).update(expires_at=soon))
    tab = await _live_tab(world, world.cookie("link"))
    assert await _closed_with(tab) == 4404


@pytest.mark.parametrize("role", ["owner", "viewer"])
async def test_a_revoked_socket_cannot_come_back(world: World, role: str) -> None:
    """After revoking, the link holder's reconnect is refused while the others' are not."""
    share = world.link_share
    assert share is not None
    await asyncio.to_thread(world.client("owner").post, world.url(f"share/{share.pk}/revoke/"))

    refused = WebsocketCommunicator(
        application, world.url().replace("/s/", "/ws/s/"), headers=[ORIGIN, HOST, world.cookie("link")]
    )
    await refused.connect(timeout=10)
    assert await _closed_with(refused) == 4404
    tab = await _live_tab(world, world.cookie(role))
    await tab.disconnect()


async def test_the_list_socket_refuses_a_browser_whose_links_died(world: World) -> None:
    """As the list page sends it to sign in: no listing, not even an empty one."""
    share = world.link_share
    assert share is not None
    await asyncio.to_thread(world.client("owner").post, world.url(f"share/{share.pk}/revoke/"))
    tab = WebsocketCommunicator(application, "/ws/sessions/", headers=[ORIGIN, HOST, world.cookie("link")])
    assert (await tab.connect(timeout=10))[0]
    await tab.send_json_to({"q": "", "resume": True})
    assert await _closed_with(tab) == 4404
