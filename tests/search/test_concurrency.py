"""Several threads and processes catching up and querying one index: queries never see half a file,
writers take turns without reading a file twice, and parallel builds agree on one complete index."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

import sessions_app.search.index as index_module
from sessions_app.search.index import SearchIndex
from sessions_app.sessionfiles.catalog import Catalog


def test_a_query_sees_a_file_before_or_after_its_catch_up_never_half(folder, index, catalog, monkeypatch) -> None:
    folder.write("big", *[folder.user(f"shared word number {i}") for i in range(15)])
    inside, release = threading.Event(), threading.Event()
    read_file = SearchIndex._read_file

    def paused(self, db, info, report, *limit):  # every row of the file written, the transaction not committed
        read_file(self, db, info, report, *limit)
        inside.set()
        assert release.wait(10)

    monkeypatch.setattr(SearchIndex, "_read_file", paused)
    writer = threading.Thread(target=index.catch_up, args=(catalog.sessions(),))
    writer.start()
    try:
        assert inside.wait(10)
        hits, _ = index.search("shared")  # this thread's own connection, reading while the writer writes
        assert hits == []
    finally:
        release.set()
        writer.join(10)
    hits, _ = index.search("shared")
    assert len(hits) == 15


def test_a_writer_that_waited_skips_a_file_caught_up_meanwhile(folder, catalog, tmp_path, monkeypatch) -> None:
    folder.write("s", *[folder.user(f"word {i}") for i in range(5)])
    first, second = SearchIndex(tmp_path / "i.sqlite3"), SearchIndex(tmp_path / "i.sqlite3")
    sessions = catalog.sessions()
    first.catch_up([])  # schema made, nothing indexed: both see the file as new
    writing = index_module.write_transaction
    calls = []

    def other_goes_first(db):
        if not calls:
            calls.append(1)
            thread = threading.Thread(target=lambda: calls.append(second.catch_up(sessions)))
            thread.start()
            thread.join(10)
        return writing(db)

    monkeypatch.setattr(index_module, "write_transaction", other_goes_first)
    report = first.catch_up(sessions)
    assert calls[1].files_read == 1 and calls[1].entries == 5
    assert report.files_read == 0  # the file was caught up while this writer waited: not read again
    with sqlite3.connect(first.path) as db:
        assert db.execute("SELECT count(*) FROM entries").fetchone() == (5,)
    first.close()


WORKER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    sys.path.insert(0, sys.argv[1])
    from sessions_app.search.index import SearchIndex
    from sessions_app.search.results import search
    from sessions_app.sessionfiles.catalog import Catalog
    index, catalog = SearchIndex(Path(sys.argv[2])), Catalog(Path(sys.argv[3]))
    for _ in range(5):
        results = search(index, catalog, "shared")
    print(len(results.hits))
    """
)


@pytest.mark.processes
def test_processes_building_and_querying_at_once_agree_on_one_complete_index(folder, root, tmp_path) -> None:
    paths = [folder.write(f"s{n:02d}", *[folder.user(f"shared unique{n}x{i}") for i in range(4)]) for n in range(30)]
    db = tmp_path / "shared.sqlite3"
    repo = str(Path(__file__).resolve().parents[2])
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, repo, str(db), str(root)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        for _ in range(4)
    ]
    for n in range(20):  # the files grow while the workers build
        folder.append(paths[n % len(paths)], folder.user(f"shared appended{n}"))
    for worker in workers:
        out, err = worker.communicate(timeout=120)
        assert worker.returncode == 0, err.decode()
        assert out.decode().strip() == "20"  # a full first page, whatever the moment
    index = SearchIndex(db)
    index.catch_up(Catalog(root).sessions())
    with sqlite3.connect(db) as check:
        assert check.execute("SELECT count(*) FROM entries").fetchone() == (30 * 4 + 20,)
        assert check.execute("SELECT count(*) FROM files").fetchone() == (30,)
    for n in range(20):
        hits, _ = index.search(f'"appended{n}"')  # quoted: not a prefix of appended1x
        assert len(hits) == 1, n
    index.close()


def test_a_connection_notices_what_another_one_changed(folder, catalog, tmp_path) -> None:
    folder.write("s", folder.user("remembered words"))
    mine, other = SearchIndex(tmp_path / "i.sqlite3"), SearchIndex(tmp_path / "i.sqlite3")
    sessions = catalog.sessions()
    assert mine.catch_up(sessions).files_read == 1
    assert other.catch_up([]).files_dropped == 1  # e.g. a process pointed at another folder
    # The file did not change, but the index did: this connection must not trust what it remembers.
    assert mine.catch_up(sessions).files_read == 1
    assert len(mine.search("remembered")[0]) == 1
    mine.close()
    other.close()
