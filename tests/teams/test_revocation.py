"""Open websockets keep only the permission their browser has now: removed from the team, the share
narrowed or its expiry moved, the workspace given away, the user deactivated or signed out — each
socket it concerns closes (4404) or connects again under what is left (1012), and is sent nothing it
may no longer see."""

from __future__ import annotations

import asyncio
import time
from datetime import timedelta
from io import StringIO
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import Group, update_last_login
from django.core.management import call_command
from django.utils import timezone
from support.pushes import parse
from support.teams import BRANCH_A, CREW_FOLDER, LEAF, World

from pitree_web.asgi import application
from sessions_app.access import changes
from sessions_app.access.changes import user_group
from sessions_app.access.shares import revoke
from sessions_app.channel_layer import calls
from sessions_app.live import sockets
from sessions_app.models import Share, Workspace
from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles.store import SessionFile

ORIGIN = (b"origin", b"http://testserver")
HOST = (b"host", b"testserver")


async def _tab(world: World, cookie: tuple[bytes, bytes], path: str = "", hello: Any = None) -> WebsocketCommunicator:
    tab = WebsocketCommunicator(
        application, path or world.url().replace("/s/", "/ws/s/"), headers=[ORIGIN, HOST, cookie]
    )
    assert (await tab.connect(timeout=10))[0]
    await tab.send_json_to(hello or world.hello())
    while not parse(await tab.receive_from(timeout=10)).live:
        pass
    return tab


def _append(world: World, text: str, parent: str = LEAF) -> str:
    return SessionFile(world.path, fsync=False).append(E.user_message(text), parent)["id"]


async def _ends_without(tab: WebsocketCommunicator, world: World, text: str) -> int:
    """Append ``text`` once the change is made, and read the socket to its close: the code it closed
    with. Nothing it sent may hold the text."""
    await asyncio.to_thread(_append, world, text)
    while True:
        output = await tab.receive_output(timeout=10)
        if output["type"] == "websocket.close":
            return int(output["code"])
        assert text not in output["text"]


async def test_a_member_removed_from_the_team_is_disconnected(world: World) -> None:
    tab = await _tab(world, world.cookie("member"))
    await asyncio.to_thread(call_command, "accounts", "leave", "crew", "bob", stdout=StringIO())
    assert await _ends_without(tab, world, "AFTER-REMOVAL") == 4404


async def test_a_team_emptied_disconnects_its_members(world: World) -> None:
    def empty() -> None:
        Group.objects.get(name="crew").user_set.clear()

    tab = await _tab(world, world.cookie("member"))
    await asyncio.to_thread(empty)
    assert await _ends_without(tab, world, "AFTER-CLEAR") == 4404


async def test_a_workspace_given_away_disconnects_its_old_members(world: World) -> None:
    def give_away() -> None:
        workspace = Workspace.objects.get(team__name="crew")
        workspace.team = Group.objects.get(name="readers")
        workspace.save()

    tab = await _tab(world, world.cookie("member"))
    await asyncio.to_thread(give_away)
    assert await _ends_without(tab, world, "AFTER-GIVING") == 4404


async def test_a_deactivated_user_is_disconnected(world: World) -> None:
    tab = await _tab(world, world.cookie("collaborator"))
    user = world.users["collaborator"]
    user.is_active = False
    await asyncio.to_thread(user.save)
    assert await _ends_without(tab, world, "AFTER-DEACTIVATION") == 4404


@pytest.mark.parametrize("role", ["owner", "viewer", "link"])
async def test_signing_out_disconnects_that_browser(world: World, role: str) -> None:
    tab = await _tab(world, world.cookie(role))
    other = await _tab(world, world.cookie("member"))
    await asyncio.to_thread(world.client(role).post, "/accounts/logout/")
    assert await _ends_without(tab, world, "AFTER-SIGN-OUT") == 4404
    while "AFTER-SIGN-OUT" not in await other.receive_from(timeout=10):
        pass  # another browser stays
    await other.disconnect()


async def test_an_expiry_moved_closer_closes_the_socket_then(world: World) -> None:
    share = world.link_share
    assert share is not None
    tab = await _tab(world, world.cookie("link"))
    share.expires_at = timezone.now() + timedelta(seconds=1)
    await asyncio.to_thread(share.save)
    assert await tab.receive_nothing(timeout=0.3)  # not before
    while (output := await tab.receive_output(timeout=10))["type"] != "websocket.close":
        pass
    assert output["code"] == 4404


