"""pi's process kept honest: Stop in the middle of a tool run or of a stalled answer, pi killed mid-turn,
two messages at once, messages queued while pi works, one pi per session across processes, pitree's
own writes kept out of pi's turns, an idle pi stopped."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from support.fake_openai import call_tool, completions, hang, say, scripted

from sessions_app.assistants.pi.driver import ABORTED, ENDED, PiBusy, PiElsewhere, PiIdle
from sessions_app.assistants.pi.locks import FileDrivers, PiWorking, Turns, lock_key, locks_folder
from sessions_app.sessionfiles.store import SessionFile

pytestmark = pytest.mark.processes  # pi (node), the fake model server, daphne


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def _gone(pid: int, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while _alive(pid) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    return not _alive(pid)


def _roles(session_path: Path) -> list[tuple[str, str | None]]:
    session = SessionFile(session_path)
    rows = [row for row in range(len(session.index)) if session.index.types[row] == "message"]
    found = []
    for entry in session.entries(rows):
        message = entry["message"]
        if message["role"] != "system":
            found.append((message["role"], message.get("stopReason")))
    return found


SLOW_TOOL = "echo $$ > pid.txt; echo started; sleep 30; touch finished.txt"


@pytest.fixture
def in_a_slow_tool(session, workspace, make_driver, recorder, fake) -> Callable[[str], Awaitable[tuple[Any, Any, int]]]:
    """``await in_a_slow_tool(answer)``: a driver whose pi runs ``SLOW_TOOL`` (the model asks for it, then
    says ``answer``), once the command has started; the driver, its recorder and the command's process id."""

    async def start(answer: str) -> tuple[Any, Any, int]:
        fake.respond = scripted(call_tool("bash", {"command": SLOW_TOOL}), say(answer))
        driver = make_driver(session)
        heard = recorder(driver)
        await driver.prompt("Run it", at=None)
        await heard.wait_for(lambda r: r["type"] == "tool_execution_update" and "started" in str(r["partialResult"]))
        return driver, heard, int((workspace / "pid.txt").read_text())

    return start


async def _lock_free(session_path: Path, key: str) -> bool:
    """Whether another process could drive the session now (its driver lock is free)."""
    held = await FileDrivers(locks_folder(session_path.parents[1])).acquire(key)
    if held is None:
        return False
    await held.release()
    return True


async def test_stop_in_the_middle_of_a_tool_run_ends_the_command_and_pi_settles(
    session, workspace, in_a_slow_tool, fake, read_alike
):
    driver, _, tool_pid = await in_a_slow_tool("never asked")

    assert await driver.abort() is True
    assert await driver.settled() == ABORTED
    assert await _gone(tool_pid)
    assert not (workspace / "finished.txt").exists()
    assert driver.running and not driver.busy  # pi itself goes on, ready for the next message
    assert len(completions(fake)) == 1  # the model was not asked again after the stop
    read_alike(session.path)
    assert _roles(session.path)[:2] == [("user", None), ("assistant", "toolUse")]
    assert _roles(session.path)[-1][0] in ("toolResult", "assistant")


async def test_stop_while_the_model_hangs(session, make_driver, recorder, fake, read_alike):
    fake.respond = hang("Part of an ans")
    driver = make_driver(session)
    heard = recorder(driver)
    await driver.prompt("Say something", at=None)
    await heard.wait_for(lambda r: r["type"] == "message_update" and r["assistantMessageEvent"].get("delta"))

    await driver.abort()
    assert await driver.settled() == ABORTED
    read = read_alike(session.path)
    assert _roles(session.path) == [("user", None), ("assistant", "aborted")]
    assert "Part of an ans" in str(read.entry(read.leaf_id))


async def test_a_silent_turn_is_reported(session, make_driver, recorder, fake):
    fake.respond = hang()
    driver = make_driver(session, silence=1.0)
    heard = recorder(driver)
    await driver.prompt("Say something", at=None)
    silent = await heard.wait_for(lambda r: r["type"] == "pitree_silent")
    assert silent["seconds"] >= 1
    await driver.abort()
    await driver.settled()


async def test_pi_killed_mid_turn_is_reported_the_file_stays_whole_and_the_next_message_starts_a_new_pi(
    session, in_a_slow_tool, read_alike
):
    driver, heard, tool_pid = await in_a_slow_tool("After the crash.")
    first_pi = driver.pid
    assert first_pi is not None
    written = session.path.read_bytes()

    os.kill(first_pi, signal.SIGKILL)
    exit_record = await heard.wait_for(lambda r: r["type"] == "pitree_exit")
    assert exit_record == {"type": "pitree_exit", "code": -signal.SIGKILL, "turn": True, "asked": False}
    assert await driver.settled() == ENDED
    assert not driver.running and not driver.busy
    assert await _gone(tool_pid)  # what pi had started went with it
    assert session.path.read_bytes().startswith(written)  # nothing written was lost
    read_alike(session.path)
    assert await _lock_free(session.path, driver.key)  # it went with the process: another could drive pi now

    at = SessionFile(session.path).leaf_id
    await driver.prompt("Carry on", at=at)
    await driver.settled()
    assert driver.pid not in (None, first_pi)
    read = read_alike(session.path)
    assert _roles(session.path)[-2:] == [("user", None), ("assistant", "stop")]
    assert "After the crash." in str(read.entry(read.leaf_id))


