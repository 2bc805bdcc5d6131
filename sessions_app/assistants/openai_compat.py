"""A backend for any server speaking OpenAI's Chat Completions API (OpenAI, llama.cpp, Ollama, vLLM, …).

Only the standard library is used (``http.client``): one POST with ``stream: true``, read as
server-sent events line by line. ``http.client`` rather than ``urllib.request`` because it gives
access to the socket, which ``cancel()`` shuts down from another thread to end a blocked read at
once, and because it does not turn 4xx/5xx into exceptions that hide the streaming response.
Note it does not honour ``HTTP(S)_PROXY``; pitree usually talks to a local server.

``PITREE_OPENAI_TIMEOUT`` bounds connecting and each wait for more data, not the whole reply: a long
answer that keeps streaming is fine, a server that goes silent for that long is an error.

Message conversion (pitree does not run tools and sends no tool definitions, so tool traffic from
pi sessions is shown to the model as plain text it can read but not continue as a call):

* text blocks of one message are joined with newlines; a message with only text becomes a string,
  which every server accepts (some reject content arrays);
* user images become ``image_url`` parts with a ``data:`` URL;
* thinking blocks are dropped (they are signed/provider-specific and other servers cannot use them);
* ``toolCall`` blocks become ``[Tool call name {json arguments}]`` lines in the assistant text;
* ``toolResult`` messages become user messages starting ``[Tool result from name]``;
* assistant replies that ended in ``error``/``aborted`` are skipped, as pi does, since they may be cut off;
* consecutive messages of the same role are merged, because many local chat templates (llama.cpp
  with Gemma/Mistral templates) reject two user or two assistant turns in a row.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import ssl
from collections.abc import Generator, Iterator, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from sessions_app.sessionfiles.context import Message

from .base import Assistant, Cancel, Finish, StopReason, content_text, make_usage

API = "openai-completions"  # pi's name for the Chat Completions API
USER_AGENT = "pitree/0.1"
MAX_LINE_BYTES = 4 * 1024 * 1024  # one SSE line; a larger one means something is wrong
MAX_JSON_BYTES = 32 * 1024 * 1024  # a whole non-streamed response
MAX_ERROR_BYTES = 64 * 1024  # enough of an error body to find its message
TOOL_RESULT_SUMMARY_CHARS = 2000

SUMMARY_SYSTEM_PROMPT = (
    "You write summaries of conversations between a user and an AI assistant, so that the "
    "conversation can later continue from your summary alone. Do not continue the conversation "
    "and do not answer questions asked in it: only summarise it."
)

SUMMARY_FORMAT = """Summarise the conversation above for whoever continues it. Be concise, keep exact names,
paths, numbers and code that matter, and use this Markdown structure:

## Goal
What the user wants to achieve.

## Progress
What has been done, found out or decided so far.

## Open questions
Anything unresolved (leave this section out if there is nothing).

