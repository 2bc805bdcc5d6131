"""A full disk and a read-only folder: a write that fails or falls short leaves the file exactly as it
was (the partial line is taken back under the lock), says why in words a user can act on, and the next
write, once there is room, goes through as if nothing had happened. A new file that cannot be written
whole is removed."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest
from support.faults import Faults, fill, read_only, small_disk

from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles.errors import WriteFailed
from sessions_app.sessionfiles.fork import create_session, fork_session
from sessions_app.sessionfiles.store import SessionFile, create_file, write_new

CWD = "/home/alice/project"


def _session(root: Path) -> SessionFile:
    session = create_session(root, CWD, fsync=False)
    session.append(E.user_message("hello"))
    return session


def _valid(path: Path) -> SessionFile:
    """The file as a fresh reader sees it: every line whole, nothing skipped."""
    reader = SessionFile(path)
    assert reader.index.skipped() == []
    assert path.read_bytes().endswith(b"\n")
    return reader


@pytest.mark.parametrize("fsync", [False, True])
def test_a_short_write_is_taken_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fsync: bool) -> None:
    session = _session(tmp_path)
    session.fsync = fsync
    before = session.path.read_bytes()
    faults = Faults(monkeypatch)
    faults.short(keep=10)
    with pytest.raises(WriteFailed, match=r"nothing was written: only 10 of .* bytes fitted \(the disk is full\)"):
        session.append(E.user_message("x" * 1000))
    assert session.path.read_bytes() == before
    written = session.append(E.user_message("after"))  # room again: as if nothing had happened
    assert written["id"] in _valid(session.path).index.by_id
    assert session.path.read_bytes().startswith(before)


@pytest.mark.parametrize(
    ("code", "says"),
    [
        (errno.ENOSPC, "the disk is full"),
        (errno.EDQUOT, "the disk is full"),
        (errno.EROFS, "read-only file system"),
        (errno.EACCES, "read-only \\(permission denied\\)"),
        (errno.EIO, "could not be written \\(Input/output error\\)"),
    ],
)
def test_a_failed_write_says_why_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int, says: str
) -> None:
    session = _session(tmp_path)
    before = session.path.read_bytes()
    Faults(monkeypatch).error(code)
    with pytest.raises(WriteFailed, match=f"nothing was written: .*{says}"):
        session.rename("renamed")
    assert session.path.read_bytes() == before


def test_a_line_whose_sync_fails_is_taken_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """fdatasync failing means the line may never reach the disk: the caller is told nothing was
    written, so the file must not keep it either (a retry would store it twice)."""
    session = _session(tmp_path)
    session.fsync = True
    before = session.path.read_bytes()
    Faults(monkeypatch).sync_error()
    with pytest.raises(WriteFailed, match="Input/output error"):
        session.set_label(session.leaf_id or "", "kept?")
    assert session.path.read_bytes() == before


def test_the_newline_a_torn_line_was_given_is_taken_back_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    session = _session(tmp_path)
    with session.path.open("ab") as handle:
        handle.write(b'{"type":"message","id":"torn"')  # another program's write, cut short
    before = session.path.read_bytes()
    Faults(monkeypatch).short(keep=1)  # only the newline that would end the torn line got through
    with pytest.raises(WriteFailed):
        session.append(E.user_message("x"))
    assert session.path.read_bytes() == before


def test_a_new_file_that_cannot_be_written_whole_is_removed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    faults = Faults(monkeypatch)
    path = tmp_path / "--w--" / "new.jsonl"
    faults.short(keep=5)
    with pytest.raises(WriteFailed, match="the disk is full"):
        create_file(path, [{"type": "session", "version": 3, "id": "s", "timestamp": "t", "cwd": "/"}])
    assert not path.exists()
    faults.sync_error()
    with pytest.raises(WriteFailed, match="Input/output error"):
        write_new(path, b'{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/"}\n', fsync=True)
    assert not path.exists()


@pytest.mark.processes
def test_a_full_disk(tmp_path: Path) -> None:
    """A real file system that fills up: tmpfs writes what fits, then refuses."""
    with small_disk(tmp_path / "disk", 256) as disk:
        session = _session(disk)
        source_bytes = session.path.read_bytes()
        fill(disk)
        before = session.path.read_bytes()
        for draft in (E.user_message("y" * 300_000), E.user_message("z" * 10_000)):
            with pytest.raises(WriteFailed, match="the disk is full"):
                session.append(draft)
            assert session.path.read_bytes() == before
        with pytest.raises(WriteFailed, match="the disk is full"):
            fork_session(session)
        with pytest.raises(WriteFailed, match="the disk is full"):
            create_session(disk, CWD, fsync=False)
        assert sorted(path.name for path in disk.rglob("*.jsonl")) == [session.path.name]
        (disk / "ballast").unlink()
        session.append(E.user_message("room again"))
        assert _valid(session.path).index.version == 3
        assert session.path.read_bytes().startswith(source_bytes)


@pytest.mark.processes
def test_a_read_only_folder(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    session = _session(root)
    before = session.path.read_bytes()
    with read_only(root):
        with pytest.raises(
            WriteFailed,
            match=r"nothing was written: (the sessions folder is on a read-only file system|the folder or the file is read-only)",
        ):
            session.append(E.user_message("refused"))
        with pytest.raises(WriteFailed, match="nothing was written"):
            fork_session(session)
        assert session.path.read_bytes() == before
        assert [path.name for path in root.rglob("*.jsonl")] == [session.path.name]
    session.append(E.user_message("writable again"))
    _valid(session.path)
