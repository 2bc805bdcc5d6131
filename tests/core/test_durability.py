"""New files survive a power cut once created: with fsync on, the file's data, its name in its folder,
and the name of each folder created for it reach the disk; appends sync their data. With fsync off,
nothing is synced. Each sync is recorded by the path of the descriptor it was given."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles.fork import create_session, encode_cwd, fork_session
from sessions_app.sessionfiles.store import write_new


@pytest.fixture
def synced(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Path]]:
    """Every fsync / fdatasync as (which, path of the descriptor)."""
    calls: list[tuple[str, Path]] = []
    for name in ("fsync", "fdatasync"):
        real = getattr(os, name)

        def record(fd: int, real: Any = real, name: str = name) -> None:
            calls.append((name, Path(os.readlink(f"/proc/self/fd/{fd}"))))
            real(fd)

        monkeypatch.setattr(os, name, record)
    return calls


def test_a_new_session_in_a_new_folder_is_durable(tmp_path: Path, synced: list[tuple[str, Path]]) -> None:
    root = tmp_path / "sessions"  # neither the sessions folder nor the cwd folder exists yet
    session = create_session(root, "/srv/app", name="durable")
    folder = root / encode_cwd("/srv/app")
    assert session.path.parent == folder
    synced_paths = [path for _, path in synced]
    assert ("fsync", session.path) in synced  # data and size of the new file
    assert folder in synced_paths  # the file's name in its folder
    assert root in synced_paths  # the new folder's name in the sessions folder
    assert tmp_path in synced_paths  # and the sessions folder's name in its parent, created too
    assert synced_paths.index(session.path) < synced_paths.index(folder)  # the file first, then its name


def test_a_new_session_in_an_existing_folder_syncs_file_and_folder_only(
    tmp_path: Path, synced: list[tuple[str, Path]]
) -> None:
    root = tmp_path / "sessions"
    create_session(root, "/srv/app")
    synced.clear()
    session = create_session(root, "/srv/app")
    assert sorted(path for _, path in synced) == sorted([session.path, session.path.parent])


def test_a_fork_is_durable(tmp_path: Path, synced: list[tuple[str, Path]]) -> None:
    source = create_session(tmp_path, "/srv/app")
    source.append(E.user_message("to be forked"))
    synced.clear()
    fork = fork_session(source)
    assert {path for _, path in synced} == {fork.path, fork.path.parent}


def test_appends_sync_their_data(tmp_path: Path, synced: list[tuple[str, Path]]) -> None:
    session = create_session(tmp_path, "/srv/app")
    synced.clear()
    session.append(E.user_message("one more"))
    assert synced == [("fdatasync", session.path)]


def test_nothing_is_synced_with_fsync_off(tmp_path: Path, synced: list[tuple[str, Path]]) -> None:
    session = create_session(tmp_path / "new", "/srv/app", fsync=False)
    session.append(E.user_message("fast"))
    fork_session(session, fsync=False)
    assert synced == []


def test_a_file_written_from_its_bytes_is_durable_with_its_new_folders(
    tmp_path: Path, synced: list[tuple[str, Path]]
) -> None:
    path = tmp_path / "sessions" / "--uploads--" / "up.jsonl"
    write_new(path, b'{"type":"session","version":3,"id":"up"}\n')
    assert [path for _, path in synced] == [path, path.parent, tmp_path / "sessions", tmp_path]
    with pytest.raises(FileExistsError):
        write_new(path, b"never over an existing file\n")