## Next steps
What should happen next."""


class _Failure(Exception):
    """An expected failure; its message is the ``errorMessage`` stored on the reply."""


class OpenAICompatAssistant(Assistant):
    name = "openai"
    api = API

    def __init__(
        self, base_url: str, model: str, api_key: str = "", timeout: float = 60.0, provider: str | None = None
    ) -> None:
        self.base_url = base_url.strip()
        self.model = model
        self.api_key = api_key.strip()
        self.timeout = timeout
        parts = urlsplit(self.base_url)
        self.endpoint = urlunsplit(parts._replace(path=parts.path.rstrip("/") + "/chat/completions"))
        # URLs shown in the UI and in error messages never include credentials.
        self.display_endpoint = _without_userinfo(self.endpoint)
        self.provider = provider or ("openai" if parts.hostname == "api.openai.com" else "openai-compatible")
        self.label = f"{model} (OpenAI-compatible server at {_without_userinfo(self.base_url)})"

    def _reply(self, messages: list[Message], cancel: Cancel) -> Generator[str, None, Finish]:
        return (yield from self._chat(to_openai_messages(messages), cancel))

    def _summary(
        self, messages: list[Message], instructions: str | None, cancel: Cancel
    ) -> Generator[str, None, Finish]:
        prompt = f"<conversation>\n{transcript(messages)}\n</conversation>\n\n{SUMMARY_FORMAT}"
        if instructions and instructions.strip():
            prompt += f"\n\nAdditional instructions from the user:\n{instructions.strip()}"
        request = [{"role": "system", "content": SUMMARY_SYSTEM_PROMPT}, {"role": "user", "content": prompt}]
        return (yield from self._chat(request, cancel))

    def request_body(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "model": self.model,
            "messages": messages,
            "stream": True,
            "stream_options": {"include_usage": True},
        }

    def _chat(self, messages: list[dict[str, Any]], cancel: Cancel) -> Generator[str, None, Finish]:
        """One streamed completion; every expected failure becomes ``Finish.error``."""
        url = self.display_endpoint
        try:
            conn, path = _connection(self.endpoint, self.timeout)
        except ValueError as exc:
            return Finish.error(f"Bad PITREE_OPENAI_BASE_URL {self.base_url!r}: {exc}")
        waiting = f"connecting to {url}"
        try:
            conn.connect()
            # Kept here: once a response that ends by closing is read, ``conn.sock`` is reset to None.
            sock = conn.sock
            cancel.on_cancel(lambda: _shut(sock))
            if cancel.requested:
                return Finish("aborted")
            waiting = f"waiting for {url}"
            conn.request("POST", path, json.dumps(self.request_body(messages)).encode(), self._headers())
            response = conn.getresponse()
            if not 200 <= response.status < 300:
                return Finish.error(f"HTTP {response.status} from {url}: {_error_detail(response)}")
            if "application/json" in (response.getheader("Content-Type") or ""):
                return (yield from _read_json(response, url))  # a server that ignored stream: true
            return (yield from _read_sse(response, url))
        except _Failure as exc:
            return Finish.error(str(exc))
        except TimeoutError:
            return Finish.error(f"Timed out after {self.timeout:g} s {waiting}")
        except ConnectionRefusedError:
            return Finish.error(f"Connection refused by {url}")
        except ssl.SSLError as exc:
            return Finish.error(f"TLS error with {url}: {exc}")
        except (OSError, http.client.HTTPException) as exc:
            what = "Could not connect to" if waiting.startswith("connecting") else "Connection lost with"
            return Finish.error(f"{what} {url}: {_describe(exc)}")
        finally:
            conn.close()

    def _headers(self) -> dict[str, str]:
        headers = {
            "Content-Type": "application/json",
            "Accept": "text/event-stream",
            "User-Agent": USER_AGENT,
        }
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return headers


# -- HTTP -------------------------------------------------------------------------------------


def _connection(url: str, timeout: float) -> tuple[http.client.HTTPConnection, str]:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("expected an http:// or https:// URL")
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    if parts.scheme == "https":
        return http.client.HTTPSConnection(parts.hostname, parts.port, timeout=timeout), path
    return http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout), path


def _shut(sock: socket.socket | None) -> None:
    """Wake a read blocked in another thread. The plain socket method is used even for TLS sockets,
    whose own ``shutdown`` would also drop the TLS state under the reading thread."""
    if sock is not None:
        with contextlib.suppress(OSError):
            socket.socket.shutdown(sock, socket.SHUT_RDWR)


def _without_userinfo(url: str) -> str:
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))


def _describe(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc) or type(exc).__name__


def _clip(text: str, width: int = 300) -> str:
    text = text.strip()
    return text if len(text) <= width else text[: width - 1] + "…"


def _error_detail(response: http.client.HTTPResponse) -> str:
    """The server's own explanation of an HTTP error, or the status phrase when it gives none."""
    try:
        raw = response.read(MAX_ERROR_BYTES)
    except (OSError, http.client.HTTPException):
        raw = b""
    text = raw.decode("utf-8", errors="replace")
    try:
        message = error_message(json.loads(text))
    except ValueError:
        message = None
    return message or _clip(text) or response.reason or "no details"


def error_message(body: Any) -> str | None:
    """The message in the error shapes servers use: OpenAI/vLLM ``{error:{message}}``, Ollama and
    llama.cpp ``{error:"…"}``, and the generic ``{message}`` / ``{detail}``."""
    if not isinstance(body, dict):
        return None
    error = body.get("error")
    if isinstance(error, dict):
        found = error.get("message") or error.get("msg")
        if found:
            return _clip(str(found), 1000)
    elif isinstance(error, str) and error:
        return _clip(error, 1000)
    for key in ("message", "detail"):
        found = body.get(key)
        if isinstance(found, str) and found:
            return _clip(found, 1000)
        if found:
            return _clip(json.dumps(found, ensure_ascii=False), 1000)
    return None


