"""The OpenAI-compatible backend against a small local fake server that streams SSE."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from sessions_app.assistants import OpenAICompatAssistant
from sessions_app.assistants.openai_compat import (
    SUMMARY_SYSTEM_PROMPT,
    to_openai_messages,
    usage_from_openai,
)

Respond = Callable[[BaseHTTPRequestHandler, "FakeServer"], None]


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


class _Handler(BaseHTTPRequestHandler):
    server: _Server  # type: ignore[assignment]

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        fake = self.server.fake
        fake.requests.append(Recorded("POST", self.path, dict(self.headers.items()), json.loads(raw or b"null")))
        fake.respond(self, fake)

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        pass


class _Server(ThreadingHTTPServer):
    fake: FakeServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # the client hanging up mid-response is part of several tests


class FakeServer:
    """Records each request; ``respond`` (set by the test) writes the response."""

    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self.respond: Respond = lambda handler, fake: sse(handler, [])
        self.release = threading.Event()  # set at teardown: ends any stalled response
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.fake = self
        self.port = self._httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.endpoint = f"{self.base_url}/chat/completions"
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.02,), daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self.release.set()
        self._httpd.shutdown()
        self._httpd.server_close()


def chunk(content: str | None = None, finish: str | None = None, **delta: Any) -> dict[str, Any]:
    """One ``chat.completion.chunk`` event, as OpenAI streams them."""
    if content is not None:
        delta["content"] = content
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "model": "fake-model",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def start_sse(handler: BaseHTTPRequestHandler) -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream")
    handler.send_header("Cache-Control", "no-cache")
    handler.end_headers()


def send_event(handler: BaseHTTPRequestHandler, event: dict[str, Any] | str) -> None:
    data = event if isinstance(event, str) else json.dumps(event)
    handler.wfile.write(f"data: {data}\n\n".encode())
    handler.wfile.flush()


def sse(handler: BaseHTTPRequestHandler, events: list[dict[str, Any] | str], done: bool = True) -> None:
    start_sse(handler)
    for event in events:
        send_event(handler, event)
    if done:
        send_event(handler, "[DONE]")


def send_json(handler: BaseHTTPRequestHandler, status: int, body: Any) -> None:
    raw = body.encode() if isinstance(body, str) else json.dumps(body).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json" if not isinstance(body, str) else "text/plain")
    handler.send_header("Content-Length", str(len(raw)))
    handler.end_headers()
    handler.wfile.write(raw)


@pytest.fixture
def fake_server() -> Iterator[FakeServer]:
    server = FakeServer()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def closed_port() -> int:
    """A local port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# -- helpers ----------------------------------------------------------------------------------

CONVERSATION = [
    {"role": "user", "content": "Hi there", "timestamp": 1},
    {
        "role": "assistant",
        "content": [{"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": "Hello!"}],
        "stopReason": "stop",
    },
    {"role": "user", "content": [{"type": "text", "text": "Line one"}, {"type": "text", "text": "Line two"}]},
]

USAGE = {
    "prompt_tokens": 120,
    "completion_tokens": 7,
    "total_tokens": 127,
    "prompt_tokens_details": {"cached_tokens": 100},
}


def backend(server: FakeServer, **overrides: Any) -> OpenAICompatAssistant:
    options: dict[str, Any] = {"base_url": server.base_url, "model": "test-model", "api_key": "sk-test", "timeout": 5}
    options.update(overrides)
    return OpenAICompatAssistant(**options)


def happy(handler: BaseHTTPRequestHandler, fake: FakeServer) -> None:
    sse(
        handler,
        [
            chunk(role="assistant", content=""),
            chunk("Hel"),
            chunk("lo"),
            chunk(" world"),
            chunk(finish="stop"),
            {"id": "chatcmpl-1", "choices": [], "usage": USAGE},
        ],
    )


def stall_after(first: str) -> Respond:
    """Send one chunk, then go silent until the test ends."""

    def respond(handler: BaseHTTPRequestHandler, fake: FakeServer) -> None:
        start_sse(handler)
        send_event(handler, chunk(first))
        fake.release.wait(10)

    return respond


