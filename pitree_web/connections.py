"""Slow or numerous connections cannot hold the server (daphne, through Twisted).

Twisted closes a connection only after 60 s without a byte: a client sending one every ten seconds
kept its connection forever, and a thousand such clients took every file descriptor of a process with
the common limit of 1,024, so that nobody else was answered. Here:

- **a deadline for each request**: a connection has ``PITREE_REQUEST_SECONDS`` to send a request's
  headers, counted from when it opened or its previous answer was sent; then its body the same again,
  plus a second for each ``BODY_BYTES_PER_SECOND`` it announces (a 32 MB upload gets about nine
  minutes). Past it, the connection is answered 408 and closed. The deadline stops once the request
  is in: a long answer, or a websocket, is not cut;
- **connections per address**: at most ``PITREE_CONNECTIONS_PER_ADDRESS`` open at once from one
  address, websockets included; more are closed as they come, before anything is read. Behind a proxy
  (``PITREE_BEHIND_TLS_PROXY``) every connection comes from the proxy, so this is left to it (nginx's
  ``limit_conn``, which counts per visitor);
- **answers paced by their reader**: daphne hands a streamed answer's pieces to Twisted as the app
  sends them, however slowly the client reads, so that a 31 MB download to a slow reader sat whole in
  the server's memory. Here the app's ``send`` of a piece waits while the connection's buffer is full
  (Twisted says so through the producer interface), so a stream holds a piece or two in memory;
- **connections in all**: no more than the process's file limit leaves room for, keeping
  ``RESERVED_FILES`` descriptors for the files the server itself opens (sessions, the database), so
  that open tabs and requests under way go on when connections are refused. The soft file limit is
  raised to the hard one first.

``install`` is called by ``pitree_web.asgi`` when daphne serves the app; it takes daphne's one hook
for its HTTP factory (the module name ``HTTPFactory``), and wraps its ``Server.handle_reply`` (the
coroutine behind the app's ``send``) to wait for a slow reader.
"""

from __future__ import annotations

import asyncio
import resource
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar, cast

from daphne import server as daphne_server
from twisted.internet import reactor
from twisted.internet.base import DelayedCall
from twisted.internet.protocol import connectionDone
from twisted.protocols.policies import ProtocolWrapper, WrappingFactory
from twisted.python.failure import Failure
from twisted.web import http

from .bodylimit import LimitedHTTPFactory, LimitedRequest

BODY_BYTES_PER_SECOND = 64 * 1024
RESERVED_FILES = 128
TIMED_OUT = (
    b"HTTP/1.1 408 Request Timeout\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n"
    b"Content-Length: 41\r\n\r\nThe request did not arrive in time: sorry."
)


class DeadlineChannel(http.HTTPChannel):
    """Twisted's HTTP channel, with a deadline for each request's headers and body."""

    seconds: ClassVar[float] = 30.0
    _deadline: DelayedCall | None = None

    def connectionMade(self) -> None:
        super().connectionMade()
        self._wait(self.seconds)

    def allHeadersReceived(self) -> None:
        super().allHeadersReceived()
        request = self.requests[-1]
        announced = self.length if self.length is not None else cast(LimitedRequest, request).body_limit
        self._wait(self.seconds + announced / BODY_BYTES_PER_SECOND)

    def allContentReceived(self) -> None:
        self._stop()
        super().allContentReceived()

    def requestDone(self, request: Any) -> None:
        if self.persistent:
            self._wait(self.seconds)  # for the next request, which the buffered bytes may already hold
        super().requestDone(request)

    def connectionLost(self, reason: Failure = connectionDone) -> None:
        self._stop()
        super().connectionLost(reason)

    def _wait(self, seconds: float) -> None:
        self._stop()
        self._deadline = cast(Any, reactor).callLater(seconds, self._expired)

    def _stop(self) -> None:
        if self._deadline is not None and self._deadline.active():
            self._deadline.cancel()
        self._deadline = None

    def _expired(self) -> None:
        self._deadline = None
        transport: Any = self.transport
        if transport is None:
            return
        transport.write(TIMED_OUT)
        self.timeoutConnection()  # closes once written, and aborts a client that does not read either


