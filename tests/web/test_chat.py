"""Writes that involve the assistant: send, edit & resend, regenerate, backend errors, bad input."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest
from django.test import Client

HTMX = {"HTTP_HX_REQUEST": "true"}
LINEAR = "01-linear"


def test_send_appends_the_message_under_the_shown_entry_then_the_reply(client, pi) -> None:
    path = pi.path(LINEAR)
    before = path.read_bytes()
    response = client.post(f"/s/{pi.id(LINEAR)}/send/", {"text": "Hello there", "parent": "358d8704"}, **HTMX)
    assert response.status_code == 200
    added = pi.lines(path)[len(pi.lines(path)) - 2 :]
    user, reply = added
    assert path.read_bytes().startswith(before)  # the file only grew
    assert user["parentId"] == "358d8704" and user["message"] == {
        **user["message"],
        "role": "user",
        "content": "Hello there",
    }
    assert reply["parentId"] == user["id"]
    message = reply["message"]
    assert message["role"] == "assistant" and message["stopReason"] == "stop"
    assert {"provider", "model", "api", "usage", "timestamp"} <= set(message)
    assert "Hello there" in message["content"][0]["text"]  # the offline responder quotes the message
    assert response["HX-Push-Url"] == f"/s/{pi.id(LINEAR)}/e/{reply['id']}/"
    html = response.content.decode()
    assert html.startswith('<section id="transcript"') and f'data-position="{reply["id"]}"' in html
    assert "Offline responder" in html  # the UI says the replies are offline


def test_send_without_htmx_redirects_to_the_new_position(client, pi) -> None:
    response = client.post(f"/s/{pi.id(LINEAR)}/send/", {"text": "plain form", "parent": "358d8704"})
    reply = pi.lines(pi.path(LINEAR))[-1]
    assert response.status_code == 302 and response["Location"] == f"/s/{pi.id(LINEAR)}/e/{reply['id']}/"


def test_edit_and_resend_creates_a_sibling_branch_and_keeps_the_old_one(client, pi) -> None:
    session_url = f"/s/{pi.id(LINEAR)}/"
    # "Add a DELETE endpoint too." (c256703f) is the child of 052b9a9c; resend it edited.
    client.post(session_url + "send/", {"text": "Add a PATCH endpoint instead.", "parent": "052b9a9c"}, **HTMX)
    session = pi.reopen(pi.path(LINEAR))
    siblings = session.index.children(session.row_of("052b9a9c"))
    assert next(session.index.ids[r] for r in siblings) == "c256703f" and len(siblings) == 2
    html = client.get(session_url).content.decode()
    assert "Add a PATCH endpoint instead." in html and "2/2" in html
    old = client.get(session_url + "e/358d8704/").content.decode()
    assert "Add a DELETE endpoint too." in old and "1/2" in old


def test_regenerate_adds_a_sibling_answer(client, pi) -> None:
    response = client.post(f"/s/{pi.id(LINEAR)}/regenerate/", {"entry": "358d8704"}, **HTMX)
    assert response.status_code == 200
    session = pi.reopen(pi.path(LINEAR))
    answers = [session.index.ids[r] for r in session.index.children(session.row_of("c256703f"))]
    assert answers[0] == "358d8704" and len(answers) == 2
    assert session.leaf_id == answers[1]
    assert "2/2" in response.content.decode()


@pytest.mark.parametrize(
    ("text", "error"),
    [("", "Write a message first."), ("   \n ", "Write a message first."), ("x" * 2001, "the limit is 2,000 bytes")],
)
def test_empty_or_oversized_messages_are_refused_and_nothing_is_written(client, pi, settings, text, error) -> None:
    settings.PITREE_MAX_MESSAGE_BYTES = 2000
    before = pi.path(LINEAR).read_bytes()
    response = client.post(f"/s/{pi.id(LINEAR)}/send/", {"text": text, "parent": "358d8704"}, **HTMX)
    assert response.status_code == 422 and error in response.content.decode()
    assert response["HX-Retarget"] == "#flash"
    assert pi.path(LINEAR).read_bytes() == before


def test_multibyte_text_is_measured_in_bytes(client, pi, settings) -> None:
    settings.PITREE_MAX_MESSAGE_BYTES = 10
    before = pi.path(LINEAR).read_bytes()
    response = client.post(f"/s/{pi.id(LINEAR)}/send/", {"text": "ééééé€", "parent": "358d8704"}, **HTMX)
    assert response.status_code == 422 and pi.path(LINEAR).read_bytes() == before


def test_a_stale_form_whose_parent_is_gone_gets_a_clear_message(client, pi) -> None:
    before = pi.path(LINEAR).read_bytes()
    response = client.post(f"/s/{pi.id(LINEAR)}/send/", {"text": "hi", "parent": "deadbeef"}, **HTMX)
    assert response.status_code == 409
    assert "is not in this session any more" in response.content.decode()
    assert pi.path(LINEAR).read_bytes() == before


def test_writes_need_the_csrf_token(pi) -> None:
    client = Client(enforce_csrf_checks=True)
    before = pi.path(LINEAR).read_bytes()
    response = client.post(f"/s/{pi.id(LINEAR)}/send/", {"text": "hi", "parent": "358d8704"})
    assert response.status_code == 403 and pi.path(LINEAR).read_bytes() == before
    page = client.get(f"/s/{pi.id(LINEAR)}/").content.decode()
    assert 'hx-headers=\'{"x-csrftoken": "' in page  # htmx sends the token with every request


def test_a_refused_backend_becomes_an_error_entry_and_the_message_stays(client, pi, settings) -> None:
    settings.PITREE_ASSISTANT = "openai"
    settings.PITREE_OPENAI_BASE_URL = "http://127.0.0.1:9/v1"  # nothing listens on the discard port
    response = client.post(f"/s/{pi.id(LINEAR)}/send/", {"text": "anyone?", "parent": "358d8704"}, **HTMX)
    user, reply = pi.lines(pi.path(LINEAR))[-2:]
    assert user["message"]["content"] == "anyone?"
    assert reply["parentId"] == user["id"]
    assert reply["message"]["stopReason"] == "error" and "refused" in reply["message"]["errorMessage"].lower()
    assert "refused" in response.content.decode().lower()


class _FakeOpenAI(BaseHTTPRequestHandler):
    """Answers every chat completion with two streamed chunks and records what it was sent."""

    received: ClassVar[list[dict]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.received.append(body)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        for piece in ("Hello ", "from the fake."):
            chunk = {"choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]}
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
        self.wfile.write(b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n')

    def log_message(self, *args: object) -> None:
        pass


def test_the_openai_backend_gets_the_branch_context_and_its_reply_is_stored(client, pi, settings) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _FakeOpenAI)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        settings.PITREE_ASSISTANT = "openai"
        settings.PITREE_OPENAI_BASE_URL = f"http://127.0.0.1:{server.server_port}/v1"
        settings.PITREE_OPENAI_MODEL = "fake-model"
        client.post(f"/s/{pi.id(LINEAR)}/send/", {"text": "And PUT?", "parent": "358d8704"}, **HTMX)
    finally:
        server.shutdown()
    sent = _FakeOpenAI.received[-1]
    assert sent["model"] == "fake-model" and sent["stream"] is True
    texts = [m["content"] if isinstance(m["content"], str) else json.dumps(m["content"]) for m in sent["messages"]]
    assert "List the endpoints in app.py" in texts[0] and "And PUT?" in texts[-1]
    reply = pi.lines(pi.path(LINEAR))[-1]["message"]
    assert reply["content"] == [{"type": "text", "text": "Hello from the fake."}] and reply["model"] == "fake-model"


def test_read_only_sessions_refuse_writes(client, pi, tmp_path) -> None:
    from pathlib import Path

    v1_input = Path(__file__).resolve().parents[2] / "sessions_app/samples/pi/05-legacy-v1.input.jsonl"
    v1 = pi.folder / "2025-11-20T08-00-00-000Z_22222222-1b7d-4c1e-9a43-2d8f6e1b0c77.jsonl"
    v1.write_bytes(v1_input.read_bytes().replace(b"5f0c2a9e-1b7d", b"22222222-1b7d"))
    before = v1.read_bytes()
    leaf = pi.reopen(v1).leaf_id
    response = client.post("/s/22222222-1b7d-4c1e-9a43-2d8f6e1b0c77/send/", {"text": "hi", "parent": leaf}, **HTMX)
    assert response.status_code == 409 and "read-only" in response.content.decode()
    assert v1.read_bytes() == before
