"""Chatting in the browser: send (streamed reply, then the stored entry), edit & resend, regenerate."""

from __future__ import annotations

import json
import re

from playwright.sync_api import expect

# 01-linear: ... 052b9a9c (bash) → c256703f (user "Add a DELETE endpoint too.") → 358d8704 (assistant)
# → db26dc72 (session_info, the leaf).
LINEAR_USER = "c256703f"
LINEAR_USER_PARENT = "052b9a9c"
LINEAR_ASSISTANT = "358d8704"


def _new_session_from_list(page, ui, cwd: str, name: str = "") -> str:
    """Create a session through the "New session" form of the list page; returns its id."""
    ui.open(page, "/")
    new = page.locator("details.new-session")
    if new.get_attribute("open") is None:
        new.locator("summary").click()
    new.locator("input[name=cwd]").fill(cwd)
    if name:
        new.locator("input[name=name]").fill(name)
    new.get_by_role("button", name="Start").click()
    page.wait_for_url(re.compile(r"/s/[A-Za-z0-9._-]+/$"))
    ui.open(page, page.url)
    return page.url.rstrip("/").rsplit("/", 1)[-1]


def test_send_streams_the_reply_then_shows_the_stored_entry(page, ui, sessions, record, server):
    session_id = _new_session_from_list(page, ui, "/tmp/pitree-browser/send")
    files = sessions.all_files()
    assert len(files) == 1 and files[0].name.endswith(f"_{session_id}.jsonl")
    expect(page.locator("#entries .empty-note")).to_be_visible()
    assert ui.position(page) == ""

    text = "Please list three fruits?"
    page.locator("#composer textarea[name=text]").fill(text)
    page.locator("#composer button[type=submit]").click()

    # While the reply is written, its text streams (websocket) into a pending placeholder.
    pending = page.locator("#entries article.entry--assistant.is-pending .stream")
    page.wait_for_function(
        "() => { const s = document.querySelector('#entries article.is-pending .stream');"
        " return s && s.textContent.includes('Offline responder'); }"
    )
    streamed = pending.text_content()
    assert "Offline responder" in streamed
    # ...and the user's message is shown right away (the stored entry replaces the stand-in as soon as
    # the file has it).
    expect(page.locator("#entries article.entry--user").last).to_contain_text(text)

    # Then the POST's answer swaps in the transcript with the stored entries.
    expect(page.locator("#entries article.is-pending")).to_have_count(0)
    page.wait_for_function("() => document.getElementById('tab-state').dataset.position !== ''")
    lines = [line for line in _read(files[0]) if line["type"] != "session"]
    # The message, its answer, and below it the title an untitled session gets with its first answer.
    user, reply, title = lines[-3:]
    assert title["type"] == "session_info" and title["parentId"] == reply["id"]
    assert user["type"] == "message" and user["message"]["role"] == "user"
    assert user["message"]["content"] == text
    assert user["parentId"] is None
    assert reply["type"] == "message" and reply["message"]["role"] == "assistant"
    assert reply["parentId"] == user["id"]
    assert reply["message"]["stopReason"] == "stop"
    reply_text = "".join(b.get("text", "") for b in reply["message"]["content"] if b.get("type") == "text")
    assert "Offline responder" in reply_text and text in reply_text

    assert ui.position(page) == title["id"]
    assert ui.path_ids(page) == [user["id"], reply["id"], title["id"]]
    expect(page.locator(f"#entry-{user['id']}")).to_contain_text(text)
    expect(page.locator(f"#entry-{reply['id']}.entry--assistant")).to_contain_text("Offline responder")
    expect(page.locator(f"#entry-{reply['id']} .md li").first).to_be_visible()  # Markdown rendered
    assert page.url == f"{server.url}/s/{session_id}/"  # the tab keeps following the session
    # The composer now continues from the reply (below its title) and is usable again.
    expect(page.locator("#composer input[name=parent]")).to_have_value(title["id"])
    expect(page.locator("#composer textarea[name=text]")).to_be_enabled()
    expect(page.locator("#composer textarea[name=text]")).to_have_value("")
    # The tree panel followed.
    expect(page.locator(f"#tree-panel button.tree__node[data-entry='{reply['id']}']")).to_be_visible()
    assert not record.errors


