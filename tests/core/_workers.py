"""Code that runs in other processes for the concurrency and crash tests (not a test module).

Multiprocessing children run these functions (tests/core/conftest.py's ``children``: forked from a
server that imported this module once); it also runs as a script:

    python _workers.py append PATH TEXT...      append one user message per TEXT, print the ids
"""

from __future__ import annotations

import random
import sys
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles.catalog import Catalog
from sessions_app.sessionfiles.store import SessionFile


def append_many(path: str, tag: str, count: int, barrier: Any = None, results: Any = None) -> list[str]:
    """Append ``count`` user messages at the leaf, each text ``"<tag>-<i>"``; return their ids in order
    (and put ``(tag, ids)`` on the ``results`` queue). A ``barrier`` makes all writers start together."""
    session = SessionFile(Path(path), fsync=False)
    if barrier is not None:
        barrier.wait()
    ids = []
    for i in range(count):
        ids.append(session.append(E.user_message(f"{tag}-{i}"))["id"])
    if results is not None:
        results.put((tag, ids))
    return ids


def churn(session: SessionFile, count: int, seed: int) -> None:
    """``count`` writes of every kind a session sees: replies at the leaf, new branches under an older
    entry, moves of the leaf (``leaf`` markers) and labels set and cleared."""
    rng = random.Random(seed)
    for i in range(count):
        ids = session.index.ids
        roll = rng.random()
        if roll < 0.6 or len(ids) < 3:
            session.append(E.user_message(f"{seed}-{i}"))
        elif roll < 0.8:
            session.append(E.user_message(f"{seed}-{i} branch"), parent=_earlier_entry(session, rng))
        elif roll < 0.9:
            session.navigate(_earlier_entry(session, rng))
        else:
            session.set_label(_earlier_entry(session, rng), rng.choice([f"label {i}", None]))


def _earlier_entry(session: SessionFile, rng: random.Random) -> str:
    index = session.index
    while True:
        row = rng.randrange(len(index))
        if index.is_node(row):
            return index.ids[row]


def churn_file(path: str, count: int, seed: int) -> None:
    """``churn`` from another process, with a SessionFile of its own."""
    churn(SessionFile(Path(path), fsync=False), count, seed)


def list_many(root: str, cache: str, rounds: int, barrier: Any = None, results: Any = None) -> None:
    """List ``root`` ``rounds`` times, each time as a new process would (a fresh Catalog remembering
    the listing in ``cache``); put the last listing's ``{path: message_count}`` on ``results``."""
    if barrier is not None:
        barrier.wait()
    counts: dict[str, int] = {}
    for _ in range(rounds):
        counts = {
            str(info.path): info.message_count for info in Catalog(Path(root), cache_folder=Path(cache)).sessions()
        }
    if results is not None:
        results.put(counts)


def write_forever(path: str, big_every: int, out: Connection) -> None:
    """Append at the leaf until killed, sending each id on ``out`` once ``append()`` returned (a pipe's
    end: when ``send`` returns, the id is in the pipe, where a kill right after cannot take it back)."""
    session = SessionFile(Path(path), fsync=True)
    i = 0
    while True:
        i += 1
        # Now and then a large line, so that a kill can land in the middle of a write.
        text = ("x" * 300_000 + f" {i}") if big_every and i % big_every == 0 else f"line {i}"
        out.send(session.append(E.user_message(text))["id"])


def main(argv: list[str]) -> None:
    command, path, *rest = argv
    if command == "append":
        session = SessionFile(Path(path), fsync=False)
        for text in rest:
            print(session.append(E.user_message(text))["id"], flush=True)
    else:
        raise SystemExit(f"unknown command {command!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
