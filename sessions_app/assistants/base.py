"""The assistant interface: a backend turns provider messages into streamed text and one final ``Reply``.

Why this shape
--------------
The web app streams a reply to the browser while it is written and, when it ends, appends exactly
one assistant entry. So a backend call has two outputs: a sequence of text deltas and a final result
(usage, stopReason, errorMessage). A plain generator can carry both (``yield`` chunks, ``return`` the
result) but its return value is lost in a ``for`` loop, and it cannot be read from ``async for``.
``ReplyStream`` wraps such a generator and offers:

* ``for chunk in stream`` for sync code and ``async for chunk in stream`` for ASGI views and Channels
  consumers. The async form runs each blocking step in a worker thread (``asyncio.to_thread``), so
  backends stay simple blocking code on the standard library and never block the event loop.
* ``stream.reply``: the final ``Reply`` once iteration has ended; ``reply.draft()`` is the entry to
  append. The text is assembled here from the chunks actually yielded, so what was shown to the user
  and what is stored cannot differ.
* ``cancel()`` (thread-safe, e.g. when the browser presses stop) and ``close()`` (stop now and get a
  reply with the text so far, stopReason ``aborted``), so a half-written reply can still be stored.

Backends never raise for expected failures: they end with stopReason ``error`` and an
``errorMessage``. An unexpected exception (a bug) is logged and also ends the reply as an error, so
the caller always gets exactly one ``Reply`` to append.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import threading
from abc import ABC, abstractmethod
from collections.abc import (
    AsyncIterator,
    Callable,
    Generator,
    Iterator,
    Mapping,
    Sequence,
)
from dataclasses import dataclass
from typing import Any, Literal

from sessions_app.sessionfiles.context import Message
from sessions_app.sessionfiles.entries import ZERO_USAGE, Draft, assistant_message

logger = logging.getLogger(__name__)

StopReason = Literal["stop", "length", "error", "aborted"]

ABORTED_MESSAGE = "Stopped before the reply was complete"

# pi's own token estimate counts an image as 4800 characters (1200 tokens); offline usage does the same.
IMAGE_TOKENS = 1200


def zero_usage() -> dict[str, Any]:
    """A fresh copy of pi's all-zero usage (a copy, so callers may mutate it)."""
    return {**ZERO_USAGE, "cost": dict(ZERO_USAGE["cost"])}


def make_usage(input_tokens: int, output_tokens: int, cache_read: int = 0, cache_write: int = 0) -> dict[str, Any]:
    """pi's usage shape with zero cost: pitree knows no prices, and a guessed cost would mislead."""
    usage = zero_usage()
    usage.update(
        input=input_tokens,
        output=output_tokens,
        cacheRead=cache_read,
        cacheWrite=cache_write,
        totalTokens=input_tokens + output_tokens + cache_read + cache_write,
    )
    return usage


def estimate_tokens(text: str) -> int:
    """pi's rough estimate: one token per four characters, rounded up."""
    return math.ceil(len(text) / 4)


def content_text(content: Any, separator: str = "\n") -> str:
    """The text of a message's content (a string or blocks); non-text blocks are skipped."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = [b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text"]
    return separator.join(p for p in parts if isinstance(p, str))


def count_images(content: Any) -> int:
    if not isinstance(content, list):
        return 0
    return sum(1 for b in content if isinstance(b, dict) and b.get("type") == "image")


@dataclass(frozen=True)
class Finish:
    """How a backend's generator ends: everything about the reply except its text (``ReplyStream`` has that)."""

    stop_reason: StopReason = "stop"
    usage: Mapping[str, Any] | None = None
    error_message: str | None = None

    @classmethod
    def error(cls, message: str, usage: Mapping[str, Any] | None = None) -> Finish:
        return cls("error", usage, message)