async def test_a_share_narrowed_to_a_branch_reconnects_and_then_sends_that_branch_only(world: World) -> None:
    """Carol's whole share becomes branch A only (an edit in the admin): her socket closes with 1012,
    and the one her browser opens again receives branch A and nothing of branch B."""

    def narrow() -> None:
        share = Share.objects.get(user=world.users["collaborator"])
        share.branch_only, share.entry_id = True, BRANCH_A[0]
        share.save()

    tab = await _tab(world, world.cookie("collaborator"))
    await asyncio.to_thread(narrow)
    assert await _ends_without(tab, world, "AFTER-NARROWING") == 1012
    again = await _tab(world, world.cookie("collaborator"))
    hidden = await asyncio.to_thread(_append, world, "grown on branch B", "de4f0d3a")
    shown = await asyncio.to_thread(_append, world, "grown on branch A")
    received: list[str] = []
    while not any(shown in message for message in received):
        received.append(await again.receive_from(timeout=10))
    assert not any(hidden in message or "branch B" in message for message in received)
    await again.disconnect()


async def test_an_unrelated_change_leaves_sockets_alone(world: World) -> None:
    tab = await _tab(world, world.cookie("viewer"))
    await asyncio.to_thread(world.share, Share.VIEWER, user=world.users["stranger"])
    dave = world.users["viewer"]
    dave.first_name = "Dave"
    await asyncio.to_thread(dave.save)  # a change that grants the same
    written = await asyncio.to_thread(_append, world, "still here")
    while written not in await tab.receive_from(timeout=10):
        pass
    await tab.disconnect()


async def test_the_list_socket_closes_when_its_browser_signs_out(world: World) -> None:
    tab = await _tab(world, world.cookie("viewer"), "/ws/sessions/", {"q": "", "resume": True})
    await asyncio.to_thread(world.client("viewer").post, "/accounts/logout/")
    output = await tab.receive_output(timeout=10)
    assert output["type"] == "websocket.close" and output["code"] == 4404


async def test_the_list_socket_of_a_link_closes_when_it_is_revoked(world: World) -> None:
    share = world.link_share
    assert share is not None
    tab = await _tab(world, world.cookie("link"), "/ws/sessions/", {"q": "", "resume": True})
    await asyncio.to_thread(world.client("owner").post, world.url(f"share/{share.pk}/revoke/"))
    while (output := await tab.receive_output(timeout=10))["type"] != "websocket.close":
        pass
    assert output["code"] == 4404


async def test_a_sign_in_tells_no_socket_and_another_change_to_the_user_does(
    transactional_db: Any, django_user_model: Any, django_capture_on_commit_callbacks: Any
) -> None:
    """Every sign-in saves the user's ``last_login``, which no grant depends on: their open sockets are
    not all made to ask again; any other save of the user tells them."""
    layer = get_channel_layer()
    user = await sync_to_async(django_user_model.objects.create_user)("signing-in", password="pw-123456789")
    channel = await layer.new_channel()
    await layer.group_add(user_group(user.pk), channel)

    def sign_in_then_rename() -> None:
        with django_capture_on_commit_callbacks(execute=True):
            update_last_login(None, user)
        with django_capture_on_commit_callbacks(execute=True):
            user.first_name = "Renamed"
            user.save()

    await sync_to_async(sign_in_then_rename)()
    told = await asyncio.wait_for(layer.receive(channel), 2)
    assert told["type"] == "grant.changed"
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(layer.receive(channel), 0.2)  # one message: the rename's, not the sign-in's