# -- responses --------------------------------------------------------------------------------


def _sse_data(response: http.client.HTTPResponse, url: str) -> Iterator[str]:
    """The ``data`` of each server-sent event (multi-line data joined with newlines, as the SSE spec
    says). Comments and other fields (``event``, ``id``, ``retry``, unknown names) are ignored."""
    data: list[str] = []
    while True:
        raw = response.readline(MAX_LINE_BYTES)
        if not raw:
            break
        if len(raw) >= MAX_LINE_BYTES and not raw.endswith(b"\n"):
            raise _Failure(f"Malformed stream from {url}: a line longer than {MAX_LINE_BYTES} bytes")
        try:
            line = raw.decode("utf-8").rstrip("\r\n")
        except UnicodeDecodeError:
            raise _Failure(f"Malformed stream from {url}: a line that is not UTF-8") from None
        if not line:
            if data:
                yield "\n".join(data)
                data = []
            continue
        field, _, value = line.partition(":")
        if field == "data":
            data.append(value[1:] if value.startswith(" ") else value)
    if data:
        yield "\n".join(data)


def _read_sse(response: http.client.HTTPResponse, url: str) -> Generator[str, None, Finish]:
    finish_reason: Any = None
    usage: Mapping[str, Any] | None = None
    complete = False
    for payload in _sse_data(response, url):
        if payload.strip() == "[DONE]":
            complete = True
            break
        event = _parse_event(payload, url)
        for choice in _choices(event, url):
            delta = choice.get("delta")
            content = delta.get("content") if isinstance(delta, dict) else None
            if isinstance(content, str) and content:
                yield content
            finish_reason = choice.get("finish_reason") or finish_reason
        if isinstance(event.get("usage"), dict):
            usage = event["usage"]
    if not complete and finish_reason is None:
        raise _Failure(f"Connection closed by {url} before the reply was complete")
    return Finish(stop_reason(finish_reason), usage_from_openai(usage) if usage else None)


def _read_json(response: http.client.HTTPResponse, url: str) -> Generator[str, None, Finish]:
    body = _parse_event(response.read(MAX_JSON_BYTES).decode("utf-8", errors="replace"), url)
    finish_reason: Any = None
    for choice in _choices(body, url):
        message = choice.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str) and content:
            yield content
        finish_reason = choice.get("finish_reason")
    usage = body.get("usage")
    return Finish(stop_reason(finish_reason), usage_from_openai(usage) if isinstance(usage, dict) else None)


def _parse_event(payload: str, url: str) -> dict[str, Any]:
    try:
        event = json.loads(payload)
    except ValueError:
        raise _Failure(f"Malformed stream from {url}: {_clip(payload, 200)!r} is not JSON") from None
    if not isinstance(event, dict):
        raise _Failure(f"Malformed stream from {url}: {_clip(payload, 200)!r} is not a JSON object")
    if event.get("error"):
        raise _Failure(f"Error from {url}: {error_message(event) or _clip(payload, 300)}")
    return event


def _choices(event: dict[str, Any], url: str) -> list[dict[str, Any]]:
    """The first choice (pitree asks for one), or none (e.g. the final usage-only chunk)."""
    choices = event.get("choices")
    if choices is None:
        return []
    if not isinstance(choices, list) or not all(isinstance(c, dict) for c in choices):
        raise _Failure(f"Malformed stream from {url}: 'choices' is not a list of objects")
    return [c for c in choices if c.get("index", 0) == 0][:1]


def stop_reason(finish_reason: Any) -> StopReason:
    """``length`` stays ``length``; everything else (stop, tool_calls, content_filter, none) is ``stop``."""
    return "length" if finish_reason == "length" else "stop"


