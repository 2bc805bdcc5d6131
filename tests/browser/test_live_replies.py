"""A reply being written, in every tab: it grows as rendered Markdown in a tab that did not ask for it,
a tab opened meanwhile starts with the text so far, Stop works from any tab, and the stored entry
takes the placeholder's place.

This module runs its own server whose offline responder waits 0.3 s between chunks (about 5 s for a reply), so that a
reply is reliably still being written while the tests look at it.
"""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

LEAF = "db26dc72"  # 01-linear's leaf


@pytest.fixture(scope="module")
def server(serve: Any) -> Any:
    """pitree under daphne with a slow offline responder (overrides the suite's ``server`` here)."""
    return serve({"PITREE_OFFLINE_DELAY": "0.3", "PITREE_ASSISTANT": "offline"})


def _open(ui: Any, page: Any, path: str) -> None:
    ui.open(page, path)
    page.wait_for_function("() => document.getElementById('live').dataset.live === 'live'")


def _send(page: Any, text: str) -> None:
    page.locator("#composer textarea[name=text]").fill(text)
    page.locator("#composer button[type=submit]").click()


def _two_tabs(new_page: Any, ui: Any, seeded: Any, text: str) -> tuple[Any, Any]:
    """Two tabs on the session; the first sends ``text`` (its reply is written slowly)."""
    asking, watching = new_page(), new_page()
    for page in (asking, watching):
        _open(ui, page, seeded.url)
    _send(asking, text)
    return asking, watching


def test_the_other_tab_sees_the_reply_grow_then_the_stored_entry(new_page, ui, sessions, record) -> None:
    seeded = sessions.seed("01-linear")
    asking, watching = _two_tabs(new_page, ui, seeded, "Grow in the other tab")

    growing = watching.locator("#entries > article[data-reply].is-streaming")
    expect(growing.locator(".md strong")).to_have_text("Offline responder")  # Markdown, while it grows
    user = seeded.entries()[-1]
    assert user["message"]["content"] == "Grow in the other tab"
    assert ui.position(watching) == user["id"]  # the user message came first, through the file
    expect(growing).to_have_attribute("data-parent", user["id"])
    first = growing.locator(".stream").text_content() or ""
    expect(growing.locator(".stream")).not_to_have_text(first)  # it grows

    reply_id = ui.wait_position_change(asking, LEAF)
    ui.wait_position(watching, reply_id)
    expect(watching.locator("#entries > article[data-reply]")).to_have_count(0)
    expect(watching.locator(f"#entry-{reply_id} .md strong").first).to_have_text("Offline responder")
    assert ui.path_ids(watching)[-2:] == [user["id"], reply_id]
    assert seeded.entries()[-1]["id"] == reply_id
    assert not record.errors
    assert not [e for e in record.console_errors if "htmx" in e], record.console_errors


def test_a_tab_opened_mid_reply_starts_with_the_text_so_far(new_page, ui, sessions, record) -> None:
    seeded = sessions.seed("01-linear")
    asking = new_page()
    _open(ui, asking, seeded.url)
    _send(asking, "Join me halfway")
    expect(asking.locator("#entries article.is-pending .stream")).to_contain_text("Offline responder")

    late = new_page()
    _open(ui, late, seeded.url)
    growing = late.locator("#entries > article[data-reply].is-streaming .stream")
    expect(growing).to_contain_text("Offline responder")
    reply_id = ui.wait_position_change(asking, LEAF)
    ui.wait_position(late, reply_id)
    expect(late.locator("#entries > article[data-reply]")).to_have_count(0)
    assert not record.errors


def test_stop_from_a_tab_that_did_not_ask(new_page, ui, sessions, record) -> None:
    seeded = sessions.seed("01-linear")
    asking, other = _two_tabs(new_page, ui, seeded, "Stop me from elsewhere")
    placeholder = other.locator("#entries > article[data-reply].is-streaming")
    expect(placeholder.locator(".stream")).to_contain_text("Offline responder")
    placeholder.get_by_role("button", name="Stop").click()

    reply_id = ui.wait_position_change(asking, LEAF)
    reply = seeded.entries()[-1]
    assert reply["id"] == reply_id and reply["message"]["stopReason"] == "aborted"
    assert "Regenerate writes another" not in reply["message"]["content"][0]["text"]  # cut short
    ui.wait_position(other, reply_id)
    expect(other.locator(f"#entry-{reply_id}")).to_contain_text("Offline responder")
    expect(other.locator("#entries > article[data-reply]")).to_have_count(0)
    assert not record.errors


def test_a_regenerated_answer_streams_in_the_tab_that_asked(page, ui, sessions, record) -> None:
    # The new answer is a sibling of the one the tab shows: it grows in its stand-in all the same.
    seeded = sessions.seed("01-linear")
    _open(ui, page, seeded.url + "e/358d8704/")
    ui.tool(page, "358d8704", "Regenerate").click()
    growing = page.locator("#entries > article[data-reply].is-streaming .stream")
    expect(growing.locator("strong").first).to_have_text("Offline responder")
    reply_id = ui.wait_position_change(page, "358d8704")
    reply = seeded.entries()[-1]
    assert reply["id"] == reply_id and reply["parentId"] == "c256703f"
    expect(page.locator("#entries > article[data-reply]")).to_have_count(0)
    expect(page.locator(f"#entry-{reply_id} .navigator__count")).to_have_text("2/2")
    assert not record.errors


