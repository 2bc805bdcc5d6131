"""The composer's pickers while a reply is written, and right after it ends: the choice applies to the
next message and never starts a branch.

Found by use: a Model or Thinking pick while a reply streamed was written beside the reply being
written (the reply and Stop vanished, the conversation ended at the question, and the next message
was sent without that answer: a model server received two user messages in a row); a model picked
right after a reply ended was lost (the picker showed it, the old model answered). Each test runs with
the offline responder (its one model: the Thinking picker) and with an OpenAI-compatible server (the
Model picker, tests/support/fake_openai.py), each in a pitree of its own.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect
from support.fake_openai import FakeOpenAI, chunk, happy, listing, running_fake, send_event, start_sse

LEAF = "db26dc72"  # 01-linear's position


class Gated:
    """The fake server's answer: its first words at once, the rest once the test opens the gate."""

    def __init__(self) -> None:
        self.gate = threading.Event()

    def __call__(self, handler: Any, fake: FakeOpenAI) -> None:
        start_sse(handler)
        send_event(handler, chunk(role="assistant", content="First words"))
        self.gate.wait(30)
        send_event(handler, chunk(", then the rest."))
        send_event(handler, chunk(finish="stop"))
        send_event(handler, "[DONE]")


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOpenAI]:
    with running_fake() as server:
        server.list_models = listing("fake-model", "other-model")
        yield server


@pytest.fixture(scope="module", params=["offline", "openai"])
def assistant(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="module")
def server(assistant: str, serve: Any, serve_openai: Any, fake: FakeOpenAI) -> Any:
    """pitree with a slow offline responder (a reply takes seconds), or answering through the fake
    server (overrides the suite's ``server`` in this module)."""
    if assistant == "offline":
        return serve({"PITREE_OFFLINE_DELAY": "0.3", "PITREE_ASSISTANT": "offline"})
    return serve_openai(fake)


class Picker:
    """The picker each assistant offers two values of: its name, the value the page starts at, the value
    picked, and how the file says it."""

    def __init__(self, assistant: str) -> None:
        if assistant == "offline":
            self.select, self.before, self.picked, self.type = "level", "medium", "high", "thinking_level_change"
        else:
            self.select, self.before, self.picked, self.type = "model", "fake-model", "other-model", "model_change"

    def locator(self, page: Any) -> Any:
        return page.locator(f"#composer-settings select[name={self.select}]")

    def says(self, line: dict[str, Any]) -> bool:
        return line["type"] == self.type and self.picked in (line.get("thinkingLevel"), line.get("modelId"))


class HeldSocket:
    """The session page's socket, passed through, except that what the server sends can be held back
    (``hold``) and let through later (``release``): the page keeps showing the reply being written
    while the server has stored it."""

    def __init__(self, page: Any) -> None:
        self.holding = False
        self.held: list[Any] = []
        self.page_side: Any = None
        page.route_web_socket(re.compile(r"/ws/s/"), self._route)

    def _route(self, socket: Any) -> None:
        self.page_side = socket
        server = socket.connect_to_server()
        server.on_message(lambda message: self.held.append(message) if self.holding else socket.send(message))

    def hold(self) -> None:
        self.holding = True

    def release(self) -> None:
        self.holding = False
        for message in self.held:
            self.page_side.send(message)
        self.held.clear()


class HeldAnswer:
    """The answer to the page's send, fetched from the server but handed to the page only at ``release``:
    it comes once the reply is stored, and would tell the page that the reply ended as the socket does."""

    def __init__(self, page: Any) -> None:
        self.holding = True
        self.held: list[tuple[Any, Any]] = []
        page.route(re.compile(r"/send/$"), self._route)

    def _route(self, route: Any) -> None:
        if self.holding:
            self.held.append((route, route.fetch(timeout=90_000)))
        else:
            route.continue_()

    def release(self) -> None:
        self.holding = False
        for route, response in self.held:
            route.fulfill(response=response)
        self.held.clear()


def _ask(page: Any, ui: Any, seeded: Any, fake: FakeOpenAI, assistant: str) -> tuple[Gated, dict[str, Any]]:
    """Send a message and wait until its reply is being written (its first words shown, Stop offered);
    the gate ends it (for the fake server; the offline responder ends in its own time)."""
    gated = Gated()
    fake.respond = gated
    ui.open(page, seeded.url)
    page.wait_for_function("() => document.getElementById('live').dataset.live === 'live'")
    box = page.locator("#composer textarea[name=text]")
    box.fill("Tell me slowly")
    box.press("Control+Enter")
    words = "First words" if assistant == "openai" else "Offline responder"
    expect(page.locator("#entries > article[data-reply].is-streaming .stream")).to_contain_text(words)
    expect(page.locator("#composer .stop")).to_be_visible()
    (asked,) = [e for e in seeded.entries() if e.get("message", {}).get("content") == "Tell me slowly"]
    return gated, asked


