"""A model server's failures in words a user can act on: what went wrong and what to do about it.

These words are stored as a reply's ``errorMessage``, in a session file that may be shared with anyone:
they never hold the server's address (nor anything shaped like one that the server put in its own
message). The address and the error as the SDK raised it go to the server's log instead.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

import openai

from sessions_app.sessionfiles.entries import clip

TRY_AGAIN = "Try again, or pick another model."
MALFORMED = f"The model server sent something that is not a chat reply, so the reply ends here. {TRY_AGAIN}"
CLOSED_EARLY = f"The model server closed the connection before the reply was complete. {TRY_AGAIN}"
BAD_BASE_URL = (
    "The model server's address (PITREE_OPENAI_BASE_URL) is not an http(s):// URL: "
    "ask whoever runs this pitree to set it."
)
_SAID_MAX = 300  # characters of the server's own message kept: enough for a reason, not for a stack trace
_CONTEXT = re.compile(
    r"context.{0,20}(length|size|window|limit)|context_length|too many tokens|prompt is too long|too long for",
    re.IGNORECASE,
)
_UNKNOWN_MODEL = re.compile(
    r"model.{0,80}(not found|does not exist|not exist|unknown|not available|not loaded)|unknown model|no such model",
    re.IGNORECASE | re.DOTALL,
)
# Addresses a server may quote in its own message (a proxy naming its upstream): URLs, host:port, IPs.
_ADDRESS = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+|\b(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?|\blocalhost:\d+", re.IGNORECASE)


def explain(error: openai.OpenAIError, timeout: float) -> str:
    """The ``errorMessage`` for a failure the ``openai`` SDK raised."""
    if isinstance(error, openai.APITimeoutError):
        return f"The model server did not answer within {timeout:g} s. {TRY_AGAIN}"
    if isinstance(error, openai.APIConnectionError) and refused(error):
        return f"The model server refused the connection: it may not be running. {TRY_AGAIN}"
    if isinstance(error, openai.APIConnectionError):
        return f"The model server could not be reached. {TRY_AGAIN}"
    said = _scrubbed(server_message(getattr(error, "body", None)))
    if isinstance(error, openai.APIStatusError):
        return _status(error.status_code, said or error.response.reason_phrase)
    if _CONTEXT.search(said):  # an error event inside the stream
        return _too_long(said)
    return f"The model server stopped with an error ({said or 'it gave no reason'}). {TRY_AGAIN}"


def detail(error: openai.OpenAIError) -> str:
    """The error as raised, with the address it names, for the server's log."""
    body = server_message(getattr(error, "body", None))
    return f"{type(error).__name__}: {error}" + (f" ({body})" if body else "")


def _status(status: int, said: str) -> str:
    code = f"HTTP {status}: {said}" if said else f"HTTP {status}"
    if status == 413 or (400 <= status < 500 and _CONTEXT.search(said)):
        return _too_long(code)
    if status in (404, 400) and _UNKNOWN_MODEL.search(said):
        return f"The model server does not know this model ({code}). Pick another model."
    if status in (401, 403):
        return f"The model server refused pitree's credentials ({code}): ask whoever runs this pitree to check its API key."
    if status == 429:
        return f"The model server is busy or over its quota ({code}). Try again in a moment, or pick another model."
    return f"The model server answered with an error ({code}). {TRY_AGAIN}"


def _too_long(said: str) -> str:
    return (
        f"The conversation is too long for this model ({said}). "
        "Compact the history (below the conversation), or pick a model with a longer context."
    )


def _scrubbed(said: str) -> str:
    return clip(_ADDRESS.sub("…", said), _SAID_MAX)


def server_message(body: object) -> str:
    """The message in the error shapes servers use: OpenAI and vLLM ``{error: {message}}`` (the SDK
    unwraps ``error``), Ollama and llama.cpp ``{error: "…"}``, FastAPI ``{detail}``, or plain text."""
    while isinstance(body, Mapping):
        body = next((body[key] for key in ("error", "message", "msg", "detail") if body.get(key)), "")
    return clip(body.strip() if isinstance(body, str) else json.dumps(body, ensure_ascii=False) if body else "", 1000)


def refused(error: BaseException | None) -> bool:
    """Whether the socket refused the connection: the SDK's error wraps httpx's, which wraps the socket's."""
    for _ in range(20):  # a bound, should a chain loop
        if error is None or isinstance(error, ConnectionRefusedError):
            return error is not None
        error = error.__cause__ or error.__context__
    return False
