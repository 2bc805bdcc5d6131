"""A session file replaced under an open tab (renamed over, cut short), or while its socket was down:
the tab fetches the session's page at its leaf, never the permalink of an entry the new file may not
hold, so its network log shows no 404. A file that only grew too much to patch keeps the tab where it
stands."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from playwright.sync_api import expect
from support.lines import message

# 01-linear: … → c256703f (user) → 358d8704 (assistant) → db26dc72 (session_info, the leaf).
USER, ANSWER = "c256703f", "358d8704"
# 02-tree-branches: two branches after the answer 2f760a8d; the second goes on to de4f0d3a.
TREE_U2, TREE_SUMMARY, BRANCH_END = "97690895", "07721729", "de4f0d3a"
UP_TO_USER = 9  # lines: the header and the entries up to c256703f
SAMPLES = Path(__file__).resolve().parents[2] / "sessions_app" / "samples" / "pi"


def _live(page: Any) -> None:
    page.wait_for_function("() => document.getElementById('live').dataset.live === 'live'")


def _not_found(page: Any) -> list[str]:
    """The URLs of the page's requests answered 404, from now on."""
    found: list[str] = []
    page.on("response", lambda response: found.append(response.url) if response.status == 404 else None)
    return found


def _replace(seeded: Any, lines: int) -> None:
    """The session's file replaced, as an editor or ``mv`` does: a new file renamed over it."""
    kept = seeded.path.read_bytes().splitlines(keepends=True)[:lines]
    replacement = seeded.path.with_suffix(".new")
    replacement.write_bytes(b"".join(kept))
    replacement.replace(seeded.path)


def test_a_tab_at_the_session_s_url_fetches_the_new_file_s_page(page, ui, sessions, record) -> None:
    seeded = sessions.seed("01-linear")
    _replace(seeded, UP_TO_USER + 1)  # the leaf is the answer, shown: its permalink is the tab's own
    missing = _not_found(page)
    ui.open(page, seeded.url)
    _live(page)
    assert ui.position(page) == ANSWER
    page.locator("#composer textarea[name=text]").fill("half-written thought")
    _replace(seeded, UP_TO_USER)
    ui.wait_position(page, USER)
    assert ANSWER not in ui.path_ids(page)
    expect(page.locator("#composer textarea[name=text]")).to_have_value("half-written thought")
    assert page.url.endswith(seeded.url)
    assert not missing, missing
    assert not record.errors and not record.console_errors, (record.errors, record.console_errors)


def test_a_tab_pinned_to_an_entry_the_new_file_lacks_goes_to_its_leaf(page, ui, sessions, record) -> None:
    seeded = sessions.seed("01-linear")
    missing = _not_found(page)
    ui.open(page, seeded.entry_url(ANSWER))
    _live(page)
    _replace(seeded, UP_TO_USER)
    ui.wait_position(page, USER)
    assert ANSWER not in ui.path_ids(page)
    assert not missing, missing
    # The address says what the tab shows: the session at its leaf (a reload finds it there).
    page.wait_for_function("(url) => location.pathname === url", arg=seeded.url)
    assert not record.errors and not record.console_errors, (record.errors, record.console_errors)


def test_a_file_that_grew_too_much_to_patch_keeps_the_tab_where_it_stands(page, ui, sessions, record) -> None:
    seeded = sessions.seed("01-linear")
    ui.open(page, seeded.entry_url(USER))
    _live(page)
    parent, lines = "db26dc72", []
    for i in range(301):  # more than a batch patches (live/feed.py's MAX_PATCH_ROWS)
        entry_id = f"b{i:07x}"
        message = {"role": "user", "content": f"bulk {i}", "timestamp": 1772442001000}
        lines.append(
            {
                "type": "message",
                "id": entry_id,
                "parentId": parent,
                "timestamp": "2026-03-02T09:00:01.000Z",
                "message": message,
            }
        )
        parent = entry_id
    seeded.append(*lines)
    size = seeded.path.stat().st_size
    page.wait_for_function("(size) => document.getElementById('tab-state').dataset.cursor === String(size)", arg=size)
    assert ui.position(page) == USER
    assert page.url.endswith(seeded.entry_url(USER))
    assert not record.errors


