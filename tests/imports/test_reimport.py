"""Importing again: the same export adds nothing; a later export of a longer conversation appends only
what is new, under the right entries; the exporter's new position and title follow; what the user
did in pitree meanwhile stays."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from support import exports as X

from sessions_app.imports.plan import HEAD
from sessions_app.sessionfiles.entries import user_message
from sessions_app.sessionfiles.store import SessionFile, clear_cache
from sessions_app.sessionfiles.tree import siblings

EXPORTS = {
    "chatgpt": lambda folder: X.gpt_export(folder, [X.gpt_branching()]),
    "open-webui": lambda folder: X.write_json(folder / "chat.json", [X.webui_multimodel()]),
    "librechat": lambda folder: X.write_json(folder / "lc.json", X.libre_export(X.libre_messages())),
    "claude-code": X.cc_project,
}


@pytest.mark.parametrize("kind", list(EXPORTS))
def test_the_same_export_again_adds_nothing(tmp_path: Path, kind: str) -> None:
    export = EXPORTS[kind](tmp_path)
    first = X.import_into(tmp_path / "sessions", export)
    before = {outcome.path: outcome.path.read_bytes() for outcome in first.outcomes}
    again = X.import_into(tmp_path / "sessions", export)
    assert [(o.status, o.added, o.path) for o in again.outcomes] == [("unchanged", 0, o.path) for o in first.outcomes]
    assert {path: path.read_bytes() for path in before} == before


def _gpt(
    nodes: list[tuple[str, str | None, dict[str, Any] | None]], current: str, title: str = "Growing"
) -> dict[str, Any]:
    return X.gpt_conversation("grow", title, nodes, current)


NODES = [
    ("root", None, None),
    ("u1", "root", X.gpt_message("u1", "user", "One", at=1)),
    ("a1", "u1", X.gpt_message("a1", "assistant", "Uno", at=2)),
    ("u2", "a1", X.gpt_message("u2", "user", "Two", at=3)),
    ("a2", "u2", X.gpt_message("a2", "assistant", "Dos", at=4)),
]


def _import(tmp_path: Path, conversation: dict[str, Any]) -> Any:
    export = X.write_json(tmp_path / "conversations.json", [conversation])
    report = X.import_into(tmp_path / "sessions", export)
    return report.outcomes[0]


def test_a_longer_export_appends_only_what_is_new_on_the_right_branches(tmp_path: Path) -> None:
    first = _import(tmp_path, _gpt(NODES, "a2"))
    size = first.path.stat().st_size
    longer = [
        *NODES,
        ("a1b", "u1", X.gpt_message("a1b", "assistant", "Eins", at=5)),  # regenerated since
        ("u3", "a2", X.gpt_message("u3", "user", "Three", at=6)),
        ("a3", "u3", X.gpt_message("a3", "assistant", "Tres", at=7)),
    ]
    later = _import(tmp_path, _gpt(longer, "a3"))
    assert (later.status, later.added, later.path) == ("appended", 3, first.path)
    session = X.opened(later)
    appended = [json.loads(line)["id"] for line in first.path.read_bytes()[size:].splitlines()]
    assert appended == ["a1b", "u3", "a3"]  # the branch to the position last: it is the file's last line
    assert session.entry("a1b")["parentId"] == "u1" and session.entry("u3")["parentId"] == "a2"
    assert session.leaf_id == "a3"
    assert [session.index.ids[row] for row in siblings(session.index, session.index.by_id["a1b"])] == ["a1", "a1b"]


def test_a_position_on_an_older_branch_is_moved_to_after_the_new_entries(tmp_path: Path) -> None:
    first = _import(tmp_path, _gpt(NODES, "a2"))
    more = [*NODES, ("a2b", "u2", X.gpt_message("a2b", "assistant", "Zwei", at=5))]
    later = _import(tmp_path, _gpt(more, "a1"))  # the user went back up and stayed there
    session = X.opened(later)
    mover = session.entry(session.leaf_id)
    assert (mover["type"], mover["customType"], mover["parentId"]) == ("custom", "pitree/import", "a1")
    assert later.added == 2 and later.path == first.path
    assert X.said(session) == [("user", "One"), ("assistant", "Uno")]


def test_the_position_alone_moving_writes_nothing(tmp_path: Path) -> None:
    first = _import(tmp_path, _gpt(NODES, "a2"))
    again = _import(tmp_path, _gpt(NODES, "a1"))
    assert again.status == "unchanged" and X.opened(first).leaf_id == "a2"


def test_a_new_title_follows_and_a_name_given_in_pitree_stays(tmp_path: Path) -> None:
    first = _import(tmp_path, _gpt(NODES, "a2"))
    renamed = _import(tmp_path, _gpt(NODES, "a2", title="Counting in Spanish"))
    session = X.opened(renamed)
    assert (renamed.added, session.index.name) == (1, "Counting in Spanish")
    assert session.entry(session.leaf_id)["parentId"] == "a2"
    SessionFile.open(first.path).rename("My own name")
    clear_cache()
    assert _import(tmp_path, _gpt(NODES, "a2", title="Counting in Spanish")).status == "unchanged"
    assert X.opened(first).index.name == "My own name"


def test_what_the_user_wrote_in_pitree_meanwhile_stays_a_branch_of_its_own(tmp_path: Path) -> None:
    first = _import(tmp_path, _gpt(NODES, "a2"))
    session = SessionFile.open(first.path)
    mine = session.append(user_message("Mine"))
    clear_cache()
    longer = [*NODES, ("u3", "a2", X.gpt_message("u3", "user", "Three", at=6))]
    session = X.opened(_import(tmp_path, _gpt(longer, "u3")))
    assert sorted(session.index.ids[row] for row in siblings(session.index, session.index.by_id["u3"])) == sorted(
        ["u3", mine["id"]]
    )
    assert session.leaf_id == "u3"


def test_a_growing_claude_code_session(tmp_path: Path) -> None:
    records = X.cc_session()
    path = tmp_path / f"{X.SESSION}.jsonl"
    X.write_jsonl(path, records[:5])
    first = X.import_into(tmp_path / "sessions", path).outcomes[0]
    for end in (6, 9, len(records)):
        X.write_jsonl(path, records[:end])
        X.import_into(tmp_path / "sessions", path)
    grown = X.opened(first)
    whole = X.import_into(tmp_path / "whole", path).outcomes[0]
    at_once = X.opened(whole)
    # Imported in steps or at once, the same entries under the same parents.
    assert sorted(_links(grown)) == sorted(_links(at_once))
    assert grown.leaf_id == at_once.leaf_id == "t1"


def _links(session: SessionFile) -> list[tuple[str, str | None]]:
    index = session.index
    return [
        (index.ids[row], index.ids[index.parents[row]] if index.parents[row] >= 0 else None)
        for row in range(len(index))
    ]


def test_two_workspaces_two_sessions(tmp_path: Path) -> None:
    export = X.write_json(tmp_path / "conversations.json", [_gpt(NODES, "a2")])
    mine = X.import_into(tmp_path / "sessions", export, cwd="/home/alice").outcomes[0]
    theirs = X.import_into(tmp_path / "sessions", export, cwd="/home/team").outcomes[0]
    assert mine.session_id != theirs.session_id and mine.path.parent != theirs.path.parent


@pytest.mark.parametrize("begun", [False, True], ids=["new", "begun"])
def test_two_imports_at_once_write_each_entry_once(tmp_path: Path, begun: bool) -> None:
    """Four imports of one export at once, the file new (they race to create it) or begun by an
    earlier import of its start (they race to append to it)."""
    export = X.gpt_export(tmp_path, [X.gpt_branching()])
    if begun:
        start = X.gpt_conversation("conv-branching", "Pixels and sums", [("root", None, None)], "root")
        X.import_into(tmp_path / "sessions", X.write_json(tmp_path / "start.json", [start]))
    barrier = threading.Barrier(4)
    errors: list[BaseException] = []

    def run() -> None:
        barrier.wait()
        try:
            X.import_into(tmp_path / "sessions", export)
        except BaseException as error:  # reported by the test
            errors.append(error)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    clear_cache()
    files = list((tmp_path / "sessions").rglob("*.jsonl"))
    assert len(files) == 1
    session = SessionFile(files[0])
    assert session.index.skipped() == []
    ids = [session.index.ids[row] for row in range(len(session.index))]
    assert len(ids) == len(set(ids)) and HEAD in ids and "a2" in ids
