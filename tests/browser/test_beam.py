"""Several models at once (a beam), in a real browser, with a fake OpenAI-compatible server that lists
three models: the composer asks all three, the tab goes to the answers side by side, each column
streams in this tab and in another one watching, one is stopped while the others go on, and one is
picked to continue the conversation."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect
from support.fake_openai import FakeOpenAI, chunk, listing, running_fake, send_event, start_sse

MODELS = ("fake-model", "model-b", "model-c")
CHUNKS, DELAY = 80, 0.1  # each answer takes about eight seconds: long enough to watch and stop one


def slow_answers() -> Any:
    """Each answer numbered in the order asked, streamed a word every DELAY seconds."""
    numbers = itertools.count(1)
    lock = threading.Lock()

    def respond(handler: Any, fake: FakeOpenAI) -> None:
        with lock:
            number = next(numbers)
        start_sse(handler)
        send_event(handler, chunk(role="assistant", content=""))
        for word in range(CHUNKS):
            fake.release.wait(DELAY)
            send_event(handler, chunk(f"a{number}w{word} "))
        send_event(handler, chunk(finish="stop"))
        send_event(handler, "[DONE]")

    return respond


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOpenAI]:
    with running_fake() as server:
        server.list_models = listing(*MODELS)
        server.respond = slow_answers()
        yield server


@pytest.fixture(scope="module")
def server(serve_openai: Any, fake: FakeOpenAI) -> Any:
    """pitree answering through the fake server (overrides the suite's ``server`` in this module)."""
    return serve_openai(fake)


def _live(page: Any) -> None:
    page.wait_for_function("() => document.querySelector(\"[ws-connect='/ws/follow/']\").dataset.live === 'live'")


def test_three_models_stream_side_by_side_in_two_tabs_one_stopped_one_continued(new_page, ui, sessions) -> None:
    seeded = sessions.seed("01-linear")
    asking = new_page()
    ui.open(asking, seeded.url)
    pickers = asking.locator("#beam select[name=ask]")
    asking.locator(".beam-picker > summary").click()
    expect(pickers).to_have_count(4)
    expect(pickers.nth(2)).to_have_value("model-c")
    assert [pickers.nth(n).input_value() for n in range(4)] == [*MODELS, ""]  # three models asked by default
    asking.locator("#composer-text").fill("Three takes, please")
    asking.locator("#beam button[type=submit]").click()

    asking.wait_for_url("**/compare/?beam=*")
    _live(asking)
    watching = new_page()
    ui.open(watching, asking.url)
    _live(watching)
    prompt = next(line for line in seeded.lines() if line.get("message", {}).get("content") == "Three takes, please")
    assert prompt["parentId"] == "db26dc72"  # where the tab stood: 01-linear's leaf

    # Three columns, each streaming its own answer, in both tabs.
    for tab in (asking, watching):
        expect(tab.locator(".compare--beam .compare__cell--answer")).to_have_count(3)
        for column in (1, 2, 3):
            cell = tab.locator(f".compare__cell--answer[data-column='{column}'] .stream")
            expect(cell).to_contain_text("w3 ")
        titles = tab.locator(".compare--beam .compare__title").all_inner_texts()
        assert [title.split(" · ")[1] for title in titles] == list(MODELS)
    texts = [asking.locator(f".compare__cell--answer[data-column='{n}'] .stream").inner_text() for n in (1, 2, 3)]
    assert len({text.split("w")[0] for text in texts}) == 3  # three different answers, one per column

    # Stop the second one: it is stored as far as it got, and both tabs show it stored, with the
    # others still being written.
    watching.locator(".compare__cell--answer[data-column='2'] .reply-stop button").click()
    for tab in (asking, watching):
        head = tab.locator(".compare__head[data-column='2']")
        expect(head.get_by_role("button", name="Continue with this answer")).to_be_visible()
        expect(tab.locator(".compare__cell--answer[data-column='2'] article.entry[data-entry]")).to_be_visible()
        for column in (1, 3):
            expect(tab.locator(f".compare__cell--answer[data-column='{column}'] [data-reply]")).to_be_visible()
        expect(tab.locator(".beam-stop-all button")).to_be_visible()
    answers = [line for line in seeded.lines() if line.get("parentId") == prompt["id"] and line["type"] == "message"]
    assert len(answers) == 1 and answers[0]["message"]["stopReason"] == "aborted"
    assert answers[0]["message"]["model"] == "model-b"

    # The two others finish: every column offers to continue with its answer, in both tabs.
    for tab in (asking, watching):
        expect(tab.get_by_role("button", name="Continue with this answer")).to_have_count(3, timeout=30_000)
        expect(tab.locator(".beam-stop-all")).to_have_count(0)
    answers = [line for line in seeded.lines() if line.get("parentId") == prompt["id"] and line["type"] == "message"]
    assert sorted(line["message"]["model"] for line in answers) == sorted(MODELS)
    finished = [line for line in answers if line["message"]["stopReason"] == "stop"]
    assert len(finished) == 2 and all(f"w{CHUNKS - 1} " in line["message"]["content"][0]["text"] for line in finished)

    # Pick the third to continue: the session, standing on that answer.
    third = asking.locator(".compare__cell--answer[data-column='3'] article.entry").get_attribute("data-entry")
    asking.locator(".compare__head[data-column='3']").get_by_role("button", name="Continue with this answer").click()
    ui.wait_position(asking, third)
    assert seeded.entry(third)["message"]["model"] == "model-c"
    expect(asking.locator(f"#entry-{third}")).to_contain_text(f"w{CHUNKS - 1}")
    expect(asking.locator("#composer-text")).to_have_value("")  # the message sent is no draft to send again


def test_stop_all_stops_every_answer_being_written(page, ui, sessions) -> None:
    seeded = sessions.seed("01-linear")
    ui.open(page, seeded.url)
    page.locator(".beam-picker > summary").click()
    page.locator("#composer-text").fill("Stop them all")
    page.locator("#beam button[type=submit]").click()
    page.wait_for_url("**/compare/?beam=*")
    _live(page)
    expect(page.locator(".compare__cell--answer[data-column='3'] .stream")).to_contain_text("w2 ")
    page.locator(".beam-stop-all button").click()
    expect(page.get_by_role("button", name="Continue with this answer")).to_have_count(3)
    prompt = next(line for line in seeded.lines() if line.get("message", {}).get("content") == "Stop them all")
    answers = [line for line in seeded.lines() if line.get("parentId") == prompt["id"] and line["type"] == "message"]
    assert [line["message"]["stopReason"] for line in answers] == ["aborted"] * 3
