"""pi across real server processes: two daphne processes sharing a Redis and one sessions folder run one pi
per session between them. Stop sent to the process that does not run pi reaches it, a message sent there
is answered by the pi the other runs, every tab sees every turn whichever process ran it, and SIGTERM
ends pi with its server."""

from __future__ import annotations

import asyncio
import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from support import accounts
from support.daphne import Daphne, launch_daphne
from support.fake_openai import FakeOpenAI, call_tool, hang, say, scripted
from support.pi_agent import agent_environment
from support.pushes import Push
from support.redisserver import redis_server
from support.tabs import open_tab, until

from sessions_app.assistants.pi.rpc import RUN_VARIABLE
from sessions_app.sessionfiles.entries import user_message

pytestmark = pytest.mark.processes  # pi (node), the fake model server, daphne

TIMEOUT = 120


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    with redis_server(tmp_path) as url:
        yield url


@pytest.fixture
def servers(
    tmp_path: Path, sessions_dir: Path, workspace: Path, fake: FakeOpenAI, redis_url: str
) -> Iterator[Callable[[], Daphne]]:
    """``servers(**environment)``: another daphne process of the site, with pi as its assistant."""
    started: list[Daphne] = []
    agent = {name: value for name, value in agent_environment(tmp_path, fake).items() if name.startswith("PI_")}

    def start(**more: str) -> Daphne:
        env = {
            "PITREE_SESSIONS_DIR": str(sessions_dir),
            "PITREE_FSYNC": "0",
            "PITREE_ASSISTANT": "pi",
            "PITREE_PI_ROOTS": str(workspace),
            "PITREE_REDIS_URL": redis_url,
            **agent,
            **more,
        }
        server = launch_daphne(env, tmp_path / f"daphne-{len(started)}.log", site=started[0] if started else None)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


def _post(server: Daphne, session_id: str, action: str, fields: dict[str, str]) -> int:
    """A browser's form post: the page for the CSRF token, then the post; the status it got."""
    return _answer(server, session_id, action, fields)[0]


def _answer(server: Daphne, session_id: str, action: str, fields: dict[str, str]) -> tuple[int, str]:
    """A browser's form post, and what it answered: its status and its body."""
    opener, request = accounts.form_post(server.url, server.cookie, session_id, action, fields, TIMEOUT)
    try:
        with opener.open(request, timeout=TIMEOUT) as response:
            return int(response.status), response.read().decode()
    except urllib.error.HTTPError as error:
        return int(error.code), error.read().decode()


def _pis(agent_dir: str) -> set[str]:
    """The pi processes running with this test's agent folder, by the mark each pitree gives its pi
    (``PITREE_PI_RUN``, which the commands of its tools inherit too). (pi names itself in its command
    line, so that cannot tell.)"""
    found = set()
    wanted = f"PI_CODING_AGENT_DIR={agent_dir}".encode()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as environ:
                variables = environ.read().split(b"\0")
        except OSError:
            continue
        if wanted in variables:
            found |= {v.decode() for v in variables if v.startswith(RUN_VARIABLE.encode() + b"=")}
    return found


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_bytes().split(b"\n") if line.strip()]


async def _until(check: Callable[[], bool], timeout: float = TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.1)


async def test_one_pi_for_two_processes_reached_from_either(servers, session, fake, tmp_path) -> None:
    fake.respond = scripted(hang("Thinking about "), say("Answered from the other process."))
    first, second = servers(), servers()
    sid, path = session.session_id, session.path
    agent_dir = str(tmp_path / "agent")

    sending = asyncio.ensure_future(asyncio.to_thread(_post, first, sid, "send", {"text": "Go", "parent": ""}))
    await _until(lambda: any(line.get("message", {}).get("role") == "user" for line in _lines(path)))
    assert len(_pis(agent_dir)) == 1

    # A message sent to the other process while pi works is refused, as in the process that runs it.
    busy, said = await asyncio.to_thread(_answer, second, sid, "send", {"text": "Me too", "parent": "", "branch": "1"})
    assert busy == 409 and "steer" in said

    # Stop, sent to the process that does not run pi, reaches it; the first one's send then ends.
    assert await asyncio.to_thread(_post, second, sid, "stop", {"reply": "pi"}) == 204
    assert await asyncio.wait_for(sending, TIMEOUT) == 200
    stopped = _lines(path)[-1]["message"]
    assert stopped["role"] == "assistant" and stopped["stopReason"] == "aborted"

    # A message sent to the second process is answered by the pi the first one runs.
    status = await asyncio.to_thread(_post, second, sid, "send", {"text": "Again", "parent": _lines(path)[-1]["id"]})
    assert status == 200
    *_, answer, title = _lines(path)
    assert answer["message"]["content"][0]["text"] == "Answered from the other process."
    assert title["type"] == "session_info" and title["name"] == "Go"  # after the first turn pi finished
    assert len(_pis(agent_dir)) == 1

    # SIGTERM: pi ends with the server that runs it.
    first.stop()
    second.stop()
    await _until(lambda: not _pis(agent_dir), timeout=10)


