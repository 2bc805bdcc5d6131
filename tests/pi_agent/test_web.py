"""pi through the web app (``PITREE_ASSISTANT=pi``): a message sent from a page is answered by a real pi
1.6.0, which writes the file; Stop reaches it; pitree's own writes wait for its turn; its output is text;
it runs only where the operator allows and for those who may write the session's folder.

Requests go through the async test client, so that every request of a test runs on its event loop,
as every request of one daphne process does (a process's pi drivers belong to its loop)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from channels.layers import channel_layers, get_channel_layer
from support.fake_openai import FakeOpenAI, call_tool, completions, hang, say, scripted
from support.pi_agent import agent_environment

from sessions_app.channel_layer.groups import replies_group, session_group
from sessions_app.services import pi
from sessions_app.services.lookup import _catalog_for
from sessions_app.sessionfiles.fork import create_session
from sessions_app.sessionfiles.store import SessionFile, clear_cache

pytestmark = pytest.mark.processes  # pi (node), the fake model server, daphne

HTMX = {"headers": {"HX-Request": "true"}}


@pytest.fixture
async def pi_on(settings, tmp_path: Path, fake: FakeOpenAI, workspace: Path, monkeypatch) -> AsyncIterator[None]:
    """pi is the assistant, may work in the workspace, and is configured with the fake's agent folder."""
    settings.PITREE_ASSISTANT = "pi"
    settings.PITREE_PI_ROOTS = [workspace]
    settings.PITREE_FSYNC = False
    for name, value in agent_environment(tmp_path, fake).items():
        if name.startswith("PI_"):  # the server keeps its HOME (where pi is installed)
            monkeypatch.setenv(name, value)
    clear_cache()
    _catalog_for.cache_clear()
    yield
    await pi.registry().stop_all()


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_bytes().split(b"\n") if line.strip()]


def _texts(path: Path) -> list[tuple[str, str]]:
    return [said for line in _lines(path)[1:] if (said := _texts_of(line)) is not None]


def _texts_of(line: dict[str, Any]) -> tuple[str, str] | None:
    """Who wrote a user or assistant message, and its text (None for other lines)."""
    message = line.get("message")
    if line["type"] != "message" or message["role"] not in ("user", "assistant"):
        return None
    content = message["content"]
    return message["role"], content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


async def test_a_message_from_the_page_is_answered_by_pi(async_client, pi_on, session, fake) -> None:
    fake.respond = say("Answered by pi.")
    response = await async_client.post(f"/s/{session.session_id}/send/", {"text": "Hello pi", "parent": ""}, **HTMX)
    assert response.status_code == 200
    assert _texts(session.path) == [("user", "Hello pi"), ("assistant", "Answered by pi.")]
    answer = SessionFile(session.path).leaf_id
    assert response["HX-Push-Url"] == f"/s/{session.session_id}/e/{answer}/"
    assert "Answered by pi." in response.content.decode()


async def test_a_session_pi_answers_gets_a_title_between_its_turns_read_alike_by_pi(
    async_client, pi_on, session, fake, read_alike
) -> None:
    """pi writes the file and answers no title request: once its first turn has ended, pitree gives the
    session the first words of its first message as a title, below pi's answer (its own line between
    pi's turns), and the tab stands on it; pi continues under it, and reads the file as pitree does."""
    fake.respond = scripted(say("Answered by pi."), say("And again."))
    url = f"/s/{session.session_id}/"
    first = await async_client.post(
        url + "send/", {"text": "Fix the flaky login test. Then rest.", "parent": ""}, **HTMX
    )
    assert first.status_code == 200
    *_, answer, title = _lines(session.path)
    assert answer["message"]["content"][0]["text"] == "Answered by pi."
    assert title["type"] == "session_info" and title["name"] == "Fix the flaky login test"
    assert title["parentId"] == answer["id"] and first["HX-Push-Url"] == f"{url}e/{title['id']}/"

    second = await async_client.post(url + "send/", {"text": "More", "parent": title["id"]}, **HTMX)
    assert second.status_code == 200
    lines = _lines(session.path)
    assert [line for line in lines if line["type"] == "session_info"] == [title]  # titled once
    question = next(line for line in lines if _texts_of(line) == ("user", "More"))
    assert question["parentId"] == title["id"] and lines[-1]["message"]["content"][0]["text"] == "And again."
    read = read_alike(session.path)
    assert read.index.name == "Fix the flaky login test"


