"""What a new user ran into, each fixed and kept fixed: forms that wrote under the position the page was
loaded at, actions inside an opened compaction that failed, a header that kept saying "0 messages",
errors far from the composer that outlived the next send, and Regenerate repeating itself."""

from __future__ import annotations

import json
import re

from playwright.sync_api import expect

# 02-tree-branches: f87f9c1c (u1) → 2f760a8d (a1) → { 97690895 (u2) … → 750a4556 (leaf),
#                                                     07721729 (branch_summary) → … → de4f0d3a }
U2, BRANCH_END, LEAF = "97690895", "de4f0d3a", "750a4556"
# 04-compaction: the card folds 60615c59 (model_change), fc977eb2, f18080f1, 76bb41f7, f04a36ab.
FOLDED_REPLY, FOLDED_USER = "f18080f1", "76bb41f7"


def _send(page, ui, text: str) -> str:
    before = ui.position(page)
    page.locator("#composer textarea[name=text]").fill(text)
    page.locator("#composer textarea[name=text]").press("Control+Enter")
    return ui.wait_position_change(page, before)


def _rename(page, name: str) -> None:
    rename = page.locator("details.rename")
    if rename.get_attribute("open") is None:
        rename.locator("summary").click()
    rename.locator("input[name=name]").fill(name)
    rename.get_by_role("button", name="Save name").click()
    expect(page.locator("#session-title")).to_have_text(name)


def test_rename_after_switching_branch_or_sending_writes_where_the_tab_stands(page, ui, sessions, record) -> None:
    seeded = sessions.seed("02-tree-branches")
    ui.open(page, seeded.url)
    assert ui.position(page) == LEAF
    page.locator(f"#entry-{U2} .nav-next").click()  # the page was loaded at LEAF; now it stands elsewhere
    ui.wait_position(page, BRANCH_END)
    _rename(page, "Renamed on the other branch")
    last = seeded.lines()[-1]
    assert last["type"] == "session_info" and last["parentId"] == BRANCH_END
    # The rename moves the tab onto its entry, in place; a message sent then moves the tab on again.
    ui.wait_position(page, last["id"])
    reply = _send(page, ui, "Carry on")
    _rename(page, "Renamed after sending")
    newest = seeded.lines()[-1]
    assert newest["type"] == "session_info" and newest["parentId"] == reply
    # The newest messages are still on the file's position: nothing jumped to a side branch.
    assert seeded.entry(reply)["parentId"] == seeded.lines()[-3]["id"]
    assert not record.errors


def test_actions_inside_an_opened_compaction_work(page, ui, sessions, record, server) -> None:
    seeded = sessions.seed("04-compaction")
    ui.open(page, seeded.url)
    card = page.locator("#entries > article.entry--fold details.fold")
    card.locator("> summary").click()
    expect(card.locator(f"#entry-{FOLDED_REPLY}")).to_be_visible()

    # A label on a folded entry is stored and shown there: the card stays open across the answer.
    form = ui.open_panel(page, FOLDED_REPLY, "label").locator("form.label-form")
    form.locator("input[name=label]").fill("set-up-done")
    form.get_by_role("button", name="Save label").click()
    expect(page.locator(f"#entry-{FOLDED_REPLY} > .entry__head .tag")).to_have_text("set-up-done")
    last = seeded.lines()[-1]
    assert last["type"] == "label" and last["targetId"] == FOLDED_REPLY and last["label"] == "set-up-done"
    expect(card).to_have_attribute("open", "")

    # Fork from a folded entry makes the new session and opens it.
    ui.open_panel(page, FOLDED_USER, "fork").get_by_role("button", name="Fork into a new session").click()
    page.wait_for_url(re.compile(rf"{re.escape(server.url)}/s/(?!{seeded.id})[A-Za-z0-9._-]+/$"))
    forked = [f for f in sessions.all_files() if f != seeded.path]
    assert len(forked) == 1
    ui.open(page, page.url)
    assert ui.path_ids(page)[-2] == FOLDED_USER  # then the fork's name, below it
    assert json.loads(forked[0].read_bytes().splitlines()[-1])["type"] == "session_info"
    assert not record.errors
    assert not [m for m in record.console_errors if "targetError" in m or "htmx" in m]


def test_the_header_counts_messages_as_they_come(page, ui, sessions) -> None:
    # The pushes of this tab's socket can be held back, to let the answer to a send come first.
    held: list[str | bytes] = []
    hold = {"on": False}
    sockets: list = []

    def route(ws) -> None:
        sockets.append(ws)
        server = ws.connect_to_server()
        server.on_message(lambda message: held.append(message) if hold["on"] else ws.send(message))
        ws.on_message(server.send)

    page.route_web_socket(re.compile(r"/ws/s/"), route)
    page.goto("/")
    new = page.locator("details.new-session")
    if new.get_attribute("open") is None:
        new.locator("summary").click()
    new.locator("input[name=cwd]").fill("/tmp/pitree-browser/count")
    new.get_by_role("button", name="Start").click()
    page.wait_for_url(re.compile(r"/s/[A-Za-z0-9._-]+/$"))
    ui.open(page, page.url)
    expect(page.locator("#session-meta")).to_contain_text("0 messages")
    for turn in range(2):
        _send(page, ui, f"Message number {turn + 1}")
    expect(page.locator("#session-meta")).to_contain_text("4 messages")
    expect(page.locator("#session-title")).to_have_text("Message number 1")
    # The third turn's entries reach the tab with the answer to its send, before the socket's pushes.
    hold["on"] = True
    _send(page, ui, "Message number 3")
    assert held  # the file's new lines were pushed meanwhile, and held back
    hold["on"] = False
    for message in held:
        sockets[-1].send(message)
    expect(page.locator("#session-meta")).to_contain_text("6 messages")


def test_a_refusal_is_said_at_the_composer_and_gone_after_the_next_send(page, ui, sessions) -> None:
    seeded = sessions.seed("01-linear")
    ui.open(page, seeded.url)
    page.locator("#composer textarea[name=text]").fill("   ")
    page.locator("#composer .send").click()
    flash = page.locator("#flash")
    expect(flash).to_contain_text("Write a message first.")
    # Right above the message box, in view at the bottom of the window.
    expect(flash).to_be_in_viewport()
    box, composer = flash.bounding_box(), page.locator("#composer").bounding_box()
    assert 0 <= composer["y"] - (box["y"] + box["height"]) < 120
    _send(page, ui, "Now with words")
    expect(flash).to_be_empty()


def test_regenerate_writes_a_different_answer_each_time(page, ui, sessions) -> None:
    seeded = sessions.seed("01-linear")
    ui.open(page, seeded.url)
    first = _send(page, ui, "Same question?")
    ui.tool(page, first, "Regenerate").click()
    second = ui.wait_position_change(page, first)
    ui.tool(page, second, "Regenerate").click()
    third = ui.wait_position_change(page, second)
    texts = [seeded.entry(i)["message"]["content"][0]["text"] for i in (first, second, third)]
    assert len(set(texts)) == 3, texts
    assert len({seeded.entry(i)["parentId"] for i in (first, second, third)}) == 1  # siblings
    expect(page.locator(f"#entry-{third} .navigator__count")).to_have_text("3/3")