def usage_from_openai(usage: Mapping[str, Any]) -> dict[str, Any]:
    """OpenAI usage in pi's shape. pi counts cached prompt tokens as ``cacheRead``, not ``input``."""

    def number(value: Any) -> int:
        return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0

    prompt = number(usage.get("prompt_tokens"))
    details = usage.get("prompt_tokens_details")
    cached = min(number(details.get("cached_tokens")) if isinstance(details, dict) else 0, prompt)
    return make_usage(prompt - cached, number(usage.get("completion_tokens")), cache_read=cached)


# -- requests ---------------------------------------------------------------------------------


def to_openai_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """pitree's provider messages (``convert_to_llm`` output) as Chat Completions messages."""
    turns: list[tuple[str, list[dict[str, Any]]]] = []
    for message in messages:
        role = message.get("role")
        content = message.get("content")
        if role == "system":
            target, parts = "system", _squash(_text_parts(content))
        elif role == "user":
            target, parts = "user", _squash(_user_parts(content))
        elif role == "assistant":
            if message.get("stopReason") in ("error", "aborted"):
                continue
            target, parts = "assistant", _squash(_assistant_parts(content))
        elif role == "toolResult":
            target, parts = "user", _squash(_tool_result_parts(message))
        else:
            continue
        if not parts:
            continue
        if turns and turns[-1][0] == target and target != "system":
            turns[-1] = (target, _squash(turns[-1][1] + parts, "\n\n"))
        else:
            turns.append((target, parts))
    return [{"role": role, "content": _content(parts)} for role, parts in turns]


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [_text(content)]
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def _text_parts(content: Any) -> list[dict[str, Any]]:
    return [_text(b["text"]) for b in _blocks(content) if b.get("type") == "text" and isinstance(b.get("text"), str)]


def _image_part(block: dict[str, Any]) -> dict[str, Any] | None:
    data, mime = block.get("data"), block.get("mimeType")
    if not isinstance(data, str) or not isinstance(mime, str):
        return None
    return {"type": "image_url", "image_url": {"url": f"data:{mime};base64,{data}"}}


def _user_parts(content: Any) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for block in _blocks(content):
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            parts.append(_text(block["text"]))
        elif block.get("type") == "image" and (image := _image_part(block)):
            parts.append(image)
    return parts


def _assistant_parts(content: Any) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for block in _blocks(content):
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            parts.append(_text(block["text"]))
        elif kind == "toolCall":
            parts.append(_text(_tool_call_text(block)))
        # "thinking" blocks are dropped on purpose (see the module docstring)
    return parts


def _tool_call_text(block: Mapping[str, Any]) -> str:
    arguments = json.dumps(block.get("arguments", {}), ensure_ascii=False, sort_keys=True)
    return f"[Tool call {block.get('name')} {arguments}]"


def _tool_result_parts(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    header = f"[Tool result from {message.get('toolName')}{' (error)' if message.get('isError') else ''}]"
    return [_text(header), *_user_parts(message.get("content"))]


def _squash(parts: list[dict[str, Any]], separator: str = "\n") -> list[dict[str, Any]]:
    """Adjacent text parts merged into one; empty text dropped."""
    merged: list[dict[str, Any]] = []
    for part in parts:
        if part["type"] == "text":
            if not part["text"]:
                continue
            if merged and merged[-1]["type"] == "text":
                merged[-1] = _text(merged[-1]["text"] + separator + part["text"])
                continue
        merged.append(part)
    return merged


def _content(parts: list[dict[str, Any]]) -> str | list[dict[str, Any]]:
    if len(parts) == 1 and parts[0]["type"] == "text":
        return parts[0]["text"]
    return parts


def transcript(messages: Sequence[Message]) -> str:
    """The conversation as plain text for the summariser (tool results clipped: they can be huge)."""
    lines: list[str] = []
    for message in messages:
        role = message.get("role")
        content = message.get("content")
        if role == "user":
            text = content_text(content)
            images = sum(1 for b in _blocks(content) if b.get("type") == "image")
            lines.append(f"User: {text}" + " [image]" * images)
        elif role == "assistant":
            parts = _squash(_assistant_parts(content))
            if parts:
                lines.append(f"Assistant: {parts[0]['text']}")
        elif role == "toolResult":
            text = _clip(content_text(content), TOOL_RESULT_SUMMARY_CHARS)
            lines.append(f"Tool result from {message.get('toolName')}: {text}")
    return "\n\n".join(lines)
