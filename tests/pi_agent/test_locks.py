"""The locks that keep one pi per session: an flock'd file by default, a Redis key with a lease when the
processes share Redis; and the turn lock that keeps pitree's own writes out of pi's turns."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis.asyncio as redis
from support.redisserver import redis_server

from sessions_app.assistants.pi.locks import FileDrivers, PiWorking, RedisDrivers, Turns, lock_key, locks_folder

pytestmark = pytest.mark.processes  # redis-server, and a lock held by a child process


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    with redis_server(tmp_path) as url:
        yield url


def test_locks_live_beside_the_sessions_folder_named_by_the_files_real_path(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    (sessions / "ws").mkdir(parents=True)
    file = sessions / "ws" / "a.jsonl"
    file.write_text("")
    (tmp_path / "link.jsonl").symlink_to(file)
    assert locks_folder(sessions) == tmp_path / "sessions.pitree-locks"
    assert lock_key(file) == lock_key(tmp_path / "link.jsonl") != lock_key(tmp_path / "other.jsonl")


async def test_a_file_lock_is_held_by_one_holder_at_a_time(tmp_path: Path) -> None:
    first, second = FileDrivers(tmp_path), FileDrivers(tmp_path)
    held = await first.acquire("k")
    assert held is not None
    assert await second.acquire("k") is None
    assert await second.acquire("other") is not None
    await held.release()
    again = await second.acquire("k")
    assert again is not None and not again.lost.is_set()
    await again.release()


async def test_a_redis_lease_is_held_by_one_holder_renewed_and_released(redis_url: str) -> None:
    # A lease of seconds, as a loaded machine's event loop may be late by a fraction of one to renew it.
    first, second = RedisDrivers(redis_url, lease=3.0), RedisDrivers(redis_url, lease=3.0)
    held = await first.acquire("k")
    assert held is not None
    assert await second.acquire("k") is None
    await asyncio.sleep(4.0)  # longer than the lease: renewed meanwhile
    assert await second.acquire("k") is None and not held.lost.is_set()
    await held.release()
    again = await second.acquire("k")
    assert again is not None
    await again.release()


async def test_a_release_ends_whenever_it_comes_during_the_renewal(redis_url: str) -> None:
    """Released at any moment of a short lease's renewal, the lease is let go at once: cancelled inside
    a command, the Redis client could carry on as after a failure, and a release waited forever for a
    renewal that went on (one in ten here, before)."""
    rng = random.Random(7)
    drivers = RedisDrivers(redis_url, lease=0.03)
    for number in range(60):
        held = await drivers.acquire(f"k{number}")
        assert held is not None
        await asyncio.sleep(rng.uniform(0, 0.03))
        await asyncio.wait_for(held.release(), 2)


async def test_a_redis_lease_taken_away_is_lost(redis_url: str) -> None:
    held = await RedisDrivers(redis_url, lease=0.6).acquire("k")
    assert held is not None
    client = redis.Redis.from_url(redis_url)
    await client.set("pitree:pi:k", "someone else")  # expired and taken meanwhile, say
    await asyncio.wait_for(held.lost.wait(), 5)
    await held.release()
    assert await client.get("pitree:pi:k") == b"someone else"  # not released from under its new holder
    await client.aclose()


async def test_pitrees_writes_are_refused_during_a_turn_and_a_turn_waits_for_them(tmp_path: Path) -> None:
    turns = Turns(tmp_path)
    fd = await turns.begin("k")
    with pytest.raises(PiWorking), turns.writing("k"):
        pass
    with turns.writing("other"):
        pass
    turns.end(fd)
    with turns.writing("k"), pytest.raises(TimeoutError):
        await turns.begin("k", wait=0.2)
    turns.end(await turns.begin("k", wait=0.2))