async def test_pis_output_is_shown_as_text(async_client, pi_on, session, fake) -> None:
    hostile = '<script>alert("pi")</script><img src=x onerror=alert(1)>'
    fake.respond = scripted(call_tool("bash", {"command": f"printf '%s' '{hostile}'"}), say(hostile))
    response = await async_client.post(f"/s/{session.session_id}/send/", {"text": "Be hostile", "parent": ""}, **HTMX)
    html = response.content.decode()
    assert response.status_code == 200
    assert "<script>alert" not in html and "<img src=x" not in html
    assert "&lt;script&gt;alert" in html
    # The fold of pi's call says what it ran; its output is monospace text.
    assert "<summary><code>bash</code> $ printf &#x27;%s&#x27; &#x27;&lt;script&gt;" in html
    assert '<pre class="tool-output" tabindex="0">&lt;script&gt;alert(&quot;pi&quot;)' in html


async def test_stop_reaches_pi_mid_tool_and_the_send_ends(async_client, pi_on, session, workspace, fake) -> None:
    fake.respond = scripted(call_tool("bash", {"command": "echo started; sleep 30"}), say("never"))
    url = f"/s/{session.session_id}/"
    sending = asyncio.ensure_future(async_client.post(url + "send/", {"text": "Run", "parent": ""}, **HTMX))
    await _until(lambda: any(line.get("message", {}).get("stopReason") == "toolUse" for line in _lines(session.path)))
    await asyncio.sleep(0.5)  # the command is running

    stopped = await async_client.post(url + "stop/", {"reply": "pi"}, **HTMX)
    assert stopped.status_code == 204
    answered = await asyncio.wait_for(sending, 30)
    assert answered.status_code == 200
    again = await async_client.post(url + "stop/", {"reply": "pi"}, **HTMX)
    assert again.status_code == 409 and "not working" in again.content.decode()


async def test_a_steer_from_the_page_reaches_pi_with_its_tools_result(
    async_client, pi_on, session, workspace, fake
) -> None:
    """What the composer's Enter sends while pi works (``queue=steer``, as pi's editor steers on Enter):
    pi takes it after its running tool, and answers it before it is done."""
    fake.respond = scripted(
        call_tool("bash", {"command": "while [ ! -e go-on ]; do sleep 0.1; done; echo tool-done"}),
        say("Steered."),
    )
    url = f"/s/{session.session_id}/"
    sending = asyncio.ensure_future(async_client.post(url + "send/", {"text": "Run", "parent": ""}, **HTMX))
    await _until(lambda: any(line.get("message", {}).get("stopReason") == "toolUse" for line in _lines(session.path)))
    steered = await async_client.post(url + "send/", {"text": "Mind the tests", "parent": "", "queue": "steer"}, **HTMX)
    assert steered.status_code == 202
    (workspace / "go-on").touch()
    assert (await asyncio.wait_for(sending, 60)).status_code == 200

    roles = [
        (line["message"]["role"], str(line["message"]["content"]))
        for line in _lines(session.path)[1:]
        if line["type"] == "message"
    ]
    order = [role for role, _ in roles if role != "system"]
    assert order == ["user", "assistant", "toolResult", "user", "assistant"]  # the steer after the tool's result
    assert "Mind the tests" in roles[-2][1] and "Steered." in roles[-1][1]
    asked = completions(fake)[1].body["messages"]
    assert "tool-done" in str(asked) and "Mind the tests" in str(asked[-1])  # sent with the tool's result


def _tool_call_written(path: Path) -> bool:
    return any(line.get("message", {}).get("stopReason") == "toolUse" for line in _lines(path))