def test_second_message_continues_the_branch(page, ui, sessions):
    seeded = sessions.seed("01-linear")
    ui.open(page, seeded.url)
    assert ui.position(page) == "db26dc72"
    page.locator("#composer textarea[name=text]").fill("And a PUT endpoint?")
    page.locator("#composer textarea[name=text]").press("Control+Enter")  # the keyboard shortcut sends
    new_position = ui.wait_position_change(page, "db26dc72")
    entries = seeded.entries()
    user, reply = entries[-2], entries[-1]
    assert user["message"]["content"] == "And a PUT endpoint?"
    assert user["parentId"] == "db26dc72"
    assert reply["parentId"] == user["id"] and reply["id"] == new_position
    # The earlier history is still on the shown path.
    ids = ui.path_ids(page)
    assert ids[-2:] == [user["id"], reply["id"]]
    assert LINEAR_ASSISTANT in ids


def test_empty_message_is_refused_and_the_page_recovers(page, ui, sessions):
    """A refused send (422) says why in #flash, writes nothing, and leaves no "writing…" placeholder
    behind: the transcript is as before and the composer usable again."""
    seeded = sessions.seed("01-linear")
    before = seeded.path.read_bytes()
    ui.open(page, seeded.url)
    shown = ui.path_ids(page)
    page.locator("#composer textarea[name=text]").fill("   ")
    page.locator("#composer button[type=submit]").click()
    expect(page.locator("#flash")).to_contain_text("Write a message first.")
    assert seeded.path.read_bytes() == before
    expect(page.locator("#entries article.is-pending")).to_have_count(0)
    expect(page.locator("#composer textarea[name=text]")).to_be_enabled()
    expect(page.locator("#composer button[type=submit]")).to_be_enabled()
    assert ui.path_ids(page) == shown


def test_refused_edit_keeps_the_entries_it_would_replace(page, ui, sessions):
    """Edit & resend hides the old branch while the reply is written; when the server refuses the
    edit (empty text), nothing was written, so the old entries must still be shown."""
    seeded = sessions.seed("01-linear")
    before = seeded.path.read_bytes()
    ui.open(page, seeded.url)
    shown = ui.path_ids(page)
    form = ui.open_panel(page, LINEAR_USER, "edit").locator("form.edit-form")
    form.locator("textarea[name=text]").fill("  ")
    form.get_by_role("button", name="Resend as a new branch").click()
    # The reason is said next to the form that was sent, not far away.
    expect(form.locator(".form-errors")).to_contain_text("Write a message first.")
    expect(page.locator("#flash")).to_be_empty()
    assert seeded.path.read_bytes() == before
    expect(page.locator("#entries article.is-pending")).to_have_count(0)
    assert ui.path_ids(page) == shown
    expect(page.locator(f"#entry-{LINEAR_USER}")).to_contain_text("Add a DELETE endpoint too.")


def test_edit_and_resend_makes_a_sibling_branch(page, ui, sessions):
    seeded = sessions.seed("01-linear")
    ui.open(page, seeded.url)
    assert page.locator(f"#entry-{LINEAR_USER} .navigator").count() == 0

    actions = ui.open_panel(page, LINEAR_USER, "edit")
    form = actions.locator("form.edit-form")
    expect(form.locator("textarea[name=text]")).to_have_value("Add a DELETE endpoint too.")
    form.locator("textarea[name=text]").fill("Add a PATCH endpoint instead.")
    form.get_by_role("button", name="Resend as a new branch").click()
    new_position = ui.wait_position_change(page, "db26dc72")

    entries = seeded.entries()
    user, reply = entries[-2], entries[-1]
    assert user["message"]["role"] == "user" and user["message"]["content"] == "Add a PATCH endpoint instead."
    assert user["parentId"] == LINEAR_USER_PARENT  # a sibling of the edited message
    assert reply["message"]["role"] == "assistant" and reply["parentId"] == user["id"]
    assert new_position == reply["id"]
    # The old message is untouched in the file.
    assert _text(seeded.entry(LINEAR_USER)["message"]["content"]) == "Add a DELETE endpoint too."

    ids = ui.path_ids(page)
    assert LINEAR_USER not in ids and LINEAR_ASSISTANT not in ids
    assert ids[-2:] == [user["id"], reply["id"]]
    new_user = page.locator(f"#entry-{user['id']}")
    expect(new_user).to_contain_text("Add a PATCH endpoint instead.")
    expect(new_user.locator(".navigator__count")).to_have_text("2/2")
    expect(new_user.locator(".nav-next")).to_be_disabled()

    # Switching back shows the old branch, with its answer.
    new_user.locator(".nav-prev").click()
    page.locator(f"#entry-{LINEAR_USER}").wait_for()
    ids = ui.path_ids(page)
    assert LINEAR_USER in ids and LINEAR_ASSISTANT in ids and user["id"] not in ids
    old_user = page.locator(f"#entry-{LINEAR_USER}")
    expect(old_user).to_contain_text("Add a DELETE endpoint too.")
    expect(old_user.locator(".navigator__count")).to_have_text("1/2")
    expect(old_user.locator(".nav-prev")).to_be_disabled()
    expect(page.locator(f"#entry-{LINEAR_ASSISTANT}")).to_contain_text("Done: added DELETE /todos/<id>.")

    # ...and forward again.
    old_user.locator(".nav-next").click()
    page.locator(f"#entry-{user['id']}").wait_for()
    expect(page.locator(f"#entry-{user['id']} .navigator__count")).to_have_text("2/2")
    assert LINEAR_USER not in ui.path_ids(page)


