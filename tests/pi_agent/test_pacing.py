"""How pi's turn is paced to the tabs (``services.pi_stream.Broadcast``), fed pi's records by hand: the
first change after a quiet spell goes at once, those that follow within the interval go together in
the next progress, and the turn's end is its last word (no progress of nothing before it)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from channels.layers import channel_layers, get_channel_layer

from sessions_app.channel_layer.groups import session_group
from sessions_app.services import pi_stream

SESSION = "019cadd4-5bfc-74dd-b0a5-3da46bf1f75f"
LONG = 30.0  # seconds between two progresses: far longer than any wait of this test


class _Driver:
    """What ``Broadcast`` reads of its driver."""

    name = "test"
    path = Path("/nonexistent/session.jsonl")  # its size unknown: progresses say no ``since``
    turn_from = 100
    turn_at = "aaaa0001"


def _delta(text: str) -> dict[str, Any]:
    return {"type": "message_update", "assistantMessageEvent": {"type": "text_delta", "contentIndex": 0, "delta": text}}


START = [
    {"type": "agent_start"},
    {"type": "message_start", "message": {"role": "assistant"}},
    {"type": "message_update", "assistantMessageEvent": {"type": "text_start", "contentIndex": 0}},
]
END = [
    {"type": "message_end", "message": {"role": "assistant"}},
    {"type": "agent_end"},
    {"type": "agent_settled"},
]


@pytest.fixture
async def heard(monkeypatch) -> Any:
    """A channel in the session's group, and the progress interval made long."""
    monkeypatch.setattr(pi_stream, "progress_interval", lambda chars: LONG)
    channel_layers.backends.clear()  # a layer of this test's loop
    layer = get_channel_layer()
    channel = await layer.new_channel()
    await layer.group_add(session_group(SESSION), channel)

    async def receive(wait: float = 5.0) -> dict[str, Any]:
        message: dict[str, Any] = await asyncio.wait_for(layer.receive(channel), wait)
        return message

    return receive


async def _begun(heard: Any, records: list[dict[str, Any]] = START, idle: float = 0.0) -> pi_stream.Broadcast:
    """A broadcast told that pi's turn and a message began (both heard), then left ``idle`` seconds:
    long enough, the pacer waits for the next change."""
    broadcast = pi_stream.Broadcast(_Driver(), SESSION)  # type: ignore[arg-type]
    for record in records:
        broadcast.take(record)
    await heard()  # working
    await heard()  # the message began
    await asyncio.sleep(idle)
    return broadcast


def _text(message: dict[str, Any]) -> str:
    parts = (message["stream"]["message"] or {}).get("parts", [])
    return "".join(part["text"] for part in parts)


async def test_the_first_change_goes_at_once_and_those_within_the_interval_wait_for_the_next(heard) -> None:
    broadcast = pi_stream.Broadcast(_Driver(), SESSION)  # type: ignore[arg-type]
    for record in START:
        broadcast.take(record)
    assert await heard() == {"type": "pi.state", "turn": 100, "at": "aaaa0001", "working": True}
    first = await heard()  # the message began: sent at once, not an interval later
    assert first["type"] == "pi.progress" and _text(first) == "" and first["stream"]["message"] is not None

    for piece in ("one ", "two ", "three"):
        broadcast.take(_delta(piece))
    with pytest.raises(TimeoutError):  # within the interval: held, to go together
        await heard(0.3)
    for record in END:
        broadcast.take(record)
    # The turn ended before the interval did: what was held is in the file pi wrote, and the end is
    # told without a progress of nothing before it.
    assert await heard() == {"type": "pi.state", "turn": 100, "at": "aaaa0001", "working": False, "ending": "done"}
    with pytest.raises(TimeoutError):
        await heard(0.3)


async def test_after_a_quiet_spell_the_next_change_goes_at_once(heard, monkeypatch) -> None:
    monkeypatch.setattr(pi_stream, "progress_interval", lambda chars: 0.05)
    broadcast = await _begun(heard, idle=0.2)  # the pacer waits for a change
    monkeypatch.setattr(pi_stream, "progress_interval", lambda chars: LONG)
    broadcast.take(_delta("after the pause"))
    assert _text(await heard()) == "after the pause"  # the pacer did not sit out an interval first
    broadcast.take(_delta(", and more"))
    broadcast.take(_delta(", and more still"))
    with pytest.raises(TimeoutError):
        await heard(0.3)
    for record in END:
        broadcast.take(record)
    ended = await heard()
    assert ended["type"] == "pi.state" and ended["working"] is False


async def test_nothing_in_flight_is_told_only_if_it_lasts(heard, monkeypatch) -> None:
    """A message's end leaves nothing in flight: the turn's end that follows at once is told alone (a
    progress of nothing first would show a turn waiting under the title given after it); a wait on the
    model that lasts is told after the interval."""
    monkeypatch.setattr(pi_stream, "progress_interval", lambda chars: 0.3)
    broadcast = await _begun(heard, idle=0.5)  # the pacer waits for a change
    broadcast.take(END[0])
    await asyncio.sleep(0.05)
    broadcast.take(END[1])
    broadcast.take(END[2])
    assert await heard() == {"type": "pi.state", "turn": 100, "at": "aaaa0001", "working": False, "ending": "done"}

    broadcast = await _begun(heard, idle=0.5)  # the pacer waits for a change
    broadcast.take(END[0])  # and pi waits on its model for the next message
    with pytest.raises(TimeoutError):
        await heard(0.15)
    waiting = await heard()
    assert waiting["type"] == "pi.progress" and waiting["stream"] == {"message": None, "running": []}
    broadcast.take(END[1])
    broadcast.take(END[2])
    assert (await heard())["working"] is False


async def test_what_follows_nothing_in_flight_goes_at_once(heard, monkeypatch) -> None:
    """pi's message asking for a tool ends (nothing in flight) and the tool starts while that pause is
    held back: the tool's run goes at once, not once the pause would have been told."""
    monkeypatch.setattr(pi_stream, "progress_interval", lambda chars: 0.5)
    broadcast = await _begun(heard, idle=0.6)  # the pacer waits for a change
    broadcast.take(END[0])
    await asyncio.sleep(0.05)
    broadcast.take({"type": "tool_execution_start", "toolCallId": "call-1", "toolName": "bash", "args": {}})
    running = await heard(0.3)  # not once the pause's 0.5 s are over
    assert running["type"] == "pi.progress" and [tool["name"] for tool in running["stream"]["running"]] == ["bash"]


async def test_a_text_that_begins_empty_is_told_with_its_first_words(heard, monkeypatch) -> None:
    """pi says a text part begins, then its first words, in two reads: the part's start shows nothing,
    so it is not a progress of its own that would hold the first words back for an interval."""
    monkeypatch.setattr(pi_stream, "progress_interval", lambda chars: 0.3)
    broadcast = await _begun(heard, START[:2], idle=0.5)  # the pacer waits for a change
    broadcast.take(START[2])  # text_start
    await asyncio.sleep(0.05)
    broadcast.take(_delta("first words"))
    assert _text(await heard(0.2)) == "first words"  # not held for the 0.3 s after an empty part's start