# -- streaming --------------------------------------------------------------------------------


def test_streams_chunks_in_order_and_sends_the_converted_request(fake_server: FakeServer) -> None:
    fake_server.respond = happy
    stream = backend(fake_server).stream(CONVERSATION)

    assert list(stream) == ["Hel", "lo", " world"]

    reply = stream.reply
    assert reply.text == "Hello world"
    assert reply.stop_reason == "stop" and reply.error_message is None
    assert reply.usage == {
        "input": 20,
        "output": 7,
        "cacheRead": 100,
        "cacheWrite": 0,
        "totalTokens": 127,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }
    assert (reply.provider, reply.model, reply.api) == ("openai-compatible", "test-model", "openai-completions")

    [request] = fake_server.requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["Authorization"] == "Bearer sk-test"
    assert request.headers["Content-Type"] == "application/json"
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


def test_each_chunk_reaches_the_reader_before_the_server_sends_the_next(fake_server: FakeServer) -> None:
    sent_second = threading.Event()
    reader_got_first = threading.Event()

    def respond(handler: BaseHTTPRequestHandler, fake: FakeServer) -> None:
        start_sse(handler)
        send_event(handler, chunk("first"))
        reader_got_first.wait(5)
        send_event(handler, chunk(" second", finish="stop"))
        sent_second.set()
        send_event(handler, "[DONE]")

    fake_server.respond = respond
    stream = iter(backend(fake_server).stream(CONVERSATION))
    assert next(stream) == "first"
    assert not sent_second.is_set()
    reader_got_first.set()
    assert list(stream) == [" second"]


def test_no_key_means_no_authorization_header(fake_server: FakeServer) -> None:
    fake_server.respond = happy
    backend(fake_server, api_key="").stream(CONVERSATION).collect()
    assert "Authorization" not in fake_server.requests[0].headers


def test_trailing_slash_in_base_url_and_credentials_never_shown(fake_server: FakeServer) -> None:
    fake_server.respond = happy
    url = f"http://user:secret@127.0.0.1:{fake_server.port}/v1/"
    assistant = backend(fake_server, base_url=url)
    assert assistant.stream(CONVERSATION).collect().text == "Hello world"
    assert fake_server.requests[0].path == "/v1/chat/completions"
    assert "secret" not in assistant.label and "secret" not in assistant.display_endpoint


@pytest.mark.parametrize(("finish", "expected"), [("length", "length"), ("tool_calls", "stop"), ("stop", "stop")])
def test_finish_reason_maps_to_stop_reason(fake_server: FakeServer, finish: str, expected: str) -> None:
    fake_server.respond = lambda handler, fake: sse(handler, [chunk("x"), chunk(finish=finish)])
    reply = backend(fake_server).stream(CONVERSATION).collect()
    assert reply.stop_reason == expected
    assert reply.usage["totalTokens"] == 0  # the server sent no usage


def test_stream_without_done_but_with_finish_reason_is_complete(fake_server: FakeServer) -> None:
    fake_server.respond = lambda handler, fake: sse(handler, [chunk("ok", finish="stop")], done=False)
    reply = backend(fake_server).stream(CONVERSATION).collect()
    assert (reply.text, reply.stop_reason) == ("ok", "stop")


def test_comments_and_other_sse_fields_are_ignored(fake_server: FakeServer) -> None:
    def respond(handler: BaseHTTPRequestHandler, fake: FakeServer) -> None:
        start_sse(handler)
        handler.wfile.write(b": keep-alive\r\n\r\nevent: message\r\nid: 1\r\n")
        handler.wfile.write(b"data: " + json.dumps(chunk("caf\u00e9")).encode() + b"\r\n\r\n")
        send_event(handler, chunk(finish="stop"))
        send_event(handler, "[DONE]")

    fake_server.respond = respond
    assert backend(fake_server).stream(CONVERSATION).collect().text == "caf\u00e9"