async def test_two_messages_at_once_one_is_answered_the_other_refused(session, make_driver, fake, read_alike):
    fake.respond = scripted(say("Only one answer."), say("unused"))
    driver = make_driver(session)

    outcomes = await asyncio.gather(
        driver.prompt("first sender", at=None), driver.prompt("second sender", at=None), return_exceptions=True
    )
    assert sorted(type(outcome).__name__ for outcome in outcomes) == ["PiBusy", "str"]
    await driver.settled()
    read_alike(session.path)
    assert _roles(session.path) == [("user", None), ("assistant", "stop")]
    assert len(completions(fake)) == 1


async def test_a_follow_up_sent_while_pi_works_is_answered_after(session, make_driver, recorder, fake, read_alike):
    fake.respond = scripted(call_tool("bash", {"command": "sleep 1; echo done"}), say("First done."), say("Then this."))
    driver = make_driver(session)
    heard = recorder(driver)
    await driver.prompt("Do the first thing", at=None)
    await heard.wait_for(lambda r: r["type"] == "tool_execution_start")

    with pytest.raises(PiBusy):
        await driver.prompt("Not like this", at=None)
    assert await driver.queue("follow_up", "And then this") == "queued"
    await driver.settled()

    read = read_alike(session.path)
    users = [m for m in read.entries(read.path_rows()) if m["type"] == "message" and m["message"]["role"] == "user"]
    assert [str(u["message"]["content"]) for u in users][-1].count("And then this") == 1
    assert "Then this." in str(read.entry(read.leaf_id))
    with pytest.raises(PiIdle):
        await driver.queue("steer", "too late")


async def test_pitrees_own_writes_wait_for_pis_turn(session, make_driver, recorder, fake):
    fake.respond = scripted(call_tool("bash", {"command": "sleep 1"}), say("ok"))
    driver = make_driver(session)
    heard = recorder(driver)
    turns = Turns(locks_folder(session.path.parents[1]))
    await driver.prompt("Work", at=None)
    await heard.wait_for(lambda r: r["type"] == "tool_execution_start")

    with pytest.raises(PiWorking), turns.writing(lock_key(session.path)):
        pytest.fail("a write went in during pi's turn")
    await driver.settled()
    with turns.writing(lock_key(session.path)):
        pass


async def test_one_pi_per_session_across_processes(session, make_driver, fake):
    fake.respond = say("mine")
    first, second = make_driver(session), make_driver(session)
    await first.prompt("hello", at=None)
    await first.settled()

    with pytest.raises(PiElsewhere):
        await second.prompt("me too", at=SessionFile(session.path).leaf_id)
    assert not second.running
    await first.stop()
    assert await second.models()  # the lock is free once the first pi stopped


async def test_an_idle_pi_is_stopped_and_its_lock_freed(session, make_driver, fake):
    fake.respond = say("bye")
    driver = make_driver(session, idle=0.5)
    await driver.prompt("hello", at=None)
    await driver.settled()
    pid = driver.pid
    assert pid is not None
    assert await _gone(pid)
    deadline = time.monotonic() + 5
    while driver.running and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert not driver.running
    assert await _lock_free(session.path, driver.key)


async def test_stop_during_a_turn_aborts_and_ends_pi_within_seconds(in_a_slow_tool):
    driver, heard, tool_pid = await in_a_slow_tool("never")
    pid = driver.pid
    assert pid is not None

    started = time.monotonic()
    await driver.stop()
    assert time.monotonic() - started < 5
    assert not _alive(pid) and await _gone(tool_pid)
    assert heard.of("pitree_exit")[-1]["asked"] is True


async def test_a_pi_that_does_not_answer_stop_is_ended(session, make_driver, recorder, fake):
    fake.respond = hang()
    driver = make_driver(session, abort_wait=1.0)
    heard = recorder(driver)
    await driver.prompt("Say something", at=None)
    await heard.wait_for(lambda r: r["type"] == "message_start" and r["message"]["role"] == "assistant")
    pid = driver.pid
    assert pid is not None
    os.kill(pid, signal.SIGSTOP)  # frozen: it can neither abort nor answer

    await driver.abort()
    assert await driver.settled() == ENDED
    assert await _gone(pid)
    assert heard.of("pitree_exit")[-1]["turn"] is True


async def test_stop_while_a_message_is_being_set_up_stops_its_turn(session, make_driver, fake) -> None:
    fake.respond = hang("Never finished")
    driver = make_driver(session)
    sending = asyncio.ensure_future(driver.prompt("Say something", at=None))
    while not driver.busy:  # pi starting, the file being loaded: the prompt not sent yet
        await asyncio.sleep(0.001)
    assert await driver.abort() is True
    await sending
    assert await asyncio.wait_for(driver.settled(), 30) == ABORTED
