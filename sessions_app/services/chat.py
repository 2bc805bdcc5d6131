"""One chat turn: the assistant answers the branch ending at an entry. The reply is written as a task
of its own (``replies``), streamed to the session's tabs while it is written, and appended once.

A message is sent from a page that reflects the file up to a byte offset (its cursor). When the
conversation went on after the entry it answers since then — pi or another tab answered that entry,
or moved the session further down its branch — the message would silently start a sibling branch:
``unchanged_since`` refuses it instead (``MovedOn``), under the file's lock, and the tab offers to
continue from the latest entry or to branch on purpose.
"""

from __future__ import annotations

import asyncio
import bisect
from collections.abc import Callable
from typing import Any

from ..assistants import Assistant, AssistantError, get_assistant
from ..sessionfiles.context import convert_to_llm
from ..sessionfiles.cursor import cursor_of
from ..sessionfiles.errors import SessionError
from ..sessionfiles.index import LEAF, NO_PARENT, SessionIndex
from ..sessionfiles.store import SessionFile
from ..sessionfiles.tree import followed, latest_position_under, subtree
from . import replies, titles


class MovedOn(SessionError):
    """Refused: the conversation went on after the entry a message answers since its page's cursor.
    ``latest`` is the entry to continue from instead, ``cursor`` where the file ended when refused."""

    def __init__(self, latest: str, cursor: int) -> None:
        super().__init__(f"The conversation went on after this point (its latest entry is {latest}).")
        self.latest, self.cursor = latest, cursor


def unchanged_since(parent_id: str | None, cursor: int) -> Callable[[SessionIndex], None]:
    """A check for ``SessionFile.append`` (it runs under the file's lock): refuse with ``MovedOn`` when,
    in what the file gained after byte ``cursor``, ``parent_id`` got a child (None: a new root), or a
    ``leaf`` entry moved the position below it."""

    def check(index: SessionIndex) -> None:
        latest = _continued_since(index, None if parent_id is None else index.row(parent_id), cursor)
        if latest is not None:
            raise MovedOn(index.ids[latest], cursor_of(index))

    return check


def _continued_since(index: SessionIndex, parent: int | None, cursor: int) -> int | None:
    """The row to continue from when the branch went on after ``parent`` past byte ``cursor``; else None."""
    first = bisect.bisect_left(index.offsets, cursor, 0, len(index))
    below: set[int] | None = None  # rows under ``parent``, when a ``leaf`` entry needs them
    went_on = False
    for row in range(first, len(index)):
        if index.is_node(row):
            went_on = index.parents[row] == (NO_PARENT if parent is None else parent)
        elif index.types[row] == LEAF and (target := index.leaf_target_row(row)) is not None and target != parent:
            if parent is None:
                went_on = True
            else:
                below = set(subtree(index, parent)) if below is None else below
                went_on = target in below
        if went_on:
            break
    if not went_on:
        return None
    leaf = index.leaf_row
    if parent is None:
        return leaf
    below = set(subtree(index, parent)) if below is None else below
    if leaf is not None and leaf != parent and leaf in below:
        return leaf
    latest = latest_position_under(index, parent)
    return latest if latest != parent else max(below)


async def offered_models(assistant: Assistant) -> tuple[list[str], str]:
    """The backend's models, and why not when they could not be fetched (then its configured one only)."""
    try:
        return await assistant.models(), ""
    except AssistantError as error:
        return [assistant.model], f"The model list could not be fetched: {error}"


def chosen_model(assistant: Assistant, provider: object, model: object, offered: list[str]) -> str:
    """The model a reply on a branch uses, and the composer's picker shows: the branch's own (its last
    ``model_change`` or reply names it) when this backend wrote it and still offers it, else the
    configured one. (A reply the command line wrote names provider "pitree" and model "cli", say: the
    offline responder offers only its own model, so that one answers.)"""
    if provider == assistant.provider and isinstance(model, str) and model in offered:
        return model
    return assistant.model


async def start_reply(
    session: SessionFile,
    parent_id: str,
    reply_id: str | None = None,
    model: str | None = None,
    variant: int | None = None,
) -> replies.RunningReply:
    """Start answering the branch ending at ``parent_id`` with ``model`` (default: ``chosen_model``).
    ``variant`` (default: the answers to ``parent_id`` stored so far) lets a deterministic backend word
    this answer differently from its siblings; replies started together (a beam) each say their own.

    Backend failures (refused, timeout, HTTP errors) end as an assistant entry with stopReason ``error``
    and an ``errorMessage``, as pi stores them; the user's message stays either way. The reply is
    marked as being written before its context is read (``replies.claim``). An untitled session gets
    a short title once the reply is stored (``titles``).
    """
    assistant = get_assistant()
    reply_id = await replies.claim(session.session_id, parent_id, reply_id)

    def read() -> tuple[list[Any], int, dict[str, Any]]:
        context = session.context(parent_id)
        # Earlier answers to the same entry: a deterministic backend words a regenerated reply differently.
        earlier = len(session.index.children(session.row_of(parent_id)))
        return convert_to_llm(context.messages), earlier, context.model or {}

    try:
        messages, earlier, branch = await asyncio.to_thread(read)
        variant = earlier if variant is None else variant
        if model is None:
            offered, _ = await offered_models(assistant)
            model = chosen_model(assistant, branch.get("provider"), branch.get("modelId"), offered)
        reply = assistant.reply(messages, model=model, variant=variant)
    except BaseException:
        await replies.release(session.session_id, parent_id, reply_id)
        raise
    running = replies.start(session, parent_id, reply, reply_id)
    titles.title_after(session, running, assistant, messages)
    return running


async def answer(
    session: SessionFile, parent_id: str, reply_id: str | None = None, model: str | None = None
) -> dict[str, Any]:
    """The stored reply to the branch ending at ``parent_id``. If the caller is cancelled meanwhile (its
    client went away), the reply is still written and stored."""
    running = await start_reply(session, parent_id, reply_id, model)
    return await running.join()


def standing_after(session: SessionFile, entry_id: str) -> str | None:
    """Where the tab that waited for ``entry_id`` (a reply it asked for) stands once it is stored: on
    it, or on what its write chained below it (the session's title, a pick made meanwhile), as the
    push path moves a tab standing on an entry that something is appended under."""
    session.refresh()
    index = session.index
    row = session.row_of(entry_id)
    moved = followed(index, row, index.offsets[row] + 1)
    return None if moved is None else index.ids[moved]