def test_a_server_that_ignores_stream_true_still_works(fake_server: FakeServer) -> None:
    body = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "whole"}, "finish_reason": "length"}]}
    fake_server.respond = lambda handler, fake: send_json(handler, 200, {**body, "usage": USAGE})
    reply = backend(fake_server).stream(CONVERSATION).collect()
    assert (reply.text, reply.stop_reason, reply.usage["output"]) == ("whole", "length", 7)


async def test_async_iteration(fake_server: FakeServer) -> None:
    fake_server.respond = happy
    stream = backend(fake_server).stream(CONVERSATION)
    chunks = [piece async for piece in stream]
    assert chunks == ["Hel", "lo", " world"]
    assert stream.reply.text == "Hello world"


# -- failures ---------------------------------------------------------------------------------


def test_connection_refused(closed_port: int) -> None:
    assistant = OpenAICompatAssistant(f"http://127.0.0.1:{closed_port}/v1", "m", timeout=5)
    reply = assistant.stream(CONVERSATION).collect()
    assert reply.stop_reason == "error"
    assert reply.error_message == f"Connection refused by http://127.0.0.1:{closed_port}/v1/chat/completions"
    assert reply.text == ""


def test_timeout_before_any_response(fake_server: FakeServer) -> None:
    fake_server.respond = lambda handler, fake: fake.release.wait(10)
    started = time.monotonic()
    reply = backend(fake_server, timeout=0.2).stream(CONVERSATION).collect()
    assert time.monotonic() - started < 3
    assert reply.stop_reason == "error"
    assert reply.error_message == f"Timed out after 0.2 s waiting for {fake_server.endpoint}"


def test_timeout_mid_stream_keeps_the_text(fake_server: FakeServer) -> None:
    fake_server.respond = stall_after("partial ")
    reply = backend(fake_server, timeout=0.2).stream(CONVERSATION).collect()
    assert (reply.text, reply.stop_reason) == ("partial ", "error")
    assert reply.error_message is not None and reply.error_message.startswith("Timed out after 0.2 s")


@pytest.mark.parametrize(
    ("status", "body", "message"),
    [
        (401, {"error": {"message": "Invalid API key", "type": "invalid_request_error"}}, "Invalid API key"),
        (500, {"error": "model failed to load"}, "model failed to load"),  # llama.cpp / Ollama shape
        (422, {"detail": [{"loc": ["body", "model"], "msg": "field required"}]}, "field required"),
        (502, "Bad gateway from the proxy", "Bad gateway from the proxy"),
    ],
)
def test_http_errors_carry_status_and_server_message(
    fake_server: FakeServer, status: int, body: Any, message: str
) -> None:
    fake_server.respond = lambda handler, fake: send_json(handler, status, body)
    reply = backend(fake_server).stream(CONVERSATION).collect()
    assert reply.stop_reason == "error"
    assert reply.error_message is not None
    assert reply.error_message.startswith(f"HTTP {status} from {fake_server.endpoint}: ")
    assert message in reply.error_message


def test_malformed_sse_line_ends_with_error_and_keeps_text(fake_server: FakeServer) -> None:
    fake_server.respond = lambda handler, fake: sse(handler, [chunk("good "), "{not json"])
    reply = backend(fake_server).stream(CONVERSATION).collect()
    assert (reply.text, reply.stop_reason) == ("good ", "error")
    assert reply.error_message is not None
    assert reply.error_message.startswith(f"Malformed stream from {fake_server.endpoint}")
    assert "{not json" in reply.error_message


def test_choices_that_are_not_a_list_are_malformed(fake_server: FakeServer) -> None:
    fake_server.respond = lambda handler, fake: sse(handler, [{"choices": "nope"}])
    reply = backend(fake_server).stream(CONVERSATION).collect()
    assert reply.stop_reason == "error" and "Malformed stream" in (reply.error_message or "")


