"""Wake-ups for changed files and folders: inotify on the event loop, stat polling elsewhere."""

from __future__ import annotations

import asyncio
import itertools
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sessions_app.live import watch
from sessions_app.sessionfiles import changes

TIMEOUT = 10
SLOW_LOOK = 0.3  # seconds a look at the filesystem takes below (a network filesystem's server is slow)


async def _woken(w: watch.Watch) -> None:
    await asyncio.wait_for(w.wait(), TIMEOUT)


@pytest.fixture(params=["auto", "poll"], ids=["inotify", "poll"])
def mode(request: pytest.FixtureRequest, settings) -> str:
    settings.PITREE_WATCH = request.param
    return str(request.param)


async def test_a_file_wakes_its_watch_on_append_replace_and_delete(tmp_path: Path, mode: str) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"{}\n")
    w = await watch.watch_file(path)
    try:
        with path.open("ab") as f:
            f.write(b"{}\n")
        await _woken(w)
        other = tmp_path / "other.jsonl"
        other.write_bytes(b"{}\n{}\n{}\n")
        os.replace(other, path)
        await _woken(w)
        path.unlink()
        await _woken(w)
    finally:
        w.close()


async def test_inotify_is_used_unless_polling_is_asked_for(tmp_path: Path, mode: str) -> None:
    w = await watch.watch_file(tmp_path / "s.jsonl")
    try:
        assert isinstance(w, watch._PollWatch) == (mode == "poll")
    finally:
        w.close()


async def test_a_network_filesystem_is_polled(tmp_path: Path, monkeypatch, settings) -> None:
    settings.PITREE_WATCH = "auto"
    monkeypatch.setattr(changes, "filesystem_type", lambda path: "nfs4")
    w = await watch.watch_file(tmp_path / "s.jsonl")
    try:
        assert isinstance(w, watch._PollWatch)
    finally:
        w.close()


async def test_a_change_to_another_file_of_the_folder_does_not_wake(tmp_path: Path, settings) -> None:
    settings.PITREE_WATCH = "auto"
    mine, theirs = tmp_path / "mine.jsonl", tmp_path / "theirs.jsonl"
    mine.write_bytes(b"")
    watch_mine, watch_theirs = await watch.watch_file(mine), await watch.watch_file(theirs)
    try:
        theirs.write_bytes(b"{}\n")
        await _woken(watch_theirs)
        mine.write_bytes(b"{}\n")
        await _woken(watch_mine)
        # One folder watch served both (the kernel's watches are shared, not one per file).
        hub = watch._Hub.current()
        assert hub is not None and hub.watching(tmp_path)
        assert len(hub._listeners[tmp_path]) == 2
    finally:
        watch_mine.close()
        watch_theirs.close()
    assert hub is not None and not hub.watching(tmp_path) and hub._reader is None


async def test_a_sessions_folder_wakes_for_new_workspaces_and_files_in_them(tmp_path: Path, mode: str) -> None:
    w = await watch.watch_tree(tmp_path)
    try:
        workspace = tmp_path / "--home-x--"
        workspace.mkdir()
        await _woken(w)
        (workspace / "2026_abc.jsonl").write_bytes(b"{}\n")
        await _woken(w)
        with (workspace / "2026_abc.jsonl").open("ab") as f:
            f.write(b"{}\n")
        await _woken(w)
    finally:
        w.close()


@pytest.mark.parametrize(
    ("signature", "start"),
    [
        ("_file_signature", lambda folder: watch.watch_file(folder / "s.jsonl")),
        ("_tree_signature", watch.watch_tree),
    ],
    ids=["file", "tree"],
)
async def test_polling_a_slow_filesystem_does_not_stall_the_event_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settings, signature: str, start: Callable[..., Any]
) -> None:
    """On a network filesystem each stat is a round trip, and a folder's look stats every file in it:
    choosing how to watch (the mount table), the first look and each poll run in a worker thread, while
    the loop goes on serving everyone else. Each look below lasts until the loop has run a task meanwhile,
    which it could not if the look ran on the loop (the look would then fail, after ``TIMEOUT``)."""
    settings.PITREE_WATCH = "auto"
    loop = asyncio.get_running_loop()
    looks = itertools.count()

    def slow(answer: Callable[..., Any]) -> Callable[..., Any]:
        def slowly(*args: Any) -> Any:
            served = threading.Event()
            loop.call_soon_threadsafe(served.set)  # another client's work, served while the look waits
            if not served.wait(TIMEOUT):
                raise AssertionError("a look at the filesystem held the event loop")
            return answer(*args)

        return slowly

    monkeypatch.setattr(changes, "filesystem_type", slow(lambda path: "nfs4"))
    monkeypatch.setattr(watch, signature, slow(lambda path: next(looks)))  # each look sees a change
    w = await start(tmp_path)
    try:
        assert isinstance(w, watch._PollWatch)
        await _woken(w)
    finally:
        w.close()
    assert next(looks) == 2  # the first look and one poll, each done off the loop
