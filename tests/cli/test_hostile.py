"""Every command against a hostile sessions folder (tests/support/hostile.py): each answers in bounded
time, good sessions are read and written, bad files are refused with one line and a non-zero exit,
never a traceback, and nothing else in the folder changes.

Commands run in this process (``call_command``) under a timer, so that a read that blocked (a FIFO
opened for reading waits for a writer forever) fails the test instead of hanging it; a few run as
real ``manage.py pitree`` processes with a timeout, to see their exit status and stderr.
"""

from __future__ import annotations

import io
import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson
import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from support.hostile import GOOD, FileReads, HostileFolder, build_hostile_folder

from sessions_app.models import Workspace
from sessions_app.sessionfiles.store import SessionFile

REPO = Path(__file__).resolve().parents[2]
READERS = [("show",), ("show", "--tail", "3"), ("tree",), ("inspect", "--json"), ("inspect",)]


@contextmanager
def within(seconds: float) -> Iterator[None]:
    """Fail with TimeoutError if the block takes longer (the alarm interrupts a blocking open too)."""

    def expire(signum: int, frame: Any) -> None:
        raise TimeoutError(f"no answer within {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture
def hostile(sessions_dir: Path, settings: Any) -> HostileFolder:
    folder = build_hostile_folder(sessions_dir)
    settings.PITREE_FSYNC = False
    settings.PITREE_MAX_LINE_BYTES = folder.line_limit
    return folder


def run(*args: str) -> str:
    """One command in this process: its stdout, or CommandError (anything else is a failure)."""
    out, err = io.StringIO(), io.StringIO()
    with within(30):
        call_command("pitree", *args, stdout=out, stderr=err)
    return out.getvalue()


def writes(session: SessionFile) -> list[tuple[str, ...]]:
    """Each write command, with ids this session has."""
    index = session.index
    path = session.path_rows()
    first = index.ids[path[0]] if path else "no-entry"
    leaf = index.ids[path[-1]] if path else "root"
    return [
        ("append", "--role", "user", "--text", "from the command line"),
        ("append", "--role", "assistant", "--text", "a reply", "--parent", first),
        ("navigate", first),
        ("label", leaf, "a label"),
        ("label", leaf),
        ("rename", "a name\nwith a line break"),
        ("fork",),
        ("fork", first),
        ("compact", "--keep-from", first, "--summary", "folded"),
    ]


def test_readers_read_every_good_session(hostile: HostileFolder) -> None:
    for path in hostile.good:
        for command in READERS:
            output = run(command[0], str(path), *command[1:])
            if command == ("inspect", "--json"):
                assert orjson.loads(output)["sessionId"] == hostile.good[path]


@pytest.mark.sweep
def test_writers_write_to_every_good_session(hostile: HostileFolder) -> None:
    refused = 0
    for path in hostile.good:
        session = SessionFile(path, max_line_bytes=hostile.line_limit)
        for command in writes(session):
            before = path.read_bytes()
            try:
                printed = run(command[0], str(path), *command[1:]).strip()
            except CommandError as error:
                printed, refusal = "", str(error)
            else:
                refusal = ""
            outside = path in hostile.outside
            if refusal:
                # Read-only files, links out of the folder, and ids a session does not have: refused, the
                # file untouched (a fork goes next to a file link, and into the owner's workspace from a
                # folder that leads out).
                assert session.index.read_only or outside or "not found" in refusal, (path.name, command, refusal)
                if outside:
                    assert "outside the sessions folder" in refusal, (path.name, command, refusal)
                assert path.read_bytes() == before
                refused += 1
                continue
            assert not session.index.read_only or command[0] == "fork", (path.name, command)
            assert not outside or command[0] == "fork", (path.name, command)
            if outside:  # the fork is inside the sessions folder's real path, wherever the source was
                real_root = hostile.root.resolve()
                assert Path(printed).resolve().is_relative_to(real_root), (path.name, printed)
            assert path.read_bytes().startswith(before)
            if command[0] == "fork":
                assert SessionFile(Path(printed), max_line_bytes=hostile.line_limit).index.skipped() == []
            elif printed:
                assert printed in SessionFile(path, max_line_bytes=hostile.line_limit).index.by_id  # its new line
    assert refused < 60  # the read-only files, the links out of the folder, and the one without entries


@pytest.mark.sweep
def test_every_command_refuses_every_bad_file_in_one_line(hostile: HostileFolder) -> None:
    commands = [
        *READERS,
        ("append", "--role", "user", "--text", "x"),
        ("navigate", "root"),
        ("label", "x"),
        ("rename", "n"),
        ("fork",),
        ("compact", "--keep-from", "x", "--summary", "s"),
    ]
    for path in hostile.bad:
        for command in commands:
            with pytest.raises(CommandError) as refused:
                run(command[0], str(path), *command[1:])
            assert "\n" not in str(refused.value) and str(refused.value), (path.name, command)
    for path in hostile.bad:
        if path.is_file() and not path.is_symlink():
            assert path.exists()  # nothing was written to a bad file, nothing removed


def test_a_bad_file_named_for_an_id_says_why_it_does_not_open(hostile: HostileFolder) -> None:
    for session_id, path in hostile.named_ids.items():
        with pytest.raises(CommandError, match=re.escape(f"{path.name}: ")) as refused:
            run("show", session_id)
        assert hostile.bad[path] in str(refused.value)


def test_sessions_are_named_by_id_on_the_command_line(hostile: HostileFolder) -> None:
    assert "the name lies" in run("show", "good-renamed")
    assert "the name lies" in run("show", "good-ren")
    with pytest.raises(CommandError, match="matches 2 sessions"):
        run("show", "good-twin")
    assert "hello" in run("show", "good-plain")


def test_ls_lists_the_good_and_reports_the_bad(hostile: HostileFolder) -> None:
    listed = orjson.loads(run("ls", "--json"))
    assert sorted(item["id"] for item in listed) == sorted(hostile.listed.values())
    text = run("ls")
    assert "\x1b" not in text  # an id holding an escape sequence cannot recolour the terminal


def test_search_finds_the_good_sessions_whatever_their_file_names(hostile: HostileFolder) -> None:
    found = orjson.loads(run("search", "file name", "--json"))["hits"]
    assert [hit["sessionId"] for hit in found] == ["good-undecodable-name"]  # its name is not UTF-8
    assert "hello" in run("search", "hello")
    every = {
        hit["sessionId"]
        for page in (1, 2, 3)
        for hit in orjson.loads(run("search", "x", "--json", "--page", str(page)))["hits"]
    }
    assert every <= set(hostile.good.values())


def manage(*args: str | bytes, env: dict[str, str], timeout: float = 120) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, str(REPO / "manage.py"), "pitree", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        timeout=timeout,
        check=False,
    )


