"""A folder of sessions: listing (pi-format 3.10), finding by id, lineage, and what is not a session."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from sessions_app.sessionfiles import catalog as catalog_module
from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles.catalog import (
    AmbiguousId,
    Catalog,
    UnknownSession,
    describe,
)
from sessions_app.sessionfiles.fork import fork_session
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


def test_listing_reads_only_changed_files(samples_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[Path] = []

    class CountingSessionFile(SessionFile):
        def __init__(self, path: Path, **kwargs: Any) -> None:
            opened.append(Path(path))
            super().__init__(path, **kwargs)

    monkeypatch.setattr(catalog_module, "SessionFile", CountingSessionFile)
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


def test_describe_and_title(samples_root: Path) -> None:
    infos = {info.id: info for info in Catalog(samples_root).sessions()}
    named = infos["019cadd4-cb50-74dd-b0a5-3da75cdfe166"]
    unnamed = infos["019cadd6-6b54-74dd-b0a5-3dacb698b49f"]
    assert named.title == "Title validation experiments"
    assert unnamed.title == "My API key is sk-test-123, please configure it"
    assert set(describe(named)) == {
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


def test_symlinked_folders_are_followed_and_broken_links_ignored(samples_root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside" / "--srv-app--"
    outside.mkdir(parents=True)
    shutil.copyfile(
        samples_root / FOLDER / next(p.name for p in (samples_root / FOLDER).iterdir()), outside / "linked.jsonl"
    )
    (samples_root / "--srv-app--").symlink_to(outside, target_is_directory=True)
    (samples_root / "--broken--").symlink_to(tmp_path / "does-not-exist", target_is_directory=True)
    catalog = Catalog(samples_root)
    paths = [info.path for info in catalog.sessions()]
    assert samples_root / "--srv-app--" / "linked.jsonl" in paths
    assert len(paths) == 8
    assert catalog.problems == {}
