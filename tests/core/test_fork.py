"""New files: ``create_session`` and ``fork_session`` (pi's createBranchedSession, docs/format.md §7.2)."""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path
from typing import Any

import pytest

from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles import tree
from sessions_app.sessionfiles.errors import EntryNotFound
from sessions_app.sessionfiles.fork import create_session, encode_cwd, fork_session
from sessions_app.sessionfiles.store import SessionFile, create_file


@pytest.mark.parametrize(
    ("cwd", "folder"),
    [
        ("/home/alice/projects/todo-api", "--home-alice-projects-todo-api--"),
        ("C:\\Users\\bob\\app", "--C--Users-bob-app--"),
        ("/", "----"),
    ],
)
def test_encode_cwd_like_pi(cwd: str, folder: str) -> None:
    assert encode_cwd(cwd) == folder


def test_create_session_lays_out_a_pi_file(sessions_root: Path) -> None:
    session = create_session(sessions_root, "/home/alice/projects/todo-api", name=" My\nsession ", fsync=False)
    header = session.header
    assert session.path.parent == sessions_root / "--home-alice-projects-todo-api--"
    assert session.path.name == f"{header['timestamp'].replace(':', '-').replace('.', '-')}_{header['id']}.jsonl"
    assert list(header) == ["type", "version", "id", "timestamp", "cwd"]
    assert (header["type"], header["version"], header["cwd"]) == ("session", 3, "/home/alice/projects/todo-api")
    assert uuid.UUID(header["id"]).version == 7
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", header["timestamp"])
    assert session.index.name == "My session"
    assert session.parent_session is None
    with pytest.raises(FileExistsError):  # pi's exclusive create: never replace a file
        create_file(session.path, [header])


def _fork_02(sample_copy: Any) -> tuple[SessionFile, SessionFile]:
    source = SessionFile(sample_copy("02-tree-branches"), fsync=False)
    return source, fork_session(source, "37bad775", fsync=False)


def test_fork_of_02_is_pis_fork_03(sample_copy: Any, samples_dir: Path, expected: dict[str, Any]) -> None:
    source, fork = _fork_02(sample_copy)
    source_before = source.path.read_bytes()
    ids = expected["__treeIds"]

    assert fork.parent_session == str(source.path.absolute())
    assert fork.path.parent == source.path.parent
    assert fork.header["cwd"] == source.cwd
    assert fork.session_id != source.session_id

    ours = fork.path.read_bytes().split(b"\n")
    theirs = (samples_dir / "03-fork-of-02.jsonl").read_bytes().split(b"\n")
    # The path, byte for byte as pi copied it: label 77f2501f dropped, u2b re-parented to the summary.
    assert ours[1:6] == theirs[1:6]
    copied = [E.dump_line(e) for e in fork.entries(range(5))]
    assert [c.rstrip(b"\n") for c in copied] == ours[1:6]
    path = [fork.index.ids[r] for r in range(5)]
    assert path == [ids["u1"], ids["a1"], ids["branchSummary"], ids["u2b"], "37bad775"]
    assert fork.entry(ids["u2b"])["parentId"] == ids["branchSummary"]
    assert "77f2501f" not in fork.index.by_id
    for other_branch in ("u2", "a2", "u3", "a3"):
        assert ids[other_branch] not in fork.index.by_id
    # Then the live label on that path, re-emitted with a fresh id and its original timestamp.
    relabel = fork.entries([5])[0]
    pis = json.loads(theirs[6])
    assert relabel["id"] != pis["id"] and relabel["id"] not in source.index.by_id
    assert {**relabel, "id": pis["id"]} == pis
    assert list(relabel) == list(pis)
    assert len(fork.index) == 6 and fork.leaf_id == relabel["id"]
    assert {t: text for t, (text, _) in fork.index.labels.items()} == {ids["branchSummary"]: "regex-approach"}
    assert source.path.read_bytes() == source_before

    # Two more turns, as pi's 03 has: the same tree shape, the same context.
    u = fork.append(E.user_message("Write tests for validate_title"))
    a = fork.append(
        E.assistant_message(
            "Added tests/test_validate.py with 4 cases.",
            provider="anthropic",
            model="claude-sonnet-4-5",
            api="anthropic-messages",
        )
    )
    rename = {relabel["id"]: "794a3064", u["id"]: "0211f71d", a["id"]: "e8fea955"}

    def renamed(nodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{**n, "id": rename.get(n["id"], n["id"]), "children": renamed(n["children"])} for n in nodes]

    want = expected["03-fork-of-02"]
    assert renamed(tree.tree(fork.index)) == want["tree"]
    assert [rename.get(i, i) for i in fork.context().entry_ids] == want["contextEntryIds"]
    assert [(m["role"], m.get("fromId")) for m in fork.context().messages] == [
        (m["role"], m.get("fromId")) for m in want["context"]["messages"]
    ]


