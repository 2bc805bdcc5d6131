"""The assistant interface. A backend is an async generator of text deltas that may end with a ``Finish``
(stop reason, tokens) and raises ``AssistantError`` for an expected failure. ``Reply`` reads it and keeps
the text it handed out, so what was shown is what is stored; a failure, a bug, a ``break`` or the
cancellation of the reading task (that is how a reply is stopped) end it as ``error`` or ``aborted``
with the text so far: whatever happens, one assistant entry to append.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from typing import Any, Literal, NamedTuple

from sessions_app.sessionfiles.context import Message
from sessions_app.sessionfiles.entries import ZERO_USAGE, Draft, assistant_message

logger = logging.getLogger(__name__)

StopReason = Literal["stop", "length", "error", "aborted"]
ABORTED_MESSAGE = "Stopped before the reply was complete"
# A reply cut by its server stopping (SIGTERM) or dying (stored at the next start): the user did not stop it.
RESTART_MESSAGE = (
    "The server restarted while this reply was being written, so it ends here: regenerate it to have it whole"
)
# What went wrong is in the server's log; a bug's message may name paths and addresses, and is not stored.
INTERNAL_ERROR = "pitree failed while writing this reply (an internal error, logged on the server). Try again."


class AssistantError(Exception):
    """An expected failure (refused, timed out, HTTP error…); its message is the stored ``errorMessage``."""


class Finish(NamedTuple):
    """How a backend's stream ended, apart from its text: why, and the tokens it counted (0: unknown)."""

    stop_reason: Literal["stop", "length"] = "stop"
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read: int = 0


Deltas = AsyncGenerator[str | Finish, None]


def make_usage(input_tokens: int, output_tokens: int, cache_read: int = 0) -> dict[str, Any]:
    """pi's usage shape with zero cost: pitree knows no prices, and a guessed cost would mislead."""
    total = input_tokens + output_tokens + cache_read
    counts = {"input": input_tokens, "output": output_tokens, "cacheRead": cache_read, "totalTokens": total}
    return {**ZERO_USAGE, **counts, "cost": dict(ZERO_USAGE["cost"])}


class Reply:
    """One reply: ``async for delta in reply`` gives its text as it comes (once); then it says how it ended
    (``stop_reason`` is None until then) and what it cost (``usage``, in pi's shape)."""

    stop_reason: StopReason | None = None
    error_message: str | None = None
    abort_message = ABORTED_MESSAGE  # the ``errorMessage`` of a reply left before it ended

    def __init__(self, deltas: Deltas, *, provider: str, model: str, api: str) -> None:
        self._deltas, self._read = deltas, False
        self.provider, self.model, self.api = provider, model, api
        self._parts: list[str] = []
        self.usage = make_usage(0, 0)

    @property
    def text(self) -> str:
        return "".join(self._parts)

    @property
    def ok(self) -> bool:
        return self.stop_reason in ("stop", "length")

    async def __aiter__(self) -> AsyncIterator[str]:
        if self._read:
            raise RuntimeError("a reply can be read only once")
        self._read = True
        try:
            async for item in self._deltas:
                if isinstance(item, Finish):
                    self._end(
                        item.stop_reason, usage=make_usage(item.input_tokens, item.output_tokens, item.cache_read)
                    )
                elif item and self.stop_reason is None:
                    self._parts.append(item)
                    yield item
            self._end("stop")
        except AssistantError as error:
            self._end("error", str(error))
        except Exception:  # a bug in a backend still ends as one stored reply
            logger.exception("assistant backend failed")
            self._end("error", INTERNAL_ERROR)
        finally:  # cancelled, or left early: keep what was shown
            self._end("aborted", self.abort_message)
            await self._deltas.aclose()

    async def collect(self) -> Reply:
        """Read to the end (for callers that show no progress, such as summaries)."""
        async for _ in self:
            pass
        return self

    def _end(self, stop_reason: StopReason, error: str | None = None, usage: dict[str, Any] | None = None) -> None:
        """The first end counts: a ``Finish``, a failure, or being left before either."""
        if self.stop_reason is None:
            self.stop_reason, self.error_message, self.usage = stop_reason, error, usage or self.usage

    def draft(self) -> Draft:
        """The assistant entry to append, in pi's format (one still being written is stored as aborted)."""
        self._end("aborted", self.abort_message)
        return assistant_message(
            self.text,
            provider=self.provider,
            model=self.model,
            api=self.api,
            usage=self.usage,
            stop_reason=self.stop_reason or "aborted",
            error_message=self.error_message,
        )


class Assistant(ABC):
    """One way of answering. ``name`` matches ``PITREE_ASSISTANT``, ``label`` is shown in the UI (and
    ``server``, where it answers, beside the model picked), and ``provider``/``model``/``api`` are
    stored on every entry it writes."""

    name: str
    label: str
    server = ""
    provider: str
    model: str
    api: str

    def reply(self, messages: Sequence[Message], *, model: str | None = None, variant: int = 0) -> Reply:
        """Answer ``messages`` (``convert_to_llm`` output) as ``model`` (default: the configured one).
        ``variant`` counts the earlier answers to the same message, so that a deterministic backend can vary."""
        model = model or self.model
        return Reply(self._reply(list(messages), model, variant), provider=self.provider, model=model, api=self.api)

    def summarize(self, messages: Sequence[Message], instructions: str | None = None) -> Reply:
        """A Markdown summary of ``messages`` (compaction, abandoned branch): ``reply.text`` when ``reply.ok``."""
        deltas = self._summary(list(messages), instructions)
        return Reply(deltas, provider=self.provider, model=self.model, api=self.api)

    def title(self, text: str, *, model: str | None = None) -> Reply | None:
        """A few words naming a conversation that opens with ``text`` (``reply.text`` when ``reply.ok``);
        None from a backend with no model to ask, whose caller makes a title of its own."""
        return None

    def info(self) -> dict[str, str]:
        """What the UI shows about the backend."""
        return {key: getattr(self, key) for key in ("name", "label", "server", "provider", "model", "api")}

    @abstractmethod
    async def models(self) -> list[str]:
        """The model names it can answer with; ``AssistantError`` when it cannot tell."""

    @abstractmethod
    def _reply(self, messages: list[Message], model: str, variant: int) -> Deltas: ...

    @abstractmethod
    def _summary(self, messages: list[Message], instructions: str | None) -> Deltas: ...
