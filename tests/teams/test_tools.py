"""Each reader is offered the tools their grant lets them use, on the page, in its fragments and in what
is pushed to their tab: writers Edit, Regenerate, Label…, Compact… and Stop; anyone signed in Fork…;
a link holder without an account neither. Entry fragments are cached for everyone alike, so one
reader's page never shows another's tools."""

from __future__ import annotations

import asyncio
import re

import pytest
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from support.pushes import Push, parse
from support.teams import LEAF, World

from pitree_web.asgi import application
from sessions_app.access.workspaces import personal_workspace
from sessions_app.channel_layer.groups import session_group
from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles.store import SessionFile

HX = {"HTTP_HX_REQUEST": "true"}
ORIGIN = (b"origin", b"http://testserver")
HOST = (b"host", b"testserver")
WRITING = ('data-panel="edit"', 'data-panel="label"', 'data-panel="compact"', "/regenerate/")
FORKING = 'data-panel="fork"'
OFFERED = {
    "owner": (True, True),
    "member": (True, True),
    "collaborator": (True, True),
    "viewer": (False, True),
    "link": (False, False),
}  # role -> (writes, forks)


def _tools(html: str) -> tuple[bool, bool]:
    writes = [tool in html for tool in WRITING]
    assert all(writes) or not any(writes), writes  # all or none of them
    return all(writes), FORKING in html


@pytest.mark.parametrize("role", sorted(OFFERED))
def test_the_page_offers_the_reader_s_tools_only(world: World, role: str) -> None:
    for other in sorted(OFFERED):  # every reader's page filled the fragment cache before this one
        world.client(other).get(world.url())
    client = world.client(role)
    assert _tools(client.get(world.url()).content.decode()) == OFFERED[role]
    older = client.get(world.url(f"older/?before={LEAF}"), **HX).content.decode()
    assert _tools(older) == OFFERED[role]


@pytest.mark.parametrize("role", sorted(OFFERED))
def test_an_entry_s_panel_offers_the_reader_s_forms_only(world: World, role: str) -> None:
    writes, forks = OFFERED[role]
    client = world.client(role)
    panel = client.get(world.url("e/8aabce23/actions/"), {"do": "fork"}, **HX).content.decode()
    assert ("fork-form" in panel) is forks
    page = client.get(world.url("e/c2ecb522/actions/")).content.decode()  # without JavaScript: every form
    assert ("label-form" in page) is writes and ("fork-form" in page) is forks


async def _tab(world: World, role: str) -> WebsocketCommunicator:
    tab = WebsocketCommunicator(
        application, world.url().replace("/s/", "/ws/s/"), headers=[ORIGIN, HOST, world.cookie(role)]
    )
    assert (await tab.connect(timeout=10))[0]
    await tab.send_json_to(world.hello())
    while not parse(await tab.receive_from(timeout=10)).live:
        pass
    return tab


async def test_pushes_offer_each_tab_its_reader_s_tools(world: World) -> None:
    tabs = {role: await _tab(world, role) for role in OFFERED}

    def write() -> str:
        writer = SessionFile(world.path, fsync=False)
        asked = writer.append(E.user_message("a question"), LEAF)["id"]
        return writer.append(
            E.message({"role": "assistant", "content": [{"type": "text", "text": "an answer"}]}), asked
        )["id"]

    answer = await asyncio.to_thread(write)
    layer = get_channel_layer()
    await layer.group_send(
        session_group(world.session_id), {"type": "reply.progress", "reply": "r1", "parent": answer, "text": "more"}
    )
    for role, tab in tabs.items():
        received: list[Push] = []
        while not (any(m.placeholders for m in received) and any(answer in m.entries for m in received)):
            received.append(parse(await tab.receive_from(timeout=10)))
        html = "".join(m.raw for m in received if m.entries)
        assert answer in html and _tools(html) == OFFERED[role], role
        reply = next(m.raw for m in received if m.placeholders)
        assert ("reply-stop" in reply) is OFFERED[role][0], role
        await tab.disconnect()


def test_the_tool_marks_are_whole_in_the_template(world: World) -> None:
    """Every mark opens and closes around one tool: cutting one never cuts into another."""
    html = world.client("owner").get(world.url()).content.decode()
    marks = re.findall(r"<!--(/?)tool(?::\w+)?-->", html)
    assert marks and marks == ["", "/"] * (len(marks) // 2)


@pytest.mark.parametrize("role", sorted(OFFERED))
def test_a_comparison_offers_the_reader_s_tools_only(world: World, role: str) -> None:
    writes, forks = OFFERED[role]
    html = world.client(role).get(world.url("compare/?e=97690895&e=07721729")).content.decode()
    assert html.count('class="compare__label"') == (2 if writes else 0)
    assert html.count("Fork into a new file") == (2 if forks else 0)
    assert html.count("Continue on this branch") == 2  # moving a tab is every reader's


@pytest.mark.parametrize("role", sorted(OFFERED))
def test_compacting_and_summarizing_a_branch_left_are_offered_to_writers_only(world: World, role: str) -> None:
    # A viewer was offered "Compact history…" (refused with a 403 when used) and "Summarize the branch
    # I leave" (whose move writes nothing for them, so no summary either).
    writes, _ = OFFERED[role]
    client = world.client(role)
    assert ("Compact history…" in client.get(world.url()).content.decode()) == writes
    assert ('name="summarize"' in client.get(world.url("tree/"), **HX).content.decode()) == writes


@pytest.mark.parametrize("role", sorted(OFFERED))
def test_new_chat_starts_a_session_in_the_reader_s_own_workspace(world: World, role: str) -> None:
    # Every page's top bar has "New chat", which names no workspace: the session goes into the reader's
    # own. A link holder without an account has no workspace, and no button.
    page = world.client(role).get(world.url()).content.decode()
    button = re.search(r'<form class="new-chat" method="post" action="([^"]*)">', page)
    if role == "link":
        assert button is None
    else:
        assert button is not None and 'name="cwd"' not in page[button.start() : page.index("</form>", button.start())]
        response = world.client(role).post(button.group(1), {}, **HX)
        assert response.status_code == 200 and response["HX-Redirect"].startswith("/s/")
        created = world.client(role).get(response["HX-Redirect"]).content.decode()
        assert personal_workspace(world.users[role]).cwd in created
