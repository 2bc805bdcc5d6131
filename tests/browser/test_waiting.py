"""A model server that says nothing: the reply is shown as waiting for it, with the seconds it has
waited (the server says so after PITREE_REPLY_WAITING_AFTER, shortened here to 2 s), and Stop stops it.

The fake OpenAI-compatible server of this module takes the request and then hangs without a byte (or
after a first chunk), as a model server stuck loading a model does.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest
from playwright.sync_api import expect
from support.fake_openai import FakeOpenAI, chunk, running_fake, send_event, start_sse

WAITING_AFTER = 2  # seconds (10 by default)
HANG = 60.0  # seconds the fake stays silent unless the test ends first


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOpenAI]:
    with running_fake() as server:
        yield server


@pytest.fixture(scope="module")
def server(serve: Any, fake: FakeOpenAI) -> Any:
    """pitree answering through the hanging fake (overrides the suite's ``server`` in this module)."""
    return serve(
        {
            "PITREE_ASSISTANT": "openai",
            "PITREE_OPENAI_BASE_URL": fake.base_url,
            "PITREE_OPENAI_MODEL": "fake-model",
            "PITREE_OPENAI_TIMEOUT": str(HANG * 2),
            "PITREE_REPLY_WAITING_AFTER": str(WAITING_AFTER),
        }
    )


@pytest.fixture
def hang(fake: FakeOpenAI) -> Iterator[threading.Event]:
    """Answer chat completions by hanging until the test ends; set the event to end the hang sooner."""
    ended = threading.Event()
    first: list[str] = []

    def respond(handler: BaseHTTPRequestHandler, server: FakeOpenAI) -> None:
        if first:
            start_sse(handler)
            send_event(handler, chunk(first[0]))
        ended.wait(HANG)

    fake.respond = respond
    ended.first = first  # type: ignore[attr-defined]
    yield ended
    ended.set()


@pytest.mark.parametrize("said", ["", "Let me think"])
def test_a_silent_model_server_is_shown_as_waited_for_with_the_time_and_stop_stops_it(
    page, ui, sessions, record, hang, said
):
    if said:
        hang.first.append(said)  # type: ignore[attr-defined]
    seeded = sessions.seed("01-linear")
    ui.open(page, seeded.url)
    page.locator("#composer textarea[name=text]").fill("Are you there?")
    page.locator("#composer .send").click()
    pending = page.locator("#entries article.is-streaming")
    expect(pending).to_be_visible()
    if said:
        expect(pending.locator(".stream")).to_contain_text(said)
    waiting = pending.locator(".reply-waiting")
    expect(waiting).to_contain_text(re.compile(r"Waiting for the model server: nothing from it for \d+ s"))
    seconds = pending.locator("[data-waited]")
    first = int(seconds.inner_text())
    assert first >= WAITING_AFTER
    expect(seconds).not_to_have_text(str(first))  # the time counts on
    assert int(seconds.inner_text()) > first

    pending.locator(".reply-stop button").click()
    reply_id = ui.wait_position_change(page, "db26dc72")
    user, reply = seeded.entries()[-2:]
    assert user["message"]["content"] == "Are you there?" and reply["id"] == reply_id
    assert reply["message"]["stopReason"] == "aborted"
    assert "".join(block["text"] for block in reply["message"]["content"]) == said
    expect(page.locator("#entries .reply-waiting")).to_have_count(0)
    expect(page.locator("#composer .send")).to_be_visible()
    assert not record.errors