async def test_a_channel_layer_that_never_answers_does_not_hold_up_a_revocation(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The share's sockets are told through the channel layer, for a bounded time: under ASGI every sync
    view shares one thread, so a Redis that stops answering would stall every sync page. The share is
    revoked all the same."""

    async def hanging(group: str, message: dict[str, Any]) -> None:
        await asyncio.Event().wait()

    monkeypatch.setattr(get_channel_layer(), "group_send", hanging)
    share = world.link_share
    assert share is not None
    revoke = sync_to_async(world.client("owner").post)  # on the thread of sync views, as under ASGI
    started = time.monotonic()
    response = await asyncio.wait_for(revoke(world.url(f"share/{share.pk}/revoke/")), 10)
    assert response.status_code == 302 and time.monotonic() - started < calls.TIMEOUT + 3
    await sync_to_async(share.refresh_from_db)()
    assert share.revoked_at is not None


def _expire_the_team_share(world: World) -> None:
    share = Share.objects.get(team__name="readers")
    share.expires_at = timezone.now() - timedelta(minutes=1)
    share.save()


ELSEWHERE = {
    "member": lambda world: call_command("accounts", "leave", "crew", "bob", stdout=StringIO()),
    "viewer": _expire_the_team_share,
    "owner": lambda world: call_command(
        "accounts", "assign", "--team", "readers", "--", CREW_FOLDER, stdout=StringIO()
    ),
}


@pytest.mark.parametrize("role", sorted(ELSEWHERE))
async def test_a_change_made_in_another_process_closes_the_socket_before_the_next_batch(
    world: World, role: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the default in-memory channel layer, a change made in another process (``manage.py accounts
    leave`` or ``assign``, a share saved in ``manage.py shell``) tells nobody here through the layer:
    made here with a layer send that reaches nobody. The grants' generation, read before the feed
    pushes a batch, closes the socket before that batch."""
    monkeypatch.setattr(changes, "_send", lambda *args: None)
    monkeypatch.setattr(sockets, "RECHECK", 3600.0)  # the batch, not the timer, finds the change
    tab = await _tab(world, world.cookie(role))
    await asyncio.to_thread(ELSEWHERE[role], world)
    assert await _ends_without(tab, world, "AFTER-ELSEWHERE") == 4404


async def test_a_change_made_in_another_process_closes_an_idle_socket_in_a_while(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A socket that is pushed no batch (its session idle, a reply being written) hears of such a change
    within ``RECHECK`` seconds."""
    monkeypatch.setattr(changes, "_send", lambda *args: None)
    monkeypatch.setattr(sockets, "RECHECK", 0.1)
    tab = await _tab(world, world.cookie("member"))
    await asyncio.to_thread(call_command, "accounts", "leave", "crew", "bob", stdout=StringIO())
    told = parse(await tab.receive_from(timeout=10))
    assert "not available to you any more" in told.text_of("flash")  # the page says why it stops
    output = await tab.receive_output(timeout=10)
    assert output["type"] == "websocket.close" and output["code"] == 4404


async def test_a_change_told_through_the_layer_makes_no_other_socket_ask_again(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A change this process told its sockets through the channel layer is not told again through the
    generation: the sockets it does not concern do not all ask the database again."""
    asked: list[str] = []
    ask = sockets.Guard._ask

    async def counted(guard: sockets.Guard) -> None:
        asked.append(guard.view.session_id)
        await ask(guard)

    monkeypatch.setattr(sockets.Guard, "_ask", counted)
    tab = await _tab(world, world.cookie("viewer"))
    await asyncio.to_thread(world.share, Share.VIEWER, user=world.users["stranger"])  # tells that share's group
    written = await asyncio.to_thread(_append, world, "no re-ask")
    while written not in await tab.receive_from(timeout=10):
        pass
    assert asked == []
    await tab.disconnect()


async def test_a_share_revoked_while_its_socket_opens_closes_it(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    """Revoked after the socket read its grant and before it joined the share's group: the layer's
    event reached no socket of it, yet this process told it, so the generation alone does not make
    the socket ask again. It asks once it has joined, and closes."""
    share = world.link_share
    assert share is not None
    monkeypatch.setattr(sockets, "RECHECK", 3600.0)  # the join, not the timer, finds the change

    class RevokedFirst(calls.Inbox):
        async def open(self) -> str:
            await sync_to_async(revoke)(share)
            return await super().open()

    monkeypatch.setattr(sockets, "Inbox", RevokedFirst)
    tab = WebsocketCommunicator(
        application, world.url().replace("/s/", "/ws/s/"), headers=[ORIGIN, HOST, world.cookie("link")]
    )
    assert (await tab.connect(timeout=10))[0]
    await tab.send_json_to(world.hello())
    while (output := await tab.receive_output(timeout=10))["type"] != "websocket.close":
        assert output["type"] == "websocket.send"
    assert output["code"] == 4404
