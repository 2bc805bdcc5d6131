"""Request bodies over the limit are refused with 413 while they arrive, before daphne buffers them.

daphne (through Twisted) reads a whole request body into a buffer and only then calls the application,
handing it the body in one go: an ASGI middleware would see an 800 MB POST only after the server had
grown by about 1 GB. So the limit is enforced one level down, in the Twisted request daphne builds for
each HTTP request. When the headers announce a ``Content-Length`` over the limit, or a chunked body
grows past it, the request answers 413 at once. A client waiting for ``100 Continue`` never gets it
and the connection closes; otherwise whatever else arrives is discarded, so that a client still
sending can read the answer, and the connection closes when the body ends or after ``DRAIN_SECONDS``.

``install`` is called by ``pitree_web.asgi`` when daphne serves the app (its command line or its
``runserver``); the limit is ``settings.PITREE_MAX_BODY_BYTES``, and a larger one for the upload page
(``settings.PITREE_MAX_UPLOAD_BYTES``, a session file and the form around it).
"""

from __future__ import annotations

import io
from typing import Any, ClassVar, cast

from daphne.http_protocol import HTTPFactory, WebRequest
from twisted.internet import reactor
from twisted.internet.base import DelayedCall

# How long a refused request may go on sending before the connection is cut.
DRAIN_SECONDS = 30.0


def _response(body: bytes, headers: list[tuple[bytes, bytes]]) -> bytes:
    head = [b"HTTP/1.1 413 Content Too Large", *(name + b": " + value for name, value in headers)]
    head += [b"Content-Length: " + str(len(body)).encode(), b"Connection: close"]
    return b"\r\n".join(head) + b"\r\n\r\n" + body


class LimitedRequest(WebRequest):
    """daphne's request, which counts the body as it arrives and refuses it past ``limit`` bytes."""

    limit: ClassVar[int] = 0
    larger: ClassVar[dict[bytes, int]] = {}  # request paths with a limit of their own
    page: ClassVar[bytes] = b""  # the whole 413 answer for a browser …
    fragment: ClassVar[bytes] = b""  # … and for htmx, which shows it where the user acted

    _received = 0
    _refused = False
    _drain: DelayedCall | None = None
    _limit = 0

    def gotLength(self, length: int | None) -> None:
        # Twisted keeps the request line's target on the channel until the request is complete.
        target = getattr(self.channel, "_path", b"") or b""
        self._limit = self.larger.get(target.split(b"?", 1)[0], self.limit)
        if length is not None and length > self._limit:
            self._refuse()
        else:
            super().gotLength(length)

    def handleContentChunk(self, data: bytes) -> None:
        if self._refused:
            return
        self._received += len(data)
        if self._received > self._limit:
            self._refuse()
        else:
            super().handleContentChunk(data)

    def requestReceived(self, command: bytes, path: bytes, version: bytes) -> None:
        if self._refused:  # the body ended: nothing is left unread, so closing loses no answer
            self.channel.loseConnection()
        else:
            super().requestReceived(command, path, version)

    def connectionLost(self, reason: Any) -> None:
        if self._drain is not None and self._drain.active():
            self._drain.cancel()
        super().connectionLost(reason)

    def _refuse(self) -> None:
        self._refused = True
        self.content = io.BytesIO()  # what was kept so far is dropped
        htmx = self.requestHeaders.getRawHeaders(b"hx-request") == [b"true"]
        self.channel.transport.write(self.fragment if htmx else self.page)
        expect = self.requestHeaders.getRawHeaders(b"expect") or [b""]
        if expect[0].lower() == b"100-continue" and not self._received:
            # The client waits for "100 Continue" (which Twisted would send after this hook) before
            # sending the body: it reads the refusal instead, and nothing unread is left to close on.
            self.requestHeaders.removeHeader(b"expect")
            self.channel.loseConnection()
        else:
            self._drain = cast(Any, reactor).callLater(DRAIN_SECONDS, self.channel.transport.abortConnection)


class LimitedHTTPFactory(HTTPFactory):
    """daphne's HTTP factory, building ``LimitedRequest``s."""

    def buildProtocol(self, addr: Any) -> Any:
        protocol = super().buildProtocol(addr)
        protocol.requestFactory = LimitedRequest
        return protocol


def install(limit: int, larger: dict[str, int] | None = None) -> None:
    """Make every daphne server this process starts from now on refuse bodies over ``limit`` bytes
    (over ``larger[path]`` for a request to one of those paths).

    daphne's ``Server.run`` builds its factory by the module name ``HTTPFactory``: that name is the
    one hook it offers, so it is pointed at ``LimitedHTTPFactory``."""
    # Imported when installed: daphne.server installs Twisted's reactor as it is imported, and the
    # rest needs Django's apps, which pitree_web.asgi has set up by then.
    import daphne.server  # noqa: PLC0415
    from django.template.loader import render_to_string  # noqa: PLC0415

    from sessions_app.middleware import CONTENT_SECURITY_POLICY  # noqa: PLC0415

    from .errors import too_large_reason  # noqa: PLC0415

    reason = too_large_reason()
    common = [
        (b"Content-Type", b"text/html; charset=utf-8"),
        (b"Content-Security-Policy", CONTENT_SECURITY_POLICY.encode()),
    ]
    LimitedRequest.limit = limit
    LimitedRequest.larger = {path.encode(): size for path, size in (larger or {}).items()}
    LimitedRequest.page = _response(render_to_string("413.html", {"reason": reason}).encode(), common)
    # The one answer written without Django (no request object exists yet, so no django-htmx): its htmx
    # headers say by hand what views/responses.form_error says with django-htmx's retarget and reswap.
    LimitedRequest.fragment = _response(
        render_to_string("sessions_app/partials/_form_errors.html", {"errors": [reason]}).encode(),
        [*common, (b"HX-Retarget", b"#flash"), (b"HX-Reswap", b"innerHTML")],
    )
    daphne.server.HTTPFactory = LimitedHTTPFactory
