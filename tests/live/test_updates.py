"""What a push says besides new entries: sibling counts, labels, the header, the note about the file's
position, a replaced or deleted file, a page that must be fetched again."""

from __future__ import annotations

import asyncio
import os

from sessions_app.live.feed import MAX_PATCH_ROWS
from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles.store import SessionFile

TREE = "02-tree-branches"
LINEAR = "01-linear"


async def test_a_new_sibling_updates_the_navigator_of_every_tab_that_shows_one(open_tab, sessions) -> None:
    path = sessions.copy(TREE)
    size = sessions.size(path)
    tab = await open_tab(sessions.id(TREE), size)  # at 750a4556, through 97690895
    other = await open_tab(sessions.id(TREE), size, at="de4f0d3a", notes="position")  # through 07721729
    third = sessions.append(path, "A third way", parent="2f760a8d")
    push = (await tab.until_state(cursor=str(sessions.size(path))))[-1]
    mine = push.by_id("navigator-97690895")
    assert "1/3" in mine.text and 'value="07721729"' in mine.html  # "›" goes to the next sibling
    assert push.by_id("navigator-07721729") is None  # not on this tab's page
    assert push.entries == [] and f"entry-{third['id']}" not in push.raw  # not where the tab stands
    assert "csrfmiddlewaretoken" not in push.raw
    # The file's position is on the new branch now: the tab says so, and stays where it is.
    assert push.state["position"] == "750a4556"
    assert "The session moved to another branch" in push.text_of("position-notes")
    theirs = (await other.until_state(cursor=str(sessions.size(path))))[-1]
    assert "2/3" in theirs.by_id("navigator-07721729").text and theirs.by_id("navigator-97690895") is None


async def test_a_sibling_of_a_hidden_branch_point_updates_the_entry_that_shows_its_navigator(
    open_tab, sessions
) -> None:
    # b6d611de (a label line, not shown) is the only child of 0f649aff; the first visible entry below it,
    # ab506f7f, shows the navigator a second child of 0f649aff brings.
    path = sessions.copy(TREE)
    tab = await open_tab(sessions.id(TREE), sessions.size(path))
    sessions.append(path, "Another follow-up", parent="0f649aff")
    push = (await tab.until_state(cursor=str(sessions.size(path))))[-1]
    navigators = [s for s in push.swaps if s.target.startswith("#navigator-")]
    assert [s.target for s in navigators] == ["#navigator-ab506f7f"] and "1/2" in navigators[0].text


async def test_navigators_of_entries_the_page_has_not_loaded_are_not_sent(open_tab, sessions) -> None:
    """A tab that has loaded only the end of its path (older entries load as the reader scrolls up)
    gets no swap for an entry it does not hold: htmx would log that it found no target."""
    path = sessions.copy(TREE)
    tab = await open_tab(sessions.id(TREE), sessions.size(path), top="ab506f7f")
    sessions.append(path, "A third way", parent="2f760a8d")
    push = (await tab.until_state(cursor=str(sessions.size(path))))[-1]
    assert push.by_id("navigator-97690895") is None
    await tab.ws.send_json_to({"top": "f87f9c1c"})  # the reader scrolled up: all of it is loaded now
    # The socket answers nothing to this: give the consumer a moment to take it before the append (the
    # feed's batch, read in a thread, would otherwise be able to reach the tab's outbox first).
    await asyncio.sleep(0.3)
    sessions.append(path, "A fourth way", parent="2f760a8d")
    push = (await tab.until_state(cursor=str(sessions.size(path))))[-1]
    assert "1/4" in push.by_id("navigator-97690895").text


async def test_labels_set_and_cleared_by_others_show_on_the_entry(open_tab, sessions) -> None:
    path = sessions.copy(TREE)
    tab = await open_tab(sessions.id(TREE), sessions.size(path))
    writer = SessionFile(path, fsync=False)
    first = writer.set_label("97690895", "length-limit")  # under the leaf, where the tab stands
    push = (await tab.until_state(position=first["id"]))[-1]
    assert push.by_id("label-97690895").text == "length-limit"
    assert push.entries == []  # a label line is not shown as an entry
    cleared = writer.set_label("97690895", None)
    push = (await tab.until_state(position=cleared["id"]))[-1]
    label = push.by_id("label-97690895")
    assert label.has("hidden") and label.text == "" and label.attr("class") is None


