"""``ReplyStream``: one reply per call, whatever the backend does."""

from __future__ import annotations

from collections.abc import Generator

import pytest

from sessions_app.assistants.base import Cancel, Finish, ReplyStream


def stream_of(produce) -> ReplyStream:  # type: ignore[no-untyped-def]
    return ReplyStream(produce, provider="p", model="m", api="a")


def test_empty_chunks_are_skipped_and_text_is_assembled() -> None:
    def produce(cancel: Cancel) -> Generator[str, None, Finish]:
        yield "a"
        yield ""
        yield "b"
        return Finish("length")

    stream = stream_of(produce)
    assert list(stream) == ["a", "b"]
    assert (stream.reply.text, stream.reply.stop_reason, stream.reply.usage["totalTokens"]) == ("ab", "length", 0)


def test_a_backend_bug_becomes_an_error_reply() -> None:
    def produce(cancel: Cancel) -> Generator[str, None, Finish]:
        yield "partial"
        raise KeyError("oops")

    reply = stream_of(produce).collect()
    assert (reply.text, reply.stop_reason) == ("partial", "error")
    assert reply.error_message == "Internal error: KeyError: 'oops'"


def test_reply_before_the_end_and_second_read_are_refused() -> None:
    def produce(cancel: Cancel) -> Generator[str, None, Finish]:
        yield "x"
        return Finish()

    stream = stream_of(produce)
    with pytest.raises(RuntimeError):
        _ = stream.reply
    stream.collect()
    with pytest.raises(RuntimeError):
        list(stream)


def test_close_before_reading_gives_an_empty_aborted_reply() -> None:
    def produce(cancel: Cancel) -> Generator[str, None, Finish]:
        yield "never"
        return Finish()

    reply = stream_of(produce).close()
    assert (reply.text, reply.stop_reason) == ("", "aborted")


def test_close_after_the_end_keeps_the_finished_reply() -> None:
    def produce(cancel: Cancel) -> Generator[str, None, Finish]:
        yield "done"
        return Finish()

    stream = stream_of(produce)
    stream.collect()
    assert stream.close().stop_reason == "stop"
