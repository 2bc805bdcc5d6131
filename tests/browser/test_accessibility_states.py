"""States that need an OpenAI-compatible backend, checked with axe-core and at phone width: the model
picker listing the server's models (one with a 120-character id, one that looks like markup), and a
reply being written (the fake server sends one chunk, then waits until it is stopped).

This module runs its own pitree answering through tests/support/fake_openai.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect
from support.fake_openai import FakeOpenAI, send_json, stall_after

LONG_MODEL = "vendor/" + "m" * 120
ODD_MODEL = "<img src=x onerror=alert(1)>"
POSITION = "db26dc72"  # 01-linear's leaf


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI()
    models = [{"id": "fake-model"}, {"id": LONG_MODEL}, {"id": ODD_MODEL}]
    server.list_models = lambda handler, _: send_json(handler, 200, {"object": "list", "data": models})
    server.respond = stall_after("Let me think about that")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def server(serve_openai: Any, fake: FakeOpenAI) -> Any:
    """pitree answering through the fake server (overrides the suite's ``server`` in this module)."""
    return serve_openai(fake)


def _fits(page: Any) -> None:
    width = page.evaluate("[document.documentElement.scrollWidth, innerWidth]")
    assert width[0] <= width[1], width


def _choose(page: Any, picker: Any, model: str) -> None:
    """Pick ``model`` in the pickers as they are once loaded again for the tab's position (they load
    after each move: a choice made in the ones being replaced would be lost)."""
    page.wait_for_function(
        "() => { const s = document.querySelector('#composer-settings select[name=model]');"
        " return s && !s.__seen && !document.querySelector('.htmx-request, .htmx-settling'); }"
    )
    picker.evaluate("s => { s.__seen = true; }")
    picker.select_option(model)


def test_the_model_picker_with_long_and_odd_ids(axe_context, axe, ui, sessions) -> None:
    seeded = sessions.seed("01-linear")
    page = axe_context.new_page()
    for width, height in ((1400, 900), (390, 844)):
        page.set_viewport_size({"width": width, "height": height})
        ui.open(page, seeded.url)
        picker = page.locator("#composer-settings select[name=model]")
        expect(picker).to_be_enabled()
        assert sorted(picker.evaluate("s => Array.from(s.options, o => o.value)")) == sorted(
            ["fake-model", LONG_MODEL, ODD_MODEL]
        )
        axe.check_themes(page, f"the model picker at {width} px")
        _fits(page)
        # The select never grows to its longest option: it stays inside the conversation column.
        column = page.locator("#main").bounding_box()
        box = picker.bounding_box()
        assert box["x"] + box["width"] <= column["x"] + column["width"], (box, column)
    page.set_viewport_size({"width": 390, "height": 844})
    _choose(page, picker, LONG_MODEL)
    ui.wait_position_change(page, POSITION)
    marker = page.locator(f"#entry-{ui.position(page)}.entry--marker")
    expect(marker).to_contain_text(LONG_MODEL)
    _fits(page)
    _choose(page, picker, ODD_MODEL)
    expect(page.locator("#entries .entry--marker").last).to_contain_text(ODD_MODEL)  # as text
    expect(page.locator("img[src=x]")).to_have_count(0)
    _fits(page)
    axe.check_themes(page, "long and odd model ids at 390 px")


def test_a_reply_being_written(axe_context, axe, ui, sessions) -> None:
    seeded = sessions.seed("01-linear")
    page = axe_context.new_page()
    page.set_viewport_size({"width": 390, "height": 844})
    ui.open(page, seeded.url)
    # Live first: the reply's text so far reaches the tabs whose socket has joined the session.
    page.wait_for_function("() => document.getElementById('live').dataset.live === 'live'")
    page.locator("#composer textarea[name=text]").fill("And a PUT endpoint?")
    page.locator("#composer textarea[name=text]").press("Control+Enter")
    expect(page.locator("#entries .stream")).to_contain_text("Let me think about that")
    stop = page.locator("#composer .stop")
    expect(stop).to_be_visible()
    axe.check_themes(page, "a reply being written at 390 px")
    page.set_viewport_size({"width": 1400, "height": 900})
    axe.check_themes(page, "a reply being written")
    stop.click()
    page.wait_for_function("() => !document.querySelector('#entries .is-pending')")
    expect(page.locator("#composer .send")).to_be_visible()
    assert seeded.entries()[-1]["message"]["stopReason"] == "aborted"