def test_fork_moves_a_compaction_off_a_dropped_label(new_session: Any) -> None:
    session = new_session()
    u1 = session.append(E.user_message("one"))
    label = session.set_label(u1["id"], "mark")
    u2 = session.append(E.user_message("two"))
    compaction = session.compact("summary", label["id"], 10)
    assert compaction["firstKeptEntryId"] == label["id"]

    fork = fork_session(session, fsync=False)
    copied = fork.entry(compaction["id"])
    assert copied["firstKeptEntryId"] == u2["id"]  # the next kept entry (pi 1.6.0)
    assert copied["parentId"] == u2["id"]
    assert fork.entry(u2["id"])["parentId"] == u1["id"]  # re-chained over the dropped label
    assert fork.context().as_json() == session.context().as_json()


def test_fork_keeps_only_live_labels_on_the_path(new_session: Any) -> None:
    session = new_session()
    u1 = session.append(E.user_message("one"))
    off = session.append(E.user_message("other branch"), parent=u1["id"])
    u2 = session.append(E.user_message("two"), parent=u1["id"])
    session.set_label(off["id"], "off the path")  # on the path of u2? no: targets the other branch
    first = session.set_label(u1["id"], "first")
    session.set_label(u2["id"], "cleared soon")
    session.set_label(u2["id"], None)
    session.set_label(u1["id"], "first, renamed")

    fork = fork_session(session, fsync=False)
    labels = [e for e in fork.entries(range(len(fork.index))) if e["type"] == "label"]
    assert [(e["targetId"], e["label"]) for e in labels] == [(u1["id"], "first, renamed")]
    assert labels[0]["timestamp"] == session.index.labels[u1["id"]][1]
    assert labels[0]["timestamp"] >= first["timestamp"]
    assert off["id"] not in fork.index.by_id


def test_fork_at_none_is_an_empty_session_with_lineage(new_session: Any) -> None:
    session = new_session()
    session.append(E.user_message("one"))
    fork = fork_session(session, None, fsync=False)
    assert len(fork.index) == 0 and fork.leaf_id is None
    assert fork.path.read_bytes().count(b"\n") == 1
    assert fork.parent_session == str(session.path.absolute())


def test_fork_at_an_unknown_entry_creates_nothing(new_session: Any) -> None:
    session = new_session()
    session.append(E.user_message("one"))
    folder = session.path.parent
    before = sorted(folder.iterdir())
    with pytest.raises(EntryNotFound):
        fork_session(session, "nope", fsync=False)
    assert sorted(folder.iterdir()) == before


def test_fork_of_a_fork_points_at_its_own_parent(new_session: Any) -> None:
    session = new_session()
    session.append(E.user_message("one"))
    child = fork_session(session, fsync=False)
    child.append(E.user_message("two"))
    grandchild = fork_session(child, fsync=False)
    assert grandchild.parent_session == str(child.path.absolute())
    assert [m["content"] for m in grandchild.context().messages] == ["one", "two"]
