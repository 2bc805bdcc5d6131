"""Many writers, one file (docs/format.md §9.1): processes appending at once never interleave bytes, never
reuse an id, and each one's append is parented at the leaf it saw under the lock."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles.store import SessionFile

pytestmark = pytest.mark.processes  # writers in processes of their own

WRITERS = 4
PER_WRITER = 2000


def test_four_processes_append_to_one_file(new_session: Any, workers: Any, children: Any) -> None:
    session = new_session()
    start = session.append(E.user_message("start"))
    path = session.path
    before = path.read_bytes()

    ctx = children
    barrier = ctx.Barrier(WRITERS)
    results = ctx.Queue()
    procs = [
        ctx.Process(target=workers.append_many, args=(str(path), f"p{k}", PER_WRITER, barrier, results))
        for k in range(WRITERS)
    ]
    for proc in procs:
        proc.start()
    returned = dict(results.get(timeout=120) for _ in procs)
    for proc in procs:
        proc.join(timeout=60)
        assert proc.exitcode == 0

    data = path.read_bytes()
    assert data.startswith(before)
    assert data.endswith(b"\n")
    objects = [json.loads(raw) for raw in data.split(b"\n")[:-1]]  # every line is whole, valid JSON
    added = objects[len(before.split(b"\n")) - 1 :]
    assert len(added) == WRITERS * PER_WRITER
    all_ids = [obj["id"] for obj in objects[1:]]
    assert len(all_ids) == len(set(all_ids))

    # Each writer's entries are all there, in the order it wrote them, with the ids it was given.
    texts = [obj["message"]["content"] for obj in added]
    for k in range(WRITERS):
        tag = f"p{k}"
        mine = [obj for obj in added if obj["message"]["content"].startswith(tag + "-")]
        assert [obj["message"]["content"] for obj in mine] == [f"{tag}-{i}" for i in range(PER_WRITER)]
        assert [obj["id"] for obj in mine] == returned[tag]
    # The writers really ran at the same time: their lines alternate in the file.
    switches = sum(1 for a, b in itertools.pairwise(texts) if a.split("-")[0] != b.split("-")[0])
    assert switches >= WRITERS, switches

    # Under the lock each writer caught up first, so "child of the leaf" always meant the line before:
    # one unbroken chain, whatever the interleaving.
    previous = start["id"]
    for obj in added:
        assert obj["parentId"] == previous
        previous = obj["id"]
    reader = SessionFile(path)
    assert reader.index.skipped() == []
    assert reader.leaf_id == previous
    assert len(reader.path_rows()) == len(objects) - 1
    # The parent's own handle catches up incrementally and agrees.
    assert len(session.refresh()) == WRITERS * PER_WRITER
    assert session.leaf_id == previous
