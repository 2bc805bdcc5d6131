"""Short titles for untitled sessions, written as pi's ``session_info`` after their first answer, and
the name a fork gets ("Branch · <its source's title>").

A session's heading and its row in the list would otherwise be its whole first message. The title is
the model's own few words when an OpenAI-compatible server answers (one short request, made while the
reply is written); offline, or when that request fails or is not answered before the reply is
stored, the first words of the first message. It is written in the reply's own write, below it (as a
model picked meanwhile is), so that no tab sees the answer without its title, nor sends under the
answer while the title is being written: decided under the file's lock, it is left out where the file
holds any ``session_info`` by then (a name the user gave, pi's, or another process's title). The push
path shows it in every tab.
"""

from __future__ import annotations

import asyncio
import logging
import re
from typing import Any

from ..assistants import Assistant
from ..assistants.pi.locks import PiWorking
from ..display.markdown import NEW_SESSION, markdown_text
from ..sessionfiles.context import Message
from ..sessionfiles.description import parts_of, text_of
from ..sessionfiles.entries import Draft, session_info
from ..sessionfiles.index import SessionIndex
from ..sessionfiles.store import SessionFile
from .replies import RunningReply

logger = logging.getLogger(__name__)

TITLE_CHARS = 50  # a title is cut at a word boundary before this many characters
BRANCH_PREFIX = "Branch · "
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")
_TRAILING = " \t.,;:!?…-–—\"'`*_()[]{}"

_pending: set[asyncio.Task[Any]] = set()  # titles being written (a task nobody awaits must be referenced)


def heuristic_title(text: str, most: int = TITLE_CHARS) -> str:
    """A readable title from a message: its first sentence, as it reads once rendered, cut at a word
    boundary before ``most`` characters, without trailing punctuation ("" for a message without words)."""
    plain = markdown_text(text, 4 * most).rstrip("…")
    sentence = _SENTENCE_END.split(plain, maxsplit=1)[0]
    if len(sentence) > most:
        cut = sentence[: most + 1]
        space = cut.rfind(" ")
        sentence = cut[:space] if space > most // 3 else sentence[:most]
    return sentence.strip(_TRAILING)


def model_title(said: str) -> str:
    """What a model answered when asked for a title, as a title: its first line, without a "Title:"
    prefix, quotes or trailing punctuation, cut like ``heuristic_title``."""
    line = next((line for line in said.strip().splitlines() if line.strip()), "")
    line = re.sub(r"^title\s*:\s*", "", line.strip(_TRAILING), flags=re.IGNORECASE)
    return heuristic_title(line)


def first_user_text(messages: list[Message]) -> str:
    """The words of the first user message of a conversation (``convert_to_llm`` output)."""
    for message in messages:
        if message.get("role") == "user":
            return text_of(parts_of(message.get("content")))
    return ""


def untitled(index: SessionIndex) -> bool:
    """Whether no ``session_info`` line is in the file: a name cleared on purpose counts as given."""
    return index.name is None and "session_info" not in index.types


class Title:
    """A title chained below a reply (``RunningReply.chain``), decided under the file's lock when the
    reply is stored: written only when the reply is an answer (not failed, not stopped) and the file
    holds no ``session_info`` by then (a name given meanwhile, or another process's title)."""

    def __init__(self, running: RunningReply, text: str) -> None:
        self.running, self.name = running, heuristic_title(text)

    def __call__(self, index: SessionIndex) -> Draft | None:
        if not self.running.reply.ok or not untitled(index) or not self.name:
            return None
        return session_info(self.name)


def title_after(session: SessionFile, running: RunningReply, assistant: Assistant, messages: list[Message]) -> None:
    """Give ``session`` a title when ``running``, an answer in it, is stored, if it has none: the
    model's, asked for now from the first user message of ``messages`` (the reply's context), when it
    comes before the reply is stored; else the first words of that message."""
    text = first_user_text(messages)
    if not untitled(session.index) or not text.strip():
        return
    title = Title(running, text)
    running.chain(title)
    asked = asyncio.create_task(_ask(assistant, text, running.reply.model, title))
    _pending.add(asked)
    asked.add_done_callback(_pending.discard)
    running.task.add_done_callback(lambda _: asked.cancel())  # too late once the reply is stored


async def _ask(assistant: Assistant, text: str, model: str, title: Title) -> None:
    """The model's title for a conversation opening with ``text``, into ``title``; the heuristic's stays
    when the backend has no model, or the request fails."""
    reply = assistant.title(text, model=model)
    if reply is None:
        return
    try:
        await reply.collect()
    except Exception:  # a title is a nicety: the reply is stored whatever happens here
        logger.warning("the title request failed", exc_info=True)
        return
    if reply.ok and (said := model_title(reply.text)):
        title.name = said


class _Titled(Exception):
    """The file holds a ``session_info`` by the time the title would be written: it is left out."""


def title_below(session: SessionFile, entry_id: str) -> str | None:
    """For a session pi answers (pi writes its file and answers no title request): once one of its
    turns has ended, the first words of the branch's first user message as the session's title, below
    ``entry_id`` (what pi wrote last there), where it has none; the title's id, else None. pitree's own
    append between pi's turns, as a label or a name is (``pi.writing``): refused while pi works again
    (``PiWorking``), when the next turn's end tries again."""
    session.refresh()
    if not untitled(session.index):
        return None
    name = heuristic_title(first_user_words(session, entry_id))
    if not name:
        return None

    def check(index: SessionIndex) -> None:
        if not untitled(index):
            raise _Titled

    try:
        return str(session.append(session_info(name), entry_id, check=check)["id"])
    except (_Titled, PiWorking):
        return None


def first_user_words(source: SessionFile, entry_id: str | None) -> str:
    """The words of the first user message on the branch of ``entry_id`` ("" where it has none)."""
    index = source.index
    for row in source.path_rows(entry_id):
        if index.types[row] == "message" and index.roles[row] == "user":
            return text_of(parts_of(source.entries([row])[0]["message"].get("content")))
    return ""


def branch_name(source: SessionFile, entry_id: str | None) -> str:
    """The name of a fork of ``source`` through ``entry_id``: "Branch · " and the source's title as
    the forker sees it (its name, else the first words of the branch's first user message), once
    however often it was forked. ``source`` is what the forker's grant shows (a ``SessionView``): a
    name given where they may not look is not theirs to copy."""
    title = source.index.name or heuristic_title(first_user_words(source, entry_id))
    return BRANCH_PREFIX + (title or NEW_SESSION).removeprefix(BRANCH_PREFIX)
