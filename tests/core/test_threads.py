"""A cached session shared by threads: readers walk it while a thread and another process append.

Django's sync views, ``asyncio.to_thread`` workers and a file tailer all read the one cached
``SessionFile`` of a path while a refresh grows its index. A reader must see the index before or after
a refresh, never a row half added: every path it walks is made of rows of the snapshot it holds, each
row's parent is the row before it, every child and sibling list agrees with the parents. It may not
see an exception either, from the index or from decoding the entries of a path.

The writes go as fast as they can, with the interpreter switching threads far more often than by
default, so that a reader lands inside a refresh many times per run. ``PITREE_STRESS=1`` makes the
run ten times longer.
"""

from __future__ import annotations

import itertools
import os
import random
import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles import tree
from sessions_app.sessionfiles.context import build_session_context
from sessions_app.sessionfiles.index import NO_PARENT
from sessions_app.sessionfiles.store import SessionFile

SCALE = 10 if os.environ.get("PITREE_STRESS") else 1
WRITES_HERE = 1500 * SCALE
WRITES_ELSEWHERE = 1500 * SCALE
READERS = 3


@pytest.fixture
def fast_switching() -> Iterator[None]:
    """Switch threads every 10 µs instead of every 5 ms: races that need a reader inside a refresh
    happen thousands of times per run instead of a few."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(before)


def check_snapshot(session: SessionFile, rng: random.Random) -> int:
    """Walk one snapshot every way a page does; returns how many rows it had."""
    index = session.index
    size = len(index)
    parents = index.parents

    def check_path(rows: list[int]) -> None:
        assert rows, "a path to a row holds at least the row"
        assert all(0 <= row < size for row in rows), f"rows outside the snapshot of {size}: {rows[:5]}…"
        assert parents[rows[0]] == NO_PARENT, "a path starts at a root"
        for parent, child in itertools.pairwise(rows):
            assert parents[child] == parent, "each row's parent is the row before it"

    candidates = [*range(max(0, size - 20), size), *(rng.randrange(size) for _ in range(20))]
    for row in candidates:
        if not index.is_node(row):
            continue
        path = tree.path(index, row)
        check_path(path)
        assert path[-1] == row
        for child in index.children(row):
            assert 0 <= child < size and parents[child] == row
        assert row in tree.siblings(index, row)
    for root in index.roots:
        assert 0 <= root < size and parents[root] == NO_PARENT
    leaf = index.leaf_row
    if leaf is not None:
        assert 0 <= leaf < size
        path = tree.path(index, leaf)
        check_path(path)
        build_session_context(session.entries(path[-30:]))
    for target, (label, _) in index.labels.items():
        assert isinstance(target, str) and label
    assert index.node_count <= size
    return size


def read_until(
    session: SessionFile, done: threading.Event, failures: list[BaseException], walks: list[int], seed: int
) -> None:
    rng = random.Random(seed)
    try:
        while not done.is_set():
            if rng.random() < 0.2:
                session.refresh()  # readers refresh too (every SessionFile.open does)
            check_snapshot(session, rng)
            walks.append(1)
    except BaseException as error:
        failures.append(error)


@pytest.mark.processes
def test_readers_see_whole_refreshes_while_a_thread_and_a_process_append(
    new_session: Any, workers: Any, children: Any, fast_switching: None
) -> None:
    session = new_session()
    first = session.append(E.user_message("the first message"))
    session.append(E.user_message("a reply"), parent=first["id"])
    shared = SessionFile.open(session.path, fsync=False)

    done = threading.Event()
    failures: list[BaseException] = []
    walks: list[int] = []
    readers = [
        threading.Thread(target=read_until, args=(shared, done, failures, walks, seed), daemon=True)
        for seed in range(READERS)
    ]
    elsewhere = children.Process(target=workers.churn_file, args=(str(session.path), WRITES_ELSEWHERE, 99))
    for reader in readers:
        reader.start()
    elsewhere.start()
    try:
        workers.churn(shared, WRITES_HERE, 7)
        elsewhere.join(timeout=300)
    finally:
        done.set()
        for reader in readers:
            reader.join(timeout=60)
    assert elsewhere.exitcode == 0
    assert not failures, f"{len(failures)} reader failures, the first: {failures[0]!r}"
    assert len(walks) > 100  # the readers really read while the writes went on

    # Every line written is in the shared index, which agrees with a fresh read of the file.
    shared.refresh()
    fresh = SessionFile(session.path)
    lines = session.path.read_bytes().count(b"\n") - 1
    assert len(shared.index) == len(fresh.index) == lines
    assert lines > 2 + WRITES_HERE + WRITES_ELSEWHERE - 50  # only a move to where the leaf is writes nothing
    assert shared.leaf_id == fresh.leaf_id
    assert shared.index.labels == fresh.index.labels
    assert shared.index.roots == fresh.index.roots
    assert [shared.index.children(row) for row in range(lines)] == [fresh.index.children(row) for row in range(lines)]
    assert fresh.index.skipped() == []


def test_a_snapshot_never_changes(new_session: Any, L: Any) -> None:
    """What a reader holds stays as it was, whatever later refreshes add: rows, branches, labels, names,
    leaf moves, new roots, lines from other writers."""
    session = new_session()
    root = session.append(E.user_message("root"))
    reply = session.append(E.user_message("reply"))
    session.set_label(root["id"], "first label")
    old = session.index
    seen = {
        "len": len(old),
        "children": [old.children(row) for row in range(len(old))],
        "roots": old.roots,
        "labels": dict(old.labels),
        "leaf": old.leaf_id,
        "name": old.name,
        "nodes": old.node_count,
        "skipped": old.skipped(),
        "leaf_rows": old.leaf_rows,
    }

    session.append(E.user_message("sibling"), parent=root["id"])  # a second child: a branch
    session.set_label(root["id"], "second label")
    session.set_label(reply["id"], "another")
    session.rename("named")
    session.navigate(reply["id"])
    session.append(E.user_message("new root"), parent=None)
    with open(session.path, "ab") as handle:
        handle.write(b"not json\n" + L.dump(L.user("x1", reply["id"], "from elsewhere")))
    session.refresh()

    assert len(session.index) > seen["len"]
    assert old.children(old.row(root["id"]) or 0) == seen["children"][old.row(root["id"]) or 0]
    assert [old.children(row) for row in range(len(old))] == seen["children"]
    assert old.roots == seen["roots"] and old.labels == seen["labels"] and old.leaf_rows == seen["leaf_rows"]
    assert (old.leaf_id, old.name, old.node_count, old.skipped()) == (
        seen["leaf"],
        seen["name"],
        seen["nodes"],
        seen["skipped"],
    )
    assert "x1" not in old.by_id and old.row("x1") is None
    new = session.index
    assert len(new.children(new.row(root["id"]) or 0)) == 2 and new.labels[root["id"]][0] == "second label"
    assert new.name == "named" and len(new.roots) == 2 and new.row("x1") is not None


def test_a_reload_leaves_the_old_snapshot_whole(new_session: Any, L: Any) -> None:
    """A reused id makes the next refresh read the file anew; whoever holds the old snapshot keeps it."""
    session = new_session()
    first = session.append(E.user_message("first"))
    second = session.append(E.user_message("second"))
    old = session.index
    path_before = tree.path(old, old.row(second["id"]))
    with open(session.path, "ab") as handle:
        handle.write(L.dump(L.user(first["id"], None, "the same id again")))
    assert session.refresh() == list(range(len(session.index)))  # read anew
    assert tree.path(old, old.row(second["id"])) == path_before
    assert old.row(first["id"]) == path_before[0] and len(old) == 2
    assert session.index.skipped() and not old.skipped()