async def test_a_message_from_a_tab_that_missed_pis_turn_steers_it_on_its_branch(
    async_client, pi_on, session, workspace, fake
) -> None:
    """A second tab, loaded before pi's turn began and not told of it yet, sends a plain message from
    where the turn continues: it steers pi, as that tab's Enter would have had it known; the tab is
    told so and moves to where pi is (its draft is gone: the message was taken)."""
    fake.respond = scripted(
        call_tool("bash", {"command": "while [ ! -e go-on ]; do sleep 0.1; done; echo tool-done"}),
        say("Steered."),
    )
    url = f"/s/{session.session_id}/"
    cursor = str(session.path.stat().st_size)  # what both tabs' pages show: the session before pi's turn
    sending = asyncio.ensure_future(
        async_client.post(url + "send/", {"text": "Run", "parent": "", "cursor": cursor}, **HTMX)
    )
    await _until(lambda: _tool_call_written(session.path))
    size = session.path.stat().st_size

    steered = await async_client.post(url + "send/", {"text": "Mind the tests", "parent": "", "cursor": cursor}, **HTMX)
    html = steered.content.decode()
    assert steered.status_code == 200, html
    assert "pi is working: your message was sent to steer it." in html
    tool_call = SessionFile(session.path).leaf_id
    assert steered["HX-Push-Url"] == f"/s/{session.session_id}/e/{tool_call}/"  # where pi is now
    assert session.path.stat().st_size == size  # pi writes the steer, when it takes it
    (workspace / "go-on").touch()
    assert (await asyncio.wait_for(sending, 60)).status_code == 200

    messages = [line["message"] for line in _lines(session.path)[1:] if line["type"] == "message"]
    order = [message["role"] for message in messages if message["role"] != "system"]
    assert order == ["user", "assistant", "toolResult", "user", "assistant"]  # the steer, in pi's turn
    assert "Mind the tests" in str(messages[-2]["content"]) and "Steered." in str(messages[-1]["content"])
    asked = completions(fake)[1].body["messages"]
    assert "tool-done" in str(asked) and "Mind the tests" in str(asked[-1])  # sent with the tool's result


async def test_a_message_from_a_tab_on_an_entry_pi_wrote_in_its_turn_steers_it(
    async_client, pi_on, session, workspace, fake
) -> None:
    """A tab that has shown what pi wrote of its turn so far, but not that pi works, stands on the turn's
    branch too."""
    fake.respond = scripted(say("First."), call_tool("bash", {"command": "while [ ! -e go-on-2 ]; do sleep 0.1; done"}))
    url = f"/s/{session.session_id}/"
    await async_client.post(url + "send/", {"text": "One", "parent": ""}, **HTMX)
    first = SessionFile(session.path).leaf_id
    sending = asyncio.ensure_future(async_client.post(url + "send/", {"text": "Two", "parent": first}, **HTMX))
    await _until(lambda: _tool_call_written(session.path))
    tool_call = SessionFile(session.path).leaf_id
    cursor = str(session.path.stat().st_size)

    fake.respond = say("Taken.")
    steered = await async_client.post(url + "send/", {"text": "Also", "parent": tool_call, "cursor": cursor}, **HTMX)
    assert steered.status_code == 200 and "sent to steer it" in steered.content.decode()
    (workspace / "go-on-2").touch()
    assert (await asyncio.wait_for(sending, 60)).status_code == 200
    assert _texts(session.path)[-2:] == [("user", "Also"), ("assistant", "Taken.")]


async def test_two_tabs_sending_at_once_from_one_place_one_asks_pi_the_other_steers_it(
    async_client, pi_on, session, workspace, fake
) -> None:
    """Two tabs on the same entry send at once, before either could hear that pi works: one message
    begins pi's turn, the other steers it (whichever comes second, however long pi takes to start)."""
    fake.respond = scripted(
        call_tool("bash", {"command": "while [ ! -e go-on-3 ]; do sleep 0.1; done"}), say("Both heard.")
    )
    url = f"/s/{session.session_id}/"
    cursor = str(session.path.stat().st_size)
    sent = [
        asyncio.ensure_future(async_client.post(url + "send/", {"text": text, "parent": "", "cursor": cursor}, **HTMX))
        for text in ("From the first tab", "From the second tab")
    ]
    done, _ = await asyncio.wait(sent, timeout=90, return_when=asyncio.FIRST_COMPLETED)
    (first,) = done
    steered = first.result()
    assert steered.status_code == 200 and "sent to steer it" in steered.content.decode()
    (workspace / "go-on-3").touch()
    (asked,) = [await asyncio.wait_for(request, 60) for request in sent if request is not first]
    assert asked.status_code == 200 and "sent to steer it" not in asked.content.decode()
    texts = [text for role, text in _texts(session.path) if role == "user"]
    assert sorted(texts) == ["From the first tab", "From the second tab"]
    assert _texts(session.path)[-1] == ("assistant", "Both heard.")


