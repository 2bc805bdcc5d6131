"""The session page as it was: after a line of its file or at a moment, by a permalink of its own;
its navigator, tree, older pages and compare in that state; read-only, no live connection; a fork
from it holds what the session held then."""

from __future__ import annotations

from typing import Any

from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles.past import last_line
from sessions_app.sessionfiles.store import SessionFile

HX = {"HTTP_HX_REQUEST": "true"}


def test_a_past_state_by_line_and_by_moment(client: Any, pi: Any) -> None:
    source_id = pi.id("02-tree-branches")
    session = SessionFile(pi.path("02-tree-branches"))
    lines = last_line(session.index)
    now = client.get(f"/s/{source_id}/").content.decode()
    assert f'action="/s/{source_id}/travel/"' in now and f'max="{lines}"' in now
    assert 'ws-connect="/ws/s/' in now
    answer = client.get(f"/s/{source_id}/travel/", {"line": 6})
    assert answer.status_code == 302 and answer["Location"] == f"/s/{source_id}@6/"
    page = client.get(answer["Location"]).content.decode()
    assert "As it was after line 6 of" in page and 'ws-connect="/ws/s/' not in page  # frozen: nothing follows
    assert 'name="text"' not in page  # no message box: a past state is read-only
    assert f'hx-get="/s/{source_id}@6/tree/"' in page  # its tree is the tree then
    tree = client.get(f"/s/{source_id}@6/tree/", **HX).content.decode()
    later = session.index.ids[len(session.index) - 1]
    assert later not in tree and session.index.ids[2] in tree
    moment = session.index.timestamps[3]
    assert (
        client.get(f"/s/{source_id}/travel/", {"time": moment})["Location"]
        == f"/s/{source_id}@{session.index.line_numbers[3]}/"
    )


def test_nothing_is_written_to_the_past_and_a_fork_from_it_holds_then(client: Any, pi: Any) -> None:
    source_id = pi.id("01-linear")
    path = pi.path("01-linear")
    session = SessionFile(path)
    entry = session.index.ids[4]
    before = path.read_bytes()
    refused = client.post(f"/s/{source_id}@7/label/", {"entry": entry, "label": "x", "at": entry})
    assert refused.status_code == 403 and path.read_bytes() == before
    forked = client.post(f"/s/{source_id}@7/fork/", {"entry": entry}, **HX)
    fork_id = forked["HX-Redirect"].split("/")[2]
    (copy,) = [p for p in pi.folder.glob("*.jsonl") if fork_id in p.name]
    fork = SessionFile(copy)
    assert fork.entry(fork.leaf_id)["parentId"] == entry  # its name, below the entry forked (format.md §7.2)
    assert fork.index.ids[-2] == entry and fork.parent_session == str(path.absolute())


def test_a_state_stays_as_it_was_while_the_file_grows(client: Any, pi: Any) -> None:
    source_id = pi.id("01-linear")
    session = SessionFile(pi.path("01-linear"))
    state = client.get(f"/s/{source_id}@5/").content.decode()
    session.append(E.user_message("written after the state"))
    assert client.get(f"/s/{source_id}@5/").content.decode().count("written after the state") == 0
    assert "written after the state" in client.get(f"/s/{source_id}/").content.decode()
    assert "As it was after line 5" in state


def test_states_and_moments_that_name_nothing(client: Any, pi: Any) -> None:
    source_id = pi.id("01-linear")
    assert client.get(f"/s/{source_id}@0x/").status_code == 404
    assert client.get(f"/s/{source_id}/travel/", {"time": "not a time"}).status_code == 400


def test_compare_and_map_of_a_past_state(client: Any, pi: Any) -> None:
    source_id = pi.id("02-tree-branches")
    session = SessionFile(pi.path("02-tree-branches"))
    index = session.index
    state = index.line_numbers[len(index) - 1] - 4  # before the last lines were written
    past = {index.ids[row] for row in range(len(index)) if index.line_numbers[row] <= state}
    later = [index.ids[row] for row in range(len(index)) if index.line_numbers[row] > state]
    leaves = [
        i
        for i in past
        if index.row(i) is not None and not [c for c in index.children(index.row(i)) if index.ids[c] in past]
    ]
    compared = client.get(f"/s/{source_id}@{state}/compare/", {"e": sorted(leaves)[:2]})
    assert compared.status_code == 200
    assert client.get(f"/s/{source_id}@{state}/compare/", {"e": [later[-1], sorted(leaves)[0]]}).status_code == 404
    drawn = client.get(f"/s/{source_id}@{state}/map/data/").content.decode()
    assert all(entry_id not in drawn for entry_id in later if index.row(entry_id) is not None)
