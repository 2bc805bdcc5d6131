"""Stop in the browser: shown only while this tab's reply is written; the text so far is kept.

This module runs its own server whose offline responder waits a second between chunks, so that a
reply is reliably still being written when the test presses Stop.
"""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from sessions_app.sessionfiles.store import SessionFile


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


def test_a_stop_that_came_before_its_reply_started_elsewhere_is_asked_again_as_it_streams(page, ui, sessions, record):
    """With several server processes, Stop may reach one that cannot see the reply yet: it waits a
    second, then answers that no reply is written (409). The page once said so and the reply ran on;
    it now asks again, silently, when the reply starts streaming. (The 409 is played here: one process
    remembers a Stop that came first.)"""
    seeded = sessions.seed("01-linear")
    ui.open(page, seeded.url)
    sends: list = []
    stops: list = []

    def hold_send(route) -> None:
        sends.append(route)

    def first_stop_missed(route) -> None:
        stops.append(route.request.post_data)
        if len(stops) == 1:
            route.fulfill(
                status=409,
                headers={"HX-Retarget": "#flash", "HX-Reswap": "innerHTML"},
                body='<p class="error-text">No reply is being written in this session: it may have just ended.</p>',
            )
        else:
            route.continue_()

    page.route("**/send/", hold_send)
    page.route("**/stop/", first_stop_missed)
    page.locator("#composer textarea[name=text]").fill("Stop me before I start")
    page.locator("#composer textarea[name=text]").press("Control+Enter")
    stop = page.locator("#composer .stop")
    expect(stop).to_be_visible()
    stop.click()
    page.wait_for_function("() => !document.querySelector('#stop-reply.htmx-request')")
    assert len(stops) == 1 and len(sends) == 1
    expect(page.locator("#flash")).to_be_empty()  # nothing to say: it is asked again
    sends[0].continue_()

    reply_id = ui.wait_position_change(page, "db26dc72")
    reply = seeded.entries()[-1]
    assert reply["id"] == reply_id and reply["message"]["stopReason"] == "aborted"
    assert len(stops) == 2
    expect(page.locator("#flash")).to_be_empty()
    assert not record.errors


def test_a_reply_that_ends_after_the_reader_edited_a_message_leaves_them_on_their_branch(page, ui, sessions, record):
    """Edit & resend while a reply is written: the new branch is where the reader is. The reply, ending
    later on the branch they left, once took the session back there: every tab said "The session moved
    to another branch (by another tab or program)", and a reload opened the old branch."""
    seeded = sessions.seed("01-linear")
    asked = _ask_slowly(page, ui, seeded)

    panel = ui.open_panel(page, "c256703f", "edit")
    panel.locator("textarea[name=text]").fill("Asked differently")
    panel.locator("textarea[name=text]").press("Control+Enter")
    _until(page, lambda: any(e.get("message", {}).get("content") == "Asked differently" for e in seeded.entries()))
    (edited,) = [e for e in seeded.entries() if e.get("message", {}).get("content") == "Asked differently"]

    def stored(parent: str) -> bool:
        return any(
            e.get("parentId") == parent and e.get("message", {}).get("role") == "assistant" for e in seeded.entries()
        )

    _until(page, lambda: stored(asked["id"]) and stored(edited["id"]))  # both replies written
    ui.wait_position_change(page, edited["id"])  # the tab goes on to its own reply
    expect(page.locator("#moved-note")).to_have_count(0)
    position = ui.position(page)
    assert SessionFile(seeded.path).leaf_id == position  # the file's position: the edited branch's reply
    page.reload()
    assert ui.position(page) == position
    assert "Asked differently" in page.locator("#entries").inner_text()
    assert not record.errors


def test_a_reply_that_ends_after_the_reader_switched_branches_leaves_them_on_the_branch_they_chose(
    page, ui, sessions, record
):
    """‹ › while a reply is written: the reply, ending on the branch left, once took the tab back
    there, said the session "moved to another branch (by another tab or program)", and a reload
    opened the branch left."""
    seeded = sessions.seed("02-tree-branches")  # u2 (97690895) has a sibling: the branch summary 07721729
    asked = _ask_slowly(page, ui, seeded)

    page.locator("#entry-97690895 .nav-next").click()
    ui.wait_position(page, "de4f0d3a")  # where the other branch was left
    _until(page, lambda: any(e.get("parentId") == asked["id"] for e in seeded.entries()))
    reply = next(e for e in seeded.entries() if e.get("parentId") == asked["id"])
    page.wait_for_function(
        "(id) => !document.querySelector('#entries [data-reply]') && !document.querySelector('.htmx-request')",
        arg=reply["id"],
    )
    assert ui.position(page) == "de4f0d3a"
    expect(page.locator("#moved-note")).to_have_count(0)
    assert SessionFile(seeded.path).leaf_id == "de4f0d3a"
    page.reload()
    assert ui.position(page) == "de4f0d3a"
    assert not record.errors


def test_a_double_click_on_send_sends_and_does_not_stop_the_reply(page, ui, sessions, record):
    """Stop takes Send's place under the pointer as the message goes: the second click of a double
    click stopped the reply just asked for (stored without a word, "Stopped before the reply was
    complete")."""
    seeded = sessions.seed("01-linear")
    ui.open(page, seeded.url)
    page.locator("#composer textarea[name=text]").fill("Just once")
    page.locator("#composer .send").dblclick()
    _until(page, lambda: seeded.entries()[-1].get("message", {}).get("role") == "assistant")  # the reply stored
    user, reply = seeded.entries()[-2:]
    assert user["message"]["content"] == "Just once" and reply["parentId"] == user["id"]  # sent once
    assert reply["message"]["stopReason"] == "stop"  # and not stopped
    assert not record.errors


def test_a_refusal_s_note_goes_when_the_next_message_is_sent(page, ui, sessions, record) -> None:
    """ "Write a message first." stayed red the whole time the next message's reply was written; and a
    second Ctrl+Enter said "your message stays in the box" of a box left empty by the first."""
    seeded = sessions.seed("01-linear")
    ui.open(page, seeded.url)
    box, flash = page.locator("#composer textarea[name=text]"), page.locator("#flash")
    box.fill("   ")
    page.locator("#composer .send").click()
    expect(flash).to_contain_text("Write a message first.")
    box.fill("Now with words")
    box.press("Control+Enter")
    expect(page.locator("#composer .stop")).to_be_visible()  # the reply is being written (seconds)
    assert "Write a message first." not in flash.inner_text()
    box.press("Control+Enter")  # again: the box is empty
    assert "stays in the box" not in flash.inner_text()
    box.fill("Typed meanwhile")
    box.press("Control+Enter")  # this one stays in the box, and says so
    expect(flash).to_contain_text("your message stays in the box")
    expect(box).to_have_value("Typed meanwhile")
    assert not record.errors


def _ask_slowly(page, ui, seeded) -> dict:
    """Open the session and send a message; return it once its reply is being written (for seconds)."""
    ui.open(page, seeded.url)
    box = page.locator("#composer textarea[name=text]")
    box.fill("Tell me slowly")
    box.press("Control+Enter")
    expect(page.locator("#entries article[data-reply] .stream")).to_contain_text("Offline responder")
    (asked,) = [e for e in seeded.entries() if e.get("message", {}).get("content") == "Tell me slowly"]
    return asked


def _until(page, condition, seconds: float = 60) -> None:
    """Wait for ``condition`` of the file (the page runs meanwhile): a reply here takes a second a piece."""
    for _ in range(int(seconds * 10)):
        if condition():
            return
        page.wait_for_timeout(100)
    assert condition()