async def test_a_message_from_a_tab_on_another_branch_is_refused_while_pi_works(
    async_client, pi_on, session, fake
) -> None:
    """pi's turn is on another branch: the message is not put into it. Nothing is sent, the tab is told
    why and keeps its draft, and can stop pi from there."""
    fake.respond = scripted(say("First."), hang())
    url = f"/s/{session.session_id}/"
    await async_client.post(url + "send/", {"text": "One", "parent": ""}, **HTMX)
    first = SessionFile(session.path).leaf_id
    question = _lines(session.path)[-2]["id"]
    cursor = str(session.path.stat().st_size)
    sending = asyncio.ensure_future(async_client.post(url + "send/", {"text": "Two", "parent": first}, **HTMX))
    await _until(lambda: ("user", "Two") in _texts(session.path))
    size = session.path.stat().st_size

    for parent in (question, ""):  # an older entry of pi's branch; a new root
        refused = await async_client.post(
            url + "send/", {"text": "Elsewhere", "parent": parent, "cursor": cursor}, **HTMX
        )
        html = refused.content.decode()
        assert refused.status_code == 409, html
        assert "pi is working on another branch of this session; wait for it or stop it. Nothing was sent." in html
        assert "Your message is still in the box." in html and "Stop pi" in html
        assert refused["HX-Retarget"] == "#flash"
    page = await async_client.post(url + "send/", {"text": "Elsewhere", "parent": question, "cursor": cursor})
    assert page.status_code == 409 and "Elsewhere" in page.content.decode()  # without htmx: a page, with the text
    assert session.path.stat().st_size == size

    assert (await async_client.post(url + "stop/", {"reply": "pi"}, **HTMX)).status_code == 204
    assert (await asyncio.wait_for(sending, 30)).status_code == 200
    assert "Elsewhere" not in session.path.read_text()


async def test_pitrees_writes_wait_for_pis_turn_and_a_move_moves_the_tab_only(
    async_client, pi_on, session, fake
) -> None:
    fake.respond = scripted(say("First."), hang())
    url = f"/s/{session.session_id}/"
    await async_client.post(url + "send/", {"text": "One", "parent": ""}, **HTMX)
    first = SessionFile(session.path).leaf_id
    assert first is not None
    sending = asyncio.ensure_future(async_client.post(url + "send/", {"text": "Two", "parent": first}, **HTMX))
    await _until(lambda: ("user", "Two") in _texts(session.path))
    size = session.path.stat().st_size

    labelled = await async_client.post(url + "label/", {"entry": first, "label": "mine", "at": first}, **HTMX)
    assert labelled.status_code == 409 and "pi is working" in labelled.content.decode()
    moved = await async_client.post(url + "navigate/", {"to": first, "at": first}, **HTMX)
    assert moved.status_code == 200
    busy = await async_client.post(url + "send/", {"text": "Three", "parent": first, "branch": "1"}, **HTMX)
    assert busy.status_code == 409 and "steer" in busy.content.decode()
    assert session.path.stat().st_size == size  # nothing of pitree's among pi's lines

    queued = await async_client.post(url + "send/", {"text": "And this", "parent": first, "queue": "follow_up"}, **HTMX)
    assert queued.status_code == 202
    await async_client.post(url + "stop/", {"reply": "pi"}, **HTMX)
    assert (await asyncio.wait_for(sending, 30)).status_code == 200


async def test_pi_works_only_in_the_folders_the_operator_allows(
    async_client, pi_on, settings, session, tmp_path
) -> None:
    settings.PITREE_PI_ROOTS = [tmp_path / "elsewhere"]
    response = await async_client.post(f"/s/{session.session_id}/send/", {"text": "Hi", "parent": ""}, **HTMX)
    assert response.status_code == 409 and "PITREE_PI_ROOTS" in response.content.decode()
    settings.PITREE_PI_ROOTS = []
    response = await async_client.post(f"/s/{session.session_id}/send/", {"text": "Hi", "parent": ""}, **HTMX)
    assert response.status_code == 409
    assert _texts(session.path) == []


async def test_a_working_folder_that_does_not_exist_is_refused(async_client, pi_on, sessions_dir, tmp_path) -> None:
    gone = create_session(sessions_dir, str(tmp_path / "workspace" / "gone"), fsync=False)
    response = await async_client.post(f"/s/{gone.session_id}/send/", {"text": "Hi", "parent": ""}, **HTMX)
    assert response.status_code == 409 and "does not exist" in response.content.decode()


