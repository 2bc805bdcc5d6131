"""Writes that annotate where a tab stands: the model and thinking level the next reply uses, a label,
the session's name. None of them may start a branch.

Each goes where the tab stands as the server knows it: the entry the tab named, followed through what
was appended under it since the page's cursor (``SessionFile.append``'s ``after``, the rule the push
path moves tabs by), so that a tab a moment behind (the reply it was shown being written, stored a
moment ago) writes below that reply, not beside it. While a reply is still being written where the tab
stands, the entry goes below the reply, in the write that stores it (``replies.chain``): the change
applies from the next message on, and the reply, still being written, is not left on a branch of its
own (docs/format.md §5.2).
"""

from __future__ import annotations

import asyncio
from typing import Any

from ..sessionfiles.entries import Draft
from ..sessionfiles.store import SessionFile
from ..sessionfiles.tree import followed
from . import replies


async def annotate(
    session: SessionFile, draft: Draft, at: str | None, cursor: int | None, reply: str | None = None
) -> dict[str, Any] | None:
    """Append ``draft`` where the tab that stood on ``at`` (None: the file's leaf) as of byte ``cursor``
    of the file stands now; ``reply``: the reply the tab shows being written there. Returns the entry,
    or None when the reply being written there took it (it is written below the reply, when stored)."""
    standing = await asyncio.to_thread(_standing, session, at, cursor)
    if await replies.chain(session.session_id, standing, draft, reply):
        return None
    return await asyncio.to_thread(session.append, draft, at if at else standing, after=cursor)


def _standing(session: SessionFile, at: str | None, cursor: int | None) -> str | None:
    """Where the tab stands now (an unknown ``at`` is refused as the append would refuse it)."""
    session.refresh()
    index = session.index
    if not at:
        return index.leaf_id
    row = session.row_of(at)
    now = row if cursor is None else followed(index, row, cursor)
    return None if now is None else index.ids[now]
