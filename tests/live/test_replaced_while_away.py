"""A tab whose socket was down while its session's file was replaced: it names the line that ends at its
cursor, so that it is told to fetch the new file's page, never sent the bytes after its cursor of a file
it never saw. The same file, grown, still sends exactly what the tab missed."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from sessions_app.live.feed import running_feeds
from sessions_app.sessionfiles.store import SessionFile

LINEAR = "01-linear"
TREE = "02-tree-branches"
SAMPLES = Path(__file__).resolve().parents[2] / "sessions_app" / "samples" / "pi"
TIMEOUT = 10


def _told_replaced(tab, session_id: str) -> bool:
    """Whether the tab was told to fetch the session's page anew, at its address, and is live."""
    told = [m.resync for m in tab.received if m.resync is not None]
    url = f"/s/{session_id}/"
    return len(told) == 1 and told[0].attr("hx-replace-url") == url and tab.received[-1].live


def _up_to_date(tab) -> bool:
    """Whether the tab was sent nothing but where its page stands and that it is live (its page as it is)."""
    return not [m for m in tab.received if m.entries or m.resync] and tab.received[-1].live


def _other_entries(path: Path) -> bytes:
    """Another session's entries under this file's header (its URL finds the session by the header's
    id): the tab's cursor falls somewhere inside them."""
    header = path.read_bytes().splitlines(keepends=True)[0]
    return header + b"".join((SAMPLES / f"{TREE}.jsonl").read_bytes().splitlines(keepends=True)[1:])


def _new_ids(path: Path) -> bytes:
    """The same lines under other ids of the same length, as a rewrite that draws new ids leaves them:
    a line still ends at the tab's cursor, but not the one it names."""
    data = path.read_bytes()
    for n, entry_id in enumerate(SessionFile(path, fsync=False).index.ids):
        new_id = f"{n:0{len(entry_id)}x}"
        data = data.replace(f'"{entry_id}"'.encode(), f'"{new_id}"'.encode())
    assert len(data) == path.stat().st_size
    return data


async def _away(tab, feeds: int) -> None:
    """The tab's socket goes down; the feed stops with it unless another tab keeps it running."""
    await tab.ws.disconnect(timeout=TIMEOUT)
    assert len(list(running_feeds())) == feeds


@pytest.mark.parametrize("kept_running", [False, True], ids=["feed-stopped", "feed-kept-running"])
@pytest.mark.parametrize("rewrite", [_other_entries, _new_ids], ids=["other-entries", "new-ids"])
async def test_a_file_replaced_while_the_tab_was_away_makes_it_fetch_the_session_s_page(
    open_tab, sessions, tmp_path, rewrite: Callable[[Path], bytes], kept_running: bool
) -> None:
    path = sessions.copy(LINEAR)
    cursor, line_id = sessions.size(path), sessions.last(path)["id"]
    tab = await open_tab(sessions.id(LINEAR), cursor, line_id=line_id)
    other = await open_tab(sessions.id(LINEAR), cursor, line_id=line_id) if kept_running else None
    await _away(tab, feeds=1 if kept_running else 0)
    replacement = tmp_path / "replacement.jsonl"
    replacement.write_bytes(rewrite(path))
    os.replace(replacement, path)
    sessions.append(path, "in the new file")
    assert sessions.size(path) > cursor  # the old cursor lands inside the new file
    if other is not None:
        await other.until(lambda m: m.resync is not None)  # the running feed read the new file
    back = await open_tab(sessions.id(LINEAR), cursor, line_id=line_id, at="db26dc72")
    assert _told_replaced(back, sessions.id(LINEAR))
    # The tab fetches the session's page; what is appended after that reaches it, and nothing else.
    page = SessionFile(path, fsync=False)
    await back.move(at=page.leaf_id, cursor=sessions.size(path), id=page.index.ids[-1])
    after = sessions.append(path, "after the resync")
    push = (await back.until_entry(after["id"]))[-1]
    assert back.entry_ids() == [after["id"]] and push.state["cursor"] == str(sessions.size(path))


@pytest.mark.parametrize("last_line", ["entry", "leaf-marker"])
async def test_a_tab_back_on_the_same_file_grown_gets_what_it_missed(open_tab, sessions, last_line: str) -> None:
    path = sessions.copy(LINEAR)
    if last_line == "leaf-marker":  # not shown on the page, but the line that ends at its cursor
        SessionFile(path, fsync=False).navigate("358d8704")
    cursor, line_id = sessions.size(path), sessions.last(path)["id"]
    tab = await open_tab(sessions.id(LINEAR), cursor, line_id=line_id)
    await _away(tab, feeds=0)
    missed = [sessions.append(path, f"while away {i}")["id"] for i in range(2)]
    back = await open_tab(sessions.id(LINEAR), cursor, line_id=line_id)
    assert back.received[-1].live
    assert back.entry_ids() == missed and back.state["cursor"] == str(sessions.size(path))


async def test_a_tab_whose_line_ends_at_its_cursor_is_up_to_date(open_tab, sessions) -> None:
    path = sessions.copy(LINEAR)
    tab = await open_tab(sessions.id(LINEAR), sessions.size(path), line_id=sessions.last(path)["id"])
    assert _up_to_date(tab)
    new = sessions.append(path, "only this")["id"]
    assert (await tab.next()).entries == [new]


async def test_a_line_of_the_file_that_does_not_end_at_the_cursor_is_another_version(open_tab, sessions) -> None:
    path = sessions.copy(LINEAR)
    first = SessionFile(path, fsync=False).index.ids[0]
    tab = await open_tab(sessions.id(LINEAR), sessions.size(path), line_id=first)
    assert _told_replaced(tab, sessions.id(LINEAR))


async def test_a_page_without_entries_names_the_header(open_tab, sessions) -> None:
    """At cursor 0 a page reflects the header alone: whatever follows it is what the tab missed."""
    path = sessions.copy(LINEAR)
    path.write_bytes(path.read_bytes().splitlines(keepends=True)[0])
    new = sessions.append(path, "the first message")
    tab = await open_tab(sessions.id(LINEAR), 0, line_id=sessions.id(LINEAR))
    assert tab.entry_ids() == [new["id"]] and tab.received[-1].live
    stranger = await open_tab(sessions.id(LINEAR), 0, line_id="another-session")
    assert _told_replaced(stranger, sessions.id(LINEAR))


def test_the_session_page_names_the_line_that_ends_at_its_cursor(client, sessions) -> None:
    path = sessions.copy(LINEAR)
    marker = SessionFile(path, fsync=False).navigate("358d8704")  # a line the page does not show
    response = client.get(f"/s/{sessions.id(LINEAR)}/")
    assert f'data-cursor="{sessions.size(path)}" data-cursor-id="{marker["id"]}"'.encode() in response.content
    path.write_bytes(path.read_bytes().splitlines(keepends=True)[0])
    response = client.get(f"/s/{sessions.id(LINEAR)}/")
    assert f'data-cursor="0" data-cursor-id="{sessions.id(LINEAR)}"'.encode() in response.content
