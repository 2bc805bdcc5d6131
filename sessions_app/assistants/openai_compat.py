"""A backend for any server speaking OpenAI's Chat Completions API (OpenAI, llama.cpp, Ollama, vLLM…)
through the official ``openai`` SDK, which streams, times out and raises typed errors; this module turns
those into deltas and error messages a user can act on (``failures``). The timeout bounds connecting and each wait for
more data, not the whole reply: a long answer that keeps streaming is fine, a silent server is not.

pitree runs no tools, so the conversation goes as text a model can read: a message's text blocks joined
by newlines (a plain string when there is no image, which every server accepts), user images as
``image_url`` parts, thinking dropped (signed, provider-specific), tool calls and results as bracketed
text, replies that ended in error/aborted skipped (as pi does), and consecutive messages of one role
merged, because many local chat templates reject two user turns in a row.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import AsyncIterator, Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import openai
from openai.types.chat import ChatCompletion

from sessions_app.sessionfiles.context import Message
from sessions_app.sessionfiles.description import parts_of
from sessions_app.sessionfiles.entries import clip

from .base import Assistant, AssistantError, Deltas, Finish, Reply
from .failures import BAD_BASE_URL, CLOSED_EARLY, MALFORMED, detail, explain

logger = logging.getLogger(__name__)

MODELS_TTL = 30.0  # seconds a model list is reused: a picker opened twice should not ask twice
_models_cache: dict[tuple[str, str], tuple[float, list[str]]] = {}
SUMMARY_SYSTEM_PROMPT = (
    "You summarise conversations between a user and an AI assistant so that they can continue from your "
    "summary alone. Do not continue the conversation and do not answer questions asked in it."
)
TITLE_PROMPT = (
    "Write a title of two to six words for a conversation that opens with the user's message below. "
    "Answer with the title alone: no quotes, no full stop."
)
TITLE_SOURCE_CHARS = 2000  # of the opening message: enough to tell what it is about
SUMMARY_FORMAT = """Summarise the conversation above for whoever continues it. Be concise, keep exact names,
paths, numbers and code that matter, and use these Markdown sections: ## Goal, ## Progress (what was
done, found out or decided), ## Open questions (only if there are any), ## Next steps."""


class OpenAICompatAssistant(Assistant):
    name = "openai"
    api = "openai-completions"  # pi's name for the Chat Completions API

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str = "",
        timeout: float = 60.0,
        provider: str | None = None,
        max_retries: int = 0,
    ) -> None:
        self.base_url, self.model, self.timeout, self._key = base_url.strip(), model, timeout, api_key.strip()
        self._retries = max_retries
        # The SDK wants a key even for local servers that take none: then it sends no Authorization header.
        self._headers: dict[str, Any] = {} if self._key else {"Authorization": openai.omit}
        parts = urlsplit(self.base_url)
        # What the UI and error messages show: never credentials, neither from the URL nor the key.
        self.public_url = urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2], query="")).rstrip("/")
        self.endpoint = f"{self.public_url}/chat/completions"
        self.provider = provider or ("openai" if parts.hostname == "api.openai.com" else "openai-compatible")
        self.server = f"OpenAI-compatible server at {self.public_url}"
        self.label = f"{model} ({self.server})"

    def _client(self) -> openai.AsyncOpenAI:
        """A client per call: it belongs to the calling event loop and closes its connection with the call."""
        if urlsplit(self.base_url).scheme not in ("http", "https") or not urlsplit(self.base_url).hostname:
            logger.warning("PITREE_OPENAI_BASE_URL %r is not an http(s):// URL", self.public_url)
            raise AssistantError(BAD_BASE_URL)
        key, timeout, retries = self._key or "none", self.timeout, self._retries
        return openai.AsyncOpenAI(base_url=self.base_url, api_key=key, timeout=timeout, max_retries=retries)

    async def models(self) -> list[str]:
        cached = _models_cache.get((self.base_url, self._key))
        if cached and time.monotonic() - cached[0] < MODELS_TTL:
            return cached[1]
        try:
            async with self._client() as client:
                names = sorted({model.id async for model in client.models.list(extra_headers=self._headers)})
        except openai.OpenAIError as error:
            raise AssistantError(self._explain(error, f"{self.public_url}/models")) from None
        except (ValueError, TypeError, AttributeError):
            logger.warning("malformed model list from %s/models", self.public_url, exc_info=True)
            raise AssistantError("The model server's list of models cannot be read.") from None
        _models_cache[self.base_url, self._key] = (time.monotonic(), names)
        return names

    def _reply(self, messages: list[Message], model: str, variant: int) -> Deltas:
        return self._chat(to_openai_messages(messages), model)

    def _summary(self, messages: list[Message], instructions: str | None) -> Deltas:
        prompt = f"<conversation>\n{transcript(messages)}\n</conversation>\n\n{SUMMARY_FORMAT}"
        if instructions and instructions.strip():
            prompt += f"\n\nAdditional instructions from the user:\n{instructions.strip()}"
        return self._chat([{"role": "system", "content": SUMMARY_SYSTEM_PROMPT}, {"role": "user", "content": prompt}])

    def title(self, text: str, *, model: str | None = None) -> Reply:
        asked = [
            {"role": "system", "content": TITLE_PROMPT},
            {"role": "user", "content": clip(text, TITLE_SOURCE_CHARS)},
        ]
        model = model or self.model
        return Reply(self._chat(asked, model), provider=self.provider, model=model, api=self.api)

    async def _chat(self, messages: list[dict[str, Any]], model: str | None = None) -> Deltas:
        """One streamed completion; every expected failure is raised as ``AssistantError``."""
        finish_reason, usage = None, None
        try:
            async with self._client() as client:
                stream = await client.chat.completions.create(  # type: ignore[call-overload]
                    model=model or self.model,
                    messages=messages,
                    stream=True,
                    stream_options={"include_usage": True},  # servers that ignore it just send no usage
                    extra_headers=self._headers,
                )
                async for event in _events(stream):
                    choices = getattr(event, "choices", None) or []
                    if not isinstance(choices, list) or not all(isinstance(c, openai.BaseModel) for c in choices):
                        raise ValueError(f"'choices' is not a list of objects: {choices!r}")
                    for choice in choices[:1]:  # pitree asks for one
                        said = getattr(choice, "delta", None) or getattr(choice, "message", None)
                        if isinstance(text := getattr(said, "content", None), str) and text:
                            yield text
                        finish_reason = getattr(choice, "finish_reason", None) or finish_reason
                    usage = getattr(event, "usage", None) or usage
        except openai.OpenAIError as error:
            raise AssistantError(self._explain(error, self.endpoint)) from None
        except ValueError as error:  # a data line that is not JSON, or JSON not shaped like a chunk
            logger.warning("malformed stream from %s: %s", self.endpoint, clip(getattr(error, "doc", str(error)), 1000))
            raise AssistantError(MALFORMED) from None
        if finish_reason is None:
            logger.warning("%s closed the connection before the reply was complete", self.endpoint)
            raise AssistantError(CLOSED_EARLY)
        yield Finish("length" if finish_reason == "length" else "stop", *_tokens(usage))

    def _explain(self, error: openai.OpenAIError, where: str) -> str:
        """What went wrong, in the words stored as ``errorMessage``: what happened and what to do, never
        the server's address (a session is shared; the address is for the log, written here)."""
        logger.warning("model server error from %s: %s", where, self._masked(detail(error)))
        return self._masked(explain(error, self.timeout))

    def _masked(self, text: str) -> str:
        """``text`` with the key masked, should a server echo it."""
        return text.replace(self._key, "***") if self._key else text


