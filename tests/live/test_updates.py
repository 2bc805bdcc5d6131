"""What a push says besides new entries: sibling counts, labels, a replaced or deleted file."""

from __future__ import annotations

import os

from sessions_app.live.feed import MAX_PATCH_ROWS
from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles.store import SessionFile

TREE = "02-tree-branches"
LINEAR = "01-linear"


async def test_a_new_sibling_updates_the_navigator_of_every_sibling(open_tab, sessions) -> None:
    path = sessions.copy(TREE)
    tab = await open_tab(sessions.id(TREE), sessions.size(path))
    third = sessions.append(path, "A third way", parent="2f760a8d")
    batch = (await tab.until_entry(third["id"]))[-1]
    assert set(batch["navs"]) == {"97690895", "07721729"}
    assert "1/3" in batch["navs"]["97690895"] and "2/3" in batch["navs"]["07721729"]
    assert 'value="07721729"' in batch["navs"]["97690895"]  # "›" goes to the next sibling
    assert "csrfmiddlewaretoken" not in batch["navs"]["97690895"]
    (entry,) = batch["entries"]
    assert entry["parent"] == "2f760a8d" and "3/3" in entry["html"]
    assert batch["leaf"] == third["id"]  # the file moved to another branch than the tabs at 750a4556


async def test_a_sibling_of_a_hidden_branch_point_updates_the_entry_that_shows_its_navigator(
    open_tab, sessions
) -> None:
    # b6d611de (a label line, not shown) is the only child of 0f649aff; the first visible entry below it,
    # ab506f7f, shows the navigator a second child of 0f649aff brings.
    path = sessions.copy(TREE)
    tab = await open_tab(sessions.id(TREE), sessions.size(path))
    other = sessions.append(path, "Another follow-up", parent="0f649aff")
    batch = (await tab.until_entry(other["id"]))[-1]
    assert set(batch["navs"]) == {"ab506f7f"} and "1/2" in batch["navs"]["ab506f7f"]


async def test_labels_set_and_cleared_by_others_arrive_as_labels(open_tab, sessions) -> None:
    path = sessions.copy(TREE)
    tab = await open_tab(sessions.id(TREE), sessions.size(path))
    writer = SessionFile(path, fsync=False)
    first = writer.set_label("97690895", "length-limit")
    batch = (await tab.until_entry(first["id"]))[-1]
    assert batch["labels"] == {"97690895": "length-limit"}
    assert batch["entries"][0]["html"] == ""  # a label line is not shown as an entry
    cleared = writer.set_label("97690895", None)
    batch = (await tab.until_entry(cleared["id"]))[-1]
    assert batch["labels"] == {"97690895": None}


async def test_a_rename_updates_the_header(open_tab, sessions) -> None:
    path = sessions.copy(LINEAR)
    tab = await open_tab(sessions.id(LINEAR), sessions.size(path))
    renamed = SessionFile(path, fsync=False).rename("Endpoints, <b>done</b>")
    batch = (await tab.until_entry(renamed["id"]))[-1]
    assert batch["title"] == "Endpoints, <b>done</b>"  # text: the page sets it as text, not HTML
    assert batch["doctitle"] == "Endpoints, <b>done</b> · pitree"
    assert batch["name"] == "Endpoints, <b>done</b>"  # for the Rename field, which would save the old one
    assert "Endpoints, &lt;b&gt;done&lt;/b&gt;" in batch["entries"][0]["html"]


async def test_a_navigation_elsewhere_moves_only_the_file_s_position(open_tab, sessions) -> None:
    path = sessions.copy(TREE)
    tab = await open_tab(sessions.id(TREE), sessions.size(path))
    marker = SessionFile(path, fsync=False).navigate("37bad775")
    batch = (await tab.until_entry(marker["id"]))[-1]
    (entry,) = batch["entries"]
    assert entry["node"] is False and entry["html"] == ""
    assert batch["leaf"] == "37bad775" and batch["navs"] == {} and batch["tree"] is False


async def test_a_replaced_file_makes_tabs_fetch_the_page_again(open_tab, sessions, tmp_path) -> None:
    path = sessions.copy(LINEAR)
    tab = await open_tab(sessions.id(LINEAR), sessions.size(path))
    replacement = tmp_path / "replacement.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    replacement.write_bytes(b"".join(lines[:4]))  # shorter: offsets start again
    os.replace(replacement, path)
    resync = await tab.until(lambda m: m["t"] == "resync")
    # Another file: the entry the tab stands on may be gone, so it fetches the session's page.
    assert resync[-1] == {"t": "resync", "epoch": 1, "replaced": True}
    after = sessions.append(path, "in the new file")
    batch = (await tab.until_entry(after["id"]))[-1]
    assert batch["epoch"] == 1 and batch["to"] == sessions.size(path)
    assert [e["id"] for e in batch["entries"]] == [after["id"]]


async def test_a_deleted_file_closes_the_tab_with_4404(open_tab, sessions) -> None:
    path = sessions.copy(LINEAR)
    tab = await open_tab(sessions.id(LINEAR), sessions.size(path))
    path.unlink()
    assert await tab.next() == {"t": "gone"}
    assert await tab.ws.receive_output(timeout=10) == {"type": "websocket.close", "code": 4404}


async def test_a_cursor_beyond_the_file_asks_for_a_fresh_page(open_tab, sessions) -> None:
    path = sessions.copy(LINEAR)
    tab = await open_tab(sessions.id(LINEAR), sessions.size(path) + 100)
    # The page came from another version of the file.
    assert tab.received == [{"t": "resync", "epoch": 0, "replaced": True}, {"t": "live"}]
    # The tab fetches the page again; what is appended after that still reaches it.
    new = sessions.append(path, "after the resync")
    assert [e["id"] for e in (await tab.next())["entries"]] == [new["id"]]


async def test_a_long_absence_asks_for_a_fresh_page_instead_of_hundreds_of_patches(open_tab, sessions) -> None:
    path = sessions.copy(LINEAR)
    cursor = sessions.size(path)
    writer = SessionFile(path, fsync=False)
    for i in range(MAX_PATCH_ROWS + 1):
        writer.append(E.user_message(f"bulk {i}"))
    tab = await open_tab(sessions.id(LINEAR), cursor)
    # The same file, grown: the tab fetches its own position again.
    assert tab.received == [{"t": "resync", "epoch": 0, "replaced": False}, {"t": "live"}]


def test_the_session_page_carries_the_cursor_of_what_it_shows(client, sessions) -> None:
    path = sessions.copy(LINEAR)
    response = client.get(f"/s/{sessions.id(LINEAR)}/")
    assert f'data-cursor="{sessions.size(path)}"'.encode() in response.content
