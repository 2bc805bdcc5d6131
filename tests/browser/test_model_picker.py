"""The composer's model and thinking-level pickers, with an OpenAI-compatible server that has two models.

This module runs its own pitree whose assistant is a fake OpenAI-compatible server (real HTTP, see
tests/support/fake_openai.py): picking a model writes pi's ``model_change`` under the tab's position,
and the next reply is asked of, and stored as, that model.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect
from support.fake_openai import FakeOpenAI, listing, running_fake

POSITION = "db26dc72"  # 01-linear's leaf


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOpenAI]:
    with running_fake() as server:
        server.list_models = listing("fake-model", "other-model")
        yield server


@pytest.fixture(scope="module")
def server(serve_openai: Any, fake: FakeOpenAI) -> Any:
    """pitree answering through the fake server (overrides the suite's ``server`` in this module)."""
    return serve_openai(fake)


def _level_change(entry_id: str, parent: str, level: str) -> dict[str, Any]:
    """A ``thinking_level_change`` as pi writes it."""
    return {
        "type": "thinking_level_change",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2026-03-02T10:00:00.000Z",
        "thinkingLevel": level,
    }


def test_picking_a_model_writes_model_change_and_the_next_reply_uses_it(page, ui, sessions, fake) -> None:
    seeded = sessions.seed("01-linear")
    ui.open(page, seeded.url)
    picker = page.locator("#composer-settings select[name=model]")
    expect(picker).to_be_enabled()
    assert picker.evaluate("s => Array.from(s.options, o => o.value)") == ["fake-model", "other-model"]
    expect(picker).to_have_value("fake-model")  # the branch's last model is another provider's: the default
    expect(page.locator("#composer-settings")).to_contain_text("anthropic/claude-sonnet-4-5")

    picker.select_option("other-model")
    ui.wait_position_change(page, POSITION)
    change = seeded.lines()[-1]
    assert {k: change[k] for k in ("type", "parentId", "provider", "modelId")} == {
        "type": "model_change",
        "parentId": POSITION,
        "provider": "openai-compatible",
        "modelId": "other-model",
    }
    assert ui.position(page) == change["id"]
    expect(page.locator(f"#entry-{change['id']}.entry--marker")).to_contain_text("openai-compatible/other-model")
    expect(page.locator("#composer-settings select[name=model]")).to_have_value("other-model")

    asked = len(fake.requests)
    page.locator("#composer textarea[name=text]").fill("Which model are you?")
    page.locator("#composer .send").click()
    reply_id = ui.wait_position_change(page, change["id"])
    chat = [r for r in fake.requests[asked:] if r.method == "POST"]
    assert [r.body["model"] for r in chat] == ["other-model"]
    reply = seeded.entry(reply_id)
    assert reply["message"]["model"] == "other-model" and reply["message"]["provider"] == "openai-compatible"
    assert "Hello world" in json.dumps(reply["message"]["content"])
    # Still the chosen one after the reply (the reply names it too) and after a reload.
    expect(page.locator("#composer-settings select[name=model]")).to_have_value("other-model")
    ui.open(page, seeded.url)
    expect(page.locator("#composer-settings select[name=model]")).to_have_value("other-model")


def test_picking_a_thinking_level_writes_thinking_level_change(page, ui, sessions) -> None:
    seeded = sessions.seed("01-linear")
    ui.open(page, seeded.url)
    picker = page.locator("#composer-settings select[name=level]")
    expect(picker).to_have_value("medium")  # 01-linear starts with a thinking_level_change to medium
    assert picker.evaluate("s => Array.from(s.options, o => o.value)") == [
        "off",
        "minimal",
        "low",
        "medium",
        "high",
        "xhigh",
    ]
    picker.select_option("high")
    ui.wait_position_change(page, POSITION)
    change = seeded.lines()[-1]
    assert change["type"] == "thinking_level_change" and change["thinkingLevel"] == "high"
    assert change["parentId"] == POSITION
    expect(page.locator(f"#entry-{change['id']}")).to_contain_text("Thinking level → high")
    expect(page.locator("#composer-settings select[name=level]")).to_have_value("high")


def test_every_tab_s_pickers_follow_a_change_made_elsewhere(new_page, ui, sessions) -> None:
    """Another tab's pick, and a ``thinking_level_change`` pi appends to the file, reach each tab's
    picker: it shows what the next reply uses without a reload."""
    seeded = sessions.seed("01-linear")
    picking, watching = new_page(), new_page()
    for page in (picking, watching):
        ui.open(page, seeded.url)
        page.wait_for_function("() => document.getElementById('live').dataset.live === 'live'")
    level = "#composer-settings select[name=level]"
    expect(watching.locator(level)).to_have_value("medium")
    picking.locator(level).select_option("high")
    expect(watching.locator(level)).to_have_value("high")

    seeded.append(_level_change("f0f0f0f0", seeded.lines()[-1]["id"], "low"))
    for page in (picking, watching):
        expect(page.locator("#entry-f0f0f0f0")).to_contain_text("Thinking level → low")
        expect(page.locator(level)).to_have_value("low")


def test_a_level_picked_with_the_keyboard_keeps_the_focus_in_its_picker(page, ui, sessions) -> None:
    # Each pick answers with the transcript, pickers included: the focus once fell to the message box,
    # so a keyboard user could not go on to the next level with the arrow keys.
    seeded = sessions.seed("01-linear")
    ui.open(page, seeded.url)
    picker = page.locator("#composer-settings select[name=level]")
    expect(picker).to_have_value("medium")
    picker.focus()
    page.keyboard.press("ArrowDown")
    ui.wait_position_change(page, POSITION)
    expect(page.locator("#composer-settings select[name=level]")).to_have_value("high")
    expect(page.locator("#composer-settings select[name=level]")).to_be_focused()
    first = ui.position(page)
    page.keyboard.press("ArrowDown")
    ui.wait_position_change(page, first)
    expect(page.locator("#composer-settings select[name=level]")).to_have_value("xhigh")
    expect(page.locator("#composer-settings select[name=level]")).to_be_focused()
    assert [line.get("thinkingLevel") for line in seeded.lines()[-2:]] == ["high", "xhigh"]


def test_a_pick_made_the_moment_the_pickers_come_back_is_written(page, ui, sessions) -> None:
    """The pickers are swapped in again after each pick; htmx wires what it swaps in when it settles, and
    a pick made before then (a keyboard user's next arrow key, under load) was shown and never sent. The
    pick here comes in the page's very next task after the swap."""
    seeded = sessions.seed("01-linear")
    ui.open(page, seeded.url)
    page.evaluate(
        """() => document.addEventListener("htmx:afterSwap", function pick(ev) {
            if (ev.detail.target.id !== "composer-settings") return;
            document.removeEventListener("htmx:afterSwap", pick);
            setTimeout(() => {
                const level = document.querySelector("#composer-settings select[name=level]");
                level.value = "low";
                level.dispatchEvent(new Event("change", {bubbles: true}));
            });
        })"""
    )
    page.locator("#composer-settings select[name=level]").select_option("high")
    deadline = time.monotonic() + 15
    while [line.get("thinkingLevel") for line in seeded.lines()[-2:]] != ["high", "low"]:
        assert time.monotonic() < deadline, f"the pick was not written: {seeded.lines()[-2:]}"
        page.wait_for_timeout(50)
    ui.wait_position(page, seeded.lines()[-1]["id"])
    expect(page.locator("#composer-settings select[name=level]")).to_have_value("low")


def test_a_picker_in_use_stays_itself_when_another_change_refreshes_the_pickers(page, ui, sessions) -> None:
    """Another program's change refreshes the pickers while the reader has the model list open: the
    picker stays the same element (its list is not closed under them), and the model they then pick in
    it is written (htmx sends nothing for a form that left the page)."""
    seeded = sessions.seed("01-linear")
    ui.open(page, seeded.url)
    page.wait_for_function("() => document.getElementById('live').dataset.live === 'live'")
    expect(page.locator("#composer-settings select[name=model]")).to_be_enabled()
    page.evaluate("window.__inUse = document.querySelector('#composer-settings select[name=model]')")
    seeded.append(_level_change("f1f1f1f1", POSITION, "low"))
    expect(page.locator("#composer-settings select[name=level]")).to_have_value("low")  # refreshed
    assert page.evaluate("window.__inUse.isConnected")
    page.evaluate(
        "() => { const s = window.__inUse; s.value = 'other-model'; s.dispatchEvent(new Event('change', {bubbles: true})); }"
    )
    ui.wait_position_change(page, "f1f1f1f1")
    change = seeded.lines()[-1]
    assert change["type"] == "model_change" and change["modelId"] == "other-model"
    assert change["parentId"] == "f1f1f1f1"
