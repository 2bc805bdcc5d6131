"""One chat turn: the assistant answers the context at an entry, its text streams to the session's
open tabs through the channel layer while it is written, and the finished reply is appended once.

Only the chunks of a reply in progress travel through the channel layer directly: they are not in
the file yet. Everything stored goes through the store's append like every other write.
"""

from __future__ import annotations

import asyncio
from typing import Any

from channels.layers import get_channel_layer

from ..assistants import get_assistant
from ..live.groups import session_group
from ..sessionfiles.context import convert_to_llm
from ..sessionfiles.store import SessionFile


async def answer(session: SessionFile, parent_id: str, stream_token: str | None = None) -> dict[str, Any]:
    """Append the assistant's reply to the branch ending at ``parent_id`` and return the new entry.

    Backend failures (refused, timeout, HTTP errors) come back as an assistant entry with stopReason
    ``error`` and an ``errorMessage``, as pi stores them; the user's message stays either way.
    """
    context = await asyncio.to_thread(session.context, parent_id)
    stream = get_assistant().stream(convert_to_llm(context.messages))
    layer = get_channel_layer() if stream_token else None
    group = session_group(session.session_id)
    async for chunk in stream:
        if layer is not None:
            await layer.group_send(group, {"type": "reply.chunk", "stream": stream_token, "text": chunk})
    return await asyncio.to_thread(session.append, stream.reply.draft(), parent_id)
