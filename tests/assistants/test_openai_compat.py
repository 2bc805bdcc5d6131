"""The OpenAI-compatible backend against a local fake server: real HTTP, server-sent events."""

from __future__ import annotations

import asyncio
import json
import threading
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest
from support.fake_openai import (
    USAGE,
    FakeOpenAI,
    chunk,
    send_event,
    send_json,
    sse,
    stall_after,
    start_sse,
)

from sessions_app.assistants import AssistantError, Reply, get_assistant
from sessions_app.assistants.failures import CLOSED_EARLY, MALFORMED
from sessions_app.assistants.openai_compat import SUMMARY_SYSTEM_PROMPT, OpenAICompatAssistant, to_openai_messages

CONVERSATION = [
    {"role": "user", "content": "Hi there", "timestamp": 1},
    {
        "role": "assistant",
        "content": [{"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": "Hello!"}],
        "stopReason": "stop",
    },
    {"role": "user", "content": [{"type": "text", "text": "Line one"}, {"type": "text", "text": "Line two"}]},
]


def backend(server: FakeOpenAI, **overrides: Any) -> OpenAICompatAssistant:
    options: dict[str, Any] = {"base_url": server.base_url, "model": "test-model", "api_key": "sk-test", "timeout": 5}
    return OpenAICompatAssistant(**{**options, **overrides})


async def ask(server: FakeOpenAI, **overrides: Any) -> Reply:
    return await backend(server, **overrides).reply(CONVERSATION).collect()


# -- streaming --------------------------------------------------------------------------------


async def test_streams_chunks_in_order_and_sends_the_converted_request(fake: FakeOpenAI) -> None:
    reply = backend(fake).reply(CONVERSATION)
    assert [piece async for piece in reply] == ["Hel", "lo", " world"]
    assert (reply.text, reply.stop_reason, reply.error_message) == ("Hello world", "stop", None)
    assert reply.usage == {
        "input": 20,
        "output": 7,
        "cacheRead": 100,
        "cacheWrite": 0,
        "totalTokens": 127,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }
    assert (reply.provider, reply.model, reply.api) == ("openai-compatible", "test-model", "openai-completions")

    [request] = fake.requests
    assert (request.method, request.path) == ("POST", "/v1/chat/completions")
    assert request.headers["authorization"] == "Bearer sk-test"
    assert request.headers["content-type"] == "application/json"
    assert request.body == {
        "model": "test-model",
        "messages": [
            {"role": "user", "content": "Hi there"},
            {"role": "assistant", "content": "Hello!"},
            {"role": "user", "content": "Line one\nLine two"},
        ],
        "stream": True,
        "stream_options": {"include_usage": True},
    }


async def test_each_chunk_reaches_the_reader_before_the_server_sends_the_next(fake: FakeOpenAI) -> None:
    sent_second = threading.Event()
    reader_got_first = threading.Event()

    def respond(handler: BaseHTTPRequestHandler, server: FakeOpenAI) -> None:
        start_sse(handler)
        send_event(handler, chunk("first"))
        reader_got_first.wait(10)
        send_event(handler, chunk(" second", finish="stop"))
        sent_second.set()
        send_event(handler, "[DONE]")

    fake.respond = respond
    reading = aiter(backend(fake).reply(CONVERSATION))
    assert await anext(reading) == "first"
    assert not sent_second.is_set()
    reader_got_first.set()
    assert [piece async for piece in reading] == [" second"]


async def test_a_model_asked_for_is_sent_and_stored(fake: FakeOpenAI) -> None:
    reply = await backend(fake).reply(CONVERSATION, model="other-model").collect()
    assert fake.requests[0].body["model"] == "other-model" and reply.model == "other-model"
    assert reply.draft().fields["message"]["model"] == "other-model"


async def test_no_key_means_no_authorization_header(fake: FakeOpenAI) -> None:
    assert (await ask(fake, api_key="")).text == "Hello world"
    assert "authorization" not in fake.requests[0].headers


async def test_trailing_slash_in_base_url_and_credentials_never_shown(fake: FakeOpenAI) -> None:
    fake.respond = lambda handler, server: send_json(handler, 401, {"error": {"message": "No entry"}})
    assistant = backend(fake, base_url=f"http://user:secret@127.0.0.1:{fake.port}/v1/")
    reply = await assistant.reply(CONVERSATION).collect()
    assert fake.requests[0].path == "/v1/chat/completions"
    assert "secret" not in assistant.label + assistant.endpoint + (reply.error_message or "")
    assert reply.error_message == (
        "The model server refused pitree's credentials (HTTP 401: No entry): "
        "ask whoever runs this pitree to check its API key."
    )


