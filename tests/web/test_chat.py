"""Writes that involve the assistant: send, edit & resend, regenerate, backend errors, bad input."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client
from support.fake_openai import running_fake, send_json

from sessions_app.services import replies, summaries
from sessions_app.views import chat as chat_views

HTMX = {"HTTP_HX_REQUEST": "true"}
LINEAR = "01-linear"
TREE = "02-tree-branches"


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


def test_writes_need_the_csrf_token(pi, sign_in) -> None:
    client = sign_in(Client(enforce_csrf_checks=True))
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


@pytest.mark.parametrize("status", [500, 503])
def test_an_error_reply_says_what_to_do_and_stores_no_internal_address(client, pi, settings, status) -> None:
    """The session file is what a share shows: the model server's address stays in the server's log."""
    with running_fake() as fake:
        fake.respond = lambda handler, server: send_json(handler, status, {"error": f"down at {fake.endpoint}"})
        settings.PITREE_ASSISTANT = "openai"
        settings.PITREE_OPENAI_BASE_URL = fake.base_url
        client.post(f"/s/{pi.id(LINEAR)}/send/", {"text": "Still up?", "parent": "358d8704"}, **HTMX)
    stored = pi.path(LINEAR).read_text()
    assert f"127.0.0.1:{fake.port}" not in stored and "/v1" not in stored
    reply = pi.lines(pi.path(LINEAR))[-1]["message"]
    assert reply["stopReason"] == "error"
    assert reply["errorMessage"].startswith(f"The model server answered with an error (HTTP {status}")
    assert reply["errorMessage"].endswith("Try again, or pick another model.")


def test_the_openai_backend_gets_the_branch_context_and_its_reply_is_stored(client, pi, settings) -> None:
    with running_fake() as fake:
        settings.PITREE_ASSISTANT = "openai"
        settings.PITREE_OPENAI_BASE_URL = fake.base_url
        settings.PITREE_OPENAI_MODEL = "fake-model"
        client.post(f"/s/{pi.id(LINEAR)}/send/", {"text": "And PUT?", "parent": "358d8704"}, **HTMX)
    sent = fake.requests[-1].body
    assert sent["model"] == "fake-model" and sent["stream"] is True
    texts = [m["content"] if isinstance(m["content"], str) else json.dumps(m["content"]) for m in sent["messages"]]
    assert "List the endpoints in app.py" in texts[0] and "And PUT?" in texts[-1]
    reply = pi.lines(pi.path(LINEAR))[-1]["message"]
    assert reply["content"] == [{"type": "text", "text": "Hello world"}] and reply["model"] == "fake-model"
    assert reply["usage"]["output"] == 7 and reply["stopReason"] == "stop"


def test_a_reply_written_by_the_command_line_does_not_choose_the_next_reply_s_model(client, pi) -> None:
    """The CLI stores its assistant lines as provider "pitree", model "cli": the offline responder,
    also "pitree", offers only its own model, so it answers with that one, as its picker shows."""
    path = pi.path(LINEAR)
    call_command("pitree", "append", str(path), "--role", "assistant", "--text", "from the agent", stdout=io.StringIO())
    written = pi.lines(path)[-1]
    assert (written["message"]["provider"], written["message"]["model"]) == ("pitree", "cli")
    settings = client.get(f"/s/{pi.id(LINEAR)}/settings/", {"at": written["id"]}).content.decode()
    assert 'value="offline-echo" selected' in settings
    client.post(f"/s/{pi.id(LINEAR)}/send/", {"text": "Answer me", "parent": written["id"]}, **HTMX)
    reply = pi.lines(path)[-1]["message"]
    assert reply["stopReason"] == "stop" and reply["model"] == "offline-echo", reply.get("errorMessage")


def test_regenerated_answers_differ_from_their_siblings(client, pi) -> None:
    for _ in range(2):
        client.post(f"/s/{pi.id(LINEAR)}/regenerate/", {"entry": "358d8704"}, **HTMX)
    *_, first, second = pi.lines(pi.path(LINEAR))
    assert first["parentId"] == second["parentId"] == "c256703f"
    assert first["message"]["content"] != second["message"]["content"]


def test_compact_writes_the_offline_summary(client, pi) -> None:
    response = client.post(f"/s/{pi.id(LINEAR)}/compact/", {"keep_from": "c256703f", "at": "db26dc72"}, **HTMX)
    assert response.status_code == 200
    compaction = pi.lines(pi.path(LINEAR))[-1]
    assert compaction["type"] == "compaction" and compaction["firstKeptEntryId"] == "c256703f"
    assert compaction["summary"].startswith("## Summary (offline responder")


def _on_event_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


@pytest.mark.parametrize(
    ("sample", "rest", "data", "expected"),
    [
        (
            LINEAR,
            "compact/",
            {"keep_from": "c256703f", "at": "db26dc72"},
            {"build_session_context", "convert_to_llm", "estimate_tokens"},
        ),
        (
            TREE,
            "navigate/",
            {"to": "07721729", "mode": "branch", "at": "750a4556", "summarize": "1"},
            {"latest_position_under", "build_session_context", "convert_to_llm"},
        ),
    ],
    ids=["compact", "navigate"],
)
def test_what_a_summary_is_written_from_is_built_off_the_event_loop(
    client, pi, monkeypatch, sample: str, rest: str, data: dict[str, str], expected: set[str]
) -> None:
    """Decoding a branch, building its context and estimating its tokens grow with the branch (so does
    finding where a branch was left): on the event loop they would hold up every socket and async view
    of the process."""
    seen: list[tuple[str, bool]] = []  # (what ran, whether on the event loop)

    def recording(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def recorded(*args: Any) -> Any:
            seen.append((name, _on_event_loop()))
            return function(*args)

        return recorded

    for name in expected:
        module = chat_views if name == "latest_position_under" else summaries  # where the view and service find it
        monkeypatch.setattr(module, name, recording(name, getattr(module, name)))
    response = client.post(f"/s/{pi.id(sample)}/{rest}", data, **HTMX)
    assert response.status_code == 200 and pi.lines(pi.path(sample))[-1]["type"] in ("compaction", "branch_summary")
    assert {name for name, _ in seen} == expected
    assert [name for name, on_loop in seen if on_loop] == []


def test_the_composer_offers_stop_for_the_reply_being_written(client, pi) -> None:
    html = client.get(f"/s/{pi.id(LINEAR)}/").content.decode()
    assert f'<form id="stop-reply" method="post" action="/s/{pi.id(LINEAR)}/stop/"' in html
    assert '<input type="hidden" name="reply" value="">' in html


@pytest.mark.parametrize(
    ("reply", "status", "message"), [("", 422, "Say which reply"), ("a/b", 422, "Say which reply")]
)
def test_stop_needs_a_reply_id(client, pi, reply, status, message) -> None:
    before = pi.path(LINEAR).read_bytes()
    response = client.post(f"/s/{pi.id(LINEAR)}/stop/", {"reply": reply}, **HTMX)
    assert response.status_code == status and message in response.content.decode()
    assert pi.path(LINEAR).read_bytes() == before


def test_stopping_a_reply_that_is_not_running_says_so(client, pi, monkeypatch) -> None:
    monkeypatch.setattr(replies, "STOP_WAIT", 0.05)
    before = pi.path(LINEAR).read_bytes()
    response = client.post(f"/s/{pi.id(LINEAR)}/stop/", {"reply": "long-gone"}, **HTMX)
    assert response.status_code == 409 and response["HX-Retarget"] == "#flash"
    assert "No reply long-gone is being written in this session" in response.content.decode()
    assert pi.path(LINEAR).read_bytes() == before


async def _running_reply(session_id: str) -> replies.RunningReply:
    """The reply a request started, once it has some text."""
    for _ in range(1000):
        found = replies.running(session_id)
        if found and found[0].reply.text:
            return found[0]
        await asyncio.sleep(0.01)
    raise AssertionError("no reply started")


async def test_stop_from_another_request_stores_the_text_so_far(asgi, pi, settings) -> None:
    settings.PITREE_OFFLINE_DELAY = 30  # the reply waits between chunks until it is stopped
    url = f"/s/{pi.id(LINEAR)}/"
    sending = asyncio.create_task(
        asgi.post(url + "send/", data={"text": "Stop me", "parent": "358d8704", "stream": "tab1"})
    )
    running = await _running_reply(pi.id(LINEAR))
    assert running.id == "tab1"  # the browser's stream token names the reply
    shown = running.reply.text

    stopped = await asgi.post(url + "stop/", data={"reply": "tab1"})
    assert stopped.status_code == 204
    answered = await sending
    user, reply = pi.lines(pi.path(LINEAR))[-2:]
    assert user["message"]["content"] == "Stop me" and reply["parentId"] == user["id"]
    assert reply["message"]["stopReason"] == "aborted" and reply["message"]["errorMessage"]
    assert reply["message"]["content"] == [{"type": "text", "text": shown}]
    assert answered.status_code == 200 and f'data-position="{reply["id"]}"' in answered.text


async def test_a_message_to_an_entry_being_answered_is_refused_and_writes_nothing(asgi, pi, settings) -> None:
    """Another tab sending while the reply streams would put two user messages in a row, the reply
    on a side branch: refused (409) until the reply is stored; a new branch asked for on purpose is not."""
    settings.PITREE_OFFLINE_DELAY = 30
    url = f"/s/{pi.id(LINEAR)}/"
    sending = asyncio.create_task(asgi.post(url + "send/", data={"text": "First", "parent": "358d8704"}))
    running = await _running_reply(pi.id(LINEAR))
    size = pi.path(LINEAR).stat().st_size
    second = await asgi.post(url + "send/", data={"text": "Second", "parent": running.parent_id, "cursor": size})
    assert second.status_code == 409 and "still being written" in second.text
    assert pi.path(LINEAR).stat().st_size == size
    branching = asyncio.create_task(
        asgi.post(url + "send/", data={"text": "On purpose", "parent": running.parent_id, "branch": "1"})
    )
    for _ in range(1000):
        if len(replies.running(pi.id(LINEAR))) == 2:
            break
        await asyncio.sleep(0.01)
    user = pi.lines(pi.path(LINEAR))[-1]
    assert user["parentId"] == running.parent_id and user["message"]["content"] == "On purpose"
    for reply, task in zip(replies.running(pi.id(LINEAR)), (sending, branching)):
        reply.stop()  # one at a time: the test database is one SQLite file in memory, locked per write
        assert (await task).status_code == 200
    answers = [line for line in pi.lines(pi.path(LINEAR)) if line.get("parentId") == running.parent_id]
    assert [line["message"]["role"] for line in answers] == ["user", "assistant"]  # the new branch, the reply
    assert answers[1]["message"]["stopReason"] == "aborted"


async def test_a_client_that_disconnects_does_not_lose_the_reply(asgi, pi, settings) -> None:
    """A client that goes away does not take its reply with it: the reply is stored whole. (Whether
    Django cancels the view depends on the middleware: behind sync-only middleware the view runs on;
    the registry's own tests cancel the caller outright.)"""
    settings.PITREE_OFFLINE_DELAY = 0.05
    sending = asyncio.create_task(asgi.post(f"/s/{pi.id(LINEAR)}/send/", data={"text": "Bye", "parent": "358d8704"}))
    running = await _running_reply(pi.id(LINEAR))
    sending.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await sending
    assert sending.cancelled()
    entry = await running.join()
    assert entry["message"]["stopReason"] == "stop" and "Bye" in entry["message"]["content"][0]["text"]
    assert pi.lines(pi.path(LINEAR))[-1] == entry


def test_read_only_sessions_refuse_writes(client, pi, tmp_path) -> None:
    v1_input = Path(__file__).resolve().parents[2] / "sessions_app/samples/pi/05-legacy-v1.input.jsonl"
    v1 = pi.folder / "2025-11-20T08-00-00-000Z_22222222-1b7d-4c1e-9a43-2d8f6e1b0c77.jsonl"
    v1.write_bytes(v1_input.read_bytes().replace(b"5f0c2a9e-1b7d", b"22222222-1b7d"))
    before = v1.read_bytes()
    leaf = pi.reopen(v1).leaf_id
    response = client.post("/s/22222222-1b7d-4c1e-9a43-2d8f6e1b0c77/send/", {"text": "hi", "parent": leaf}, **HTMX)
    assert response.status_code == 409 and "read-only" in response.content.decode()
    assert v1.read_bytes() == before


@pytest.mark.parametrize(
    ("action", "fields", "kind"),
    [
        ("thinking", {"level": "high"}, "thinking_level_change"),
        ("label", {"entry": "c256703f", "label": "asked"}, "label"),
        ("rename", {"name": "Named meanwhile"}, "session_info"),
    ],
)
async def test_a_pick_while_a_reply_is_written_goes_below_it_not_beside_it(asgi, pi, settings, action, fields, kind):
    """A tab standing on the message being answered picks a thinking level (or labels, or renames): it is
    written below the reply, with it, and the tab is answered at once (204); beside the reply, it would
    have left the reply on a branch of its own."""
    settings.PITREE_OFFLINE_DELAY = 30
    url = f"/s/{pi.id(LINEAR)}/"
    sending = asyncio.create_task(asgi.post(url + "send/", data={"text": "Slowly", "parent": "358d8704"}))
    running = await _running_reply(pi.id(LINEAR))
    size = pi.path(LINEAR).stat().st_size
    picked = await asgi.post(
        url + f"{action}/", data={**fields, "at": running.parent_id, "cursor": size}, headers={"HX-Request": "true"}
    )
    assert picked.status_code == 204 and pi.path(LINEAR).stat().st_size == size  # nothing written beside it
    running.stop()
    assert (await sending).status_code == 200
    reply, change = pi.lines(pi.path(LINEAR))[-2:]
    assert reply["parentId"] == running.parent_id and reply["message"]["role"] == "assistant"
    assert change["type"] == kind and change["parentId"] == reply["id"]


async def test_a_pick_from_a_page_a_moment_behind_goes_below_the_reply_it_was_about_to_show(asgi, pi) -> None:
    """The reply ended before the tab heard of it: the tab still names the message it answered, and the
    cursor of its page. The pick goes where the tab is about to stand, below the reply."""
    url = f"/s/{pi.id(LINEAR)}/"
    size = pi.path(LINEAR).stat().st_size
    sent = await asgi.post(url + "send/", data={"text": "Quickly", "parent": "358d8704"})
    assert sent.status_code == 200
    user, reply = pi.lines(pi.path(LINEAR))[-2:]
    picked = await asgi.post(
        url + "thinking/", data={"level": "low", "at": user["id"], "cursor": size}, headers={"HX-Request": "true"}
    )
    change = pi.lines(pi.path(LINEAR))[-1]
    assert picked.status_code == 200 and change["type"] == "thinking_level_change"
    assert change["parentId"] == reply["id"] and f'data-position="{change["id"]}"' in picked.text
