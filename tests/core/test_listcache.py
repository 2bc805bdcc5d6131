"""The listing remembered between processes (``listcache``): a restart reads only the files that
changed, and the cache is only ever a cache — damaged, deleted, unwritable or shared by several
processes at once, the listing stays what the files say."""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from support.lines import copy_as

from sessions_app.sessionfiles import catalog as catalog_module
from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles import listcache
from sessions_app.sessionfiles.catalog import Catalog
from sessions_app.sessionfiles.fork import create_session
from sessions_app.sessionfiles.store import SessionFile

CWDS = ["/home/alice/projects/todo-api", "/home/alice/projects/blog"]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """Six sessions in two workspaces, each with a few messages."""
    root = tmp_path / "sessions"
    for number in range(6):
        session = create_session(root, CWDS[number % 2], fsync=False)
        for turn in range(number + 1):
            session.append(E.user_message(f"session {number}, turn {turn}"))
    return root


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files the catalog reads from now on."""
    read: list[str] = []
    real = catalog_module.read_info

    def counting(path: Any, **kwargs: Any) -> Any:
        read.append(Path(path).name)
        return real(path, **kwargs)

    monkeypatch.setattr(catalog_module, "read_info", counting)
    return read


def fresh(root: Path, cache: Path | None = None) -> list[Any]:
    return Catalog(root, cache_folder=cache).sessions()


def test_a_restart_reads_no_unchanged_file(root: Path, tmp_path: Path, reads: list[str]) -> None:
    cache = tmp_path / "var"
    first = fresh(root, cache)
    assert len(reads) == 6 and (cache / listcache.FILE_NAME).is_file()
    reads.clear()
    assert fresh(root, cache) == first == fresh(root)
    assert len(reads) == 6  # only the catalog without a cache read them


def test_a_file_read_on_its_own_is_remembered_as_its_listing(root: Path, tmp_path: Path, reads: list[str]) -> None:
    """A session page asks the catalog for one file (``info``): what it read is the listing's too, and
    a restart lists the file without reading it again."""
    cache = tmp_path / "var"
    first = fresh(root, cache)
    changed = first[-1].path
    SessionFile(changed, fsync=False).append(E.user_message("one more"))
    catalog = Catalog(root, cache_folder=cache)
    catalog.info(changed)
    catalog.sessions()
    reads.clear()
    restarted = fresh(root, cache)
    assert reads == []
    assert restarted == fresh(root)


def test_a_restart_reads_what_changed_and_forgets_what_is_gone(root: Path, tmp_path: Path, reads: list[str]) -> None:
    cache = tmp_path / "var"
    first = fresh(root, cache)
    grown, gone = first[0], first[-1]
    SessionFile(grown.path, fsync=False).append(E.user_message("one more"))
    gone.path.unlink()
    added = create_session(root, CWDS[0], fsync=False)
    added.append(E.user_message("new here"))
    reads.clear()
    second = fresh(root, cache)
    assert sorted(reads) == sorted([grown.path.name, added.path.name])
    assert second == fresh(root)
    assert next(info for info in second if info.path == grown.path).message_count == grown.message_count + 1
    with sqlite3.connect(cache / listcache.FILE_NAME) as db:
        names = {Path(name.decode()).name for (name,) in db.execute("SELECT name FROM sessions")}
    assert names == {info.path.name for info in second}


def test_deleting_the_cache_loses_nothing(root: Path, tmp_path: Path, reads: list[str]) -> None:
    cache = tmp_path / "var"
    first = fresh(root, cache)
    shutil.rmtree(cache)
    reads.clear()
    assert fresh(root, cache) == first and len(reads) == 6
    reads.clear()
    assert fresh(root, cache) == first and reads == []  # remembered again


@pytest.mark.parametrize("damage", [b"not a database at all" * 100, b"SQLite format 3\x00" + b"\xff" * 4000])
def test_a_damaged_cache_is_replaced(root: Path, tmp_path: Path, reads: list[str], damage: bytes) -> None:
    cache = tmp_path / "var"
    first = fresh(root, cache)
    (cache / listcache.FILE_NAME).write_bytes(damage)
    (cache / f"{listcache.FILE_NAME}-wal").unlink(missing_ok=True)
    reads.clear()
    assert fresh(root, cache) == first and len(reads) == 6
    reads.clear()
    assert fresh(root, cache) == first  # the damaged file went; the next listing built a new one
    assert fresh(root, cache) == first and len(reads) <= 6
    with sqlite3.connect(cache / listcache.FILE_NAME) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_a_cache_folder_that_cannot_be_written_only_costs_reads(root: Path, tmp_path: Path, reads: list[str]) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("in the way")
    first = fresh(root, blocked / "var")
    assert len(first) == 6 and first == fresh(root)
    assert blocked.read_text() == "in the way"


def test_rows_of_an_older_schema_are_dropped(root: Path, tmp_path: Path, reads: list[str]) -> None:
    cache = tmp_path / "var"
    first = fresh(root, cache)
    with sqlite3.connect(cache / listcache.FILE_NAME) as db:
        db.execute("UPDATE sessions SET info = X'5b5d'")  # rows another schema wrote: unreadable here
        db.execute(f"PRAGMA user_version = {listcache.SCHEMA + 1}")
    reads.clear()
    assert fresh(root, cache) == first and len(reads) == 6
    with sqlite3.connect(cache / listcache.FILE_NAME) as db:
        assert db.execute("PRAGMA user_version").fetchone() == (listcache.SCHEMA,)


def test_rows_that_do_not_decode_are_read_again(root: Path, tmp_path: Path, reads: list[str]) -> None:
    cache = tmp_path / "var"
    first = fresh(root, cache)
    with sqlite3.connect(cache / listcache.FILE_NAME) as db:
        db.execute("UPDATE sessions SET info = X'5b5d'")  # [] : not the fields of a SessionInfo
    reads.clear()
    assert fresh(root, cache) == first and len(reads) == 6


def test_roots_and_line_limits_are_kept_apart(root: Path, tmp_path: Path, reads: list[str]) -> None:
    cache = tmp_path / "var"
    other = tmp_path / "other"
    shutil.copytree(root, other)
    assert [info.path.parent.parent for info in fresh(other, cache)] == [other] * 6
    reads.clear()
    listed = fresh(root, cache)
    assert len(reads) == 6 and [info.path.parent.parent for info in listed] == [root] * 6
    reads.clear()
    Catalog(root, cache_folder=cache, max_line_bytes=10).sessions()
    assert len(reads) == 6  # another limit lists files differently (here: none is a session)
    shutil.rmtree(other)
    fresh(root, cache)  # a listing that writes forgets the folders that are gone
    SessionFile(listed[0].path, fsync=False).append(E.user_message("write something"))
    fresh(root, cache)
    with sqlite3.connect(cache / listcache.FILE_NAME) as db:
        roots = {Path(root_key.decode()) for (root_key,) in db.execute("SELECT DISTINCT root FROM sessions")}
    assert roots == {root}


@pytest.mark.processes
def test_processes_listing_and_writing_at_once_keep_the_cache_whole(
    root: Path, tmp_path: Path, workers: Any, children: Any
) -> None:
    cache = tmp_path / "var"
    ctx = children
    listers = 3
    barrier = ctx.Barrier(listers + 1)
    results = ctx.Queue()
    procs = [
        ctx.Process(target=workers.list_many, args=(str(root), str(cache), 15, barrier, results))
        for _ in range(listers)
    ]
    for proc in procs:
        proc.start()
    paths = sorted(root.glob("*/*.jsonl"))
    barrier.wait()
    for turn in range(30):  # meanwhile, sessions grow
        SessionFile(paths[turn % len(paths)], fsync=False).append(E.user_message(f"meanwhile {turn}"))
    for _ in procs:
        results.get(timeout=120)
    for proc in procs:
        proc.join(timeout=60)
        assert proc.exitcode == 0
    with sqlite3.connect(cache / listcache.FILE_NAME) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert fresh(root, cache) == fresh(root)  # whatever each process saw, the cache says what the files say


def test_undecodable_file_names_are_remembered(root: Path, tmp_path: Path, reads: list[str]) -> None:
    cache = tmp_path / "var"
    source = sorted(root.glob("*/*.jsonl"))[0]
    odd = source.parent / os.fsdecode(b"name-\xff\xfe.jsonl")
    copy_as(source, odd, "odd-name")
    first = fresh(root, cache)
    assert odd in {info.path for info in first}
    reads.clear()
    assert fresh(root, cache) == first and reads == []