async def test_a_key_echoed_by_the_server_is_masked(fake: FakeOpenAI) -> None:
    fake.respond = lambda handler, server: send_json(handler, 401, {"error": {"message": "Bad key sk-test given"}})
    reply = await ask(fake)
    assert "(HTTP 401: Bad key *** given)" in (reply.error_message or "")


@pytest.mark.parametrize(("finish", "expected"), [("length", "length"), ("tool_calls", "stop"), ("stop", "stop")])
async def test_finish_reason_maps_to_stop_reason(fake: FakeOpenAI, finish: str, expected: str) -> None:
    fake.respond = lambda handler, server: sse(handler, [chunk("x"), chunk(finish=finish)])
    reply = await ask(fake)
    assert reply.stop_reason == expected
    assert reply.usage["totalTokens"] == 0  # a server that ignores include_usage sends none


async def test_odd_usage_fields_count_as_zero(fake: FakeOpenAI) -> None:
    odd = {"prompt_tokens": "x", "completion_tokens": None, "prompt_tokens_details": None}
    fake.respond = lambda handler, server: sse(handler, [chunk("x", finish="stop"), {"choices": [], "usage": odd}])
    reply = await ask(fake)
    assert (reply.stop_reason, reply.usage["input"], reply.usage["output"], reply.usage["totalTokens"]) == (
        "stop",
        0,
        0,
        0,
    )


async def test_stream_without_done_but_with_finish_reason_is_complete(fake: FakeOpenAI) -> None:
    fake.respond = lambda handler, server: sse(handler, [chunk("ok", finish="stop")], done=False)
    reply = await ask(fake)
    assert (reply.text, reply.stop_reason) == ("ok", "stop")


async def test_comments_and_other_sse_fields_are_ignored(fake: FakeOpenAI) -> None:
    def respond(handler: BaseHTTPRequestHandler, server: FakeOpenAI) -> None:
        start_sse(handler)
        handler.wfile.write(b": keep-alive\r\n\r\nevent: message\r\nid: 1\r\n")
        handler.wfile.write(b"data: " + json.dumps(chunk("caf\u00e9")).encode() + b"\r\n\r\n")
        send_event(handler, chunk(finish="stop"))
        send_event(handler, "[DONE]")

    fake.respond = respond
    assert (await ask(fake)).text == "caf\u00e9"


async def test_a_server_that_ignores_stream_true_still_works(fake: FakeOpenAI) -> None:
    body = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "whole"}, "finish_reason": "length"}]}
    fake.respond = lambda handler, server: send_json(handler, 200, {**body, "usage": USAGE})
    reply = await ask(fake)
    assert (reply.text, reply.stop_reason, reply.usage["output"]) == ("whole", "length", 7)


# -- failures ---------------------------------------------------------------------------------


async def test_connection_refused(closed_port: int) -> None:
    assistant = OpenAICompatAssistant(f"http://127.0.0.1:{closed_port}/v1", "m", timeout=5)
    reply = await assistant.reply(CONVERSATION).collect()
    assert (reply.text, reply.stop_reason) == ("", "error")
    assert reply.error_message == (
        "The model server refused the connection: it may not be running. Try again, or pick another model."
    )


async def test_timeout_before_any_byte(fake: FakeOpenAI) -> None:
    fake.respond = lambda handler, server: server.release.wait(30)
    reply = await ask(fake, timeout=0.2)
    assert (reply.text, reply.stop_reason) == ("", "error")
    assert reply.error_message == "The model server did not answer within 0.2 s. Try again, or pick another model."


async def test_timeout_mid_stream_keeps_the_text_as_an_error(fake: FakeOpenAI) -> None:
    fake.respond = stall_after("partial ")
    # Long enough for the first chunk to arrive on a loaded machine; the stall outlasts any timeout.
    reply = await ask(fake, timeout=2)
    assert (reply.text, reply.stop_reason) == ("partial ", "error")
    assert reply.error_message == "The model server did not answer within 2 s. Try again, or pick another model."


