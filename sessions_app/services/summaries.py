"""Summaries the assistant writes: a compaction of older history, the summary of a branch the user
leaves (pi's ``navigateTree`` with ``summarize``), and the history a tail fork leaves out."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, NamedTuple

from ..assistants import get_assistant
from ..sessionfiles.context import Message, build_session_context, convert_to_llm, estimate_tokens
from ..sessionfiles.errors import SessionError
from ..sessionfiles.fork import tail_start
from ..sessionfiles.store import SessionFile
from ..sessionfiles.tree import ancestors


class SummaryFailed(SessionError):
    """The assistant could not write the summary; nothing was appended."""


class Summary(NamedTuple):
    text: str
    tokens_before: int  # the branch's context before it was folded
    usage: dict[str, Any] | None  # what writing the summary cost


# What the assistant is asked to summarise is read and built in a worker thread, in one hop: decoding a
# path and building its context (and estimating its tokens, which serialises every tool call's
# arguments) grows with the branch, and on the event loop it would hold up every socket and async view.


async def compact(
    session: SessionFile, at: str | None, keep_from: str, instructions: str | None = None
) -> dict[str, Any]:
    """Fold the branch's history before ``keep_from`` into a summary; the compaction is appended as a
    child of ``at`` (the tab's position)."""

    def read() -> tuple[list[Message], int]:
        """The history to fold, as the assistant reads it, and the branch's tokens before compacting."""
        path = session.path_entries(at)
        ids = [entry.get("id") for entry in path]
        if keep_from not in ids:
            raise SessionError(f"Entry {keep_from} is not on this branch")
        folded = path[: ids.index(keep_from)]
        if not folded:
            raise SessionError("Nothing before that entry to compact")
        messages = convert_to_llm(build_session_context(folded).messages)
        return messages, estimate_tokens(build_session_context(path).messages)

    messages, tokens_before = await asyncio.to_thread(read)
    reply = await get_assistant().summarize(messages, instructions).collect()
    if not reply.ok or not reply.text.strip():
        raise SummaryFailed(f"The assistant could not write the summary: {reply.error_message or 'empty reply'}")
    return await asyncio.to_thread(session.compact, reply.text, keep_from, tokens_before, at, usage=reply.usage)


async def summarize_abandoned_branch(
    session: SessionFile, left: str | None, target: str | None, *, check: Callable[[], None] | None = None
) -> dict[str, Any] | None:
    """When moving from ``left`` to ``target``, summarise the entries of the branch left behind (from
    ``left`` up to the common ancestor) and append that as a ``branch_summary`` at ``target``.
    None when nothing is left behind. ``check`` runs once a summary is due, before the assistant is
    asked for it, and raises to refuse it (the caller's rules of where it may be written)."""
    if left is None or left == target:
        return None

    def read() -> list[Message] | None:
        """The branch left behind, as the assistant reads it (None: nothing is left behind)."""
        index = session.index
        kept = set(ancestors(index, session.row_of(target))) if target is not None else set()
        abandoned = [row for row in ancestors(index, session.row_of(left)) if row not in kept]
        if not abandoned:
            return None
        if check is not None:
            check()
        abandoned.reverse()
        return convert_to_llm(build_session_context(session.entries(abandoned)).messages)

    messages = await asyncio.to_thread(read)
    if messages is None:
        return None
    reply = (
        await get_assistant()
        .summarize(messages, "Summarise this abandoned branch of the conversation: what was tried and what came of it.")
        .collect()
    )
    if not reply.ok or not reply.text.strip():
        raise SummaryFailed(f"The assistant could not write the summary: {reply.error_message or 'empty reply'}")
    return await asyncio.to_thread(session.branch_summary, target, reply.text, left_leaf=left, usage=reply.usage)


async def summarize_before_tail(session: SessionFile, at: str | None, turns: int) -> Summary:
    """The assistant's summary of the branch through ``at`` up to its last ``turns`` turns (a tail
    fork's), with the branch's tokens before it was folded."""

    def read() -> tuple[list[Message], int]:
        path = session.path_entries(at)
        start = tail_start(path, turns)
        return convert_to_llm(build_session_context(path[:start]).messages), estimate_tokens(
            build_session_context(path).messages
        )

    messages, tokens_before = await asyncio.to_thread(read)
    reply = await get_assistant().summarize(messages, None).collect()
    if not reply.ok or not reply.text.strip():
        raise SummaryFailed(f"The assistant could not write the summary: {reply.error_message or 'empty reply'}")
    return Summary(reply.text, tokens_before, reply.usage)
