"""What pi has shown of its turn but not written yet (``TurnStream``), followed on a real pi's events:
the message it streams, the tool it runs with its output so far, and nothing once pi has written them."""

from __future__ import annotations

from typing import Any

import pytest
from support.fake_openai import call_tool, say, scripted

from sessions_app.assistants.pi.stream import TurnStream


@pytest.mark.processes  # pi (node) and the fake model server
async def test_a_turns_stream_shows_what_pi_has_not_written_yet(session, make_driver, recorder, fake) -> None:
    fake.respond = scripted(
        call_tool("bash", {"command": "echo started; sleep 1; echo done"}), say("It ran, and all is well.", pieces=4)
    )
    driver = make_driver(session)
    stream = TurnStream()
    seen: list[dict[str, Any]] = []

    def follow(record: dict[str, Any]) -> None:
        if stream.take(record):
            seen.append(stream.snapshot())

    driver.listeners.add(follow)
    await driver.prompt("Run it", at=None)
    await driver.settled()

    calls = [s["message"]["parts"] for s in seen if s["message"] and s["message"]["parts"]]
    assert ["toolCall"] in [[p["kind"] for p in parts] for parts in calls]
    streamed = [p["text"] for parts in calls for p in parts if p["kind"] == "toolCall"]
    assert '{"command": "echo started; sleep 1; echo done"}' in streamed  # its arguments, as they came
    outputs = [tool["output"] for s in seen for tool in s["running"]]
    assert "started\n" in outputs and outputs[-1] == "started\ndone\n"
    assert all(tool["name"] == "bash" for s in seen for tool in s["running"])
    texts = [p["text"] for parts in calls for p in parts if p["kind"] == "text"]
    assert texts[-1] == "It ran, and all is well." and len(set(texts)) > 2  # grew piece by piece
    assert seen[-1] == {"message": None, "running": []} and stream.empty  # all of it written by then


def test_records_that_are_not_pis_are_ignored() -> None:
    stream = TurnStream()
    for record in (
        {"type": "message_update", "assistantMessageEvent": {"type": "text_delta", "contentIndex": 0}},
        {"type": "message_start", "message": "not an object"},
        {"type": "tool_execution_update", "toolCallId": "nobody"},
        {"type": "tool_execution_end", "toolCallId": "nobody"},
        {"type": "agent_settled"},
        {"what": "ever"},
    ):
        assert stream.take(record) is False
    assert stream.empty
    assert stream.take({"type": "message_start", "message": {"role": "assistant"}})
    assert not stream.take(
        {"type": "message_update", "assistantMessageEvent": {"type": "text_delta", "contentIndex": 5}}
    )
    assert stream.snapshot() == {"message": {"parts": []}, "running": []}
    assert stream.take({"type": "pitree_exit", "code": -9}) and stream.empty  # pi ended: nothing in flight
