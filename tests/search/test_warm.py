"""Warm searches: a server's catalog learns from inotify which files changed, so a search between
changes looks at no file; every change made between two searches is still found by the second one,
with the watcher and without (polling, a network folder, the command line), and wherever inotify
cannot vouch for a folder (events lost, the descriptor dead, a folder no watch holds) the catalog
looks at it whole again."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from sessions_app.search.index import SearchIndex
from sessions_app.search.results import search
from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles.catalog import Catalog
from sessions_app.sessionfiles.changes import FolderChanges
from sessions_app.sessionfiles.store import SessionFile

Find = Callable[[str], list[str]]


def _searcher(index: SearchIndex, catalog: Catalog) -> Find:
    """The session ids of a query's hits, searched as the web view and the CLI search."""
    return lambda query: sorted(hit.session_id for hit in search(index, catalog, query).hits)


def _watching(root: Path) -> tuple[Catalog, FolderChanges]:
    catalog = Catalog(root, watch=True)
    assert catalog._changes is not None  # the test machine's disk is local and has inotify
    return catalog, catalog._changes


@pytest.mark.parametrize("watch", [True, False], ids=["inotify", "polling"])
def test_every_change_between_two_warm_searches_is_found_by_the_second(folder, index, root, watch: bool) -> None:
    one = folder.write("one", folder.user("alphaword"))
    two = folder.write("two", folder.user("betaword"))
    catalog = Catalog(root, watch=watch)
    assert (catalog._changes is not None) == watch
    find = _searcher(index, catalog)
    assert find("alphaword") == ["one"]
    assert find("alphaword") == ["one"]  # warm

    folder.write("three", folder.user("gammaword"))
    assert find("gammaword") == ["three"]  # created

    assert find("deltaword") == []
    folder.append(one, folder.user("deltaword"))
    assert find("deltaword") == ["one"]  # appended by hand
    SessionFile.open(one, fsync=False).append(E.user_message("storeword"))
    assert find("storeword") == ["one"]  # appended through the store

    assert find("betaword") == ["two"]
    scratch = two.with_suffix(".tmp")
    folder.write("two-new", folder.user("epsilonword")).rename(scratch)
    os.replace(scratch, two)
    assert find("betaword") == []  # replaced: what the old file held is gone
    assert find("epsilonword") == ["two-new"]

    folder.path("three").unlink()
    assert find("gammaword") == []  # deleted


def test_a_warm_search_with_the_watcher_looks_at_no_file(folder, index, root, monkeypatch) -> None:
    for n in range(5):
        folder.write(f"s{n}", folder.user(f"common word{n}"))
    catalog, _ = _watching(root)
    find = _searcher(index, catalog)
    assert len(find("common")) == 5

    def no_look(*args: object, **kwargs: object) -> None:
        raise AssertionError("a warm search looked at the folder")

    monkeypatch.setattr(os, "stat", no_look)
    monkeypatch.setattr(os, "scandir", no_look)
    assert find("word3") == ["s3"]
    monkeypatch.undo()
    folder.append(folder.path("s1"), folder.user("word3 again"))
    assert find("word3") == ["s1", "s3"]


def test_a_warm_search_still_names_the_file_that_could_not_be_indexed(folder, index, root, failing_extraction) -> None:
    folder.write("good", folder.user("needle in the good file"))
    bad = folder.write("bad", folder.user("needle in the file that fails"))
    catalog, _ = _watching(root)
    first = search(index, catalog, "needle")
    warm = search(index, catalog, "needle")
    assert first.catch_up is not None and warm.catch_up is not None
    reason = "could not be indexed (ValueError: an extraction bug)"
    assert warm.catch_up.failed == first.catch_up.failed == {str(bad): reason}
    assert len(failing_extraction.tries) == 1  # not read again while unchanged
    failing_extraction.mend()
    folder.append(bad, folder.user("the file changed"))
    fixed = search(index, catalog, "needle")
    assert sorted(hit.session_id for hit in fixed.hits) == ["bad", "good"]
    assert fixed.catch_up is not None and fixed.catch_up.failed == {}