@pytest.fixture
def cli_env(hostile: HostileFolder) -> dict[str, str]:
    return {
        **os.environ,
        "PITREE_SESSIONS_DIR": str(hostile.root),
        "PITREE_FSYNC": "0",
        "PITREE_MAX_LINE_BYTES": str(hostile.line_limit),
    }


@pytest.mark.processes
def test_real_processes_answer_in_time_without_tracebacks(hostile: HostileFolder, cli_env: dict[str, str]) -> None:
    by_name = {path.name: path for path in hostile.bad}
    with hostile.keep_growing():
        listing = manage("ls", env=cli_env)
        listing_json = manage("ls", "--json", env=cli_env)
        grown = manage("show", str(hostile.growing), "--tail", "2", env=cli_env)
    assert listing.returncode == 0 and listing_json.returncode == 0 and grown.returncode == 0
    reported = listing.stderr.decode().splitlines()
    assert len(reported) == len(hostile.bad) + len(hostile.twins)
    assert all(line.startswith("skipped ") for line in reported)
    assert b"Traceback" not in listing.stderr + listing_json.stderr + grown.stderr
    assert len(orjson.loads(listing_json.stdout)) == len(hostile.listed)
    check: list[tuple[Callable[[], subprocess.CompletedProcess[bytes]], str]] = [
        (lambda: manage("show", str(by_name["fifo.jsonl"]), env=cli_env), "a FIFO"),
        (lambda: manage("tree", str(by_name["zero.jsonl"]), env=cli_env), "a character device"),
        (lambda: manage("inspect", "--json", str(by_name["socket.jsonl"]), env=cli_env), "a socket"),
        (
            lambda: manage("append", str(by_name["one-huge-line.jsonl"]), "--role", "user", "--text", "x", env=cli_env),
            "no session header",
        ),
    ]
    for command, reason in check:
        done = command()
        assert done.returncode != 0 and b"Traceback" not in done.stderr
        message = done.stderr.decode().strip()
        assert "\n" not in message and reason in message
    odd_name = next(path for path in hostile.good if "bad-name" in os.fsencode(path).decode("utf-8", "replace"))
    shown = manage("show", os.fsencode(odd_name), env=cli_env)
    assert shown.returncode == 0 and b"my file name is not UTF-8" in shown.stdout
    searched = manage("search", "file name", env=cli_env)
    assert searched.returncode == 0 and b"my **file** **name** is not UTF-8" in searched.stdout, searched.stderr


@pytest.mark.django_db
def test_a_command_as_a_user_opens_no_file_but_the_one_it_names(
    hostile: HostileFolder, monkeypatch: pytest.MonkeyPatch
) -> None:
    bob = get_user_model().objects.create_user("bob")
    Workspace.objects.create(folder=GOOD, cwd="/srv/hostile", owner=bob)
    plain = next(path for path, session_id in hostile.good.items() if session_id == "good-plain")
    reads = FileReads(hostile.root, monkeypatch)
    assert "hello" in run("--as", "bob", "show", "good-plain")
    assert "hello" in run("--as", "bob", "show", "good-pl")  # a prefix of the id in the file's name
    assert reads.files() == {os.path.realpath(plain)}
    with pytest.raises(CommandError, match="no such file"):
        run("--as", "bob", "show", "unreadable")  # a bad file in a folder bob does not own: nothing said