async def _events(stream: openai.AsyncStream[Any]) -> AsyncIterator[Any]:
    """The stream's chunks, or the whole completion from a server that ignored ``stream: true``."""
    if "json" in stream.response.headers.get("content-type", ""):
        body = json.loads(await stream.response.aread())
        yield ChatCompletion.construct(**body) if isinstance(body, dict) else body
    else:
        async for chunk in stream:
            yield chunk


def _tokens(usage: Any) -> tuple[int, int, int]:
    """OpenAI usage as pi counts it, (input, output, cache read): cached prompt tokens are not input."""
    prompt, output = _count(usage, "prompt_tokens"), _count(usage, "completion_tokens")
    cached = min(_count(getattr(usage, "prompt_tokens_details", None), "cached_tokens"), prompt)
    return prompt - cached, output, cached


def _count(owner: object, name: str) -> int:
    """A token count the server sent; 0 for one missing or not a count."""
    value = getattr(owner, name, 0)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def to_openai_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """pitree's provider messages (``convert_to_llm`` output) as Chat Completions messages."""
    turns: list[tuple[str, list[str], list[dict[str, Any]]]] = []
    for message in messages:
        role, text, images = _readable(message)
        if role == "toolResult":
            error = " (error)" if message.get("isError") else ""
            role, text = "user", "\n".join(filter(None, [f"[Tool result from {message.get('toolName')}{error}]", text]))
        if turns and turns[-1][0] == role != "system":
            turns[-1][1].append(text)
            turns[-1][2].extend(images)
        elif text or images:
            turns.append((role, [text], images))
    return [
        {"role": role, "content": _content("\n\n".join(filter(None, texts)), images)} for role, texts, images in turns
    ]


def _content(text: str, images: list[dict[str, Any]]) -> str | list[dict[str, Any]]:
    """A plain string when there is no image: every server accepts that, not all accept parts."""
    return ([{"type": "text", "text": text}] if text else []) + images if images else text


def _readable(message: Message) -> tuple[str, str, list[dict[str, Any]]]:
    """A message's role, text and images as a model may read them; no role for what it should not see
    (a reply that ended in error or aborted: pi skips them too)."""
    role = str(message.get("role"))
    if role not in ("system", "user", "assistant", "toolResult") or message.get("stopReason") in ("error", "aborted"):
        return "", "", []
    texts, images = [], []
    for part in parts_of(message.get("content")):
        if part.kind == "text" and part.text:
            texts.append(part.text)
        elif part.call is not None:
            arguments = json.dumps(part.call.arguments, ensure_ascii=False, sort_keys=True)
            texts.append(f"[Tool call {part.call.name} {arguments}]")
        elif part.kind == "image" and part.data is not None and part.mime_type is not None:
            images.append({"type": "image_url", "image_url": {"url": f"data:{part.mime_type};base64,{part.data}"}})
    return role, "\n".join(texts), images if role in ("user", "toolResult") else []


def transcript(messages: Sequence[Message]) -> str:
    """The conversation as plain text for the summariser (tool results clipped: they can be huge)."""
    lines: list[str] = []
    for message in messages:
        role, text, images = _readable(message)
        if role == "toolResult":
            lines.append(f"Tool result from {message.get('toolName')}: {clip(text, 2000)}")
        elif role == "user" or (role == "assistant" and text):
            lines.append(f"{role.capitalize()}: {text}" + " [image]" * len(images))
    return "\n\n".join(lines)