async def test_a_message_sent_to_the_other_process_while_pi_works_steers_it_or_is_refused(
    servers, session, fake, workspace
) -> None:
    """The process a tab's message reaches need not run pi: the one that does decides. A message from
    where pi's turn continues steers it; one from another entry is refused, and nothing is written."""
    fake.respond = scripted(
        say("First."),
        call_tool("bash", {"command": "while [ ! -e go-on ]; do sleep 0.1; done; echo tool-done"}),
        say("Steered from the other process."),
    )
    first, second = servers(), servers()
    sid, path = session.session_id, session.path
    assert await asyncio.to_thread(_post, first, sid, "send", {"text": "One", "parent": ""}) == 200
    question, answer = (line["id"] for line in _lines(path)[-2:])
    cursor = str(path.stat().st_size)  # the other tab's page: the first turn, pi not working yet
    fields = {"text": "Two", "parent": answer, "cursor": cursor}
    sending = asyncio.ensure_future(asyncio.to_thread(_post, first, sid, "send", fields))
    await _until(lambda: any(line.get("message", {}).get("stopReason") == "toolUse" for line in _lines(path)))
    size = path.stat().st_size

    refused, said = await asyncio.to_thread(
        _answer, second, sid, "send", {"text": "Elsewhere", "parent": question, "cursor": cursor}
    )
    assert refused == 409 and "pi is working on another branch of this session" in said
    assert path.stat().st_size == size
    steered = await asyncio.to_thread(
        _post, second, sid, "send", {"text": "Mind the tests", "parent": answer, "cursor": cursor}
    )
    assert steered == 200
    (workspace / "go-on").touch()
    assert await asyncio.wait_for(sending, TIMEOUT) == 200

    roles = [line["message"]["role"] for line in _lines(path) if line["type"] == "message"]
    assert roles[-5:] == ["user", "assistant", "toolResult", "user", "assistant"]  # the steer, in pi's turn
    assert "Mind the tests" in str(_lines(path)[-2]["message"]["content"])
    assert "Elsewhere" not in path.read_text()


def _pi_turns(seen: list[Push]) -> list[str]:
    """The replies of pi's turns whose placeholders the pushes appended, in order."""
    return [
        str(dict(element.attributes).get("data-reply"))
        for push in seen
        for element in push.appended
        if "data-pi" in dict(element.attributes)
    ]


async def test_every_tab_sees_every_turn_whichever_process_runs_pi(servers, session, fake, tmp_path) -> None:
    """A turn is named alike in every process: once the first process's pi has stopped, a turn the other
    one runs under the same entry as a turn every tab saw end is shown, not taken for that one."""
    # Both answers stream for a while: a turn that starts and ends between two looks of a busy server's
    # feed is rightly shown as the entry pi wrote alone, and this test is about turns shown as they stream.
    fake.respond = scripted(
        say("The first answer, slowly.", pieces=4, delay=0.2), say("The second answer, slowly.", pieces=4, delay=0.2)
    )
    first, second = servers(PITREE_PI_IDLE_SECONDS="1"), servers(PITREE_PI_IDLE_SECONDS="1")
    sid, path = session.session_id, session.path
    agent_dir = str(tmp_path / "agent")
    start = str(session.append(user_message("Where both turns start"), None)["id"])
    kept = [await open_tab(server, sid, path.stat().st_size, start) for server in (first, second)]
    watching: list[tuple[Any, list[Push]]] = []
    try:
        assert await asyncio.to_thread(_post, first, sid, "send", {"text": "One", "parent": start}) == 200
        answer = _lines(path)[-1]["id"]
        for socket, seen in kept:  # each process's feed saw the first turn end (and lives on with its tab)
            await until(socket, seen, lambda m: answer in m.entries)
            # One turn, its placeholder under each line pi wrote while the tab watched (pi writes a
            # thinking level and the question before its answer, a batch or several).
            assert len({reply.partition("-")[0] for reply in _pi_turns(seen)}) == 1
        await _until(lambda: not _pis(agent_dir))  # idle, the first process's pi stopped

        watching += [await open_tab(server, sid, path.stat().st_size, start) for server in (first, second)]
        assert await asyncio.to_thread(_post, second, sid, "send", {"text": "One, again", "parent": start}) == 200
        again = _lines(path)[-1]
        assert again["message"]["role"] == "assistant" and again["id"] != answer
        for socket, seen in watching:
            await until(socket, seen, lambda m: again["id"] in m.entries)
            assert _pi_turns(seen)  # the second turn showed as pi streamed it, in both processes' tabs
    finally:
        for socket, _ in kept + watching:
            await socket.close()
