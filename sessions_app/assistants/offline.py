"""The built-in offline responder: no model, no network, the same answer for the same branch.

It lets pitree work (and its UI be developed and tested) without any LLM server. Its answers say
plainly that they are offline, reflect the last user message with a few facts about it, and hold a
little Markdown (a list, inline code, a block quote) so the renderer runs too. They stream in chunks
with a small delay so the streaming path runs, and they differ between sibling answers (the
``variant``), so that Regenerate visibly writes a new one.
"""

from __future__ import annotations

import asyncio
import re

from sessions_app.sessionfiles.context import COMPACTION_PREFIX, Message, estimate_tokens
from sessions_app.sessionfiles.description import parts_of, text_of
from sessions_app.sessionfiles.entries import clip

from .base import Assistant, AssistantError, Deltas, Finish

DEFAULT_DELAY = 0.04  # seconds between chunks: visible streaming, still quick
_WORDS = re.compile(r"\s*\S+\s*|\s+")  # words with the whitespace around them: chunks join up to the text
_OPENINGS = [
    "no language model is connected, so this answer is made without one",
    "still no model here: this is another canned answer",
    "one more answer written without a model",
]


class OfflineAssistant(Assistant):
    name = "offline"
    label = "Offline responder (no model, deterministic)"
    provider = "pitree"
    model = "offline-echo"
    api = "pitree-offline"

    def __init__(self, delay: float = DEFAULT_DELAY) -> None:
        self.delay = max(0.0, delay)

    async def models(self) -> list[str]:
        return [self.model]

    async def _reply(self, messages: list[Message], model: str, variant: int) -> Deltas:
        if model != self.model:
            raise AssistantError(f"The offline responder has one model, {self.model}; it cannot answer as {model}")
        text = compose_reply(messages, variant)
        words = _WORDS.findall(text)
        for start in range(0, len(words), 4):  # a few words a chunk
            if start:
                await asyncio.sleep(self.delay)
            yield "".join(words[start : start + 4])
        yield _finish(messages, text)

    async def _summary(self, messages: list[Message], instructions: str | None) -> Deltas:
        text = compose_summary(messages, instructions)
        yield text  # nobody watches a summary being written: one chunk, no delay
        yield _finish(messages, text)


def _finish(messages: list[Message], text: str) -> Finish:
    """Tokens estimated as pi estimates them: no model counted any."""
    return Finish("stop", estimate_tokens(messages), estimate_tokens([{"role": "assistant", "content": text}]))


def compose_reply(messages: list[Message], variant: int = 0) -> str:
    """The answer to the last user message; ``variant`` (earlier answers to it) changes the wording."""
    users = [m for m in messages if m.get("role") == "user"]
    if not users:
        return "**Offline responder** — there is no user message to answer yet."
    parts = parts_of(users[-1].get("content"))
    text = text_of(parts, separator="\n")
    images = sum(part.kind == "image" for part in parts)
    replies = sum(m.get("role") == "assistant" for m in messages)
    opening = _OPENINGS[variant % len(_OPENINGS)]
    lines = [f"**Offline responder** — {opening}; it is the same every time on this branch.", ""]
    lines += ["You wrote:", "", *_quote(text), ""] if text.strip() else ["Your message has no text.", ""]
    lines.append(f"- Words: {len(text.split())}, characters: {len(text)}, lines: {len(text.splitlines()) or 1}")
    lines += [f"- Images attached: {images}"] if images else []
    lines += ["- It reads like a question; a real model would try to answer it."] if text.rstrip().endswith("?") else []
    lines.append(f"- This is turn {len(users)} of the conversation ({_count(replies, 'earlier assistant reply')}).")
    lines.append(f"- Answer {variant + 1} to this message; Regenerate writes another.")
    return "\n".join([*lines, "", "Set `PITREE_ASSISTANT=openai` to talk to an OpenAI-compatible model instead."])


def compose_summary(messages: list[Message], instructions: str | None = None) -> str:
    """A compaction summary: the first line of each user message and a few counts."""
    asked = [text_of(parts_of(m.get("content")), "\n").strip() for m in messages if m.get("role") == "user"]
    asked = ["(the summary of an earlier part)" if t.startswith(COMPACTION_PREFIX.strip()) else t for t in asked]
    replies, tools = (sum(m.get("role") == role for m in messages) for role in ("assistant", "toolResult"))
    counts = f"{_count(len(asked), 'user message')}, {_count(replies, 'assistant reply')}"
    lines = [
        "## Summary (offline responder, deterministic)",
        "",
        counts + (f", {_count(tools, 'tool result')}." if tools else "."),
    ]
    lines += ["", "### User messages", ""]
    lines += [f"- {clip(t.splitlines()[0], 120) if t else '(no text)'}" for t in asked] or ["- (none)"]
    if instructions and instructions.strip():
        lines += ["", "### Requested focus", "", instructions.strip()]
    return "\n".join(lines)


def _quote(text: str, most: int = 5) -> list[str]:
    source = text.strip().splitlines()
    quoted = [f"> {clip(line, 200)}".rstrip() for line in source[:most]]
    return quoted + ([f"> … ({len(source) - most} more lines)"] if len(source) > most else [])


def _count(number: int, noun: str) -> str:
    return f"{number} {noun if number == 1 else noun[:-1] + 'ies' if noun.endswith('y') else noun + 's'}"
