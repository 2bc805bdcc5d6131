"""The transcript partial's context (the newest page of the path and the composer): the session page
includes it, and a write answered to htmx gets it alone (``views.responses.moved_to``)."""

from __future__ import annotations

from typing import Any

from ..access.scoped import write_context
from ..assistants import get_assistant
from ..display.entries import EntryView
from ..display.markdown import markdown_text
from ..display.transcript import transcript_page, window_page
from ..forms import MessageForm
from ..services import claude
from ..sessionfiles.cursor import cursor_id, cursor_of
from ..sessionfiles.store import SessionFile
from ..sessionfiles.tree import path


def transcript_context(
    session: SessionFile,
    position: int | None,
    form: MessageForm | None = None,
    *,
    show: int | None = None,
) -> dict[str, Any]:
    """The transcript partial's context: the newest page of the path and the composer; or, for a jump,
    the page of the path to ``position`` that starts at ``show``, an entry of that path.

    ``cursor`` is how much of the file the page reflects, read before anything is rendered: the tab
    hands it to its websocket, which sends what was appended since (live/consumers.py), with
    ``cursor_id``, the line that ends there, by which the feed tells a file replaced meanwhile."""
    index = session.index
    cursor = cursor_of(index)
    position_id = index.ids[position] if position is not None else None
    if show is not None and position is not None:
        branch = path(index, position)
        page = window_page(session, branch, branch.index(show), position)
    else:
        page = transcript_page(session, position)
    return {
        "session_id": session.session_id,
        "cursor": cursor,
        "cursor_id": cursor_id(index),
        "page": page,
        "keep_choices": _keep_choices(page.entries),
        "position": position_id,
        "composer": form or MessageForm(initial={"parent": position_id}),
        "at_file_leaf": position == index.leaf_row,
        "claude_code": claude.is_mirrored(session.path),
        "read_only": index.read_only,
        **write_context(session),
        "assistant": get_assistant().info(),
    }


def _keep_choices(entries: list[EntryView]) -> list[tuple[str, str, bool]]:
    """Where compacted history may start: user messages on the page, newest first, as (id, text,
    selected). The default keeps the last two turns; the very first message has nothing before it."""
    users = [e for e in entries if e.kind == "user" and e.parent_id is not None]
    default = users[-2].id if len(users) >= 2 else (users[-1].id if users else None)
    return [
        (e.id, markdown_text(" ".join(b.text for b in e.blocks if b.kind == "text"), 80), e.id == default)
        for e in reversed(users)
    ]
