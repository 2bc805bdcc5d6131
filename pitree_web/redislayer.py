"""The channel layer over Redis, with a pool of connections whose calls wait for a free one.

channels_redis gives redis-py's plain pool, which opens a new connection for each call made while the
others are busy, up to 100 a process, and fails every call past them ("Too many connections"). Each
socket joins its channel-layer groups as it opens, so hundreds of tabs opening together (a restart's
reconnections) made hundreds of connections at once, each a TCP handshake on a busy machine, and the
calls past a hundred failed, closing their sockets (tests/live/test_servers.py, bench/capacity.py). A
blocking pool keeps at most ``MAX_CONNECTIONS`` and lets the other calls wait their turn; each call is
bounded by its caller anyway (sessions_app/channel_layer/calls.py).
"""

from __future__ import annotations

from typing import Any

import redis.asyncio as aioredis
from channels_redis.core import RedisChannelLayer

MAX_CONNECTIONS = 100
WAIT = 5.0  # seconds a call waits for a connection before it fails (its caller stopped waiting after 1)


class RedisLayer(RedisChannelLayer):
    def create_pool(self, index: int) -> Any:
        host = dict(self.hosts[index])
        return aioredis.BlockingConnectionPool.from_url(
            host.pop("address"), max_connections=MAX_CONNECTIONS, timeout=WAIT, **host
        )
