"""Live pages: what one tab, the command line or another writer appends shows in every open tab, at
the right place, and a tab whose socket drops catches up exactly."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from playwright.sync_api import expect
from support.lines import message

REPO = Path(__file__).resolve().parents[2]
# 01-linear's active branch ends … → c256703f (user) → 358d8704 (assistant) → db26dc72 (session_info, the leaf).
LEAF = "db26dc72"


def _live(page: Any) -> None:
    """Wait until the page's socket has caught up and follows the file."""
    page.wait_for_function("() => document.getElementById('live').dataset.live === 'live'")


def _open(ui: Any, page: Any, path: str) -> None:
    ui.open(page, path)
    _live(page)


def _manage(server: Any, *args: str) -> str:
    """``manage.py pitree ARGS`` in a process of its own, on the server's sessions folder; its output."""
    env = {**os.environ, "PITREE_SESSIONS_DIR": str(server.root), "PITREE_FSYNC": "0"}
    done = subprocess.run(
        [sys.executable, "manage.py", "pitree", *args], cwd=REPO, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def _cli_append(server: Any, seeded: Any, text: str, *extra: str) -> str:
    """``manage.py pitree append``; returns the new entry's id."""
    return _manage(server, "append", str(seeded.path), "--role", "user", "--text", text, *extra)


def _no_console_errors(record: Any) -> None:
    assert not record.errors, record.errors
    assert not [e for e in record.console_errors if "htmx" in e or "oob" in e.lower()], record.console_errors


def test_what_one_tab_sends_shows_in_the_other(new_page, ui, sessions, record) -> None:
    seeded = sessions.seed("01-linear")
    first, second = new_page(), new_page()
    for page in (first, second):
        _open(ui, page, seeded.url)
    first.locator("#composer textarea[name=text]").fill("Shown in both tabs?")
    first.locator("#composer button[type=submit]").click()
    ui.wait_position_change(first, LEAF)

    user, reply = seeded.entries()[-2:]
    assert user["parentId"] == LEAF and user["message"]["content"] == "Shown in both tabs?"
    assert reply["parentId"] == user["id"] and reply["message"]["role"] == "assistant"
    ui.wait_position(second, reply["id"])
    expect(second.locator(f"#entry-{user['id']}")).to_contain_text("Shown in both tabs?")
    expect(second.locator(f"#entry-{reply['id']}.entry--assistant .md")).to_contain_text("Offline responder")
    assert ui.path_ids(second)[-2:] == [user["id"], reply["id"]]
    assert ui.path_ids(first) == ui.path_ids(second)
    # The second tab now answers the newest entry; its address still follows the session.
    expect(second.locator("#composer input[name=parent]")).to_have_value(reply["id"])
    assert second.url.endswith(seeded.url)
    expect(second.locator("#position-note")).to_be_hidden()
    _no_console_errors(record)


def test_the_second_tab_answers_the_first_tab_s_reply_not_a_sibling(new_page, ui, sessions, record) -> None:
    seeded = sessions.seed("01-linear")
    first, second = new_page(), new_page()
    for page in (first, second):
        _open(ui, page, seeded.url)
    first.locator("#composer textarea[name=text]").fill("First tab speaks")
    first.locator("#composer button[type=submit]").click()
    reply_id = ui.wait_position_change(first, LEAF)
    assert seeded.entries()[-1]["id"] == reply_id
    ui.wait_position(second, reply_id)

    second.locator("#composer textarea[name=text]").fill("Second tab answers")
    second.locator("#composer button[type=submit]").click()
    ui.wait_position_change(second, reply_id)
    entries = seeded.entries()
    mine = next(e for e in entries if e.get("message", {}).get("content") == "Second tab answers")
    assert mine["parentId"] == reply_id  # continues the branch: no sibling of the first tab's message
    children_of_leaf = [e for e in entries if e.get("parentId") == LEAF]
    assert len(children_of_leaf) == 1
    ui.wait_position(first, entries[-1]["id"])
    _no_console_errors(record)


def test_a_command_line_append_shows_in_every_tab(new_page, ui, sessions, server, record) -> None:
    seeded = sessions.seed("01-linear")
    pages = [new_page(), new_page()]
    for page in pages:
        _open(ui, page, seeded.url)
    before = seeded.path.read_bytes()
    new_id = _cli_append(server, seeded, "Written by **the CLI**")
    assert seeded.path.read_bytes().startswith(before)
    assert seeded.entry(new_id)["parentId"] == LEAF
    for page in pages:
        ui.wait_position(page, new_id)
        expect(page.locator(f"#entry-{new_id}")).to_contain_text("Written by **the CLI**")
        expect(page.locator(f"#entry-{new_id}")).to_have_class("entry entry--user is-position")
        expect(page.locator(f"#tree-panel button.tree__node[data-entry='{new_id}']")).to_be_visible()
        expect(page.locator("#session-meta")).to_contain_text("8 messages")
        assert ui.path_ids(page).count(new_id) == 1
    _no_console_errors(record)


def test_changes_elsewhere_update_counts_and_labels_without_moving_the_tab(new_page, ui, sessions, server, record):
    seeded = sessions.seed("02-tree-branches")  # leaf 750a4556, on the branch through 97690895
    page = new_page()
    _open(ui, page, seeded.url)
    path_before = ui.path_ids(page)
    expect(page.locator("#entry-97690895 .navigator__count")).to_have_text("1/2")

    sibling = _cli_append(server, seeded, "A third approach", "--parent", "2f760a8d")
    expect(page.locator("#entry-97690895 .navigator__count")).to_have_text("1/3")
    # The file's position is on the new branch now: the tab says so, and stays.
    expect(page.locator("#moved-note")).to_contain_text("The session moved to another branch")
    expect(page.locator("#position-note")).to_be_hidden()
    assert ui.path_ids(page) == path_before and ui.position(page) == "750a4556"
    expect(page.locator(f"#tree-panel button.tree__node[data-entry='{sibling}']")).to_be_visible()

    _manage(server, "label", str(seeded.path), "97690895", "from-cli")
    expect(page.locator("#entry-97690895 > .entry__head > .tag")).to_have_text("from-cli")
    assert ui.path_ids(page) == path_before and ui.position(page) == "750a4556"
    _no_console_errors(record)


def test_a_label_set_elsewhere_leaves_the_one_being_typed(page, ui, sessions, server, record) -> None:
    seeded = sessions.seed("01-linear")
    _open(ui, page, seeded.url)
    panel = ui.open_panel(page, "358d8704", "label")
    field = panel.locator("input[name=label]")
    field.fill("mine, half typed")
    _manage(server, "label", str(seeded.path), "358d8704", "from-cli")
    expect(page.locator("#entry-358d8704 > .entry__head > .tag")).to_have_text("from-cli")
    expect(field).to_have_value("mine, half typed")
    expect(field).to_be_focused()
    _no_console_errors(record)


def test_a_compaction_written_elsewhere_folds_the_history_in_every_tab(page, ui, sessions, server, record) -> None:
    # Appended, a compaction changes how the whole branch reads: its summary takes the place of the
    # history before the entry it keeps from (its line's "its summary" once led nowhere in other tabs).
    seeded = sessions.seed("01-linear")
    _open(ui, page, seeded.url)
    assert ui.path_ids(page)[0] != "c256703f"
    summary = "What pi kept of the history"
    compaction = _manage(server, "compact", str(seeded.path), "--keep-from", "c256703f", "--summary", summary)
    ui.wait_position(page, compaction)
    expect(page.locator(f"#fold-{compaction}")).to_contain_text(summary)
    expect(page.locator(f"#entry-{compaction} a[href='#fold-{compaction}']")).to_be_visible()
    page.wait_for_function(
        "() => document.querySelector('#entries > article.entry[data-entry]').dataset.entry === 'c256703f'"
    )
    assert ui.path_ids(page) == ["c256703f", "358d8704", LEAF, compaction]
    _no_console_errors(record)


def test_panels_open_on_entries_keep_what_is_typed_when_the_page_is_fetched_again(
    page, ui, sessions, server, record
) -> None:
    # A compaction written elsewhere on the tab's branch fetches its page again: the Edit & resend and
    # Label panels open there, and what was typed in them, were lost.
    seeded = sessions.seed("01-linear")
    _open(ui, page, seeded.url)
    label = ui.open_panel(page, "358d8704", "label").locator("input[name=label]")
    label.fill("half a label")
    edit = ui.open_panel(page, "c256703f", "edit").locator("textarea[name=text]")
    edit.fill("A better question, half written")
    edit.press("ArrowLeft")
    compaction = _manage(server, "compact", str(seeded.path), "--keep-from", "c256703f", "--summary", "Kept")
    ui.wait_position(page, compaction)
    expect(page.locator(f"#fold-{compaction}")).to_contain_text("Kept")  # the page as fetched again
    expect(edit).to_have_value("A better question, half written")
    expect(edit).to_be_focused()
    assert edit.evaluate("(el) => [el.selectionStart, el.selectionEnd]") == [30, 30]  # the caret where it was
    expect(label).to_have_value("half a label")
    expect(page.locator("#entry-c256703f > .entry__tools [data-panel='edit']")).to_have_attribute(
        "aria-expanded", "true"
    )
    # Their forms still send: the label is saved.
    page.locator("#entry-358d8704 .label-form button[type=submit]").click()
    expect(page.locator("#entry-358d8704 > .entry__head > .tag")).to_have_text("half a label")
    _no_console_errors(record)


def test_text_typed_in_a_panel_whose_entry_is_gone_after_following_is_kept(page, ui, sessions, server, record) -> None:
    seeded = sessions.seed("02-tree-branches")  # leaf 750a4556, on the branch through 97690895
    _open(ui, page, seeded.url)
    ui.open_panel(page, "97690895", "edit").locator("textarea[name=text]").fill("What I meant to ask")
    assert _manage(server, "navigate", str(seeded.path), "de4f0d3a")  # the other branch's last answer
    page.locator("#moved-note").get_by_role("button", name="Follow it").click()
    ui.wait_position(page, "de4f0d3a")
    expect(page.locator("#entry-97690895")).to_have_count(0)
    expect(page.locator("#composer textarea[name=text]")).to_have_value("What I meant to ask")
    expect(page.locator("#flash")).to_contain_text(
        "not on this page any more: what you typed there is in the message box"
    )
    _no_console_errors(record)


def test_pitree_navigate_from_another_process_offers_to_follow_without_a_reload(
    new_page, ui, sessions, server, record
) -> None:
    seeded = sessions.seed("02-tree-branches")  # leaf 750a4556, on the branch through 97690895
    page = new_page()
    _open(ui, page, seeded.url)
    path_before = ui.path_ids(page)
    page.evaluate("window.__loadedOnce = true")  # gone if the page were loaded again
    assert _manage(server, "navigate", str(seeded.path), "de4f0d3a")  # the other branch's last answer
    note = page.locator("#moved-note")
    expect(note).to_have_text("The session moved to another branch (by another tab or program). Follow it")
    assert ui.path_ids(page) == path_before and ui.position(page) == "750a4556"  # no jump
    note.get_by_role("button", name="Follow it").click()
    ui.wait_position(page, "de4f0d3a")
    assert ui.path_ids(page)[-1] == "de4f0d3a" and "97690895" not in ui.path_ids(page)
    assert page.evaluate("window.__loadedOnce") is True and page.url.endswith(seeded.url)
    expect(note).to_have_count(0)
    expect(page.locator("#position-note")).to_be_hidden()
    # It follows the session from there.
    after = _cli_append(server, seeded, "on the followed branch")
    ui.wait_position(page, after)
    _no_console_errors(record)


def test_a_rename_by_another_process_shows_in_the_session_header(page, ui, sessions, server, record) -> None:
    seeded = sessions.seed("01-linear")
    _open(ui, page, seeded.url)
    _manage(server, "rename", str(seeded.path), "Renamed from the CLI")
    expect(page.locator("#session-title")).to_have_text("Renamed from the CLI")
    expect(page).to_have_title("Renamed from the CLI · pitree")
    # Its Rename field holds the new name: saved as it was, it would have undone the rename.
    page.locator("details.rename > summary").click()
    expect(page.locator("details.rename input[name=name]")).to_have_value("Renamed from the CLI")
    _no_console_errors(record)


def _cut_socket(page: Any) -> Any:
    """Route the page's session socket through the test; returns a switch that cuts it (``cut()``)
    and lets it connect again (``restore()``)."""
    routes: list[Any] = []
    blocked = {"on": False}

    def route(ws: Any) -> None:
        if blocked["on"]:
            ws.close(code=1013)  # "try again later": the extension retries
            return
        ws.connect_to_server()
        routes.append(ws)

    class Switch:
        def cut(self) -> None:
            blocked["on"] = True
            routes[-1].close(code=1012)
            page.wait_for_function("() => document.getElementById('live').dataset.live === 'closed'")

        def restore(self) -> None:
            blocked["on"] = False

    page.route_web_socket("**/ws/s/**", route)
    return Switch()


def test_a_stale_tab_s_message_is_refused_and_continues_from_the_latest(page, ui, sessions, server, record) -> None:
    seeded = sessions.seed("01-linear")
    switch = _cut_socket(page)
    _open(ui, page, seeded.url)
    switch.cut()
    badge = page.locator("#live-status")
    expect(badge).to_have_text("Reconnecting…")
    by_pi = _cli_append(server, seeded, "pi went on meanwhile")  # under the tab's position, as pi appends
    before = seeded.path.read_bytes()
    page.locator("#composer textarea[name=text]").fill("Sent from a stale tab")
    page.locator("#composer button[type=submit]").click()
    flash = page.locator("#flash")
    expect(flash).to_contain_text("Nothing was sent: the conversation went on")
    assert seeded.path.read_bytes() == before  # no sibling made behind the reader's back
    expect(page.locator("#composer textarea[name=text]")).to_have_value("Sent from a stale tab")
    assert ui.position(page) == LEAF

    flash.get_by_role("button", name="Continue from the latest").click()
    ui.wait_position_change(page, LEAF)
    user, reply = seeded.entries()[-2:]
    assert user["parentId"] == by_pi and user["message"]["content"] == "Sent from a stale tab"
    assert reply["parentId"] == user["id"] and ui.position(page) == reply["id"]
    assert ui.path_ids(page)[-3:] == [by_pi, user["id"], reply["id"]]
    switch.restore()
    _live(page)
    expect(badge).to_be_hidden()
    assert not record.errors


def _send_from_a_stale_tab(page: Any, ui: Any, server: Any, seeded: Any, text: str) -> tuple[Any, str]:
    """A tab whose socket is cut while pi goes on sends ``text`` (the server refuses it: the
    conversation went on). Returns the socket's switch and the id of pi's entry."""
    switch = _cut_socket(page)
    _open(ui, page, seeded.url)
    switch.cut()
    by_pi = _cli_append(server, seeded, "pi went on meanwhile")
    page.locator("#composer textarea[name=text]").fill(text)
    page.locator("#composer button[type=submit]").click()
    return switch, by_pi


def test_continue_from_the_latest_follows_what_the_tab_has_shown_since(page, ui, sessions, server, record) -> None:
    # Offered while the tab was behind, "Continue from the latest" names the newest entry then; once the
    # tab has shown more of that branch (a reply, pi going on), it once sent there anyway and was refused
    # a second time.
    seeded = sessions.seed("01-linear")
    switch, by_pi = _send_from_a_stale_tab(page, ui, server, seeded, "Sent from a stale tab")
    flash = page.locator("#flash")
    expect(flash).to_contain_text("Nothing was sent: the conversation went on")
    switch.restore()
    _live(page)
    ui.wait_position(page, by_pi)
    then = _cli_append(server, seeded, "and pi went on again", "--parent", by_pi)
    ui.wait_position(page, then)  # the tab shows it, under the refusal's offer

    flash.get_by_role("button", name="Continue from the latest").click()
    ui.wait_position_change(page, then)
    user, reply = seeded.entries()[-2:]
    assert user["parentId"] == then and user["message"]["content"] == "Sent from a stale tab"
    assert reply["parentId"] == user["id"] and ui.position(page) == reply["id"]
    expect(flash).not_to_contain_text("Nothing was sent")
    expect(page.locator("#composer textarea[name=text]")).to_have_value("")
    assert not record.errors


def test_a_stale_tab_may_send_as_a_new_branch_on_purpose(page, ui, sessions, server, record) -> None:
    seeded = sessions.seed("01-linear")
    switch, by_pi = _send_from_a_stale_tab(page, ui, server, seeded, "A branch of my own")
    page.locator("#flash").get_by_role("button", name="Send as a new branch here").click()
    ui.wait_position_change(page, LEAF)
    user = seeded.entries()[-2]
    assert user["parentId"] == LEAF and user["message"]["content"] == "A branch of my own"
    siblings = [e["id"] for e in seeded.entries() if e.get("parentId") == LEAF]
    assert siblings == [by_pi, user["id"]]  # the sibling, made because the reader chose it
    switch.restore()
    assert not record.errors


def test_a_tab_whose_socket_drops_catches_up_exactly(page, ui, sessions, server, record) -> None:
    seeded = sessions.seed("01-linear")
    switch = _cut_socket(page)
    _open(ui, page, seeded.url)
    switch.cut()  # the server restarted, as far as the page knows
    missed = [_cli_append(server, seeded, f"while the socket was down {i}") for i in range(3)]
    switch.restore()
    ui.wait_position(page, missed[-1])
    _live(page)
    after = _cli_append(server, seeded, "after the socket came back")
    ui.wait_position(page, after)
    shown = ui.path_ids(page)
    assert shown[-4:] == [*missed, after] and len(shown) == len(set(shown))
    assert [e["id"] for e in seeded.entries()[-4:]] == [*missed, after]
    assert not record.errors


def test_a_reader_scrolled_up_gets_a_marker_instead_of_a_jump(page, ui, sessions, server, record) -> None:
    seeded = sessions.seed("01-linear")
    page.set_viewport_size({"width": 900, "height": 400})
    _open(ui, page, seeded.url)
    page.evaluate("window.scrollTo(0, 0)")
    new_id = _cli_append(server, seeded, "Something new below")
    ui.wait_position(page, new_id)
    marker = page.locator("#new-below")
    expect(marker).to_be_visible()
    assert page.evaluate("window.scrollY") == 0
    marker.click()
    expect(marker).to_be_hidden()
    expect(page.locator(f"#entry-{new_id}")).to_be_in_viewport()
    # At the bottom, the next entry simply shows.
    other = _cli_append(server, seeded, "And another")
    ui.wait_position(page, other)
    expect(page.locator(f"#entry-{other}")).to_be_in_viewport()
    expect(marker).to_be_hidden()
    assert not record.errors


def test_the_session_list_shows_new_sessions_and_renames(page, ui, sessions, server, record) -> None:
    seeded = sessions.seed("01-linear")
    ui.open(page, "/")
    page.wait_for_function("() => document.getElementById('session-groups').dataset.live === 'live'")
    made = _manage(server, "new", "--cwd", "/home/bob/live", "--name", "Made by the CLI")
    assert Path(made).is_file()
    expect(page.locator("#session-groups")).to_contain_text("Made by the CLI")
    expect(page.locator("#session-groups [title='/home/bob/live']")).to_have_text("bob/live")
    _manage(server, "rename", str(seeded.path), "Renamed live")
    expect(page.locator(f"#session-groups a[href='{seeded.url}']")).to_have_text("Renamed live")
    _no_console_errors(record)


def test_a_deleted_session_stops_the_tab_without_retries(page, ui, sessions, record) -> None:
    seeded = sessions.seed("01-linear")
    _open(ui, page, seeded.url)
    seeded.path.unlink()
    page.wait_for_function("() => document.getElementById('live').dataset.live === 'stopped'")
    expect(page.locator("#flash")).to_contain_text("file is gone")
    # htmx's ws extension retries 1006/1011/1012/1013 within about a second; 4404 it leaves alone.
    page.wait_for_timeout(2500)
    assert [url for url in record.websockets if "/ws/s/" in url] == [
        f"{ui.server.url.replace('http', 'ws')}/ws/s/{seeded.id}/"
    ]
    assert not record.errors


def test_a_replaced_file_is_fetched_again_keeping_the_draft(page, ui, sessions, server, record) -> None:
    seeded = sessions.seed("01-linear")
    _open(ui, page, seeded.url)
    page.locator("#composer textarea[name=text]").fill("half-written thought")
    lines = seeded.path.read_bytes().splitlines(keepends=True)
    replacement = seeded.path.with_suffix(".new")
    replacement.write_bytes(b"".join(lines[:9]))  # up to c256703f, the user message
    replacement.replace(seeded.path)
    ui.wait_position(page, "c256703f")
    assert ui.path_ids(page)[-1] == "c256703f" and "358d8704" not in ui.path_ids(page)
    expect(page.locator("#composer textarea[name=text]")).to_have_value("half-written thought")
    # What the reader saw changed: the tab says why.
    expect(page.locator("#flash")).to_contain_text("This session's file was replaced or rewritten")
    # And it follows the new file from there.
    new_id = _cli_append(server, seeded, "after the replacement", "--parent", "c256703f")
    ui.wait_position(page, new_id)
    assert ui.path_ids(page)[-2:] == ["c256703f", new_id]
    assert not record.errors


def test_back_brings_the_page_up_to_date_with_what_the_file_gained(page, ui, sessions, record) -> None:
    """The page Back puts back is the one htmx kept when the tab left it: what pi wrote meanwhile (a
    label, a third sibling) is applied to it, as a reload would show it."""
    seeded = sessions.write_lines(
        [
            message("aaaa0001", None, "user", "root question"),
            message("aaaa0002", "aaaa0001", "assistant", "answer one"),
            message("aaaa0003", "aaaa0002", "user", "branch A question"),
            message("aaaa0004", "aaaa0003", "assistant", "answer A"),
            message("aaaa0005", "aaaa0002", "user", "branch B question"),
            message("aaaa0006", "aaaa0005", "assistant", "answer B"),
        ]
    )
    _open(ui, page, seeded.entry_url("aaaa0006"))
    count = page.locator("#entry-aaaa0005 .navigator__count")
    expect(count).to_have_text("2/2")
    page.locator("#entry-aaaa0005 .nav-prev").click()
    expect(page.locator("#entry-aaaa0003")).to_be_visible()
    label = {"type": "label", "id": "aaaa0007", "parentId": "aaaa0004", "timestamp": "2026-03-02T09:00:02.000Z"}
    third = message("aaaa0008", "aaaa0002", "user", "branch C question")
    seeded.append({**label, "targetId": "aaaa0001", "label": "IMPORTANT"}, third)
    expect(page.locator("#entry-aaaa0001 .tag[title=label]")).to_have_text("IMPORTANT")
    page.go_back()
    expect(page.locator("#entry-aaaa0006")).to_be_visible()
    expect(page.locator("#entry-aaaa0005 .navigator__count")).to_have_text("2/3")
    expect(page.locator("#entry-aaaa0001 .tag[title=label]")).to_have_text("IMPORTANT")
    _no_console_errors(record)


def test_pages_too_large_for_the_history_cache_come_back_without_an_error(page, ui, sessions, record) -> None:
    """htmx keeps the pages Back returns to in sessionStorage, whose quota a few large pages fill: the
    cache keeps within its budget (no page saved fails, none logs an error), and Back still works."""
    long = "lorem ipsum dolor " * 20_000  # a page holding two of these is about 1.5 M characters
    lines = [
        message("bbbb0001", None, "user", "root " + long),
        message("bbbb0002", "bbbb0001", "assistant", "answer " + long),
    ]
    for branch in range(1, 7):
        lines.append(message(f"cccc000{branch}", "bbbb0002", "user", f"question {branch}"))
        lines.append(message(f"dddd000{branch}", f"cccc000{branch}", "assistant", f"answer {branch}"))
    seeded = sessions.write_lines(lines)
    _open(ui, page, seeded.entry_url("dddd0001"))
    for branch in range(2, 7):  # each switch keeps the page it leaves, at a URL of its own
        page.locator(f"#entry-cccc000{branch - 1} .nav-next").click()
        expect(page.locator(f"#entry-cccc000{branch}")).to_be_visible()
    kept = page.evaluate(
        "JSON.parse(sessionStorage.getItem('htmx-history-cache') || '[]').map((i) => i.content.length)"
    )
    assert kept and sum(kept) <= 2_000_000, kept
    for branch in (5, 4, 3):
        page.go_back()
        expect(page.locator(f"#entry-cccc000{branch}")).to_be_visible()
        expect(page.locator("#entry-bbbb0001")).to_contain_text("root lorem ipsum")
    _no_console_errors(record)


def test_offline_the_badge_says_so_and_a_send_says_it_reached_no_server(page, ui, sessions) -> None:
    """Offline, the socket may stay open with nothing getting through: the badge says so at once, a
    message sent says it reached no server (and is back in the box), and back online the tab is live."""
    seeded = sessions.seed("01-linear")
    _open(ui, page, seeded.url)
    badge = page.locator("#live-status")
    page.context.set_offline(True)
    expect(badge).to_be_visible()
    expect(badge).to_contain_text("Offline")
    box = page.locator("#composer textarea[name=text]")
    box.fill("Sent while offline")
    box.press("Control+Enter")
    expect(page.locator("#flash")).to_contain_text("could not be reached")
    expect(box).to_have_value("Sent while offline")
    page.context.set_offline(False)
    expect(badge).to_be_hidden()
    seeded.append(message("ffff0001", LEAF, "user", "written once back online"))
    expect(page.locator("#entry-ffff0001")).to_contain_text("written once back online")


def test_a_tree_refresh_that_reaches_no_server_is_made_again_once_back(page, ui, sessions, server, record) -> None:
    # It once failed as an uncaught error in the page, and the panel stayed without what the file gained.
    seeded = sessions.seed("01-linear")
    _open(ui, page, seeded.url)
    page.route("**/tree/**", lambda route: route.abort("internetdisconnected"))
    with page.expect_event("requestfailed", lambda request: "/tree/" in request.url):
        added = _cli_append(server, seeded, "Written while the tree could not be fetched")
    ui.wait_position(page, added)
    expect(page.locator(f"#tree-panel [data-entry='{added}']")).to_have_count(0)
    page.unroute("**/tree/**")
    page.context.set_offline(True)
    page.context.set_offline(False)
    expect(page.locator(f"#tree-panel [data-entry='{added}']")).to_be_visible()
    assert not record.errors, record.errors  # (htmx itself logs the failed request to the console)


def test_summarize_the_branch_i_leave_stays_ticked_while_the_file_grows(page, ui, sessions, server, record) -> None:
    # The tree panel is fetched again at every append (an agent writing): the choice was silently
    # unticked each time, and the next move left its branch without the summary asked for.
    seeded = sessions.seed("01-linear")
    _open(ui, page, seeded.url)
    summarize = page.locator("#tree-panel input[name=summarize]")
    summarize.check()
    added = _cli_append(server, seeded, "An agent goes on")
    expect(page.locator(f"#tree-panel button.tree__node[data-entry='{added}']")).to_be_visible()
    expect(summarize).to_be_checked()
    page.locator("#tree-panel button.tree__node[data-entry='c256703f']").click()
    ui.wait_position_change(page, added)
    assert seeded.entries()[-1]["type"] == "branch_summary"  # the move wrote the summary asked for
    expect(page.locator("#tree-panel input[name=summarize]")).not_to_be_checked()  # one move used it
    _no_console_errors(record)


def test_a_tree_read_away_from_the_position_stays_put_as_the_file_grows(page, ui, sessions, server, record) -> None:
    # Every append fetches the panel again; it once scrolled back to the tab's position each time, so
    # that its other rows could not be read while an agent wrote.
    lines, parent = [], None
    for n in range(60):
        entry_id = f"e{n:07d}"
        lines.append(message(entry_id, parent, "user" if n % 2 == 0 else "assistant", f"entry {n}"))
        parent = entry_id
    seeded = sessions.write_lines(lines)
    page.set_viewport_size({"width": 1400, "height": 700})
    _open(ui, page, seeded.url)
    aside = page.locator("#tree-aside")
    expect(page.locator("#tree-panel .tree__row.is-position")).to_be_in_viewport()
    aside.evaluate("(el) => { el.scrollTop = 0; }")
    first = page.locator("#tree-panel button.tree__node[data-entry='e0000000']")
    top = first.evaluate("(el) => el.getBoundingClientRect().top")
    added = _cli_append(server, seeded, "An agent goes on", "--parent", parent)
    expect(page.locator(f"#tree-panel button.tree__node[data-entry='{added}']")).to_have_count(1)
    ui.wait_tree_settled(page)
    assert first.evaluate("(el) => el.getBoundingClientRect().top") == top
    expect(page.locator("#tree-panel .tree__row.is-position")).not_to_be_in_viewport()
    _no_console_errors(record)


def test_could_not_be_reached_goes_once_the_network_is_back(page, ui, sessions, record) -> None:
    seeded = sessions.seed("01-linear")
    _open(ui, page, seeded.url)
    page.context.set_offline(True)
    box = page.locator("#composer textarea[name=text]")
    box.fill("Sent while offline")
    box.press("Control+Enter")
    expect(page.locator("#flash")).to_contain_text("could not be reached")
    page.context.set_offline(False)
    expect(page.locator("#flash")).to_be_empty()
    expect(box).to_have_value("Sent while offline")

    # Another note said since stays: it is not about the network.
    page.context.set_offline(True)
    box.press("Control+Enter")
    expect(page.locator("#flash")).to_contain_text("could not be reached")
    page.evaluate("() => window.pitree.flash('Something else entirely')")
    page.context.set_offline(False)
    page.wait_for_timeout(300)
    expect(page.locator("#flash")).to_have_text("Something else entirely")
    assert not record.errors, record.errors  # (htmx itself logs the failed sends to the console)


def test_a_dropped_socket_tries_again_within_seconds_however_long_the_server_was_away(page, ui, sessions) -> None:
    # htmx's own policy waits up to 64 s after six failed tries: a tab stayed dark long after its
    # server was back. Each wait is now at most 5 s (jittered), and the first ones short.
    seeded = sessions.seed("01-linear")
    _open(ui, page, seeded.url)
    waits = page.evaluate(
        "() => [0, 1, 2, 3, 6, 20].map((retry) => Array.from({length: 50}, () => htmx.config.wsReconnectDelay(retry)))"
    )
    assert all(0 < wait <= 500 for wait in waits[0])
    assert all(0 < wait <= 5000 for tries in waits for wait in tries)
    assert max(waits[-1]) > 2500  # (and jittered: not every tab at once)
    assert page.evaluate("() => htmx.config.wsReconnectDelay === window.pitree.reconnectDelay")
