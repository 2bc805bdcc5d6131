"""One chat turn: the assistant answers the branch ending at an entry. The reply is written as a task
of its own (``replies``), streamed to the session's tabs while it is written, and appended once."""

from __future__ import annotations

import asyncio
from typing import Any

from ..assistants import get_assistant
from ..sessionfiles.context import convert_to_llm
from ..sessionfiles.store import SessionFile
from . import replies


async def start_reply(
    session: SessionFile, parent_id: str, reply_id: str | None = None, model: str | None = None
) -> replies.RunningReply:
    """Start answering the branch ending at ``parent_id`` with ``model`` (default: the configured one).

    Backend failures (refused, timeout, HTTP errors) end as an assistant entry with stopReason ``error``
    and an ``errorMessage``, as pi stores them; the user's message stays either way.
    """

    def read() -> tuple[list[Any], int]:
        context = session.context(parent_id)
        # Earlier answers to the same entry: a deterministic backend words a regenerated reply differently.
        return convert_to_llm(context.messages), len(session.index.children(session.row_of(parent_id)))

    messages, variant = await asyncio.to_thread(read)
    return replies.start(session, parent_id, get_assistant().reply(messages, model=model, variant=variant), reply_id)


async def answer(
    session: SessionFile, parent_id: str, reply_id: str | None = None, model: str | None = None
) -> dict[str, Any]:
    """The stored reply to the branch ending at ``parent_id``. If the caller is cancelled meanwhile (its
    client went away), the reply is still written and stored."""
    running = await start_reply(session, parent_id, reply_id, model)
    return await running.join()