@pytest.mark.parametrize(
    ("status", "body", "message"),
    [
        (
            401,
            {"error": {"message": "Invalid API key", "type": "invalid_request_error"}},
            "The model server refused pitree's credentials (HTTP 401: Invalid API key): ask whoever runs this "
            "pitree to check its API key.",
        ),
        (  # llama.cpp / Ollama shape
            500,
            {"error": "model failed to load"},
            "The model server answered with an error (HTTP 500: model failed to load). Try again, or pick another "
            "model.",
        ),
        (
            422,
            {"detail": [{"loc": ["body", "model"], "msg": "field required"}]},
            'The model server answered with an error (HTTP 422: [{"loc": ["body", "model"], "msg": "field required"}]). '
            "Try again, or pick another model.",
        ),
        (
            404,
            {"message": "model 'x' not found"},
            "The model server does not know this model (HTTP 404: model 'x' not found). Pick another model.",
        ),
        (
            400,
            {"error": {"message": "This model's maximum context length is 8192 tokens", "code": "x"}},
            "The conversation is too long for this model (HTTP 400: This model's maximum context length is 8192 "
            "tokens). Compact the history (below the conversation), or pick a model with a longer context.",
        ),
        (
            429,
            {"error": "slow down"},
            "The model server is busy or over its quota (HTTP 429: slow down). Try again in a moment, or pick "
            "another model.",
        ),
        (  # a proxy that names its upstream: the address is not kept
            502,
            "upstream connect error to http://10.0.0.7:8080/v1 (10.0.0.7:8080)",
            "The model server answered with an error (HTTP 502: upstream connect error to … (…)). Try again, or "
            "pick another model.",
        ),
        (  # no message: the status phrase
            503,
            {},
            "The model server answered with an error (HTTP 503: Service Unavailable). Try again, or pick another "
            "model.",
        ),
    ],
)
async def test_http_errors_say_what_went_wrong_and_what_to_do(
    fake: FakeOpenAI, status: int, body: Any, message: str
) -> None:
    fake.respond = lambda handler, server: send_json(handler, status, body)
    reply = await ask(fake)
    assert (reply.stop_reason, reply.error_message) == ("error", message)
    assert len(fake.requests) == 1  # no retries unless asked for


async def test_retries_come_from_the_settings(fake: FakeOpenAI, settings) -> None:
    settings.PITREE_ASSISTANT = "openai"
    settings.PITREE_OPENAI_BASE_URL = fake.base_url
    settings.PITREE_OPENAI_MAX_RETRIES = 1
    fake.respond = lambda handler, server: send_json(handler, 503, {"error": "loading model"})
    reply = await get_assistant().reply(CONVERSATION).collect()
    assert reply.stop_reason == "error" and len(fake.requests) == 2


async def test_malformed_sse_line_ends_with_error_and_keeps_text(fake: FakeOpenAI) -> None:
    fake.respond = lambda handler, server: sse(handler, [chunk("good "), "{not json"])
    reply = await ask(fake)
    assert (reply.text, reply.stop_reason) == ("good ", "error")
    assert reply.error_message == MALFORMED


@pytest.mark.parametrize("choices", ["nope", [1, 2]])
async def test_choices_that_are_not_a_list_of_objects_are_malformed(fake: FakeOpenAI, choices: Any) -> None:
    fake.respond = lambda handler, server: sse(handler, [chunk("so far "), {"choices": choices}])
    reply = await ask(fake)
    assert (reply.text, reply.stop_reason) == ("so far ", "error")
    assert reply.error_message == MALFORMED


@pytest.mark.parametrize(
    ("event", "message"),
    [
        (
            {"error": {"message": "context length exceeded"}},
            "The conversation is too long for this model (context length exceeded). Compact the history (below "
            "the conversation), or pick a model with a longer context.",
        ),
        (
            {"error": "boom"},
            "The model server stopped with an error (boom). Try again, or pick another model.",
        ),
    ],
)
async def test_error_event_inside_the_stream(fake: FakeOpenAI, event: Any, message: str) -> None:
    fake.respond = lambda handler, server: sse(handler, [chunk("so far"), event])
    reply = await ask(fake)
    assert (reply.text, reply.stop_reason) == ("so far", "error")
    assert reply.error_message == message


async def test_stream_cut_off_before_the_end(fake: FakeOpenAI) -> None:
    fake.respond = lambda handler, server: sse(handler, [chunk("half")], done=False)
    reply = await ask(fake)
    assert (reply.text, reply.stop_reason) == ("half", "error")
    assert reply.error_message == CLOSED_EARLY


async def test_bad_base_url_is_an_error_reply_not_an_exception() -> None:
    reply = await OpenAICompatAssistant("ftp://example.invalid/v1", "m").reply(CONVERSATION).collect()
    assert reply.stop_reason == "error" and "PITREE_OPENAI_BASE_URL" in (reply.error_message or "")


