"""A catalog that learns from inotify which files changed lists exactly what a fresh scan lists."""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path

import pytest

from sessions_app.sessionfiles import changes
from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles.catalog import Catalog
from sessions_app.sessionfiles.changes import FolderChanges
from sessions_app.sessionfiles.fork import create_session
from sessions_app.sessionfiles.store import SessionFile


def _session_in(folder: Path, text: str | None = None) -> Path:
    """A new session file right in ``folder`` (``create_session`` would add a folder for its cwd)."""
    made = create_session(folder / ".scratch", cwd="/w").path
    path = folder / made.name
    made.rename(path)
    shutil.rmtree(folder / ".scratch")
    if text is not None:
        SessionFile.open(path).append(E.user_message(text))
    return path


def _listing(catalog: Catalog) -> tuple[list[tuple[str, str, int, int, str | None]], dict[str, str]]:
    infos = catalog.sessions()
    shown = [(str(i.path), i.id, i.message_count, i.modified_ms, i.name) for i in infos]
    return shown, {str(path): reason for path, reason in catalog.problems.items()}


def test_the_filesystem_type_is_read_from_the_mount_table(tmp_path: Path) -> None:
    kind = changes.filesystem_type(tmp_path)
    assert kind and kind not in changes.NETWORK_FILESYSTEMS  # the test machine's disk is local
    assert changes.sees_every_change(tmp_path)


def test_a_network_filesystem_is_scanned_every_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(changes, "filesystem_type", lambda path: "nfs4")
    catalog = Catalog(tmp_path, watch=True)
    assert catalog._changes is None


def test_an_unchanged_folder_is_listed_without_a_stat(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "--w--").mkdir()
    for n in range(5):
        _session_in(tmp_path / "--w--", f"hello {n}")
    catalog = Catalog(tmp_path, watch=True)
    first = catalog.sessions()
    assert len(first) == 5

    def no_stat(*args: object, **kwargs: object) -> None:
        raise AssertionError("an unchanged folder was looked at again")

    monkeypatch.setattr(os, "stat", no_stat)
    monkeypatch.setattr(os, "scandir", no_stat)
    assert catalog.sessions() == first
    monkeypatch.undo()

    SessionFile.open(first[-1].path).append(E.user_message("newer"))
    assert catalog.sessions()[0].path == first[-1].path  # the grown file is looked at again


def test_events_lost_make_the_next_look_a_whole_scan(tmp_path: Path) -> None:
    folder_changes = FolderChanges.open()
    assert folder_changes is not None
    assert folder_changes.watch(str(tmp_path))
    (tmp_path / "a.jsonl").write_text("x")
    assert folder_changes.take() == {str(tmp_path): {"a.jsonl"}}
    assert folder_changes.take() == {}
    shutil.rmtree(tmp_path)
    assert folder_changes.take() is None  # the watched folder itself went away
    folder_changes.close()


def test_every_kind_of_change_lists_as_a_fresh_scan_does(tmp_path: Path) -> None:
    """Random changes of every kind a sessions folder sees, each followed by a listing of the watching
    catalog, which must equal a fresh scan's listing of the same folder."""
    root = tmp_path / "sessions"
    root.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    watching = Catalog(root, watch=True)
    assert watching._changes is not None
    rng = random.Random(7)
    files: list[Path] = []

    def workspace() -> Path:
        folders = [p for p in root.iterdir() if p.is_dir() and not p.is_symlink()]
        if not folders or rng.random() < 0.2:
            folder = root / f"--w{rng.randrange(1000)}--"
            folder.mkdir(exist_ok=True)
            return folder
        return rng.choice(folders)

    def new_session() -> None:
        files.append(_session_in(workspace(), f"first {len(files)}"))

    def live(paths: list[Path]) -> list[Path]:
        return [p for p in paths if p.is_file() and not p.is_symlink()]

    def append() -> None:
        if live(files):
            SessionFile.open(rng.choice(live(files))).append(E.user_message("more"))

    def rename_session() -> None:
        if live(files):
            SessionFile.open(rng.choice(live(files))).rename(f"name {rng.randrange(100)}")

    def delete() -> None:
        if live(files):
            rng.choice(live(files)).unlink()

    def move_to_other_workspace() -> None:
        if live(files):
            source = rng.choice(live(files))
            target = workspace() / source.name
            if not target.exists():
                source.rename(target)
                files.append(target)

    def replace_by_rename() -> None:
        if live(files):
            target = rng.choice(live(files))
            scratch = target.with_suffix(".tmp")
            shutil.copyfile(target, scratch)
            with scratch.open("ab") as handle:
                handle.write(b'{"type":"custom","id":"feedbeef","parentId":null,"timestamp":"2026-01-01T00:00:00Z"}\n')
            os.replace(scratch, target)

    def odd_files() -> None:
        folder = workspace()
        kind = rng.choice(["fifo", "dir", "broken", "link", "garbage", "empty"])
        path = folder / f"odd-{rng.randrange(1000)}.jsonl"
        if path.exists() or path.is_symlink():
            return
        if kind == "fifo":
            os.mkfifo(path)
        elif kind == "dir":
            path.mkdir()
        elif kind == "broken":
            path.symlink_to(tmp_path / "nowhere.jsonl")
        elif kind == "link":
            target = _session_in(outside)
            path.symlink_to(target)
            files.append(target)  # grows out of the watches' sight
        elif kind == "garbage":
            path.write_bytes(b"not json\n")
        else:
            path.write_bytes(b"")

    def remove_workspace() -> None:
        folders = [p for p in root.iterdir() if p.is_dir() and not p.is_symlink()]
        if folders and rng.random() < 0.3:
            shutil.rmtree(rng.choice(folders))

    def rename_workspace() -> None:
        folders = [p for p in root.iterdir() if p.is_dir() and not p.is_symlink()]
        if folders:
            source = rng.choice(folders)
            target = root / f"--r{rng.randrange(1000)}--"
            if not target.exists():
                source.rename(target)
                files.extend(target / p.name for p in files if p.parent == source)

    def session_in_root() -> None:
        files.append(_session_in(root))

    def grow_outside() -> None:
        linked = [p for p in files if p.parent == outside and p.exists()]
        if linked:
            SessionFile.open(rng.choice(linked)).append(E.user_message("grown through a link"))

    actions = [
        new_session,
        new_session,
        append,
        append,
        append,
        rename_session,
        delete,
        move_to_other_workspace,
        replace_by_rename,
        odd_files,
        remove_workspace,
        rename_workspace,
        session_in_root,
        grow_outside,
    ]
    for _ in range(220):
        rng.choice(actions)()
        assert _listing(watching) == _listing(Catalog(root))


def test_a_root_made_after_the_first_listing_is_listed(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    watching = Catalog(root, watch=True)
    assert watching._changes is not None
    assert watching.sessions() == []
    (root / "--w--").mkdir(parents=True)
    made = _session_in(root / "--w--", "hello")
    assert [info.path for info in watching.sessions()] == [made]
    SessionFile.open(made).append(E.user_message("again"))
    assert watching.sessions()[0].message_count == 2  # watched from then on
