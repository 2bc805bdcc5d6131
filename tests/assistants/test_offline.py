"""The offline responder: deterministic, streamed, clearly labelled, pi-shaped usage."""

from __future__ import annotations

import time

from sessions_app.assistants import OfflineAssistant
from sessions_app.sessionfiles.context import COMPACTION_PREFIX

USAGE_KEYS = {"input", "output", "cacheRead", "cacheWrite", "totalTokens", "cost"}
COST_KEYS = {"input", "output", "cacheRead", "cacheWrite", "total"}

CONVERSATION = [
    {"role": "user", "content": "Hello", "timestamp": 1},
    {"role": "assistant", "content": [{"type": "text", "text": "Hi!"}], "stopReason": "stop"},
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "Please explain `asyncio` gather semantics?"},
            {"type": "image", "data": "QUJD", "mimeType": "image/png"},
        ],
    },
]


def test_label_says_offline_and_entry_fields_are_fixed() -> None:
    assistant = OfflineAssistant(delay=0)
    assert "offline" in assistant.label.lower()
    assert assistant.info() == {
        "name": "offline",
        "label": assistant.label,
        "provider": "pitree",
        "model": "offline-echo",
        "api": "pitree-offline",
    }


def test_same_context_gives_the_same_chunks() -> None:
    first = list(OfflineAssistant(delay=0).stream(CONVERSATION))
    second = list(OfflineAssistant(delay=0).stream(CONVERSATION))
    assert first == second
    assert len(first) >= 2


def test_reply_reflects_the_last_user_message_in_markdown() -> None:
    stream = OfflineAssistant(delay=0).stream(CONVERSATION)
    chunks = list(stream)
    reply = stream.reply
    assert reply.text == "".join(chunks)
    assert "> Please explain `asyncio` gather semantics?" in reply.text
    assert "- Words: 5" in reply.text
    assert "- Longest word: `semantics?`" in reply.text
    assert "- Images attached: 1" in reply.text
    assert "turn 2" in reply.text and "1 earlier assistant reply" in reply.text
    assert (reply.stop_reason, reply.error_message) == ("stop", None)


def test_usage_is_complete_estimated_and_free() -> None:
    reply = OfflineAssistant(delay=0).stream(CONVERSATION).collect()
    assert set(reply.usage) == USAGE_KEYS and set(reply.usage["cost"]) == COST_KEYS
    assert reply.usage["output"] == -(-len(reply.text) // 4)
    assert reply.usage["input"] > 1200  # text estimate plus 1200 for the image
    assert reply.usage["totalTokens"] == reply.usage["input"] + reply.usage["output"]
    assert all(value == 0 for value in reply.usage["cost"].values())


def test_draft_is_a_pi_assistant_message() -> None:
    reply = OfflineAssistant(delay=0).stream(CONVERSATION).collect()
    draft = reply.draft(timestamp_ms=123)
    message = draft.fields["message"]
    assert draft.type == "message"
    assert message["role"] == "assistant"
    assert message["content"] == [{"type": "text", "text": reply.text}]
    assert (message["provider"], message["model"], message["api"]) == ("pitree", "offline-echo", "pitree-offline")
    assert message["stopReason"] == "stop" and "errorMessage" not in message
    assert message["timestamp"] == 123


def test_nothing_to_answer() -> None:
    reply = OfflineAssistant(delay=0).stream([]).collect()
    assert reply.stop_reason == "stop" and "no user message" in reply.text


def test_delay_separates_chunks() -> None:
    stream = OfflineAssistant(delay=0.01).stream(CONVERSATION)
    started = time.monotonic()
    chunks = list(stream)
    assert time.monotonic() - started >= 0.01 * (len(chunks) - 1) * 0.9


def test_cancel_mid_reply_is_aborted_with_the_text_so_far() -> None:
    stream = OfflineAssistant(delay=0).stream(CONVERSATION)
    reader = iter(stream)
    first = next(reader)
    stream.cancel()
    assert list(reader) == []
    assert (stream.reply.text, stream.reply.stop_reason) == (first, "aborted")
    assert stream.reply.error_message


def test_breaking_out_of_the_loop_leaves_an_aborted_reply() -> None:
    stream = OfflineAssistant(delay=0).stream(CONVERSATION)
    for chunk in stream:  # noqa: B007 - the loop is left early on purpose
        break
    assert stream.done and stream.reply.text == chunk and stream.reply.stop_reason == "aborted"


async def test_async_iteration_gives_the_same_chunks() -> None:
    stream = OfflineAssistant(delay=0).stream(CONVERSATION)
    chunks = [chunk async for chunk in stream]
    assert chunks == list(OfflineAssistant(delay=0).stream(CONVERSATION))
    assert stream.reply.stop_reason == "stop"


def test_summary_is_deterministic_and_lists_user_messages() -> None:
    messages = [
        {"role": "user", "content": [{"type": "text", "text": COMPACTION_PREFIX + "old stuff\n</summary>"}]},
        *CONVERSATION,
        {"role": "toolResult", "toolName": "read", "content": [{"type": "text", "text": "x"}], "isError": False},
    ]
    first = OfflineAssistant().summarize(messages, instructions="Keep the API names")
    second = OfflineAssistant().summarize(messages, instructions="Keep the API names")
    assert first == second
    assert first.stop_reason == "stop"
    assert "3 user messages, 1 assistant reply, 1 tool result." in first.text
    assert "- (the summary of an earlier part of the conversation)" in first.text
    assert "- Hello" in first.text
    assert "- Please explain `asyncio` gather semantics?" in first.text
    assert first.text.endswith("Keep the API names")
    assert first.usage["output"] > 0


def test_cancel_during_the_delay_wakes_the_reader_at_once() -> None:
    import threading

    stream = OfflineAssistant(delay=30).stream(CONVERSATION)
    reader = iter(stream)
    next(reader)
    threading.Timer(0.05, stream.cancel).start()
    started = time.monotonic()
    assert list(reader) == []
    assert time.monotonic() - started < 5
    assert stream.reply.stop_reason == "aborted" and stream.reply.error_message
