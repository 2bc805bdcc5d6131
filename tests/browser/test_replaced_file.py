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

# 01-linear: … → c256703f (user) → 358d8704 (assistant) → db26dc72 (session_info, the leaf).
USER, ANSWER = "c256703f", "358d8704"
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
    with seeded.path.open("ab") as file:
        file.write(b"".join(json.dumps(line).encode() + b"\n" for line in lines))
    size = seeded.path.stat().st_size
    page.wait_for_function("(size) => document.getElementById('transcript').dataset.cursor === String(size)", arg=size)
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
        page.route_web_socket(re.compile(r"/ws/s/"), self._route)

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
    transcript = page.locator("#transcript")
    expect(transcript).to_have_attribute("data-cursor", str(seeded.path.stat().st_size))
    expect(transcript).to_have_attribute("data-cursor-id", seeded.entries()[-1]["id"])
    assert not missing, missing
    assert not record.errors and not record.console_errors, (record.errors, record.console_errors)
