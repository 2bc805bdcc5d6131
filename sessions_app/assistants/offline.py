"""The built-in offline responder: no model, no network, same context → same answer.

It exists so pitree works (and its UI can be developed and tested) without any LLM server. Its
answers are plainly labelled as offline, reflect the last user message back with a few facts about
it, and contain a little Markdown (a list, inline code, a block quote) so the renderer is exercised.
Replies are streamed in several chunks with a small delay, so the UI's streaming path runs too.
"""

from __future__ import annotations

import re
from collections.abc import Generator

from sessions_app.sessionfiles.context import COMPACTION_PREFIX, Message

from .base import (
    IMAGE_TOKENS,
    Assistant,
    Cancel,
    Finish,
    content_text,
    count_images,
    estimate_tokens,
    make_usage,
)

DEFAULT_DELAY = 0.04  # seconds between chunks: visible streaming, still quick
WORDS_PER_CHUNK = 4
_QUOTE_LINES = 5
_QUOTE_WIDTH = 200
_SUMMARY_LINE_WIDTH = 120
_TOKENS = re.compile(r"\s*\S+\s*|\s+")


class OfflineAssistant(Assistant):
    name = "offline"
    label = "Offline responder (no model, deterministic)"
    provider = "pitree"
    model = "offline-echo"
    api = "pitree-offline"

    def __init__(self, delay: float = DEFAULT_DELAY) -> None:
        self.delay = max(0.0, delay)

    def _reply(self, messages: list[Message], cancel: Cancel) -> Generator[str, None, Finish]:
        text = compose_reply(messages)
        for position, chunk in enumerate(split_chunks(text)):
            if position and cancel.wait(self.delay):
                return Finish("aborted")  # ReplyStream replaces this with its own aborted reply
            yield chunk
        return Finish("stop", make_usage(context_tokens(messages), estimate_tokens(text)))

    def _summary(
        self, messages: list[Message], instructions: str | None, cancel: Cancel
    ) -> Generator[str, None, Finish]:
        text = compose_summary(messages, instructions)
        yield text  # nobody watches a summary being written: one chunk, no delay
        return Finish("stop", make_usage(context_tokens(messages), estimate_tokens(text)))


def split_chunks(text: str, words: int = WORDS_PER_CHUNK) -> list[str]:
    """``text`` in pieces of a few words each, whitespace kept, so joining them gives ``text`` back."""
    tokens = _TOKENS.findall(text)
    return ["".join(tokens[i : i + words]) for i in range(0, len(tokens), words)]


def context_tokens(messages: list[Message]) -> int:
    """Estimated input tokens: chars/4 of all text, plus pi's flat estimate per image."""
    total = 0
    for message in messages:
        content = message.get("content")
        total += estimate_tokens(content_text(content)) + IMAGE_TOKENS * count_images(content)
    return total


def compose_reply(messages: list[Message]) -> str:
    """The deterministic answer to the last user message."""
    users = [m for m in messages if m.get("role") == "user"]
    replies = sum(1 for m in messages if m.get("role") == "assistant")
    if not users:
        return "**Offline responder** — there is no user message to answer yet."
    content = users[-1].get("content")
    text = content_text(content)
    words = text.split()
    images = count_images(content)
    lines = [
        "**Offline responder** — no language model is connected, so this answer is generated "
        "without one and is the same every time for the same conversation.",
        "",
    ]
    if text.strip():
        lines += ["You wrote:", "", *_quote(text), ""]
    else:
        lines += ["Your message has no text.", ""]
    lines.append(f"- Words: {len(words)}, characters: {len(text)}, lines: {len(text.splitlines()) or 1}")
    longest = max((w.replace("`", "") for w in words), key=len, default="")
    if longest:
        lines.append(f"- Longest word: `{_clip(longest, 60)}`")
    if images:
        lines.append(f"- Images attached: {images}")
    if text.rstrip().endswith("?"):
        lines.append("- It reads like a question; a real model would try to answer it.")
    lines.append(f"- This is turn {len(users)} of the conversation ({_count(replies, 'earlier assistant reply')}).")
    lines += ["", "Set `PITREE_ASSISTANT=openai` to talk to an OpenAI-compatible model instead."]
    return "\n".join(lines)


def _quote(text: str) -> list[str]:
    source = text.strip().splitlines()
    quoted = [f"> {_clip(line, _QUOTE_WIDTH)}".rstrip() for line in source[:_QUOTE_LINES]]
    if len(source) > _QUOTE_LINES:
        quoted.append(f"> … ({len(source) - _QUOTE_LINES} more lines)")
    return quoted


def _count(number: int, noun: str) -> str:
    if number == 1:
        return f"1 {noun}"
    return f"{number} {noun[:-1] + 'ies' if noun.endswith('y') else noun + 's'}"


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"


def compose_summary(messages: list[Message], instructions: str | None = None) -> str:
    """A deterministic compaction summary: the first line of each user message and a few counts."""
    requests: list[str] = []
    counts = {"assistant": 0, "toolResult": 0}
    for message in messages:
        role = message.get("role")
        if role in counts:
            counts[role] += 1
        if role != "user":
            continue
        text = content_text(message.get("content")).strip()
        if text.startswith(COMPACTION_PREFIX.strip()):
            requests.append("(the summary of an earlier part of the conversation)")
        elif text:
            requests.append(_clip(text.splitlines()[0].strip(), _SUMMARY_LINE_WIDTH))
        else:
            requests.append("(a message without text)")
    lines = [
        "## Summary (offline responder, deterministic)",
        "",
        f"{_count(len(requests), 'user message')}, {_count(counts['assistant'], 'assistant reply')}"
        + (f", {_count(counts['toolResult'], 'tool result')}." if counts["toolResult"] else "."),
        "",
        "### User messages",
        "",
        *([f"- {line}" for line in requests] or ["- (none)"]),
    ]
    if instructions and instructions.strip():
        lines += ["", "### Requested focus", "", instructions.strip()]
    return "\n".join(lines)
