"""A local fake of an OpenAI-compatible server: real HTTP on 127.0.0.1 in a thread, SSE streaming.

Each test sets ``respond`` (how a chat completion is answered) and reads ``requests`` (what the client
sent). ``release`` is set when the server stops, which ends any response a test left stalled. A real
server in a thread, rather than a mocked transport, so the SDK's own HTTP, SSE, timeout and error code
paths all run.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Respond = Callable[[BaseHTTPRequestHandler, "FakeOpenAI"], None]


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    body: Any  # this request's, for a responder answering requests that come at once

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        fake = self.server.fake
        self.body = json.loads(raw or b"null")
        fake.requests.append(Recorded("POST", self.path, _lower(self.headers.items()), self.body))
        fake.respond(self, fake)

    def do_GET(self) -> None:
        fake = self.server.fake
        fake.requests.append(Recorded("GET", self.path, _lower(self.headers.items()), None))
        fake.list_models(self, fake)

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        pass


class _Server(ThreadingHTTPServer):
    fake: FakeOpenAI
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # the client hanging up mid-response is part of several tests


class FakeOpenAI:
    """Records each request; ``respond`` answers chat completions, ``list_models`` answers GET requests."""

    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self.respond: Respond = happy
        self.list_models: Respond = lambda handler, fake: send_json(
            handler, 200, {"object": "list", "data": [{"id": "fake-model", "object": "model", "owned_by": "me"}]}
        )
        self.release = threading.Event()
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


def listing(*models: str) -> Respond:
    """Answer the model list with ``models``."""
    return lambda handler, _: send_json(handler, 200, {"object": "list", "data": [{"id": model} for model in models]})


@contextmanager
def running_fake() -> Iterator[FakeOpenAI]:
    fake = FakeOpenAI()
    try:
        yield fake
    finally:
        fake.stop()


def chunk(content: str | None = None, finish: str | None = None, **delta: Any) -> dict[str, Any]:
    """One ``chat.completion.chunk`` event, as OpenAI streams them."""
    if content is not None:
        delta["content"] = content
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
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
    handler.send_header("Content-Type", "text/plain" if isinstance(body, str) else "application/json")
    handler.send_header("Content-Length", str(len(raw)))
    handler.end_headers()
    handler.wfile.write(raw)


USAGE = {
    "prompt_tokens": 120,
    "completion_tokens": 7,
    "total_tokens": 127,
    "prompt_tokens_details": {"cached_tokens": 100},
}


def happy(handler: BaseHTTPRequestHandler, fake: FakeOpenAI) -> None:
    """The text "Hello world" in three chunks, a finish reason, then usage in a chunk without choices."""
    sse(
        handler,
        [
            chunk(role="assistant", content=""),
            chunk("Hel"),
            chunk("lo"),
            chunk(" world"),
            chunk(finish="stop"),
            {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "choices": [], "usage": USAGE},
        ],
    )


def stall_after(first: str) -> Respond:
    """Send one chunk, then go silent until the server stops."""

    def respond(handler: BaseHTTPRequestHandler, fake: FakeOpenAI) -> None:
        start_sse(handler)
        send_event(handler, chunk(first))
        fake.release.wait(30)

    return respond


def _lower(headers: Any) -> dict[str, str]:
    """Header names in lower case: HTTP clients differ in how they spell them."""
    return {name.lower(): value for name, value in headers}


# --------------------------------------------------------------------------- scripted turns, for pi

FAKE_MODEL = "fake-model"


def say(text: str, pieces: int = 3, delay: float = 0.0) -> Respond:
    """Stream ``text`` in ``pieces`` chunks (``delay`` seconds apart, as a model writes), then finish."""

    def respond(handler: BaseHTTPRequestHandler, fake: FakeOpenAI) -> None:
        size = max(1, -(-len(text) // pieces))
        parts = [text[start : start + size] for start in range(0, len(text), size)] or [""]
        start_sse(handler)
        send_event(handler, chunk(role="assistant", content=""))
        for part in parts:
            fake.release.wait(delay)
            send_event(handler, chunk(part))
        send_event(handler, chunk(finish="stop"))
        send_event(handler, "[DONE]")

    return respond


def call_tool(name: str, arguments: dict[str, Any], call_id: str = "call_1") -> Respond:
    """Ask for one tool call (``bash``, ``read``, ``edit``…), its arguments streamed in two pieces."""

    def respond(handler: BaseHTTPRequestHandler, fake: FakeOpenAI) -> None:
        raw = json.dumps(arguments)
        head = {"index": 0, "id": call_id, "type": "function", "function": {"name": name, "arguments": raw[:5]}}
        tail = {"index": 0, "function": {"arguments": raw[5:]}}
        sse(
            handler,
            [
                chunk(role="assistant", content=None),
                chunk(tool_calls=[head]),
                chunk(tool_calls=[tail]),
                chunk(finish="tool_calls"),
            ],
        )

    return respond


def refuse(status: int = 400, message: str = "the fake refuses") -> Respond:
    """An HTTP error with an OpenAI-style body (400 is one no client retries)."""
    return lambda handler, fake: send_json(handler, status, {"error": {"message": message, "type": "invalid_request"}})


def hang(first: str = "") -> Respond:
    """Begin a stream (with ``first`` when given), then send nothing more until the server stops."""

    def respond(handler: BaseHTTPRequestHandler, fake: FakeOpenAI) -> None:
        start_sse(handler)
        if first:
            send_event(handler, chunk(first))
        fake.release.wait(60)

    return respond


def scripted(*steps: Respond) -> Respond:
    """Answer the n-th chat completion with the n-th step; past the last, a 400 that says so."""
    remaining = list(steps)

    def respond(handler: BaseHTTPRequestHandler, fake: FakeOpenAI) -> None:
        step = remaining.pop(0) if remaining else refuse(400, "the fake's script has no more steps")
        step(handler, fake)

    return respond


def completions(fake: FakeOpenAI) -> list[Recorded]:
    """The chat completion requests the fake received, in order."""
    return [request for request in fake.requests if request.method == "POST"]
