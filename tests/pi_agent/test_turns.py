"""A real pi 1.6.0 answers through pitree's driver: the file pi writes, read the same way by pitree and
by pi's own SessionManager; what pi streams on its way; tools that really run in the session's cwd."""

from __future__ import annotations

from typing import Any

import pytest
from support.fake_openai import call_tool, completions, refuse, say, scripted

from sessions_app.assistants.pi.driver import DONE
from sessions_app.sessionfiles.entries import CONTINUE_TYPE
from sessions_app.sessionfiles.store import SessionFile

pytestmark = pytest.mark.processes  # pi (node), the fake model server, daphne


def _messages(session: SessionFile) -> list[dict[str, Any]]:
    """The messages of the file in file order (system prompts left out)."""
    rows = [row for row in range(len(session.index)) if session.index.types[row] == "message"]
    found = [entry["message"] for entry in session.entries(rows)]
    return [message for message in found if message.get("role") != "system"]


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content if block.get("type") == "text")


async def test_a_text_answer_is_written_by_pi_and_read_alike(session, make_driver, recorder, fake, read_alike):
    fake.respond = say("Hello from the fake.")
    driver = make_driver(session)
    heard = recorder(driver)

    assert await driver.prompt("Hi pi", at=None) == "started"
    assert await driver.settled() == DONE

    read = read_alike(session.path)
    assert [(m["role"], _text(m)) for m in _messages(read)] == [
        ("user", "Hi pi"),
        ("assistant", "Hello from the fake."),
    ]
    deltas = [
        r["assistantMessageEvent"]["delta"] for r in heard.of("message_update") if "delta" in r["assistantMessageEvent"]
    ]
    assert "".join(deltas) == "Hello from the fake."
    assert heard.of("agent_settled") == [{"type": "agent_settled", "aborted": False}]
    # A new file's first line is its header: pi continued from there, no line of pitree's was needed.
    assert CONTINUE_TYPE not in session.path.read_text()


async def test_bash_runs_in_the_sessions_cwd_and_its_output_streams(
    session, workspace, make_driver, recorder, fake, read_alike
):
    fake.respond = scripted(
        call_tool("bash", {"command": "echo made > made.txt; echo first; sleep 0.3; echo second"}), say("Done.")
    )
    driver = make_driver(session)
    heard = recorder(driver)

    await driver.prompt("Make a file", at=None)
    await driver.settled()

    assert (workspace / "made.txt").read_text() == "made\n"
    started = heard.of("tool_execution_start")
    assert [(r["toolName"], r["args"]["command"][:9]) for r in started] == [("bash", "echo made")]
    updates = [r["partialResult"] for r in heard.of("tool_execution_update")]
    assert any("first" in _text(update) and "second" not in _text(update) for update in updates)
    (end,) = heard.of("tool_execution_end")
    assert _text(end["result"]) == "first\nsecond\n" and end["isError"] is False

    read = read_alike(session.path)
    roles = [m["role"] for m in _messages(read)]
    assert roles == ["user", "assistant", "toolResult", "assistant"]
    call = _messages(read)[1]["content"][0]
    assert call["type"] == "toolCall" and call["name"] == "bash"
    assert _text(_messages(read)[2]) == "first\nsecond\n"
    # The model got the tool's output back.
    second = completions(fake)[1].body["messages"]
    assert second[-1]["role"] == "tool" and "second" in second[-1]["content"]


async def test_read_then_edit_changes_the_workspace_file(session, workspace, make_driver, fake, read_alike):
    (workspace / "notes.txt").write_text("hello world\n")
    fake.respond = scripted(
        call_tool("read", {"path": "notes.txt"}, "call_read"),
        call_tool("edit", {"path": "notes.txt", "edits": [{"oldText": "world", "newText": "pitree"}]}, "call_edit"),
        say("Edited."),
    )
    driver = make_driver(session)

    await driver.prompt("Fix the greeting", at=None)
    await driver.settled()

    assert (workspace / "notes.txt").read_text() == "hello pitree\n"
    messages = _messages(read_alike(session.path))
    results = [m for m in messages if m["role"] == "toolResult"]
    assert [(m["toolName"], m["isError"]) for m in results] == [("read", False), ("edit", False)]
    assert "hello world" in _text(results[0])
    assert _text(messages[-1]) == "Edited."