def test_regenerate_makes_a_sibling_answer(page, ui, sessions):
    seeded = sessions.seed("01-linear")
    ui.open(page, seeded.url)
    ui.tool(page, LINEAR_ASSISTANT, "Regenerate").click()
    new_position = ui.wait_position_change(page, "db26dc72")

    reply = seeded.entries()[-1]
    assert reply["type"] == "message" and reply["message"]["role"] == "assistant"
    assert reply["parentId"] == LINEAR_USER  # a sibling of the regenerated answer
    assert reply["id"] == new_position
    assert "Offline responder" in "".join(b.get("text", "") for b in reply["message"]["content"])

    ids = ui.path_ids(page)
    assert ids[-2:] == [LINEAR_USER, reply["id"]] and LINEAR_ASSISTANT not in ids
    regenerated = page.locator(f"#entry-{reply['id']}")
    expect(regenerated.locator(".navigator__count")).to_have_text("2/2")

    regenerated.locator(".nav-prev").click()
    page.locator(f"#entry-{LINEAR_ASSISTANT}").wait_for()
    expect(page.locator(f"#entry-{LINEAR_ASSISTANT} .navigator__count")).to_have_text("1/2")
    expect(page.locator(f"#entry-{LINEAR_ASSISTANT}")).to_contain_text("Done: added DELETE /todos/<id>.")
    assert reply["id"] not in ui.path_ids(page)

    page.locator(f"#entry-{LINEAR_ASSISTANT} .nav-next").click()
    page.locator(f"#entry-{reply['id']}").wait_for()
    expect(page.locator(f"#entry-{reply['id']} .navigator__count")).to_have_text("2/2")
    assert LINEAR_ASSISTANT not in ui.path_ids(page)


def _text(content) -> str:
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")


def _read(path):
    return [json.loads(raw) for raw in path.read_bytes().split(b"\n") if raw.strip()]


# Recorded in the page every animation frame while a reply is written: what a reader sees then.
def test_a_refused_message_comes_back_into_the_box(page, ui, sessions):
    seeded = sessions.seed("01-linear")
    before = seeded.path.read_bytes()
    ui.open(page, seeded.url)
    # The tab names an entry the file does not hold (as a stale page would): the server refuses. The
    # post is changed as it leaves, not the box's field: a fragment arriving meanwhile may set that anew.
    page.evaluate(
        """document.body.addEventListener("htmx:configRequest", (ev) => {
             if (ev.detail.elt.id === "composer") ev.detail.parameters.parent = "gone0000";
           })"""
    )
    box = page.locator("#composer textarea[name=text]")
    box.fill("A message worth keeping")
    box.press("Control+Enter")
    expect(page.locator("#flash")).to_contain_text("is not in this session any more")
    expect(box).to_have_value("A message worth keeping")
    expect(box).to_be_focused()
    expect(page.locator("#entries article.is-pending")).to_have_count(0)
    assert seeded.path.read_bytes() == before
