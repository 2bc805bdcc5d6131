"""``Reply``: one stored reply per call, whatever the backend does, with exactly the text that was shown."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from sessions_app.assistants.base import (
    ABORTED_MESSAGE,
    INTERNAL_ERROR,
    AssistantError,
    Deltas,
    Finish,
    Reply,
    make_usage,
)


def reply_of(deltas: Deltas) -> Reply:
    return Reply(deltas, provider="p", model="m", api="a")


async def test_deltas_are_handed_out_and_assembled_empty_ones_skipped() -> None:
    async def deltas() -> Deltas:
        yield "a"
        yield ""
        yield "b"
        yield Finish("length", 3, 2)

    reply = reply_of(deltas())
    assert [delta async for delta in reply] == ["a", "b"]
    assert (reply.text, reply.stop_reason, reply.error_message, reply.ok) == ("ab", "length", None, True)
    assert reply.usage["totalTokens"] == 5


async def test_a_backend_that_ends_without_finish_has_stopped_with_zero_usage() -> None:
    async def deltas() -> Deltas:
        yield "x"

    reply = await reply_of(deltas()).collect()
    assert (reply.stop_reason, reply.usage) == ("stop", make_usage(0, 0))


async def test_an_expected_failure_keeps_the_text_and_says_why() -> None:
    async def deltas() -> Deltas:
        yield "partial"
        raise AssistantError("Timed out after 1 s waiting for the server")

    reply = await reply_of(deltas()).collect()
    assert (reply.text, reply.stop_reason, reply.ok) == ("partial", "error", False)
    assert reply.error_message == "Timed out after 1 s waiting for the server"


async def test_a_backend_bug_becomes_an_error_reply() -> None:
    async def deltas() -> Deltas:
        yield "partial"
        raise KeyError("oops")

    reply = await reply_of(deltas()).collect()
    assert (reply.text, reply.stop_reason) == ("partial", "error")
    assert reply.error_message == INTERNAL_ERROR and "oops" not in reply.error_message  # the log has it


async def test_a_reply_is_read_once() -> None:
    async def deltas() -> Deltas:
        yield "x"

    reply = await reply_of(deltas()).collect()
    with pytest.raises(RuntimeError):
        await reply.collect()


async def test_leaving_the_loop_early_stores_what_was_shown_as_aborted() -> None:
    closed = asyncio.Event()

    async def deltas() -> Deltas:
        try:
            yield "one "
            yield "two"
        finally:
            closed.set()  # the backend is closed too: its connection is released

    reply = reply_of(deltas())
    async for _ in reply:
        break
    message = reply.draft().fields["message"]
    assert (message["content"], message["stopReason"]) == ([{"type": "text", "text": "one "}], "aborted")

    reply = reply_of(deltas())
    async with contextlib.aclosing(aiter(reply)) as reading:
        async for _ in reading:
            break
    assert closed.is_set()
    assert (reply.text, reply.stop_reason, reply.error_message) == ("one ", "aborted", ABORTED_MESSAGE)


async def test_cancelling_the_reading_task_stops_the_reply_with_the_text_so_far() -> None:
    first = asyncio.Event()

    async def deltas() -> Deltas:
        yield "started "
        first.set()
        await asyncio.Event().wait()  # a server that goes silent
        yield "never"

    reply = reply_of(deltas())
    task = asyncio.create_task(reply.collect())
    await first.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert (reply.text, reply.stop_reason) == ("started ", "aborted")


async def test_draft_is_the_entry_to_store_and_an_unread_reply_is_stored_as_aborted() -> None:
    async def deltas() -> Deltas:
        yield "hi"
        yield Finish()

    finished = await reply_of(deltas()).collect()
    message = finished.draft().fields["message"]
    assert message["content"] == [{"type": "text", "text": "hi"}]
    assert (message["provider"], message["model"], message["api"], message["stopReason"]) == ("p", "m", "a", "stop")
    assert "errorMessage" not in message and set(message["usage"]) == set(make_usage(0, 0))

    unread = reply_of(deltas()).draft().fields["message"]
    assert (unread["content"], unread["stopReason"], unread["errorMessage"]) == ([], "aborted", ABORTED_MESSAGE)