async def test_pis_models_are_offered_and_set_through_pi(async_client, pi_on, session, fake) -> None:
    fake.respond = say("ok")
    url = f"/s/{session.session_id}/"
    pickers = await async_client.get(url + "settings/")
    assert pickers.status_code == 200 and "fake/fake-model" in pickers.content.decode()

    changed = await async_client.post(url + "thinking/", {"level": "high", "at": ""}, **HTMX)
    assert changed.status_code == 200
    chosen = await async_client.post(url + "model/", {"model": "fake/fake-model", "at": ""}, **HTMX)
    assert chosen.status_code == 200
    kinds = [line["type"] for line in _lines(session.path)[1:]]
    assert "thinking_level_change" in kinds  # written by pi
    missing = await async_client.post(url + "model/", {"model": "fake/none", "at": ""}, **HTMX)
    assert missing.status_code == 422


async def _until(check, timeout: float = 60.0) -> None:
    async with asyncio.timeout(timeout):
        while not check():
            await asyncio.sleep(0.05)


async def test_a_move_in_the_browser_then_a_message_continues_there_in_both_readings(
    async_client, pi_on, session, fake, read_alike
) -> None:
    fake.respond = scripted(say("A1"), say("A2"), say("A3"))
    url = f"/s/{session.session_id}/"
    await async_client.post(url + "send/", {"text": "Q1", "parent": ""}, **HTMX)
    first = SessionFile(session.path).leaf_id
    await async_client.post(url + "send/", {"text": "Q2", "parent": first}, **HTMX)
    moved = await async_client.post(url + "navigate/", {"to": first, "at": SessionFile(session.path).leaf_id}, **HTMX)
    assert moved.status_code == 200
    assert _lines(session.path)[-1]["type"] == "leaf"  # the move is pitree's own line, which pi does not know

    page = await async_client.post(url + "send/", {"text": "Q3", "parent": first}, **HTMX)
    assert page.status_code == 200
    read = read_alike(session.path)
    texts = [e["message"] for e in read.entries(read.path_rows()) if e["type"] == "message"]
    said = [m["content"] if isinstance(m["content"], str) else m["content"][0].get("text") for m in texts]
    assert [text for text in said if text] == ["Q1", "A1", "Q3", "A3"]
    assert "pitree/continue" in session.path.read_text() and "pitree/continue" not in page.content.decode()


async def test_pi_killed_mid_turn_is_reported_to_the_sender_and_the_next_message_starts_a_new_pi(
    async_client, pi_on, session, fake
) -> None:
    fake.respond = scripted(call_tool("bash", {"command": "echo started; sleep 30"}), say("A new pi answers."))
    url = f"/s/{session.session_id}/"
    sending = asyncio.ensure_future(async_client.post(url + "send/", {"text": "Run", "parent": ""}, **HTMX))
    await _until(lambda: any(line.get("message", {}).get("stopReason") == "toolUse" for line in _lines(session.path)))
    (driver,) = pi.registry().drivers.values()
    assert driver.pid is not None
    os.kill(driver.pid, signal.SIGKILL)

    ended = await asyncio.wait_for(sending, 30)
    assert ended.status_code == 502 and "pi ended before it was done" in ended.content.decode()
    last = SessionFile(session.path).leaf_id
    again = await async_client.post(url + "send/", {"text": "Again", "parent": last}, **HTMX)
    assert again.status_code == 200 and "A new pi answers." in again.content.decode()


async def test_pi_does_not_work_in_a_read_only_session(async_client, pi_on, sessions_dir) -> None:
    folder = sessions_dir / "--legacy--"
    folder.mkdir()
    samples = Path(__file__).resolve().parents[2] / "sessions_app" / "samples" / "pi"
    legacy = folder / "2025-01-01T00-00-00-000Z_legacy.jsonl"
    legacy.write_bytes((samples / "05-legacy-v1.input.jsonl").read_bytes())
    before = legacy.read_bytes()
    session_id = json.loads(before.split(b"\n", 1)[0])["id"]
    response = await async_client.post(f"/s/{session_id}/send/", {"text": "Hi", "parent": ""}, **HTMX)
    assert response.status_code == 409 and "read-only" in response.content.decode()
    assert legacy.read_bytes() == before


