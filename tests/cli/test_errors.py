"""Bad FILE arguments and bad command lines: one line on stderr, a non-zero exit, no traceback, and
nothing written."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from django.core.management.base import CommandError

READERS = [("show",), ("tree",), ("inspect", "--json")]
WRITERS = [("append", "--role", "user", "--text", "hi"), ("rename", "x"), ("navigate", "root"), ("fork",)]


def _bad_files(sessions_dir: Path) -> dict[str, tuple[Path | str, str]]:
    garbage = sessions_dir / "notes.jsonl"
    garbage.write_bytes(b'{"hello":"world"}\n{"type":"message","id":"a"}\n')
    empty = sessions_dir / "empty.jsonl"
    empty.write_bytes(b"")
    v4 = sessions_dir / "v4.jsonl"
    v4.write_bytes(b'{"kind":"header","version":4,"id":"s","createdAt":1,"cwd":"/x"}\n')
    folder = sessions_dir / "folder.jsonl"
    folder.mkdir()
    return {
        "missing": (sessions_dir / "missing.jsonl", "no such file"),
        "folder": (folder, "folder"),
        "not a session": (garbage, "not a pi session"),
        "empty": (empty, "empty"),
        "v4": (v4, "v4"),
        "unknown id": ("0123abcd", "no session id"),
    }


@pytest.mark.parametrize("command", READERS + WRITERS, ids=lambda c: c[0])
@pytest.mark.parametrize("case", ["missing", "folder", "not a session", "empty", "v4", "unknown id"])
def test_bad_file_arguments(pitree, sessions_dir, command, case) -> None:
    target, match = _bad_files(sessions_dir)[case]
    snapshot = {p: p.read_bytes() for p in sessions_dir.rglob("*") if p.is_file()}
    with pytest.raises(CommandError, match=match) as caught:
        pitree(command[0], str(target), *command[1:])
    assert "\n" not in str(caught.value)
    assert {p: p.read_bytes() for p in sessions_dir.rglob("*") if p.is_file()} == snapshot


def test_ambiguous_session_prefix(pitree, sample) -> None:
    sample("01-linear")
    sample("02-tree-branches")
    with pytest.raises(CommandError, match="matches 2 sessions"):
        pitree("show", "019cadd4")


def test_no_subcommand(pitree) -> None:
    with pytest.raises(CommandError, match="COMMAND"):
        pitree()


def test_unknown_subcommand(pitree) -> None:
    with pytest.raises(CommandError, match="invalid choice"):
        pitree("frobnicate")


# ------------------------------------------------------------------------------------------- real process


@pytest.mark.processes
def test_cli_error_is_one_line_with_exit_status_1(pitree_cli, sample) -> None:
    path = sample("05-legacy-v1.input")
    before = path.read_bytes()
    done = pitree_cli("append", str(path), "--role", "user", "--text", "hi")
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1 and "read-only" in done.stderr and "fork" in done.stderr
    assert "Traceback" not in done.stderr
    assert path.read_bytes() == before


@pytest.mark.processes
def test_cli_missing_argument_is_one_line_with_exit_status_2(pitree_cli) -> None:
    done = pitree_cli("show")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "FILE" in done.stderr
    done = pitree_cli()
    assert done.returncode == 2 and done.stderr.count("\n") == 1


@pytest.mark.processes
def test_cli_bad_id_is_one_line(pitree_cli, sample) -> None:
    path = sample("01-linear")
    done = pitree_cli("navigate", str(path), "nope")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.strip() == "CommandError: Entry nope not found"


@pytest.mark.processes
def test_cli_write_prints_only_the_id(pitree_cli, sample) -> None:
    path = sample("01-linear")
    done = pitree_cli("append", str(path), "--role", "user", "--text", "from a shell")
    assert done.returncode == 0 and done.stderr == ""
    new_id = done.stdout.strip()
    assert done.stdout == new_id + "\n" and len(new_id) == 8
    assert f'"id":"{new_id}"'.encode() in path.read_bytes().splitlines()[-1]
    done = pitree_cli("navigate", str(path), new_id)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_a_file_named_for_the_id_that_cannot_be_read_says_why(pitree, sessions_dir, sample, monkeypatch) -> None:
    sample("01-linear")
    os.mkfifo(sessions_dir / "2026-03-02T09-00-00-000Z_0197aaaa-fifo.jsonl")
    with pytest.raises(CommandError, match=r"_0197aaaa-fifo\.jsonl: a FIFO, not a session file"):
        pitree("show", "0197aaaa-fifo")
    with pytest.raises(CommandError, match="a FIFO, not a session file"):
        pitree("show", "0197aaaa-fi")  # a prefix of it
    locked = sessions_dir / "2026-03-02T09-00-00-000Z_0197aaaa-locked.jsonl"
    locked.write_bytes(b'{"type":"session","version":3,"id":"0197aaaa-locked"}\n')
    locked.chmod(0)
    real_open = os.open

    def as_a_user(path, *args, **kwargs):  # root reads a file whatever its mode; a user may not
        if os.fspath(path) == str(locked):
            raise PermissionError(errno.EACCES, "Permission denied", str(locked))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", as_a_user)
    with pytest.raises(CommandError, match=r"_0197aaaa-locked\.jsonl: cannot be read: Permission denied"):
        pitree("show", "0197aaaa-locked")
