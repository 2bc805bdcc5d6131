"""Disks that fail: a small tmpfs that fills up, a folder made read-only for real, and failures of
``os.write`` / ``os.fdatasync`` injected for session files (where no file system can be mounted).

Mounting needs root (or CAP_SYS_ADMIN), which ./scripts/test has (it runs as root or through sudo):
where it cannot be had, the tests that need a real file system fail saying so, as the browser and pi
tests do without their programs (a skipped test would pass while testing nothing). A read-only folder is a read-only bind mount for root, whose
writes ignore permissions, and a folder without write permission for anyone else.
"""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest


def _mount(*args: str) -> bool:
    try:
        subprocess.run(["mount", *args], check=True, capture_output=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return False
    return True


def _umount(path: Path) -> None:
    subprocess.run(["umount", "-l", str(path)], check=False, capture_output=True, timeout=30)


@contextlib.contextmanager
def small_disk(path: Path, size_kib: int) -> Iterator[Path]:
    """``path`` as a fresh tmpfs of ``size_kib`` KiB, unmounted after."""
    path.mkdir(parents=True, exist_ok=True)
    if not _mount("-t", "tmpfs", "-o", f"size={size_kib}k,mode=0700", "tmpfs", str(path)):
        pytest.fail(f"a small tmpfs cannot be mounted at {path}: mounting needs root (or CAP_SYS_ADMIN)")
    try:
        yield path
    finally:
        _umount(path)


def fill(disk: Path) -> None:
    """Fill ``disk`` to the last byte with a ballast file."""
    with (disk / "ballast").open("ab", buffering=0) as ballast, contextlib.suppress(OSError):
        while ballast.write(b"\0" * 4096):
            pass


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[None]:
    """``folder`` (and what it holds) read-only for this process, for real: a read-only bind mount as
    root, the write permission taken away otherwise."""
    if os.geteuid() == 0:
        if not _mount("--bind", str(folder), str(folder)):
            pytest.fail(f"{folder} cannot be bind-mounted: mounting needs CAP_SYS_ADMIN")
        try:
            if not _mount("-o", "remount,ro,bind", str(folder)):
                pytest.fail(f"{folder} cannot be mounted read-only again: mounting needs CAP_SYS_ADMIN")
            yield
        finally:
            _umount(folder)
        return
    modes = {path: path.stat().st_mode for path in [folder, *folder.rglob("*")]}
    for path in modes:
        path.chmod(0o555 if path.is_dir() else 0o444)
    try:
        yield
    finally:
        for path, mode in modes.items():
            path.chmod(mode)


class Faults:
    """Fails the writes of session files (``*.jsonl``) as a full disk does: ``short`` lets part of the
    next write through and reports how much, ``error`` raises an errno, ``sync_error`` makes the next
    ``fdatasync``/``fsync`` fail after the write went through. ``after``: writes let through first."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.mode: tuple[str, int] | None = None
        self.after = 0
        self._write: Callable[[int, bytes], int] = os.write
        self._fdatasync: Callable[[int], None] = os.fdatasync
        self._fsync: Callable[[int], None] = os.fsync
        monkeypatch.setattr(os, "write", self._faulty_write)
        monkeypatch.setattr(os, "fdatasync", self._faulty_sync(self._fdatasync))
        monkeypatch.setattr(os, "fsync", self._faulty_sync(self._fsync))

    def short(self, keep: int, *, after: int = 0) -> None:
        self.mode, self.after = ("short", keep), after

    def error(self, code: int = errno.ENOSPC, *, after: int = 0) -> None:
        self.mode, self.after = ("error", code), after

    def sync_error(self, code: int = errno.EIO) -> None:
        self.mode, self.after = ("sync", code), 0

    def _faulty_write(self, fd: int, data: bytes) -> int:
        if self.mode is None or self.mode[0] == "sync" or not _session_file(fd):
            return self._write(fd, data)
        if self.after:
            self.after -= 1
            return self._write(fd, data)
        kind, value = self.mode
        self.mode = None
        if kind == "short":
            return self._write(fd, bytes(data)[:value])
        raise OSError(value, os.strerror(value))

    def _faulty_sync(self, sync: Callable[[int], None]) -> Callable[[int], None]:
        def faulty(fd: int) -> None:
            if self.mode is not None and self.mode[0] == "sync" and _session_file(fd):
                code = self.mode[1]
                self.mode = None
                raise OSError(code, os.strerror(code))
            sync(fd)

        return faulty


def _session_file(fd: int) -> bool:
    try:
        return os.readlink(f"/proc/self/fd/{fd}").endswith(".jsonl")
    except OSError:
        return False