def test_a_search_through_another_connection_is_seen_by_the_warm_one(folder, index, root) -> None:
    """Two threads (or processes) of a server, each with its index connection: what one caught up with
    is found by the other, whose warm state then no longer holds."""
    one = folder.write("one", folder.user("first"))
    catalog, _ = _watching(root)
    other = SearchIndex(index.path)
    find, find_elsewhere = _searcher(index, catalog), _searcher(other, catalog)
    assert find("first") == ["one"]
    assert find_elsewhere("first") == ["one"]
    folder.append(one, folder.user("sharedword"))
    assert find_elsewhere("sharedword") == ["one"]
    assert find("sharedword") == ["one"]
    folder.write("two", folder.user("sharedword too"))
    assert find("sharedword") == ["one", "two"]
    assert find_elsewhere("sharedword") == ["one", "two"]
    assert other.catch_up(()).files_dropped == 2  # another listing, without them: their rows are dropped
    assert find("sharedword") == ["one", "two"]  # the warm connection reads them again, unchanged as they are
    other.close()


def test_events_lost_make_the_next_search_look_at_every_file(folder, index, root, monkeypatch) -> None:
    """The kernel's queue overflows (IN_Q_OVERFLOW): the append whose event was lost is found anyway,
    and the catalog watches again afterwards."""
    limit = Path("/proc/sys/fs/inotify/max_queued_events")
    one = folder.write("one", folder.user("first"))
    catalog, changes = _watching(root)
    find = _searcher(index, catalog)
    assert find("first") == ["one"]
    answers: list[dict[str, set[str]] | None] = []
    take = changes.take

    def recorded() -> dict[str, set[str]] | None:
        answers.append(take())
        return answers[-1]

    monkeypatch.setattr(changes, "take", recorded)

    noise = [os.open(root / name, os.O_WRONLY | os.O_CREAT | os.O_APPEND) for name in ("a.txt", "b.txt")]
    try:
        for n in range(int(limit.read_text()) + 10):  # two files in turn: the kernel merges repeated events
            os.write(noise[n % 2], b"x")
    finally:
        for fd in noise:
            os.close(fd)
    folder.append(one, folder.user("lostword"))  # its event comes after the queue is full: lost
    assert find("lostword") == ["one"]
    assert answers == [None]  # the overflow was seen, and made the look a whole one

    folder.append(one, folder.user("laterword"))
    assert find("laterword") == ["one"]
    assert answers[-1] == {str(one.parent): {one.name}}  # watching again, change by change


def test_a_dead_watcher_falls_back_to_looking_at_every_file(folder, index, root) -> None:
    one = folder.write("one", folder.user("first"))
    catalog, changes = _watching(root)
    find = _searcher(index, catalog)
    assert find("first") == ["one"]
    changes._inotify.close()  # the descriptor is gone: nothing more will be heard from it

    folder.append(one, folder.user("afterword"))
    assert find("afterword") == ["one"]
    folder.write("two", folder.user("newword"))
    assert find("newword") == ["two"]
    folder.append(one, folder.user("againword"))
    assert find("againword") == ["one"]
    assert changes.take() is None
    assert not changes.watch(str(root))


@pytest.mark.parametrize("refused", ["workspace", "root"])
def test_a_folder_no_watch_holds_is_looked_at_every_time(folder, index, root, monkeypatch, refused: str) -> None:
    """This user's inotify watches used up: the folder that got none is looked at whole each time."""
    one = folder.write("one", folder.user("first"))
    catalog, changes = _watching(root)
    unwatchable = str(one.parent if refused == "workspace" else root)
    watch = changes.watch
    monkeypatch.setattr(changes, "watch", lambda path: path != unwatchable and watch(path))
    find = _searcher(index, catalog)
    assert find("first") == ["one"]

    folder.append(one, folder.user("appendedword"))
    assert find("appendedword") == ["one"]
    folder.write("two", folder.user("createdword"))
    assert find("createdword") == ["two"]
    other = root / "--elsewhere--"
    other.mkdir()
    (other / "three.jsonl").write_bytes(folder.path("two").read_bytes().replace(b'"two"', b'"three"'))
    assert find("createdword") == ["three", "two"]  # a new workspace folder, with a file already in it
