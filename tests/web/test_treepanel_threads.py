"""The tree panel drawn by several threads from one cached skeleton while another thread grows the file.

Django's sync views and ``asyncio.to_thread`` workers draw panels of the one cached ``SessionFile`` while
a request appends to it and grows the file's skeleton. A drawing must see one skeleton, before or
after a grow, never one half cut: no exception, every entry once, and as many entries (drawn, folded
or behind the "earlier" row) as the index it started from held, or the index a grow saw meanwhile.
The interpreter switches threads every 10 µs, so readers land inside a grow many times per run.
"""

from __future__ import annotations

import random
import sys
import threading
from collections.abc import Iterator

import pytest

from sessions_app.display import treepanel
from sessions_app.display.treepanel import FILTERS, tree_rows
from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles.fork import create_session

WRITES = 2000
READERS = 3


@pytest.fixture
def fast_switching() -> Iterator[None]:
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(before)


def test_panels_drawn_while_the_file_grows_are_whole(tmp_path, fast_switching) -> None:
    session = create_session(tmp_path, "/w", fsync=False)
    session.append(E.user_message("root"))
    done = threading.Event()
    failures: list[str] = []
    drawn: list[int] = []

    def draw(seed: int) -> None:
        rng = random.Random(seed)
        while not done.is_set():
            index = session.index
            mode = "all" if seed % 2 else rng.choice(FILTERS[:2])
            position = rng.choice([index.leaf_row, rng.randrange(len(index)), None])
            try:
                rows = tree_rows(session, position, mode, window=rng.choice([3, 40]))
            except Exception as error:  # any exception is the failure being looked for
                failures.append(f"{type(error).__name__}: {error}")
                continue
            ids = [row.entry_id for row in rows if row.entry_id]
            if len(set(ids)) != len(ids):
                failures.append("an entry drawn twice")
            if mode == "all":
                count = len(ids) + sum(row.folded for row in rows)
                if count < index.node_count or count > session.index.node_count:
                    failures.append(f"{count} entries drawn of {index.node_count}…{session.index.node_count}")
            drawn.append(len(rows))

    readers = [threading.Thread(target=draw, args=(seed,), daemon=True) for seed in range(READERS)]
    for reader in readers:
        reader.start()
    rng = random.Random(1)
    try:
        for n in range(WRITES):
            index = session.index
            row = rng.randrange(len(index))
            parent = index.ids[row] if rng.random() < 0.3 and index.is_node(row) else session.leaf_id
            session.append(E.user_message(f"message {n}"), parent)
            treepanel.skeleton(session, "all")  # the writer's request grows it, as a view would
    finally:
        done.set()
        for reader in readers:
            reader.join(timeout=60)
    assert not failures, f"{len(failures)} failures, the first: {failures[0]}"
    assert len(drawn) > 100  # the readers really drew while the writes went on