@dataclass(frozen=True)
class Reply:
    """The final result of one backend call: what the caller stores as ONE assistant entry."""

    text: str
    usage: dict[str, Any]
    stop_reason: StopReason
    error_message: str | None
    provider: str
    model: str
    api: str

    @property
    def ok(self) -> bool:
        return self.stop_reason in ("stop", "length")

    def draft(self, timestamp_ms: int | None = None) -> Draft:
        """The assistant entry to append (``SessionFile.append``-ready), in pi's format."""
        return assistant_message(
            self.text,
            provider=self.provider,
            model=self.model,
            api=self.api,
            usage=self.usage,
            stop_reason=self.stop_reason,
            error_message=self.error_message,
            timestamp_ms=timestamp_ms,
        )


class Cancel:
    """A thread-safe stop request. Backends register ``on_cancel`` hooks to unblock a waiting read."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._hooks: list[Callable[[], None]] = []
        self._lock = threading.Lock()

    @property
    def requested(self) -> bool:
        return self._event.is_set()

    def wait(self, seconds: float) -> bool:
        """Sleep up to ``seconds``, waking early on cancel; True when cancelled."""
        return self._event.wait(seconds) if seconds > 0 else self._event.is_set()

    def on_cancel(self, hook: Callable[[], None]) -> None:
        """Run ``hook`` on cancel (at once if already cancelled). Hooks must not raise."""
        with self._lock:
            if not self._event.is_set():
                self._hooks.append(hook)
                return
        hook()

    def set(self) -> None:
        with self._lock:
            if self._event.is_set():
                return
            self._event.set()
            hooks, self._hooks = self._hooks, []
        for hook in hooks:
            try:
                hook()
            except Exception:  # a hook only helps to wake a read early; failing to is harmless
                logger.debug("cancel hook failed", exc_info=True)


Producer = Callable[[Cancel], Generator[str, None, Finish]]


class ReplyStream:
    """Text chunks of one reply (``for`` or ``async for``), then ``reply``. Read it once."""

    def __init__(self, produce: Producer, *, provider: str, model: str, api: str) -> None:
        self._cancel = Cancel()
        self._gen = produce(self._cancel)
        self._origin = {"provider": provider, "model": model, "api": api}
        self._parts: list[str] = []
        self._reply: Reply | None = None
        self._started = False
        self._lock = threading.Lock()

    # -- reading ------------------------------------------------------------------------------
    def __iter__(self) -> Iterator[str]:
        self._start()
        try:
            while (chunk := self._step()) is not None:
                yield chunk
        finally:
            if self._reply is None:  # the reader stopped early: keep what was shown, as aborted
                self.close()

    def __aiter__(self) -> AsyncIterator[str]:
        self._start()
        return self._aiter()

    async def _aiter(self) -> AsyncIterator[str]:
        try:
            while (chunk := await asyncio.to_thread(self._step)) is not None:
                yield chunk
        finally:
            if self._reply is None:  # reader stopped early or its task was cancelled
                self.close()

    def collect(self) -> Reply:
        """Read to the end and return the reply (for callers that do not show progress)."""
        for _ in self:
            pass
        return self.reply

    async def acollect(self) -> Reply:
        async for _ in self:
            pass
        return self.reply

    # -- state --------------------------------------------------------------------------------
    @property
    def text(self) -> str:
        """The text yielded so far."""
        with self._lock:
            return "".join(self._parts)

    @property
    def done(self) -> bool:
        return self._reply is not None

    @property
    def reply(self) -> Reply:
        """The final reply; only after iteration ended (or ``close()``)."""
        if self._reply is None:
            raise RuntimeError("the reply is not finished: read the stream to its end or call close()")
        return self._reply

    def cancel(self) -> None:
        """Ask the backend to stop (thread-safe). Iteration ends soon; the reply is then ``aborted``."""
        self._cancel.set()

    def close(self) -> Reply:
        """Stop now and return the final reply: ``aborted`` with the text so far unless already finished."""
        self._cancel.set()
        # ValueError: running in another thread; the cancel hooks unblock it and its late result is dropped.
        with contextlib.suppress(ValueError):
            self._gen.close()
        self._finish(Finish("aborted", None, ABORTED_MESSAGE))
        return self.reply

    # -- internals ----------------------------------------------------------------------------
    def _start(self) -> None:
        with self._lock:
            if self._started:
                raise RuntimeError("a ReplyStream can be read only once")
            self._started = True

    def _step(self) -> str | None:
        """The next non-empty chunk, or None once the reply is final."""
        while self._reply is None:
            if self._cancel.requested:
                self._abort_now()
                return None
            try:
                chunk = next(self._gen)
            except StopIteration as stop:
                self._finish(self._settle(stop.value))
                return None
            except Exception as exc:  # a bug in a backend: still end with exactly one reply
                logger.exception("assistant backend failed")
                self._finish(self._settle(Finish.error(f"Internal error: {type(exc).__name__}: {exc}")))
                return None
            if not chunk:
                continue
            with self._lock:
                if self._reply is not None:
                    return None
                self._parts.append(chunk)
            return chunk
        return None

    def _abort_now(self) -> None:
        with contextlib.suppress(ValueError):
            self._gen.close()
        self._finish(Finish("aborted", None, ABORTED_MESSAGE))

    def _settle(self, finish: Any) -> Finish:
        """A cancelled call that then failed (e.g. its socket was shut) is an abort, not an error."""
        if not isinstance(finish, Finish):
            finish = Finish.error(f"Internal error: backend returned {finish!r}")
        if self._cancel.requested and finish.stop_reason == "error":
            return Finish("aborted", finish.usage, ABORTED_MESSAGE)
        if finish.stop_reason == "aborted" and not finish.error_message:
            return Finish("aborted", finish.usage, ABORTED_MESSAGE)
        return finish

    def _finish(self, finish: Finish) -> None:
        with self._lock:
            if self._reply is not None:
                return
            self._reply = Reply(
                text="".join(self._parts),
                usage=dict(finish.usage) if finish.usage is not None else zero_usage(),
                stop_reason=finish.stop_reason,
                error_message=finish.error_message,
                **self._origin,
            )


class Assistant(ABC):
    """One way of answering. Subclasses implement ``_reply`` and ``_summary`` as blocking generators.

    ``name`` matches the ``PITREE_ASSISTANT`` setting; ``label`` is shown in the UI; ``provider``,
    ``model`` and ``api`` are stored on every assistant entry the backend produces.
    """

    name: str
    label: str
    provider: str
    model: str
    api: str

    def stream(self, messages: Sequence[Message]) -> ReplyStream:
        """Answer the conversation ``messages`` (``convert_to_llm`` output); nothing runs until read."""
        snapshot = list(messages)
        return self._stream(lambda cancel: self._reply(snapshot, cancel))

    def summarize_stream(self, messages: Sequence[Message], instructions: str | None = None) -> ReplyStream:
        """A compaction summary of ``messages`` as Markdown, streamed like a reply."""
        snapshot = list(messages)
        return self._stream(lambda cancel: self._summary(snapshot, instructions, cancel))

    def summarize(self, messages: Sequence[Message], instructions: str | None = None) -> Reply:
        """Blocking form of ``summarize_stream``; ``reply.text`` is the summary when ``reply.ok``."""
        return self.summarize_stream(messages, instructions).collect()

    async def asummarize(self, messages: Sequence[Message], instructions: str | None = None) -> Reply:
        return await self.summarize_stream(messages, instructions).acollect()

    def info(self) -> dict[str, str]:
        """What the UI shows about the backend."""
        return {"name": self.name, "label": self.label, "provider": self.provider, "model": self.model, "api": self.api}

    def _stream(self, produce: Producer) -> ReplyStream:
        return ReplyStream(produce, provider=self.provider, model=self.model, api=self.api)

    @abstractmethod
    def _reply(self, messages: list[Message], cancel: Cancel) -> Generator[str, None, Finish]:
        """Yield text deltas, return how the reply ended. Must not raise for expected failures."""

    @abstractmethod
    def _summary(
        self, messages: list[Message], instructions: str | None, cancel: Cancel
    ) -> Generator[str, None, Finish]:
        """Like ``_reply``, for a compaction summary."""