def _stored(seeded: Any, parent: str, seconds: float = 60) -> dict[str, Any]:
    """The reply to ``parent`` once the file holds it."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = [e for e in seeded.entries() if e.get("parentId") == parent and e.get("type") == "message"]
        if found:
            return found[0]
        time.sleep(0.05)
    raise AssertionError(f"no reply to {parent} was stored")


def _next_message_answers(page: Any, ui: Any, seeded: Any, fake: FakeOpenAI, assistant: str, change: dict) -> None:
    """The next message goes under the change (the conversation goes on from the reply), and, with a
    model server, is asked of the model picked, with the whole conversation: that reply included."""
    fake.respond = happy
    asked = len(fake.requests)
    box = page.locator("#composer textarea[name=text]")
    box.fill("And now?")
    box.press("Control+Enter")
    reply_id = ui.wait_position_change(page, change["id"])
    (mine,) = [e for e in seeded.entries() if e.get("message", {}).get("content") == "And now?"]
    assert mine["parentId"] == change["id"] and seeded.entry(reply_id)["parentId"] == mine["id"]
    if assistant == "openai":
        (chat,) = [r for r in fake.requests[asked:] if r.method == "POST"]
        assert chat.body["model"] == "other-model"
        roles = [m["role"] for m in chat.body["messages"]]
        assert roles[-3:] == ["user", "assistant", "user"]  # the answer in between: no two questions in a row
        assert "First words, then the rest." in str(chat.body["messages"][-2]["content"])


def test_a_pick_while_a_reply_is_written_applies_to_the_next_message(page, ui, sessions, fake, assistant, record):
    seeded = sessions.seed("01-linear")
    picker = Picker(assistant)
    gated, asked = _ask(page, ui, seeded, fake, assistant)
    expect(picker.locator(page)).to_have_value(picker.before)
    with page.expect_response(re.compile(r"/(model|thinking)/$")) as answered:
        picker.locator(page).select_option(picker.picked)
    assert answered.value.status == 204  # nothing to show yet: it is written with the reply
    # The reply goes on where it was, Stop with it; nothing was written beside it.
    expect(page.locator("#entries > article[data-reply].is-streaming")).to_be_visible()
    expect(page.locator("#composer .stop")).to_be_visible()
    assert not [line for line in seeded.lines() if picker.says(line)]
    assert [e["id"] for e in seeded.entries() if e.get("parentId") == asked["id"]] == []
    gated.gate.set()
    reply = _stored(seeded, asked["id"])
    (change,) = [line for line in seeded.lines() if picker.says(line)]
    assert change["parentId"] == reply["id"]  # below the reply, in the write that stored it
    assert seeded.lines()[-1]["id"] == change["id"]  # and where the session stands now
    ui.wait_position(page, change["id"])
    assert ui.path_ids(page)[-3:] == [asked["id"], reply["id"], change["id"]]
    expect(picker.locator(page)).to_have_value(picker.picked)
    expect(page.locator("#moved-note")).to_have_count(0)
    _next_message_answers(page, ui, seeded, fake, assistant, change)
    assert not record.errors and not [e for e in record.console_errors if "htmx" in e], record.console_errors


def test_a_pick_right_after_a_reply_ended_is_not_lost(page, ui, sessions, fake, assistant, record):
    """The tab has not heard yet that the reply ended (its socket holds it back here): it still shows the
    reply being written, and names the message as where it stands. The pick goes below the reply."""
    seeded = sessions.seed("01-linear")
    picker = Picker(assistant)
    socket = HeldSocket(page)
    answer = HeldAnswer(page)
    gated, asked = _ask(page, ui, seeded, fake, assistant)
    socket.hold()
    gated.gate.set()
    reply = _stored(seeded, asked["id"])
    expect(page.locator("#entries > article[data-reply].is-streaming")).to_be_visible()  # as the tab knows it
    assert ui.position(page) == asked["id"]
    with page.expect_response(re.compile(r"/(model|thinking)/$")) as answered:
        picker.locator(page).select_option(picker.picked)
    assert answered.value.status == 200
    socket.release()
    answer.release()
    (change,) = [line for line in seeded.lines() if picker.says(line)]
    assert change["parentId"] == reply["id"]
    ui.wait_position(page, change["id"])
    expect(picker.locator(page)).to_have_value(picker.picked)
    assert ui.path_ids(page)[-3:] == [asked["id"], reply["id"], change["id"]]
    _next_message_answers(page, ui, seeded, fake, assistant, change)
    assert not record.errors and not [e for e in record.console_errors if "htmx" in e], record.console_errors
