"""The offline responder: deterministic per branch, different between siblings, streamed with a delay,
clearly labelled, pi-shaped usage."""

from __future__ import annotations

import asyncio
import time

import pytest

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


async def chunks(variant: int = 0, delay: float = 0) -> list[str]:
    return [chunk async for chunk in OfflineAssistant(delay=delay).reply(CONVERSATION, variant=variant)]


def test_label_says_offline_and_entry_fields_are_fixed() -> None:
    assistant = OfflineAssistant(delay=0)
    assert "offline" in assistant.label.lower()
    assert assistant.info() == {
        "name": "offline",
        "label": assistant.label,
        "server": "",  # nowhere: it answers in the process
        "provider": "pitree",
        "model": "offline-echo",
        "api": "pitree-offline",
    }


async def test_same_branch_gives_the_same_chunks() -> None:
    first, second = await chunks(), await chunks()
    assert first == second
    assert len(first) >= 2


async def test_sibling_answers_differ_and_each_stays_deterministic() -> None:
    texts = ["".join(await chunks(variant)) for variant in range(4)]
    assert len(set(texts)) == 4
    assert texts[2] == "".join(await chunks(2))


async def test_reply_reflects_the_last_user_message_in_markdown() -> None:
    reply = await OfflineAssistant(delay=0).reply(CONVERSATION).collect()
    assert "> Please explain `asyncio` gather semantics?" in reply.text
    assert "- Words: 5" in reply.text
    assert "- Images attached: 1" in reply.text
    assert "reads like a question" in reply.text
    assert "turn 2" in reply.text and "1 earlier assistant reply" in reply.text
    assert (reply.stop_reason, reply.error_message) == ("stop", None)


async def test_usage_is_complete_estimated_and_free() -> None:
    reply = await OfflineAssistant(delay=0).reply(CONVERSATION).collect()
    assert set(reply.usage) == USAGE_KEYS and set(reply.usage["cost"]) == COST_KEYS
    assert reply.usage["output"] == -(-len(reply.text) // 4)
    assert reply.usage["input"] > 1200  # the text estimate plus 1200 for the image
    assert reply.usage["totalTokens"] == reply.usage["input"] + reply.usage["output"]
    assert all(value == 0 for value in reply.usage["cost"].values())


async def test_draft_is_a_pi_assistant_message() -> None:
    reply = await OfflineAssistant(delay=0).reply(CONVERSATION).collect()
    draft = reply.draft()
    message = draft.fields["message"]
    assert draft.type == "message"
    assert message["role"] == "assistant"
    assert message["content"] == [{"type": "text", "text": reply.text}]
    assert (message["provider"], message["model"], message["api"]) == ("pitree", "offline-echo", "pitree-offline")
    assert message["stopReason"] == "stop" and "errorMessage" not in message


async def test_nothing_to_answer() -> None:
    reply = await OfflineAssistant(delay=0).reply([]).collect()
    assert reply.stop_reason == "stop" and "no user message" in reply.text


async def test_models_lists_its_one_model_and_another_is_an_error_reply() -> None:
    assistant = OfflineAssistant(delay=0)
    assert await assistant.models() == ["offline-echo"]
    reply = await assistant.reply(CONVERSATION, model="gpt-4o").collect()
    assert (reply.text, reply.stop_reason, reply.model) == ("", "error", "gpt-4o")
    assert "offline-echo" in (reply.error_message or "")


async def test_delay_separates_chunks() -> None:
    started = time.monotonic()
    pieces = await chunks(delay=0.01)
    assert time.monotonic() - started >= 0.01 * (len(pieces) - 1)  # a lower bound: sleeps never end early


async def test_stopping_during_the_delay_ends_at_once_with_the_text_so_far() -> None:
    reply = OfflineAssistant(delay=30).reply(CONVERSATION)
    first = asyncio.Event()

    async def read() -> None:
        async for _ in reply:
            first.set()

    task = asyncio.create_task(read())
    await first.wait()
    task.cancel()  # while the responder waits 30 s before its next chunk
    with pytest.raises(asyncio.CancelledError):
        await task
    assert reply.stop_reason == "aborted" and reply.error_message
    assert reply.text and reply.text.startswith("**Offline responder**")


async def test_summary_is_deterministic_and_lists_user_messages() -> None:
    messages = [
        {"role": "user", "content": [{"type": "text", "text": COMPACTION_PREFIX + "old stuff\n</summary>"}]},
        *CONVERSATION,
        {"role": "toolResult", "toolName": "read", "content": [{"type": "text", "text": "x"}], "isError": False},
    ]
    first = await OfflineAssistant().summarize(messages, instructions="Keep the API names").collect()
    second = await OfflineAssistant().summarize(messages, instructions="Keep the API names").collect()
    assert first.text == second.text
    assert first.stop_reason == "stop"
    assert "3 user messages, 1 assistant reply, 1 tool result." in first.text
    assert "- (the summary of an earlier part)" in first.text
    assert "- Hello" in first.text
    assert "- Please explain `asyncio` gather semantics?" in first.text
    assert first.text.endswith("Keep the API names")
    assert first.usage["output"] > 0