class _Socket:
    """The session page's websocket, passed through to the server until the test cuts it. Cut, the tab
    reconnects (1013: htmx retries it), and until ``resume`` its attempts reach no server: they are held
    open here, so that the server has no tab of the session meanwhile (its feed stops)."""

    def __init__(self, page: Any) -> None:
        self.passing = True
        self.open: list[tuple[Any, Any]] = []  # (the page's side, the server's side)
        self.held: list[Any] = []
        page.route_web_socket(re.compile(r"/ws/(s|follow)/"), self._route)

    def _route(self, socket: Any) -> None:
        if self.passing:
            self.open.append((socket, socket.connect_to_server()))
        else:
            self.held.append(socket)

    def cut(self) -> None:
        self.passing = False
        for socket, server in self.open:
            server.close()
            socket.close(code=1013)
        self.open.clear()

    def resume(self) -> None:
        self.passing = True
        for socket in self.held:
            socket.close(code=1013)
        self.held.clear()


def test_a_file_replaced_while_the_socket_was_down_shows_the_new_file_s_page(page, ui, sessions, record) -> None:
    """Another session's entries under the file's header (so the session's URL still finds it), longer
    than the tab's cursor: the tab must not take the bytes after its cursor for what it missed."""
    seeded = sessions.seed("01-linear")
    tree = sessions.expected["02-tree-branches"]
    socket = _Socket(page)
    missing = _not_found(page)
    ui.open(page, seeded.url)
    _live(page)
    cursor = seeded.path.stat().st_size
    socket.cut()
    page.wait_for_function("() => document.getElementById('live').dataset.live !== 'live'")
    header = seeded.path.read_bytes().splitlines(keepends=True)[0]
    entries = (SAMPLES / "02-tree-branches.jsonl").read_bytes().splitlines(keepends=True)[1:]
    replacement = seeded.path.with_suffix(".new")
    replacement.write_bytes(header + b"".join(entries))
    replacement.replace(seeded.path)
    assert seeded.path.stat().st_size > cursor
    socket.resume()
    ui.wait_position(page, tree["leafIdAfterLoad"])
    _live(page)
    assert ui.path_ids(page)[-1] == tree["leafIdAfterLoad"] and ANSWER not in ui.path_ids(page)
    state = page.locator("#tab-state")
    expect(state).to_have_attribute("data-cursor", str(seeded.path.stat().st_size))
    expect(state).to_have_attribute("data-cursor-id", seeded.entries()[-1]["id"])
    assert not missing, missing
    assert not record.errors and not record.console_errors, (record.errors, record.console_errors)


def test_a_comparison_whose_file_was_replaced_by_one_as_long_while_its_socket_was_down_shows_the_new_file(
    page, ui, sessions, record
) -> None:
    """The comparison's socket names the line its cursor ends at too: a file replaced by one exactly as
    long has nothing past the cursor, and without that id the page would keep showing the old file."""
    seeded = sessions.seed("02-tree-branches")
    kept = json.dumps(message("r0000001", BRANCH_END, "user", "Kept in the file", 30)).encode() + b"\n"
    with seeded.path.open("ab") as file:
        file.write(kept)
    socket = _Socket(page)
    ui.open(page, f"/s/{seeded.id}/compare/?e={TREE_U2}&e={TREE_SUMMARY}")
    page.locator("header[data-live=live]").wait_for()
    column = page.locator('.compare__cell[data-column="2"]')
    expect(column.filter(has_text="Kept in the file")).to_have_count(1)
    socket.cut()
    page.locator("header[data-live=closed]").wait_for()
    replaced = json.dumps(message("r0000002", BRANCH_END, "user", "Replaced instead", 30)).encode() + b"\n"
    assert len(replaced) == len(kept)
    replacement = seeded.path.with_suffix(".new")
    replacement.write_bytes(seeded.path.read_bytes()[: -len(kept)] + replaced)
    replacement.replace(seeded.path)
    socket.resume()
    expect(column.filter(has_text="Replaced instead")).to_have_count(1)
    expect(page.locator(".compare__cell", has_text="Kept in the file")).to_have_count(0)
    page.locator("header[data-live=live]").wait_for()
    assert not record.errors and not record.console_errors, (record.errors, record.console_errors)