async def test_a_refusing_model_is_stored_as_pi_stores_errors_and_pi_goes_on(session, make_driver, fake, read_alike):
    fake.respond = scripted(refuse(400, "no such thing"), say("Better now."))
    driver = make_driver(session)

    await driver.prompt("First", at=None)
    await driver.settled()
    failed = _messages(SessionFile(session.path))[-1]
    assert failed["role"] == "assistant" and failed["stopReason"] == "error"
    assert "no such thing" in failed["errorMessage"]

    at = SessionFile(session.path).leaf_id
    await driver.prompt("Second", at=at)
    await driver.settled()
    messages = _messages(read_alike(session.path))
    assert [(m["role"], _text(m)) for m in messages[-2:]] == [("user", "Second"), ("assistant", "Better now.")]


def _path_texts(session: SessionFile, leaf: str | None = None) -> list[str]:
    rows = session.path_rows() if leaf is None else session.path_rows(leaf)
    found = []
    for entry in session.entries(rows):
        message = entry.get("message")
        if entry["type"] == "message" and message["role"] in ("user", "assistant"):
            found.append(_text(message))
    return found


async def test_after_a_move_in_the_browser_pi_continues_under_the_entry_shown(session, make_driver, fake, read_alike):
    fake.respond = scripted(say("A1"), say("A2"), say("A3"))
    driver = make_driver(session)
    await driver.prompt("Q1", at=None)
    await driver.settled()
    first_answer = SessionFile(session.path).leaf_id
    await driver.prompt("Q2", at=first_answer)
    await driver.settled()

    # The browser goes back to the first answer (pitree's own move, a ``leaf`` line pi does not know),
    # then asks again from there.
    moved = SessionFile(session.path)
    moved.navigate(first_answer)
    assert moved.leaf_id == first_answer
    await driver.prompt("Q3", at=first_answer)
    await driver.settled()

    read = read_alike(session.path)
    assert _path_texts(read) == ["Q1", "A1", "Q3", "A3"]
    # The second branch is still there, beside it.
    assert sorted(_text(m) for m in _messages(read) if m["role"] == "user") == ["Q1", "Q2", "Q3"]
    # Exactly one line of pitree's told pi where to continue: under the first answer.
    continues = [e for e in read.entries(range(len(read.index))) if e.get("customType") == CONTINUE_TYPE]
    assert [e["parentId"] for e in continues] == [first_answer]
    # The model was sent the branch shown, not the one left.
    sent = [m.get("content") for m in completions(fake)[2].body["messages"] if m["role"] in ("user", "assistant")]
    assert "Q2" not in str(sent) and "Q3" in str(sent)


async def test_pi_continues_after_lines_another_writer_added_while_it_was_idle(session, make_driver, fake, read_alike):
    fake.respond = scripted(say("A1"), say("A2"))
    driver = make_driver(session)
    await driver.prompt("Q1", at=None)
    await driver.settled()
    answer = SessionFile(session.path).leaf_id
    # pitree labels the answer and names the session while pi is idle: lines pi has not read.
    other = SessionFile(session.path)
    other.set_label(answer, "good one", parent=answer)
    label_id = other.leaf_id
    other.rename("A named session", parent=label_id)
    at = other.leaf_id

    await driver.prompt("Q2", at=at)
    await driver.settled()

    read = read_alike(session.path)
    assert _path_texts(read) == ["Q1", "A1", "Q2", "A2"]
    assert read.index.labels[answer][0] == "good one" and read.index.name == "A named session"
    # No line of pitree's was needed: the file's last line was the entry shown; pi read it again.
    assert CONTINUE_TYPE not in session.path.read_text()
