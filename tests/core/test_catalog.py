"""A folder of sessions: listing (docs/format.md §10), finding by id, lineage, and what is not a session."""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path
from typing import Any

import pytest
from support.lines import copy_as

from sessions_app.sessionfiles import catalog as catalog_module
from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles.catalog import (
    AmbiguousId,
    Catalog,
    UnknownSession,
    info_fields,
)
from sessions_app.sessionfiles.errors import NotASession
from sessions_app.sessionfiles.fork import fork_session
from sessions_app.sessionfiles.listing import FIRST_MESSAGE_CHARS, session_info
from sessions_app.sessionfiles.store import SessionFile

FOLDER = "--home-alice-projects-todo-api--"


@pytest.fixture
def samples_root(tmp_path: Path, samples_dir: Path, expected: dict[str, Any]) -> Path:
    """pi's samples under their original names, as in ``__list``."""
    root = tmp_path / "sessions"
    folder = root / FOLDER
    folder.mkdir(parents=True)
    for key in (
        "01-linear",
        "02-tree-branches",
        "03-fork-of-02",
        "04-compaction",
        "07-context-edit-usage",
        "06-corrupt-tail.after-append",
    ):
        shutil.copyfile(samples_dir / f"{key}.jsonl", folder / expected[key]["originalFileName"])
    shutil.copyfile(
        samples_dir / "05-legacy-v1.input.jsonl", folder / expected["05-legacy-v1.migrated"]["originalFileName"]
    )
    return root


def test_find_by_id_and_unique_prefix(samples_root: Path) -> None:
    catalog = Catalog(samples_root)
    assert catalog.find("019cadd4-cb50-74dd-b0a5-3da75cdfe166").name == "Title validation experiments"
    assert catalog.find("019cadd4-cb").id == "019cadd4-cb50-74dd-b0a5-3da75cdfe166"
    assert catalog.find("5f0c").id == "5f0c2a9e-1b7d-4c1e-9a43-2d8f6e1b0c77"  # the v1 file too


def test_ambiguous_prefix_and_unknown_id(samples_root: Path) -> None:
    catalog = Catalog(samples_root)
    with pytest.raises(AmbiguousId, match="matches 5 sessions"):
        catalog.find("019cadd")
    with pytest.raises(UnknownSession, match="no session with id 'ffff'"):
        catalog.find("ffff")


def test_an_ambiguous_id_says_how_many_it_leaves_out_and_names_files_that_share_one(tmp_path: Path) -> None:
    folder = tmp_path / "--work--"
    folder.mkdir()
    header = '{"type":"session","version":3,"id":"%s","timestamp":"2026-03-02T09:00:00.000Z","cwd":"/w"}\n'
    for number in range(7):
        (folder / f"s{number}.jsonl").write_text(header % f"abc{number}")
    with pytest.raises(AmbiguousId, match=r"matches 7 sessions: abc0, abc1, abc2, abc3, abc4 and 2 more$"):
        Catalog(tmp_path).find("abc")
    for name in ("a.jsonl", "b.jsonl"):
        (folder / name).write_text(header % "twin")
    with pytest.raises(AmbiguousId, match=r"matches 2 sessions: .*/a\.jsonl, .*/b\.jsonl$"):
        Catalog(tmp_path).find("twin")


