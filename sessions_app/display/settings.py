"""Which model and thinking level a branch is on, as the composer's pickers show them.

The session context decides both (``build_session_context``: the last ``model_change`` or assistant
reply on the path names the model, the last ``thinking_level_change`` the level). Building the whole
context decodes the whole path; the pickers need two entries of it, found from the index alone and
decoded on their own.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..sessionfiles.description import describe
from ..sessionfiles.store import SessionFile
from ..sessionfiles.tree import ancestors

THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh")


@dataclass(frozen=True)
class BranchSettings:
    provider: str | None = None  # None: nothing on the branch names a model yet
    model: str | None = None
    thinking_level: str = "off"


def branch_settings(session: SessionFile, row: int | None) -> BranchSettings:
    """The model and thinking level in force at ``row`` (the defaults before the first entry)."""
    if row is None:
        return BranchSettings()
    index = session.index
    types, roles = index.types, index.roles
    model_row = thinking_row = None
    for current in ancestors(index, row):
        kind = types[current]
        if model_row is None and (kind == "model_change" or (kind == "message" and roles[current] == "assistant")):
            model_row = current
        elif thinking_row is None and kind == "thinking_level_change":
            thinking_row = current
        if model_row is not None and thinking_row is not None:
            break
    provider = model = None
    if model_row is not None:
        named = describe(session.entries([model_row])[0])  # an assistant reply or a model change
        provider, model = named.provider or None, named.model or None
    level = "off"
    if thinking_row is not None:
        level = describe(session.entries([thinking_row])[0]).text or "off"
    return BranchSettings(provider, model, level)
