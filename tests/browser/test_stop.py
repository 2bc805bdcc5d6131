"""Stop in the browser: shown only while this tab's reply is written; the text so far is kept.

This module runs its own server whose offline responder waits a second between chunks, so that a
reply is reliably still being written when the test presses Stop.
"""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect


@pytest.fixture(scope="module")
def server(serve: Any) -> Any:
    """pitree under daphne with a slow offline responder (overrides the suite's ``server`` here)."""
    return serve({"PITREE_OFFLINE_DELAY": "1", "PITREE_ASSISTANT": "offline"})


def test_stop_keeps_the_text_so_far_and_hides_again(page, ui, sessions, record):
    seeded = sessions.seed("01-linear")
    ui.open(page, seeded.url)
    stop, send = page.locator("#composer .stop"), page.locator("#composer .send")
    expect(stop).to_be_hidden()
    expect(send).to_be_visible()

    page.locator("#composer textarea[name=text]").fill("Tell me slowly")
    page.locator("#composer textarea[name=text]").press("Control+Enter")
    # While the reply is written, Send is Stop.
    expect(stop).to_be_visible()
    expect(send).to_be_hidden()
    expect(page.locator("#entries article.is-pending .stream")).to_contain_text("Offline responder")
    stop.click()

    reply_id = ui.wait_position_change(page, "db26dc72")
    user, reply = seeded.entries()[-2:]
    assert user["message"]["content"] == "Tell me slowly" and reply["id"] == reply_id
    assert reply["parentId"] == user["id"] and reply["message"]["stopReason"] == "aborted"
    kept = reply["message"]["content"][0]["text"]
    assert kept.startswith("**Offline responder**") and "Regenerate writes another" not in kept  # cut short
    expect(page.locator(f"#entry-{reply_id}")).to_contain_text("Offline responder")
    expect(stop).to_be_hidden()
    expect(send).to_be_visible()
    expect(page.locator("#flash")).to_be_empty()
    assert not record.errors


def test_stop_in_the_composer_of_a_tab_that_did_not_ask(new_page, ui, sessions, record):
    """Replies stream to every tab of the session: each one's Send becomes Stop, and stops that reply."""
    seeded = sessions.seed("01-linear")
    asking, watching = new_page(), new_page()
    ui.open(asking, seeded.url)
    ui.open(watching, seeded.url)
    watching.wait_for_function("() => document.getElementById('live').dataset.live === 'live'")
    asking.locator("#composer textarea[name=text]").fill("Stop me from the other tab")
    asking.locator("#composer .send").click()

    stop = watching.locator("#composer .stop")
    expect(stop).to_be_visible()
    expect(watching.locator("#composer .send")).to_be_hidden()
    expect(watching.locator("#entries article[data-reply] .stream")).to_contain_text("Offline responder")
    # Ctrl+Enter sends nothing meanwhile (the message would be a sibling of the reply): the text stays.
    box = watching.locator("#composer textarea[name=text]")
    box.fill("Not yet")
    box.press("Control+Enter")
    watching.wait_for_timeout(300)
    expect(box).to_have_value("Not yet")
    assert [e["message"]["content"] for e in seeded.entries()[-1:]] == ["Stop me from the other tab"]
    stop.click()

    reply_id = ui.wait_position_change(asking, "db26dc72")
    reply = seeded.entries()[-1]
    assert reply["id"] == reply_id and reply["message"]["stopReason"] == "aborted"
    expect(watching.locator(f"#entry-{reply_id}")).to_contain_text("Offline responder")
    expect(stop).to_be_hidden()
    expect(watching.locator("#composer .send")).to_be_visible()
    assert not record.errors


@pytest.mark.parametrize("how", ["regenerate", "edit"])
def test_the_focus_follows_the_reply_an_entry_s_action_asks_for(page, ui, sessions, record, how):
    """Regenerate and Edit & resend hide the entry whose control had the focus while the reply is
    written: the focus goes to that reply (not to the page's body), and to the composer once it is stored."""
    seeded = sessions.seed("01-linear")
    ui.open(page, seeded.url)
    if how == "regenerate":
        ui.tool(page, "358d8704", "Regenerate").focus()
        page.keyboard.press("Enter")
    else:
        text = ui.open_panel(page, "c256703f", "edit").locator("form.edit-form textarea[name=text]")
        text.fill("Add a PATCH endpoint instead.")
        text.press("Control+Enter")
    expect(page.locator("#entries > article.entry--assistant.is-pending")).to_be_focused()
    # Stopped once the server writes it (a stop that comes first finds no reply to stop), from
    # elsewhere: the focus stays where it is.
    expect(page.locator("#entries article.is-pending .stream")).to_contain_text("Offline responder")
    expect(page.locator("#entries > article.entry--assistant.is-pending")).to_be_focused()
    page.evaluate("document.getElementById('stop-reply').requestSubmit()")
    ui.wait_position_change(page, "db26dc72")
    expect(page.locator("#composer .send")).to_be_visible()
    box = page.locator("#composer textarea[name=text]")
    expect(box).to_be_focused()
    assert box.evaluate("(el) => el.tabIndex") == 0  # still in the Tab order
    assert not record.errors