def test_an_edit_being_answered_is_not_taken_for_a_move_by_someone_else(page, ui, sessions, record) -> None:
    # The edited message moves the session to a sibling of what the tab shows until the answer comes
    # with the reply: the tab once said "moved to another branch (by another tab or program)" meanwhile.
    seeded = sessions.seed("01-linear")
    _open(ui, page, seeded.url)
    meta = page.locator("#session-meta").inner_text()
    panel = ui.open_panel(page, "c256703f", "edit")
    panel.locator("textarea").fill("Asked differently")
    panel.locator("textarea").press("Control+Enter")
    expect(page.locator("#entries > article[data-reply].is-streaming .stream")).to_contain_text("Offline responder")
    expect(page.locator("#session-meta")).not_to_have_text(meta)  # the new message's batch has come
    assert seeded.entries()[-1]["message"]["content"] == "Asked differently"
    # (the note would come with that batch, at once; waiting for it to go would pass once the answer came)
    assert page.locator("#moved-note").count() == 0
    reply_id = ui.wait_position_change(page, LEAF)
    assert seeded.entries()[-1]["id"] == reply_id
    expect(page.locator("#moved-note")).to_have_count(0)
    assert not record.errors


def test_ctrl_enter_while_a_reply_is_written_says_why_nothing_was_sent(page, ui, sessions, record) -> None:
    seeded = sessions.seed("01-linear")
    _open(ui, page, seeded.url)
    _send(page, "Answer me slowly")
    expect(page.locator("#entries article.is-pending .stream")).to_contain_text("Offline responder")
    box = page.locator("#composer textarea[name=text]")
    box.fill("And then this")
    box.press("Control+Enter")
    expect(page.locator("#flash")).to_contain_text("A reply is being written on this branch")
    expect(box).to_have_value("And then this")
    page.locator("#composer [data-stop]").click()
    ui.wait_position_change(page, LEAF)
    assert [e["message"]["content"] for e in seeded.entries() if e.get("message", {}).get("role") == "user"][-1] == (
        "Answer me slowly"
    )
    assert not record.errors


def test_the_note_that_a_reply_is_being_written_goes_when_it_ends(new_page, ui, sessions, record) -> None:
    # In a tab that did not ask for the reply, the note once stayed after the reply had ended.
    seeded = sessions.seed("01-linear")
    asking, watching = _two_tabs(new_page, ui, seeded, "Answer me slowly")
    expect(watching.locator("#entries > article[data-reply].is-streaming .stream")).to_contain_text("Offline responder")
    box = watching.locator("#composer textarea[name=text]")
    box.fill("Waiting for my turn")
    box.press("Control+Enter")
    expect(watching.locator("#flash")).to_contain_text("A reply is being written on this branch")
    reply_id = ui.wait_position_change(asking, LEAF)
    ui.wait_position(watching, reply_id)
    expect(watching.locator("#flash")).to_be_empty()
    expect(box).to_have_value("Waiting for my turn")
    assert not record.errors


WATCH_SENDING = """() => {
  window.__seen = [];
  const look = () => {
    const box = document.querySelector('#composer textarea[name=text]');
    const replies = document.querySelectorAll('#entries > article.entry--assistant');
    const reply = replies[replies.length - 1];
    const marker = document.getElementById('new-below');
    const dock = document.querySelector('#transcript .dock').getBoundingClientRect();
    if (document.querySelector('#entries > article.is-pending')) {
      window.__seen.push({
        box: box ? box.value : null,
        focus: document.activeElement ? document.activeElement.id : '',
        marker: !!(marker && !marker.hidden),
        replyEnd: reply ? Math.round(reply.getBoundingClientRect().bottom - dock.top) : null,
      });
    }
    if (window.__seen.length < 2000) requestAnimationFrame(look);
  };
  requestAnimationFrame(look);
}"""


def _long_conversation(sessions):
    lines, parent = [], None
    for n in range(12):
        for role in ("user", "assistant"):
            entry_id = f"{role[0]}{n:07d}"
            body = {"role": role, "content": f"{role} {n}\n\n" + "words " * 80, "timestamp": 1772442000000 + n}
            if role == "assistant":
                body.update(content=[{"type": "text", "text": body["content"]}], provider="p", model="m", api="x")
                body.update(usage={}, stopReason="stop")
            lines.append(
                {
                    "type": "message",
                    "id": entry_id,
                    "parentId": parent,
                    "timestamp": f"2026-03-02T09:00:{n:02d}.000Z",
                    "message": body,
                }
            )
            parent = entry_id
    return sessions.write_lines(lines)


def test_sending_empties_the_box_keeps_focus_in_it_and_follows_the_reply(page, ui, sessions):
    seeded = _long_conversation(sessions)
    page.set_viewport_size({"width": 1280, "height": 700})
    ui.open(page, seeded.url)
    box = page.locator("#composer textarea[name=text]")
    box.focus()
    page.keyboard.type("What changed since yesterday?")
    page.evaluate(WATCH_SENDING)
    page.keyboard.press("Control+Enter")
    ui.wait_position_change(page, "a0000011")
    seen = page.evaluate("window.__seen")
    assert len(seen) > 3, seen
    # From the moment it was sent: the box is empty and keeps focus, the reply grows in view above the
    # docked composer (the reader was at the bottom: no "new messages below" marker).
    assert all(s["box"] == "" and s["focus"] == "composer-text" for s in seen), seen[:3]
    assert not any(s["marker"] for s in seen)
    assert all(s["replyEnd"] is not None and -150 <= s["replyEnd"] <= 2 for s in seen), [s["replyEnd"] for s in seen]
    # The message, its answer, and the title an untitled session gets below its first answer.
    *_, asked, _, title = seeded.entries()
    assert asked["message"]["content"] == "What changed since yesterday?" and title["type"] == "session_info"
    # Once the reply is stored, what is typed goes into the box for the next message.
    expect(box).to_be_focused()
    page.keyboard.type("and today?")
    expect(box).to_have_value("and today?")
    expect(page.locator(f"#entry-{ui.position(page)}")).to_be_in_viewport()