class PacedRequest(LimitedRequest):
    """daphne's request (with the body limit), whose streamed answer waits while its reader is behind:
    it registers as the channel's producer when its answer starts, and ``drained`` is done while the
    connection's buffer has room."""

    _waiting: asyncio.Future[None] | None = None

    def handle_reply(self, message: dict[str, Any]) -> None:
        kind = message["type"]
        if kind == "http.response.start" and self.producer is None:
            self.registerProducer(_Pace(self), True)
        elif kind == "http.response.body" and not message.get("more_body") and self.producer is not None:
            self.unregisterProducer()  # before daphne finishes the request, which needs none left
            self._resume()
        super().handle_reply(message)

    async def drained(self) -> None:
        if self._waiting is not None:
            await asyncio.shield(self._waiting)

    def _pause(self) -> None:
        if self._waiting is None:
            self._waiting = asyncio.get_running_loop().create_future()

    def _resume(self) -> None:
        waiting, self._waiting = self._waiting, None
        if waiting is not None and not waiting.done():
            waiting.set_result(None)


class _Pace:
    """A push producer to Twisted (the buffer is full, it has room again, the connection is gone), each
    told to the request."""

    def __init__(self, request: PacedRequest) -> None:
        self.request = request

    def pauseProducing(self) -> None:
        self.request._pause()

    def resumeProducing(self) -> None:
        self.request._resume()

    def stopProducing(self) -> None:
        self.request._resume()  # gone: nothing is waited for any more


async def _paced_reply(server: Any, protocol: Any, message: dict[str, Any]) -> None:
    """daphne's ``Server.handle_reply``, then, after a piece of a streamed answer, the wait for room."""
    await _DAPHNE_REPLY(server, protocol, message)
    if message["type"] == "http.response.body" and message.get("more_body") and isinstance(protocol, PacedRequest):
        await protocol.drained()


_DAPHNE_REPLY: Callable[..., Awaitable[None]] = daphne_server.Server.handle_reply


def _channel(*_: Any) -> http._GenericHTTPChannelProtocol:
    return http._GenericHTTPChannelProtocol(DeadlineChannel())


class DeadlineHTTPFactory(LimitedHTTPFactory):
    """daphne's HTTP factory (with the body limit), building channels with deadlines and requests paced
    by their reader."""

    protocol = _channel

    def buildProtocol(self, addr: Any) -> Any:
        protocol = super().buildProtocol(addr)
        protocol.requestFactory = PacedRequest
        return protocol


class ConnectionLimits(WrappingFactory):
    """Wraps the HTTP factory, counting the open connections (a websocket stays the same connection,
    wrapped, after its upgrade); a connection over a limit is closed at once."""

    per_address: ClassVar[int | None] = None  # None: no limit per address (behind a proxy)
    total: ClassVar[int] = 0

    def __init__(self, wrapped: Any) -> None:
        super().__init__(wrapped)
        self.open: Counter[str] = Counter()

    def buildProtocol(self, addr: Any) -> ProtocolWrapper | None:  # type: ignore[override]
        host = str(getattr(addr, "host", addr))
        if len(self.protocols) >= self.total or (self.per_address is not None and self.open[host] >= self.per_address):
            return None  # Twisted closes the connection
        wrapper = super().buildProtocol(addr)
        wrapper.peer_host = host  # type: ignore[attr-defined]
        return wrapper

    def registerProtocol(self, p: Any) -> None:
        super().registerProtocol(p)
        self.open[p.peer_host] += 1

    def unregisterProtocol(self, p: Any) -> None:
        super().unregisterProtocol(p)
        self.open[p.peer_host] -= 1
        if not self.open[p.peer_host]:
            del self.open[p.peer_host]


def install(request_seconds: float, per_address: int | None) -> None:
    """Make every daphne server this process starts from now on give requests ``request_seconds``,
    take ``per_address`` connections from one address at most (None: no such limit), and as many in
    all as its file limit leaves room for, and pace streamed answers by their reader."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        soft = hard
    DeadlineChannel.seconds = request_seconds
    ConnectionLimits.per_address = per_address
    ConnectionLimits.total = max(1, soft - RESERVED_FILES) if soft != resource.RLIM_INFINITY else 1 << 30
    daphne_server.HTTPFactory = lambda server: ConnectionLimits(DeadlineHTTPFactory(server))
    daphne_server.Server.handle_reply = _paced_reply