def test_error_event_inside_the_stream(fake_server: FakeServer) -> None:
    fake_server.respond = lambda handler, fake: sse(
        handler, [chunk("so far"), {"error": {"message": "context length exceeded"}}]
    )
    reply = backend(fake_server).stream(CONVERSATION).collect()
    assert (reply.text, reply.stop_reason) == ("so far", "error")
    assert reply.error_message == f"Error from {fake_server.endpoint}: context length exceeded"


def test_stream_cut_off_before_the_end(fake_server: FakeServer) -> None:
    fake_server.respond = lambda handler, fake: sse(handler, [chunk("half")], done=False)
    reply = backend(fake_server).stream(CONVERSATION).collect()
    assert (reply.text, reply.stop_reason) == ("half", "error")
    assert reply.error_message == f"Connection closed by {fake_server.endpoint} before the reply was complete"


def test_bad_base_url_is_an_error_reply_not_an_exception() -> None:
    reply = OpenAICompatAssistant("ftp://example.invalid/v1", "m").stream(CONVERSATION).collect()
    assert reply.stop_reason == "error" and "PITREE_OPENAI_BASE_URL" in (reply.error_message or "")


def test_cancel_from_another_thread_unblocks_a_waiting_read(fake_server: FakeServer) -> None:
    fake_server.respond = stall_after("started ")
    stream = backend(fake_server, timeout=30).stream(CONVERSATION)
    seen: list[str] = []
    reader = threading.Thread(target=lambda: seen.extend(stream))
    reader.start()
    deadline = time.monotonic() + 5
    while not seen and time.monotonic() < deadline:
        time.sleep(0.01)
    started = time.monotonic()
    stream.cancel()
    reader.join(5)
    assert not reader.is_alive() and time.monotonic() - started < 2
    assert seen == ["started "]
    assert (stream.reply.text, stream.reply.stop_reason) == ("started ", "aborted")


async def test_cancelled_task_leaves_an_aborted_reply(fake_server: FakeServer) -> None:
    fake_server.respond = stall_after("started ")
    stream = backend(fake_server, timeout=30).stream(CONVERSATION)
    got_first = asyncio.Event()

    async def read() -> None:
        async for _ in stream:
            got_first.set()

    task = asyncio.create_task(read())
    await asyncio.wait_for(got_first.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert (stream.reply.text, stream.reply.stop_reason) == ("started ", "aborted")


# -- summaries --------------------------------------------------------------------------------


def test_summarize_sends_a_summarisation_prompt(fake_server: FakeServer) -> None:
    fake_server.respond = lambda handler, fake: sse(handler, [chunk("## Goal\n"), chunk("Greet.", finish="stop")])
    reply = backend(fake_server).summarize(CONVERSATION, instructions="Focus on greetings")
    assert (reply.text, reply.stop_reason) == ("## Goal\nGreet.", "stop")
    messages = fake_server.requests[0].body["messages"]
    assert messages[0] == {"role": "system", "content": SUMMARY_SYSTEM_PROMPT}
    prompt = messages[1]["content"]
    assert "User: Hi there" in prompt and "Assistant: Hello!" in prompt and "hmm" not in prompt
    assert prompt.rstrip().endswith("Focus on greetings")


async def test_summarize_errors_like_replies(closed_port: int) -> None:
    reply = await OpenAICompatAssistant(f"http://127.0.0.1:{closed_port}", "m").asummarize(CONVERSATION)
    assert reply.stop_reason == "error" and "Connection refused" in (reply.error_message or "")


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
                {"type": "toolCall", "id": "t1", "name": "read", "arguments": {"path": "a.py"}},
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
        {"role": "assistant", "content": 'Let me look.\n[Tool call read {"path": "a.py"}]'},
        {"role": "user", "content": "[Tool result from read]\nprint(1)\n\nGo on"},
    ]


def test_usage_mapping_tolerates_missing_and_odd_fields() -> None:
    assert usage_from_openai({"prompt_tokens": 10, "completion_tokens": 5})["totalTokens"] == 15
    odd = usage_from_openai({"prompt_tokens": "x", "completion_tokens": None, "prompt_tokens_details": None})
    assert odd["input"] == odd["output"] == odd["totalTokens"] == 0
