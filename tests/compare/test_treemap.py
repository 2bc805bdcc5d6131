"""The map of a session's tree: which entries become nodes, what folds into edges, forks, folding more
for large sessions, and the page and its data."""

from __future__ import annotations

import random

import pytest

from sessions_app.display import treemap
from sessions_app.display.treemap import tree_map
from sessions_app.sessionfiles.store import SessionFile

TREE = "02-tree-branches"
FORK = "03-fork-of-02"


def data(client, sid, **query):
    response = client.get(f"/s/{sid}/map/data/", query)
    assert response.status_code == 200
    return response.json()


def by_id(payload):
    return {node["id"]: node for node in payload["nodes"]}


def parent_id(payload, node):
    return None if node["parentKey"] is None else payload["nodes"][node["parentKey"]]["id"]


@pytest.fixture
def branchy(write_session, make):
    """About 1,000 entries with 30 branch points: a main line of turns, and every so often a second
    answer or an edited prompt starting a side branch a few turns long; a few labels."""
    rng = random.Random(7)
    m = make
    entries = []
    second = 0

    def add(entry):
        nonlocal second
        entries.append(entry)
        second += 1
        return entry["id"]

    main = None
    points = rng.sample(range(20, 480, 2), 30)
    for turn in range(500):
        prompt = add(m.user(f"u{turn}", main, f"prompt {turn}", second))
        main = add(m.assistant(f"a{turn}", prompt, f"answer {turn}", second))
        if turn % 97 == 0:
            add(m.label(f"l{turn}", main, prompt, f"mark {turn}", second))
            main = entries[-1]["id"]
    for number, turn in enumerate(points):
        parent = f"u{turn}"
        side = add(m.assistant(f"s{number}a", parent, f"other answer {number}", second))
        for k in range(rng.randrange(1, 4)):
            side = add(m.user(f"s{number}u{k}", side, f"side {number}.{k}", second))
            side = add(m.assistant(f"s{number}r{k}", side, "ok", second))
    return write_session(entries)


def test_the_sample_tree_keeps_its_branch_points_branches_ends_labels_and_forks(client, samples, make) -> None:
    sid, fork = make.sample_id(TREE), make.sample_id(FORK)
    payload = data(client, sid)
    nodes = by_id(payload)
    assert payload["entries"] == 19 and payload["shown"] == 8 and not payload["foldedMore"]
    drawn = {i: (parent_id(payload, n), n["kind"], n["folded"]) for i, n in nodes.items()}
    assert drawn == {
        "": (None, "start", 0),
        "f87f9c1c": ("", "user", 0),
        "2f760a8d": ("f87f9c1c", "assistant", 0),  # the branch point
        "97690895": ("2f760a8d", "user", 0),  # first entry of each branch
        "07721729": ("2f760a8d", "other", 0),
        "0f649aff": ("97690895", "assistant", 3),  # labelled: three entries fold into its edge
        "750a4556": ("0f649aff", "other", 5),  # the position, an end
        "37bad775": ("07721729", "assistant", 2),  # where 03 was forked
        "de4f0d3a": ("37bad775", "assistant", 1),
        f"fork:{fork}": ("37bad775", "fork", 0),
    }
    assert nodes["0f649aff"]["label"] == "pydantic-done"
    assert [i for i, n in nodes.items() if n["onPath"]] == ["f87f9c1c", "2f760a8d", "97690895", "0f649aff", "750a4556"]
    assert nodes["750a4556"]["isPosition"]
    assert nodes["2f760a8d"]["branches"] == 2
    assert nodes["2f760a8d"]["branchesUrl"] == f"/s/{sid}/compare/?branches=97690895"
    fork_node = nodes[f"fork:{fork}"]
    assert fork_node["ref"] == f"{fork}:e8fea955" and fork_node["url"] == f"/s/{fork}/"
    assert nodes["de4f0d3a"]["url"] == f"/s/{sid}/e/de4f0d3a/" and nodes["de4f0d3a"]["ref"] == "de4f0d3a"


def test_the_position_comes_from_at(client, samples, make) -> None:
    sid = make.sample_id(TREE)
    nodes = by_id(data(client, sid, at="de4f0d3a"))
    assert nodes["de4f0d3a"]["isPosition"] and nodes["37bad775"]["onPath"] and not nodes["750a4556"]["onPath"]
    assert client.get(f"/s/{sid}/map/data/", {"at": "nope"}).status_code == 404
    assert (
        client.get(f"/s/{sid}/map/data/", {"at": "bad\x01"}).status_code == 400
    )  # not an entry id at all: refused as every bad query string is
    assert client.get(f"/s/{sid}/map/", {"at": "nope"}).status_code == 404


def test_a_thousand_entries_with_thirty_branch_points_fold_into_a_readable_map(client, branchy) -> None:
    sid, _ = branchy
    payload = data(client, sid)
    entries = [n for n in payload["nodes"] if n["kind"] not in ("start", "fork")]
    assert payload["entries"] > 1000 and not payload["foldedMore"]
    assert sum(1 for n in entries if n.get("branches")) == 30
    assert len(entries) <= treemap.MAX_NODES
    # Every entry is either drawn or counted on exactly one edge.
    assert sum(n["folded"] for n in entries) + len(entries) == payload["entries"]


@pytest.mark.parametrize(("budget", "level"), [(100, 1), (64, 2)])
def test_a_session_too_large_for_the_budget_folds_more_and_says_so(branchy, monkeypatch, budget, level) -> None:
    _, path = branchy
    session = SessionFile.open(path)
    full = tree_map(session, session.index.leaf_row)
    monkeypatch.setattr(treemap, "MAX_NODES", budget)
    folded = tree_map(session, session.index.leaf_row)
    assert full.level == 0 and folded.level == level
    assert folded.folding == treemap.FOLD_LEVELS[level]
    drawn = [n for n in folded.nodes if n.kind != "start"]
    assert sum(n.folded for n in drawn) + len(drawn) == session.index.node_count
    assert sum(1 for n in drawn if n.branches) == 30  # branch points always stay
    labelled = {n.id for n in full.nodes if n.label}
    if level == 2:
        assert {entry_id for entry_id, _ in folded.hidden_labels} == labelled - {n.id for n in drawn}
        assert folded.hidden_labels
    else:
        assert folded.hidden_labels == [] and labelled <= {n.id for n in drawn}


def test_hostile_text_and_ids_travel_as_data(client, write_session, make) -> None:
    m = make
    evil = "<img src=x onerror=alert(1)>"
    sid, _ = write_session(
        [m.user("a/b", None, evil, 1), m.assistant("c\x01", "a/b", "one", 2), m.assistant("d", "a/b", "two", 3)]
    )
    nodes = by_id(data(client, sid))
    assert nodes["a/b"]["text"] == evil  # map.js sets it as textContent
    assert client.get(nodes["a/b"]["url"]).status_code == 200  # an id holding "/" has a URL too
    assert nodes["c\x01"]["url"] == ""  # one with a control character has none
    page = client.get(f"/s/{sid}/map/").content.decode()
    assert "<script>" not in page and 'src="/static/vendor/d3-hierarchy-3.1.3.min.js"' in page
    assert f'data-src="/s/{sid}/map/data/?"' in page  # no position named: the map follows the file's own
    pinned = client.get(f"/s/{sid}/map/", {"at": "a/b"}).content.decode()
    assert f'data-src="/s/{sid}/map/data/?at=a%2Fb"' in pinned
    assert f'data-follow="[{{&quot;session&quot;: &quot;{sid}&quot;, &quot;cursor&quot;: ' in page