async def test_a_rename_updates_the_header(open_tab, sessions) -> None:
    path = sessions.copy(LINEAR)
    tab = await open_tab(sessions.id(LINEAR), sessions.size(path))
    renamed = SessionFile(path, fsync=False).rename("Endpoints, <b>done</b>")
    push = (await tab.until_entry(renamed["id"]))[-1]
    assert push.by_id("session-title").text == "Endpoints, <b>done</b>"  # escaped: text, not HTML
    assert push.by_id("session-title").attr("data-doctitle") == "Endpoints, <b>done</b> · pitree"
    # The Rename field holds the name as it is now: saved as it was, it would undo the rename.
    assert push.by_id("rename-name").attr("value") == "Endpoints, <b>done</b>"
    assert "Endpoints, &lt;b&gt;done&lt;/b&gt;" in push.raw


async def test_a_navigation_elsewhere_moves_only_the_file_s_position(open_tab, sessions) -> None:
    path = sessions.copy(TREE)
    tab = await open_tab(sessions.id(TREE), sessions.size(path))
    marker = SessionFile(path, fsync=False).navigate("37bad775")
    push = (await tab.until_state(cursor_id=marker["id"]))[-1]
    assert push.entries == [] and "tree" not in push.todo
    assert not [s for s in push.swaps if s.target.startswith("#navigator-")]
    assert push.state["position"] == "750a4556"
    assert "The session moved to another branch" in push.text_of("position-notes")
    # Back where the tab stands: the note goes.
    back = SessionFile(path, fsync=False).navigate("750a4556")
    push = (await tab.until_state(cursor_id=back["id"]))[-1]
    notes = push.by_id("position-notes")
    assert "moved" not in notes.html and "hidden" in notes.html


async def test_a_replaced_file_makes_tabs_fetch_the_session_s_page(open_tab, sessions, tmp_path) -> None:
    path = sessions.copy(LINEAR)
    tab = await open_tab(sessions.id(LINEAR), sessions.size(path))
    replacement = tmp_path / "replacement.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    replacement.write_bytes(b"".join(lines[:4]))  # shorter: offsets start again
    os.replace(replacement, path)
    push = (await tab.until(lambda m: m.resync is not None))[-1]
    # Another file: the entry the tab stands on may be gone, so it fetches the session's page, at its
    # own address, and says why.
    url = f"/s/{sessions.id(LINEAR)}/"
    assert push.resync.attr("hx-get") == url and push.resync.attr("hx-replace-url") == url
    assert "This session's file was replaced or rewritten" in push.text_of("flash")
    page = SessionFile(path, fsync=False)
    await tab.move(at=page.leaf_id, cursor=sessions.size(path), id=page.index.ids[-1])  # the page it fetched
    after = sessions.append(path, "in the new file")
    push = (await tab.until_entry(after["id"]))[-1]
    assert push.state["cursor"] == str(sessions.size(path)) and tab.entry_ids() == [after["id"]]


async def test_a_deleted_file_closes_the_tab_with_4404(open_tab, sessions) -> None:
    path = sessions.copy(LINEAR)
    tab = await open_tab(sessions.id(LINEAR), sessions.size(path))
    path.unlink()
    assert "This session's file is gone" in (await tab.next()).text_of("flash")
    assert await tab.ws.receive_output(timeout=10) == {"type": "websocket.close", "code": 4404}


async def test_a_cursor_beyond_the_file_asks_for_a_fresh_page(open_tab, sessions) -> None:
    path = sessions.copy(LINEAR)
    tab = await open_tab(sessions.id(LINEAR), sessions.size(path) + 100)
    # The page came from another version of the file.
    (told,) = [m for m in tab.received if m.resync is not None]
    assert told.resync.attr("hx-replace-url") == f"/s/{sessions.id(LINEAR)}/" and tab.received[-1].live
    # The tab fetches the page again; what is appended after that still reaches it.
    await tab.move(cursor=sessions.size(path), id=sessions.last(path)["id"])
    new = sessions.append(path, "after the resync")
    assert (await tab.until_entry(new["id"]))[-1].entries == [new["id"]]


async def test_a_long_absence_asks_for_a_fresh_page_instead_of_hundreds_of_patches(open_tab, sessions) -> None:
    path = sessions.copy(LINEAR)
    cursor = sessions.size(path)
    writer = SessionFile(path, fsync=False)
    for i in range(MAX_PATCH_ROWS + 1):
        writer.append(E.user_message(f"bulk {i}"))
    tab = await open_tab(sessions.id(LINEAR), cursor)
    # The same file, grown: the tab fetches its own position again, at its own address.
    (told,) = [m for m in tab.received if m.resync is not None]
    assert told.resync.attr("hx-get") == f"/s/{sessions.id(LINEAR)}/e/db26dc72/"
    assert told.resync.attr("hx-replace-url") is None and tab.received[-1].live


def test_the_session_page_carries_the_cursor_of_what_it_shows(client, sessions) -> None:
    path = sessions.copy(LINEAR)
    response = client.get(f"/s/{sessions.id(LINEAR)}/")
    assert f'data-cursor="{sessions.size(path)}"'.encode() in response.content
