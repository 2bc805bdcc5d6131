"""Locks between pitree's processes for the session files pi drives.

- The *driver* lock: one process at a time runs pi for a session file, for as long as that pi runs
  (``drivers``). By default an ``flock``'d file in a folder beside the sessions folder, which the
  kernel releases when its process ends, however it ends; with Redis (``PITREE_REDIS_URL``), a key
  with a lease that its holder renews (``RedisDrivers``), so that processes that share only Redis agree
  too. A holder that loses its lease (Redis forgot it, or did not answer for a whole lease) is told so
  (``Held.lost``) and stops its pi.
- The *turn* lock (``Turns``): held exclusively while pi may write the file (a turn, a command that
  writes), taken shared, without waiting, by pitree's own writes to the file (a move, a label, a name)
  for the microseconds of their append. So none of them lands among the lines of a turn: one that comes
  while pi works is refused (``PiWorking``) instead. pi takes no lock of its own; this one is pitree's
  promise to keep out of its way. It is always a file lock: it guards a file, and every writer of that
  file reaches the folder beside it.

Files are named by a digest of the session file's real path, whatever its name holds.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import logging
import os
import secrets
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

from ...sessionfiles.errors import SessionError

log = logging.getLogger(__name__)

TURN_WAIT = 5.0  # seconds a turn waits for pitree's own writes to end (each takes microseconds)
TURN_POLL = 0.002
LEASE = 15.0  # seconds a Redis driver lock lasts unless renewed (renewed every third of it)
REDIS_TIMEOUT = 2.0


class PiWorking(SessionError):
    """Refused: pi is working in this session, and pitree's own writes wait until it is done."""

    def __init__(self) -> None:
        super().__init__("pi is working in this session: this can be done once it is done (or stopped).")


def lock_key(path: Path | str) -> str:
    """The name a session file's locks go by: a digest of its real path."""
    return hashlib.sha256(os.fsencode(os.path.realpath(path))).hexdigest()[:40]


def locks_folder(sessions_dir: Path) -> Path:
    """Beside the sessions folder, so that every process that writes its files sees the same locks."""
    sessions_dir = Path(os.path.abspath(sessions_dir))
    return sessions_dir.with_name(f"{sessions_dir.name}.pitree-locks")


class Held(Protocol):
    """A driver lock being held. ``lost`` is set if it ends without ``release``."""

    lost: asyncio.Event

    async def release(self) -> None: ...


class Drivers(Protocol):
    async def acquire(self, key: str) -> Held | None:
        """The driver lock of ``key``, or None when another process holds it."""
        ...


def _open(folder: Path, name: str) -> int:
    folder.mkdir(parents=True, exist_ok=True)
    return os.open(folder / name, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)


class _FileHeld:
    def __init__(self, fd: int) -> None:
        self.fd, self.lost = fd, asyncio.Event()

    async def release(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)  # closing the descriptor releases its flock
            self.fd = -1


class FileDrivers:
    """Driver locks as ``<key>.pi`` files in ``folder``."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    async def acquire(self, key: str) -> Held | None:
        fd = _open(self.folder, f"{key}.pi")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        return _FileHeld(fd)


# Renew or release only a lease that is still ours (another process may hold the key since it expired).
_RENEW = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end return 0"
_RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0"


class _RedisHeld:
    def __init__(self, client: Any, name: str, token: str, lease: float) -> None:
        self.client, self.name, self.token, self.lease = client, name, token, lease
        self.lost = asyncio.Event()
        self._released = False
        self._renewal = asyncio.create_task(self._renew(), name=f"pi lease {name}")

    async def _renew(self) -> None:
        last = time.monotonic()
        while not self._released:
            await asyncio.sleep(self.lease / 3)
            try:
                kept = await self.client.eval(_RENEW, 1, self.name, self.token, int(self.lease * 1000))
            except Exception:
                log.warning("pi: could not renew the lease %s", self.name, exc_info=True)
                if time.monotonic() - last < self.lease:
                    continue
                kept = 0
            if not kept:
                log.warning("pi: the lease %s was lost", self.name)
                self.lost.set()
                return
            last = time.monotonic()

    async def release(self) -> None:
        # Cancelled inside a command, redis-py can go on as if it had failed (seen here: about one
        # release in ten hung, the renewal going on): the flag ends the loop then.
        self._released = True
        self._renewal.cancel()
        await asyncio.gather(self._renewal, return_exceptions=True)  # a release cancelled itself still is
        try:
            await self.client.eval(_RELEASE, 1, self.name, self.token)
        except Exception:
            log.warning("pi: could not release the lease %s (it expires by itself)", self.name, exc_info=True)
        finally:
            await self.client.aclose()


class RedisDrivers:
    """Driver locks as Redis keys with a lease (``SET NX PX``), renewed while held."""

    def __init__(self, url: str, lease: float = LEASE) -> None:
        self.url, self.lease = url, lease

    async def acquire(self, key: str) -> Held | None:
        import redis.asyncio as redis  # noqa: PLC0415 (the [redis] extra: only deployments with PITREE_REDIS_URL have it)

        client = redis.Redis.from_url(self.url, socket_timeout=REDIS_TIMEOUT, socket_connect_timeout=REDIS_TIMEOUT)
        name, token = f"pitree:pi:{key}", secrets.token_hex(16)
        try:
            taken = await client.set(name, token, nx=True, px=int(self.lease * 1000))
        except BaseException:
            await client.aclose()
            raise
        if not taken:
            await client.aclose()
            return None
        return _RedisHeld(client, name, token, self.lease)


class Turns:
    """Turn locks as ``<key>.turn`` files in ``folder``."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    async def begin(self, key: str, wait: float = TURN_WAIT) -> int:
        """Hold the turn lock of ``key`` (a descriptor, for ``end``) once pitree's own writes of the
        moment are done. Raises ``TimeoutError`` if they hold it for ``wait`` seconds."""
        fd = _open(self.folder, f"{key}.turn")
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return fd
            except BlockingIOError:
                if time.monotonic() > deadline:
                    os.close(fd)
                    raise TimeoutError(f"pitree's writes held the turn lock {key} for {wait} s") from None
                await asyncio.sleep(TURN_POLL)

    @staticmethod
    def end(fd: int) -> None:
        os.close(fd)

    @contextlib.contextmanager
    def writing(self, key: str) -> Iterator[None]:
        """Around one of pitree's own appends: refused with ``PiWorking`` while pi may write the file."""
        fd = _open(self.folder, f"{key}.turn")
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                raise PiWorking() from None
            yield
        finally:
            os.close(fd)