async def test_what_pi_shows_before_it_writes_reaches_the_sessions_group(async_client, pi_on, session, fake) -> None:
    channel_layers.backends.clear()  # a layer of this test's loop
    layer = get_channel_layer()
    channel = await layer.new_channel()
    await layer.group_add(session_group(session.session_id), channel)
    fake.respond = scripted(
        call_tool("bash", {"command": "echo started; sleep 1; echo done"}), say("All done, and well.", 4, delay=0.2)
    )

    answered = await async_client.post(f"/s/{session.session_id}/send/", {"text": "Run", "parent": ""}, **HTMX)
    assert answered.status_code == 200
    heard: list[dict[str, Any]] = []
    while not heard or heard[-1].get("working") is not False:
        heard.append(await asyncio.wait_for(layer.receive(channel), 10))

    turn = heard[0]["turn"]
    assert heard[0] == {"type": "pi.state", "turn": turn, "at": None, "working": True}
    assert heard[-1] == {"type": "pi.state", "turn": turn, "at": None, "working": False, "ending": "done"}
    assert all(m["turn"] == turn for m in heard)
    # The turn is named by where it begins in the file (the same in every process): what pi wrote of it
    # comes after that offset.
    written = session.path.read_bytes()
    assert written[:turn].endswith(b"\n") and b'"Run"' not in written[:turn] and b'"Run"' in written[turn:]
    streams = [m["stream"] for m in heard if m["type"] == "pi.progress"]
    outputs = [tool["output"] for stream in streams for tool in stream["running"]]
    assert "started\n" in outputs  # the command's output as it ran, before its result was written
    texts = [p["text"] for s in streams if s["message"] for p in s["message"]["parts"] if p["kind"] == "text"]
    assert len(set(texts)) > 1 and "All done, and well.".startswith(texts[-1])  # it grew as it came
    # The end is the turn's last word: what was in flight is in the file by then, and reaches the tabs
    # from there (``test_pacing`` pins that no progress of nothing comes before it).
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(layer.receive(channel), 0.5)


async def test_a_feed_that_starts_mid_turn_is_told_what_pi_shows_so_far(async_client, pi_on, session, fake) -> None:
    """A feed that starts asks the replies being written for their text so far (``reply.resend``):
    the process running pi answers with the turn's state and progress, though pi says nothing new."""
    channel_layers.backends.clear()  # a layer of this test's loop
    layer = get_channel_layer()
    channel = await layer.new_channel()
    await layer.group_add(session_group(session.session_id), channel)
    fake.respond = scripted(call_tool("bash", {"command": "echo quiet-now; sleep 6"}), say("Done."))
    url = f"/s/{session.session_id}/send/"
    sending = asyncio.ensure_future(async_client.post(url, {"text": "Run", "parent": ""}, **HTMX))
    heard: list[dict[str, Any]] = []
    while not [m for m in heard if "quiet-now" in str(m.get("stream"))]:
        heard.append(await asyncio.wait_for(layer.receive(channel), 60))
    with contextlib.suppress(TimeoutError):  # what pi said before its command went quiet
        while True:
            await asyncio.wait_for(layer.receive(channel), 0.5)
    await layer.group_send(replies_group(session.session_id), {"type": "reply.resend"})
    again = [await asyncio.wait_for(layer.receive(channel), 3) for _ in range(2)]
    assert again[0] == {"type": "pi.state", "turn": heard[0]["turn"], "at": None, "working": True}
    assert again[1]["type"] == "pi.progress" and "quiet-now" in str(again[1]["stream"]["running"])
    assert (await sending).status_code == 200


async def test_compact_from_the_page_has_pi_write_the_compaction(async_client, pi_on, session, fake) -> None:
    """pi compacts the branch (it asks the model for the summary and chooses what to keep, by its own
    settings: here its agent folder's, which keep as little as pi allows, so that two turns are enough)."""
    agent_settings = Path(os.environ["PI_CODING_AGENT_DIR"]) / "settings.json"
    chosen = json.loads(agent_settings.read_text())
    agent_settings.write_text(json.dumps({**chosen, "compaction": {"keepRecentTokens": 1}}))
    summary = say("The work so far, summarised.")
    fake.respond = scripted(say("First answer."), say("Second answer."), summary, summary)
    url = f"/s/{session.session_id}/"
    for text in ("First question", "Second question"):
        leaf = SessionFile(session.path).leaf_id or ""
        sent = await async_client.post(url + "send/", {"text": text, "parent": leaf}, **HTMX)
        assert sent.status_code == 200
    leaf = SessionFile(session.path).leaf_id
    # The page's form names where to keep from; pi chooses that itself, as its own /compact does.
    compacted = await async_client.post(url + "compact/", {"keep_from": leaf, "at": leaf}, **HTMX)
    assert compacted.status_code == 200, compacted.content.decode()
    (compaction,) = [line for line in _lines(session.path) if line["type"] == "compaction"]
    assert "The work so far, summarised." in compaction["summary"]
    assert SessionFile(session.path).leaf_id == compaction["id"]  # the tab stands at it