def test_listing_reads_only_changed_files(samples_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    opened, _ = _counting(monkeypatch)
    catalog = Catalog(samples_root)
    first = catalog.sessions()
    assert len(opened) == len(first) == 7

    opened.clear()
    assert catalog.sessions() == first
    assert opened == []  # nothing changed, nothing read

    changed = next(info for info in first if info.id.startswith("019cadd4-5bfc"))
    SessionFile(changed.path, fsync=False).append(E.user_message("one more"))
    third = catalog.sessions()
    assert opened == [changed.path]
    assert next(i for i in third if i.path == changed.path).message_count == changed.message_count + 1


def test_non_sessions_are_problems_not_entries(samples_root: Path, L: Any) -> None:
    folder = samples_root / FOLDER
    (folder / "notes.jsonl").write_bytes(L.dump({"role": "user", "content": "not a session"}))
    (folder / "empty.jsonl").write_bytes(b"")
    (folder / "v4.jsonl").write_bytes(L.dump({"kind": "header", "version": 4, "id": "x", "createdAt": 1, "cwd": "/"}))
    (folder / "readme.txt").write_text("not even jsonl")
    before = {p.name: p.read_bytes() for p in folder.iterdir()}

    catalog = Catalog(samples_root)
    infos = catalog.sessions()

    assert len(infos) == 7
    assert set(catalog.problems) == {folder / "notes.jsonl", folder / "empty.jsonl", folder / "v4.jsonl"}
    assert "not a pi session" in catalog.problems[folder / "notes.jsonl"]
    assert "empty" in catalog.problems[folder / "empty.jsonl"]
    assert "v4" in catalog.problems[folder / "v4.jsonl"]
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before


def test_lineage_of_pitree_forks(new_session: Any, sessions_root: Path) -> None:
    parent = new_session()
    parent.append(E.user_message("parent"))
    child = fork_session(parent, fsync=False)
    child.append(E.user_message("child"))
    grandchild = fork_session(child, fsync=False)
    grandchild.append(E.user_message("grandchild"))
    unrelated = new_session(cwd="/elsewhere")
    unrelated.append(E.user_message("unrelated"))

    catalog = Catalog(sessions_root)
    infos = catalog.sessions()
    by_path = {info.path: info for info in infos}
    p, c, g, u = (by_path[s.path] for s in (parent, child, grandchild, unrelated))

    assert catalog.parent_of(c) == p and catalog.parent_of(g) == c
    assert catalog.parent_of(p) is None and catalog.parent_of(u) is None
    assert catalog.forks_of(p) == [c] and catalog.forks_of(c) == [g] and catalog.forks_of(g) == []
    forest = [(info.path, depth) for info, depth in catalog.forest(infos)]
    assert (p.path, 0) in forest and (c.path, 1) in forest and (g.path, 2) in forest and (u.path, 0) in forest
    assert forest.index((c.path, 1)) == forest.index((p.path, 0)) + 1
    assert forest.index((g.path, 2)) == forest.index((c.path, 1)) + 1


def test_lineage_survives_a_copied_folder(new_session: Any, sessions_root: Path, tmp_path: Path) -> None:
    """Headers name the parent by absolute path; another machine's copy still nests by file name."""
    parent = new_session()
    parent.append(E.user_message("parent"))
    child = fork_session(parent, fsync=False)
    elsewhere = tmp_path / "copied-from-another-machine"
    shutil.copytree(sessions_root, elsewhere)

    catalog = Catalog(elsewhere)
    infos = catalog.sessions()
    copied_child = next(info for info in infos if info.path.name == child.path.name)
    assert copied_child.parent_session_path == str(parent.path.absolute())  # points outside this folder
    copied_parent = catalog.parent_of(copied_child, infos)
    assert copied_parent is not None and copied_parent.path == elsewhere / parent.path.relative_to(sessions_root)
    assert catalog.forks_of(copied_parent, infos) == [copied_child]


def test_missing_parent_file_lists_the_fork_as_a_root(new_session: Any, sessions_root: Path) -> None:
    parent = new_session()
    parent.append(E.user_message("parent"))
    child = fork_session(parent, fsync=False)
    parent.path.unlink()
    catalog = Catalog(sessions_root)
    (info,) = catalog.sessions()
    assert info.path == child.path
    assert catalog.parent_of(info) is None
    assert catalog.forest() == [(info, 0)]


def test_info_fields_and_title(samples_root: Path) -> None:
    infos = {info.id: info for info in Catalog(samples_root).sessions()}
    named = infos["019cadd4-cb50-74dd-b0a5-3da75cdfe166"]
    unnamed = infos["019cadd6-6b54-74dd-b0a5-3dacb698b49f"]
    assert named.title == "Title validation experiments"
    assert unnamed.title == "My API key is sk-test-123, please configure it"
    assert set(info_fields(named)) == {
        "path",
        "id",
        "cwd",
        "name",
        "parentSessionPath",
        "created",
        "modified",
        "messageCount",
        "firstMessage",
    }


def test_session_without_user_text_has_no_first_message(new_session: Any, sessions_root: Path) -> None:
    session = new_session()
    session.append(E.user_message("   "))
    session.append(E.assistant_message("only the assistant speaks", provider="p", model="m", api="x"))
    (info,) = Catalog(sessions_root).sessions()
    assert info.first_message == "(no messages)"
    assert info.message_count == 2
    assert info.modified_ms == max(e["message"]["timestamp"] for e in session.path_entries())


def test_a_listing_keeps_the_start_of_a_long_first_message(new_session: Any, sessions_root: Path) -> None:
    """A 31 MB first message, kept whole for every listing, made each page that cut a title from it
    take 400 MB; the listing keeps what any title and the list's filter need."""
    long = new_session()
    long.append(E.user_message("word " * 1_000_000))
    late = new_session()
    late.append(E.user_message(" " * (FIRST_MESSAGE_CHARS + 10) + "late text"))  # not blank, further on
    infos = {info.path: info for info in Catalog(sessions_root).sessions()}
    assert infos[long.path].first_message == ("word " * 1_000_000)[:FIRST_MESSAGE_CHARS]
    assert infos[late.path].first_message == " " * FIRST_MESSAGE_CHARS
    assert session_info(long).first_message == infos[long.path].first_message  # an open file, the same


def test_symlinked_folders_are_followed_and_broken_links_ignored(samples_root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside" / "--srv-app--"
    outside.mkdir(parents=True)
    copy_as(next((samples_root / FOLDER).iterdir()), outside / "linked.jsonl", "linked-session")
    (samples_root / "--srv-app--").symlink_to(outside, target_is_directory=True)
    (samples_root / "--broken--").symlink_to(tmp_path / "does-not-exist", target_is_directory=True)
    catalog = Catalog(samples_root)
    paths = [info.path for info in catalog.sessions()]
    assert samples_root / "--srv-app--" / "linked.jsonl" in paths
    assert len(paths) == 8
    assert catalog.problems == {}


# ---------------------------------------------------------------------------------------------- a hostile folder


def _counting(monkeypatch: pytest.MonkeyPatch) -> tuple[list[Path], list[Path]]:
    """(files fully read, files whose header was read) by the catalog from now on."""
    opened: list[Path] = []
    headers: list[Path] = []

    class CountingSessionFile(SessionFile):
        def __init__(self, path: Path, **kwargs: Any) -> None:
            opened.append(Path(path))
            super().__init__(path, **kwargs)

    real_read_info = catalog_module.read_info

    def counting_read_info(path: Any, **kwargs: Any) -> Any:
        opened.append(Path(path))
        return real_read_info(path, **kwargs)

    real_read_header = catalog_module.read_header

    def counting_read_header(path: Any, **kwargs: Any) -> Any:
        headers.append(Path(path))
        return real_read_header(path, **kwargs)

    monkeypatch.setattr(catalog_module, "SessionFile", CountingSessionFile)
    monkeypatch.setattr(catalog_module, "read_info", counting_read_info)
    monkeypatch.setattr(catalog_module, "read_header", counting_read_header)
    return opened, headers


def _list_without_blocking(catalog: Catalog) -> list[Any]:
    """``catalog.sessions()``, in a thread given 30 s: a listing that opens a FIFO waits for ever."""
    listed: list[Any] = []
    worker = threading.Thread(target=lambda: listed.append(catalog.sessions()), daemon=True)
    worker.start()
    worker.join(timeout=30)
    assert not worker.is_alive(), "listing blocked on a file"
    return listed[0]


def test_what_is_not_a_regular_file_is_reported_never_opened(samples_root: Path, tmp_path: Path) -> None:
    folder = samples_root / FOLDER
    os.mkfifo(folder / "pipe.jsonl")
    (folder / "zero.jsonl").symlink_to("/dev/zero")
    (folder / "broken.jsonl").symlink_to(tmp_path / "nowhere.jsonl")
    (folder / "loop.jsonl").symlink_to(folder / "loop.jsonl")
    (folder / "dir.jsonl").mkdir()
    catalog = Catalog(samples_root)
    listed = _list_without_blocking(catalog)
    assert len(listed) == 7
    problems = {path.name: reason for path, reason in catalog.problems.items()}
    assert "a FIFO" in problems["pipe.jsonl"]
    assert "a character device" in problems["zero.jsonl"]
    assert "broken symbolic link" in problems["broken.jsonl"]
    assert "symbolic links" in problems["loop.jsonl"]  # "Too many levels of symbolic links"
    assert "a folder" in problems["dir.jsonl"]


def test_a_file_swapped_for_a_fifo_after_the_look_is_refused_without_blocking(
    samples_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The listing opens the files it has just looked at without another ``stat``; one replaced by a
    FIFO in between is still refused, not read (which would wait for a writer)."""
    swapped = next((samples_root / FOLDER).glob("*.jsonl"))
    real = catalog_module.read_info

    def swap_first(path: Any, **kwargs: Any) -> Any:
        if path == str(swapped):
            swapped.unlink()
            os.mkfifo(swapped)
        return real(path, **kwargs)

    monkeypatch.setattr(catalog_module, "read_info", swap_first)
    catalog = Catalog(samples_root)
    listed = _list_without_blocking(catalog)
    assert len(listed) == 6
    assert "a FIFO, not a session file" in catalog.problems[swapped]


def test_a_bad_file_is_not_read_again_while_unchanged(samples_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bad = samples_root / FOLDER / "notes.jsonl"
    bad.write_bytes(b'{"not": "a session"}\n')
    catalog = Catalog(samples_root)
    catalog.sessions()
    opened, _ = _counting(monkeypatch)
    catalog.sessions()
    assert opened == [] and bad in catalog.problems
    with open(bad, "ab") as handle:
        handle.write(b"{}\n")
    catalog.sessions()
    assert opened == [bad]


def test_one_file_failing_in_any_way_leaves_the_others_listed(
    samples_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    victim = sorted((samples_root / FOLDER).iterdir())[0]
    real = catalog_module.read_info

    def failing(path: Any, **kwargs: Any) -> Any:
        if Path(path) == victim:
            raise ValueError("something nobody foresaw")
        return real(path, **kwargs)

    monkeypatch.setattr(catalog_module, "read_info", failing)
    catalog = Catalog(samples_root)
    assert len(catalog.sessions()) == 6
    assert "ValueError: something nobody foresaw" in catalog.problems[victim]


def test_locate_reads_only_the_file_named_for_the_id(samples_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    catalog = Catalog(samples_root)
    opened, headers = _counting(monkeypatch)
    path = catalog.locate("019cadd4-cb50-74dd-b0a5-3da75cdfe166")
    assert path.name.endswith("_019cadd4-cb50-74dd-b0a5-3da75cdfe166.jsonl")
    assert headers == [path] and opened == []
    assert catalog.locate("019cadd4-cb50-74dd-b0a5-3da75cdfe166") == path
    assert headers == [path]  # remembered: nothing read again


def test_locate_finds_a_renamed_file_by_its_header_once(samples_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = samples_root / FOLDER
    original = next(folder.glob("*_019cadd4-cb50-74dd-b0a5-3da75cdfe166.jsonl"))
    renamed = original.rename(folder / "renamed by hand.jsonl")
    catalog = Catalog(samples_root)
    opened, headers = _counting(monkeypatch)
    assert catalog.locate("019cadd4-cb50-74dd-b0a5-3da75cdfe166") == renamed
    assert len(headers) == 7 and opened == []  # every header once, no file read whole
    headers.clear()
    with pytest.raises(UnknownSession):
        catalog.locate("no-such-session")
    assert headers == []  # headers never change: the folder did not either


def test_locate_explains_a_broken_file_named_for_the_id(samples_root: Path) -> None:
    (samples_root / FOLDER / "2026-03-02T09-00-00-000Z_broken-one.jsonl").write_bytes(b"garbage\n")
    with pytest.raises(NotASession, match="not a pi session"):
        Catalog(samples_root).locate("broken-one")


def test_locate_refuses_an_id_held_by_two_files(samples_root: Path) -> None:
    folder = samples_root / FOLDER
    original = next(folder.glob("*_019cadd4-cb50-74dd-b0a5-3da75cdfe166.jsonl"))
    shutil.copyfile(original, folder / f"copy_{original.name.partition('_')[2]}")
    with pytest.raises(AmbiguousId, match="2 files hold session"):
        Catalog(samples_root).locate("019cadd4-cb50-74dd-b0a5-3da75cdfe166")


def test_lineage_of_one_session_reads_no_full_listing(
    new_session: Any, sessions_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parent = new_session()
    parent.append(E.user_message("parent"))
    child = fork_session(parent, fsync=False)
    others = [new_session(cwd=f"/other/{n}") for n in range(10)]
    catalog = Catalog(sessions_root)
    info = catalog_module.session_info(child)
    opened, headers = _counting(monkeypatch)
    parent_info = catalog.parent_of(info)
    assert parent_info is not None and parent_info.path == parent.path
    assert len(headers) == 12 and opened == []  # headers once; the parent's info from the open-file cache
    headers.clear()
    assert catalog.forks_of(catalog.info(parent.path)) == [catalog.info(child.path)]
    assert catalog.parent_of(info) == parent_info
    assert headers == []  # nothing added or removed: no header read again
    late = fork_session(parent, fsync=False)
    assert {fork.path for fork in catalog.forks_of(catalog.info(parent.path))} == {child.path, late.path}
    assert headers == [late.path]  # only the new file's header
    assert all(other.path not in opened for other in others)


def test_ids_a_url_cannot_carry(new_session: Any, sessions_root: Path, L: Any) -> None:
    weird = ["a/b", "what?", "a#b", "100%", "a&b", "has space", "x" * 300, "-leading", "trailing.", ""]
    folder = sessions_root / "--weird--"
    folder.mkdir()
    for number, session_id in enumerate(weird):
        (folder / f"w{number}.jsonl").write_bytes(L.dump(L.header(session_id)) + L.dump(L.user("a", None, "hi")))
    (folder / "fine.jsonl").write_bytes(L.dump(L.header("Fine.id_1-2")))
    infos = {info.id: info for info in Catalog(sessions_root).sessions()}
    assert set(infos) == {*weird, "Fine.id_1-2"}
    assert all(infos[session_id].url_id is None for session_id in weird)
    assert infos["Fine.id_1-2"].url_id == "Fine.id_1-2"


def test_times_out_of_any_range_list_without_crashing(sessions_root: Path, L: Any) -> None:
    folder = sessions_root / "--times--"
    folder.mkdir()
    cases = {
        "huge-message-time": [
            L.user("a", None, "hi") | {"message": {"role": "user", "content": "hi", "timestamp": 1e300}}
        ],
        "year-99999": [
            L.user("a", None, "hi", ts="+099999-01-01T00:00:00.000Z") | {"message": {"role": "user", "content": "hi"}}
        ],
        "year-0": [
            L.user("a", None, "hi", ts="0000-01-01T00:00:00.000Z") | {"message": {"role": "user", "content": "hi"}}
        ],
    }
    for name, entries in cases.items():
        (folder / f"{name}.jsonl").write_bytes(b"".join(L.dump(line) for line in [L.header(name), *entries]))
    catalog = Catalog(sessions_root)
    infos = {info.id: info for info in catalog.sessions()}
    assert catalog.problems == {}
    assert infos["year-99999"].modified == "+099999-01-01T00:00:00.000Z"
    assert infos["year-0"].modified == L.T0  # before 1970: pi takes only a positive activity time
    assert infos["huge-message-time"].modified == L.T0  # an invalid date counts for nothing: the header's time
    assert [info_fields(info) for info in infos.values()]


def test_find_reads_only_headers_of_files_named_for_the_prefix(
    samples_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    catalog = Catalog(samples_root)
    opened, headers = _counting(monkeypatch)
    info = catalog.find("019cadd4-cb50")
    assert info.id == "019cadd4-cb50-74dd-b0a5-3da75cdfe166"
    assert [path.name.partition("_")[2] for path in headers] == ["019cadd4-cb50-74dd-b0a5-3da75cdfe166.jsonl"]
    assert opened == []  # the one session found is opened through the per-process cache, nothing else


def test_lineage_reads_each_header_once_and_after_a_restart_none(
    new_session: Any, sessions_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parent = new_session()
    parent.append(E.user_message("parent"))
    child = fork_session(parent, fsync=False)
    for number in range(4):
        new_session(cwd=f"/other/{number}")
    bad_folder = sessions_root / "--bad--"
    bad_folder.mkdir()
    bad = [bad_folder / "garbage.jsonl", bad_folder / "empty.jsonl", bad_folder / "no-header.jsonl"]
    bad[0].write_bytes(os.urandom(2048))
    bad[1].write_bytes(b"")
    bad[2].write_bytes(b'{"type":"message","id":"a"}\n')
    cache = tmp_path / "var"
    opened, headers = _counting(monkeypatch)
    catalog = Catalog(sessions_root, cache_folder=cache)
    parent_info = catalog.info(parent.path)
    assert [fork.path for fork in catalog.forks_of(parent_info)] == [child.path]
    every = [path for path in sessions_root.rglob("*.jsonl") if path != parent.path]  # its own came with its info
    assert sorted(headers) == sorted(every)
    headers.clear()
    for path in bad:  # bad files that change stay what they were for lineage: the listing looks again
        with path.open("ab") as grown:
            grown.write(b"more\n")
    late = new_session(cwd="/other/late")
    assert [fork.path for fork in catalog.forks_of(parent_info)] == [child.path]
    assert headers == [late.path]  # only the file never seen
    headers.clear()
    restarted = Catalog(sessions_root, cache_folder=cache)
    assert restarted.parent_of(restarted.info(child.path)) == restarted.info(parent.path)
    assert restarted.forks_of(restarted.info(parent.path))[0].path == child.path
    assert headers == [] and set(opened) <= {parent.path, child.path}  # everything else came from the cache


def test_a_remembered_listing_remembers_its_failures(
    samples_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = samples_root / FOLDER / "notes.jsonl"
    bad.write_bytes(b'{"not": "a session"}\n')
    cache = tmp_path / "var"
    first = Catalog(samples_root, cache_folder=cache)
    listed = first.sessions()
    opened, headers = _counting(monkeypatch)
    again = Catalog(samples_root, cache_folder=cache)
    assert again.sessions() == listed and again.problems == first.problems and bad in again.problems
    assert opened == [] and headers == []  # a restart reads no file, the bad one included
    bad.write_bytes(b'{"not": "a session either"}\n')
    Catalog(samples_root, cache_folder=cache).sessions()
    assert opened == [bad]