async def test_cancelling_the_reading_task_stops_a_waiting_read(fake: FakeOpenAI) -> None:
    fake.respond = stall_after("started ")
    reply = backend(fake, timeout=30).reply(CONVERSATION)
    got_first = asyncio.Event()

    async def read() -> None:
        async for _ in reply:
            got_first.set()

    task = asyncio.create_task(read())
    await asyncio.wait_for(got_first.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert (reply.text, reply.stop_reason) == ("started ", "aborted")


# -- models -----------------------------------------------------------------------------------


async def test_models_are_listed_and_cached_briefly(fake: FakeOpenAI) -> None:
    def listing(handler: BaseHTTPRequestHandler, server: FakeOpenAI) -> None:
        send_json(handler, 200, {"object": "list", "data": [{"id": "b-model"}, {"id": "a-model"}]})

    fake.list_models = listing
    assistant = backend(fake, base_url=fake.base_url + "/")  # its own cache entry
    assert await assistant.models() == ["a-model", "b-model"]
    assert await backend(fake, base_url=fake.base_url + "/").models() == ["a-model", "b-model"]
    assert [(r.method, r.path) for r in fake.requests] == [("GET", "/v1/models")]
    assert fake.requests[0].headers["authorization"] == "Bearer sk-test"


async def test_models_errors_say_why(fake: FakeOpenAI, closed_port: int) -> None:
    fake.list_models = lambda handler, server: send_json(handler, 404, {"error": "no such route"})
    with pytest.raises(AssistantError, match=r"\(HTTP 404: no such route\)"):
        await backend(fake, api_key="another").models()
    refused = OpenAICompatAssistant(f"http://127.0.0.1:{closed_port}/v1", "m")
    with pytest.raises(AssistantError, match="refused the connection"):
        await refused.models()
    fake.list_models = lambda handler, server: send_json(handler, 200, {"data": "nope"})
    with pytest.raises(AssistantError, match="list of models cannot be read"):
        await backend(fake, api_key="a third").models()


# -- summaries --------------------------------------------------------------------------------


async def test_summarize_sends_a_summarisation_prompt(fake: FakeOpenAI) -> None:
    fake.respond = lambda handler, server: sse(handler, [chunk("## Goal\n"), chunk("Greet.", finish="stop")])
    reply = await backend(fake).summarize(CONVERSATION, instructions="Focus on greetings").collect()
    assert (reply.text, reply.stop_reason) == ("## Goal\nGreet.", "stop")
    messages = fake.requests[0].body["messages"]
    assert messages[0] == {"role": "system", "content": SUMMARY_SYSTEM_PROMPT}
    prompt = messages[1]["content"]
    assert "User: Hi there" in prompt and "Assistant: Hello!" in prompt and "hmm" not in prompt
    assert prompt.rstrip().endswith("Focus on greetings")


async def test_summarize_errors_like_replies(closed_port: int) -> None:
    reply = await OpenAICompatAssistant(f"http://127.0.0.1:{closed_port}", "m").summarize(CONVERSATION).collect()
    assert reply.stop_reason == "error" and "refused the connection" in (reply.error_message or "")


# -- pure conversions -------------------------------------------------------------------------


def test_message_conversion_covers_images_tools_and_merging() -> None:
    messages = [
        {"role": "system", "content": [{"type": "text", "text": "Be brief."}]},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is this?"},
                {"type": "image", "data": "QUJD", "mimeType": "image/png"},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Let me look."},
                {"type": "toolCall", "id": "t1", "name": "read", "arguments": {"path": "ä.py"}},
            ],
            "stopReason": "toolUse",
        },
        {
            "role": "toolResult",
            "toolCallId": "t1",
            "toolName": "read",
            "content": [{"type": "text", "text": "print(1)"}],
            "isError": False,
        },
        {"role": "assistant", "content": [{"type": "text", "text": "half"}], "stopReason": "aborted"},
        {"role": "user", "content": "Go on"},
        {"role": "assistant", "content": [], "stopReason": "error", "errorMessage": "boom"},
        {"role": "user", "content": [{"type": "image", "data": "REVG", "mimeType": "image/jpeg"}]},
    ]
    assert to_openai_messages(messages) == [
        {"role": "system", "content": "Be brief."},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is this?"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,QUJD"}},
            ],
        },
        {"role": "assistant", "content": 'Let me look.\n[Tool call read {"path": "ä.py"}]'},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "[Tool result from read]\nprint(1)\n\nGo on"},
                {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,REVG"}},
            ],
        },
    ]
