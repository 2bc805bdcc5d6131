"""Branches side by side: columns that start where the compared entries' paths part and run down to
each one, cut into turns and aligned row by row, with a summary per column and word diffs between two.

Entries are matched by id, not by row, so that entries of different files can be compared: a fork
copies the path it was made from with ids unchanged, so a fork and its source share a trunk exactly
as two branches of one file do. The trunk ends at the deepest entry whose id is on every compared path.

A turn is a user message and what follows it until the next user message; what a column holds before
its first user message (an answer to a prompt in the trunk, say) is its continuation, row 0. Turns of
the same number share a row, so a shorter branch leaves cells empty.
"""

from __future__ import annotations

import math
from collections.abc import Container, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..sessionfiles import tree
from ..sessionfiles.instants import iso_to_ms
from ..sessionfiles.store import SessionFile
from .entries import EntryView, present, preview
from .worddiff import Budget, WordDiff, word_diff

MIN_COLUMNS, MAX_COLUMNS = 2, 4
# A column shows at most this many entries after the trunk, the ones nearest the fork (the rest: open
# the branch itself). Rendering costs about a millisecond an entry: four full columns stay near a second.
MAX_COLUMN_ENTRIES = 250
# How many trunk entries are read to show its last turn above the columns.
TRUNK_TAIL = 12


@dataclass(frozen=True)
class Pick:
    """One compared entry, as the URL named it."""

    session: SessionFile
    row: int
    ref: str


@dataclass
class Turn:
    entries: list[EntryView]


@dataclass
class Summary:
    turns: int = 0
    tokens: int = 0
    cost: float = 0.0
    models: list[str] = field(default_factory=list)
    last_activity_ms: int | None = None
    labels: list[str] = field(default_factory=list)


@dataclass
class Column:
    number: int  # 1-based, as the page and the diff parameters count
    ref: str
    session_id: str
    read_only: bool
    end_id: str  # the column's last entry: where "continue on this branch" goes
    head_id: str | None  # its first entry after the trunk (None: the column adds nothing to it)
    continuation: Turn | None
    turns: list[Turn]
    summary: Summary
    not_shown: int = 0  # entries beyond MAX_COLUMN_ENTRIES


@dataclass
class Row:
    number: int  # 0: the continuation of the trunk's last turn
    cells: list[Turn | None]


@dataclass(frozen=True)
class Branch:
    """A child of the fork point, offered for picking which branches are compared."""

    id: str
    preview: str
    chosen: bool


@dataclass
class Comparison:
    columns: list[Column]
    rows: list[Row]
    trunk_session_id: str
    trunk_end_id: str | None  # None: the paths share nothing
    trunk_length: int
    trunk_tail: list[EntryView]
    branches: list[Branch]


def chosen_branches(branches: Sequence[int], on_path: Container[int]) -> list[int]:
    """Which of a branch point's branches (in tree order) its "Compare" opens: the one on the tab's
    path, then the others in tree order, MAX_COLUMNS in all; kept in tree order, so a branch has the
    same column whichever tab opened the comparison. The navigator, the map and the tree panel all
    choose here; the page's picker changes the choice."""
    current = [b for b in branches if b in on_path]
    others = [b for b in branches if b not in on_path][: MAX_COLUMNS - len(current)]
    chosen = set(current + others)
    return [b for b in branches if b in chosen]


def compare(picks: list[Pick], *, latest: bool = True) -> Comparison:
    """Columns for ``picks`` (2–4). With ``latest`` each column runs on to where its branch was last
    left (the newest position under the picked entry), else it stops at the picked entry."""
    ends = [tree.latest_position_under(p.session.index, p.row) if latest else p.row for p in picks]
    paths = [tree.path(p.session.index, end) for p, end in zip(picks, ends)]
    id_paths = [[p.session.index.ids[row] for row in rows] for p, rows in zip(picks, paths)]
    shared = set(id_paths[0]).intersection(*id_paths[1:])
    trunk_at = max((i for i, entry_id in enumerate(id_paths[0]) if entry_id in shared), default=-1)
    trunk_end = id_paths[0][trunk_at] if trunk_at >= 0 else None

    columns = []
    for number, (pick, rows, ids) in enumerate(zip(picks, paths, id_paths), start=1):
        start = ids.index(trunk_end) + 1 if trunk_end is not None else 0
        columns.append(_column(number, pick, rows[start:]))
    first = picks[0].session
    return Comparison(
        columns=columns,
        rows=_align(columns),
        trunk_session_id=first.session_id,
        trunk_end_id=trunk_end,
        trunk_length=trunk_at + 1,
        trunk_tail=_trunk_tail(first, paths[0][: trunk_at + 1]),
        branches=_branches(picks, paths, paths[0][trunk_at] if trunk_at >= 0 else None),
    )


def _column(number: int, pick: Pick, rows: list[int]) -> Column:
    session = pick.session
    index = session.index
    shown = rows[:MAX_COLUMN_ENTRIES]
    entries = session.entries(shown)
    views = [present(session, entry, row) for row, entry in zip(shown, entries)]
    visible = [view for view in views if view.kind != "hidden"]
    continuation, turns = _turns(visible)
    summary = _summary(entries)
    summary.turns = len(turns)
    on_branch = set(rows)
    labelled = sorted(row for row in map(index.row, index.labels) if row is not None and row in on_branch)
    summary.labels = [index.labels[index.ids[row]][0] for row in labelled]
    end = rows[-1] if rows else pick.row
    return Column(
        number=number,
        ref=pick.ref,
        session_id=session.session_id,
        read_only=index.read_only,
        end_id=index.ids[end],
        head_id=visible[0].id if visible else None,
        continuation=continuation,
        turns=turns,
        summary=summary,
        not_shown=len(rows) - len(shown),
    )


def _turns(views: list[EntryView]) -> tuple[Turn | None, list[Turn]]:
    """The entries before the first user message, and one turn per user message."""
    continuation: list[EntryView] = []
    turns: list[Turn] = []
    for view in views:
        if view.kind == "user":
            turns.append(Turn([view]))
        elif turns:
            turns[-1].entries.append(view)
        else:
            continuation.append(view)
    return (Turn(continuation) if continuation else None), turns


def _align(columns: list[Column]) -> list[Row]:
    rows = []
    if any(column.continuation for column in columns):
        rows.append(Row(0, [column.continuation for column in columns]))
    for number in range(1, max(len(column.turns) for column in columns) + 1):
        cells = [column.turns[number - 1] if number <= len(column.turns) else None for column in columns]
        rows.append(Row(number, cells))
    return rows


def _summary(entries: list[dict[str, Any]]) -> Summary:
    """Tokens, cost and models of the assistant messages, and the newest activity, of a column."""
    summary = Summary()
    for entry in entries:
        message = entry.get("message")
        moment = None
        if isinstance(message, dict):
            moment = _number(message.get("timestamp"))
            if message.get("role") == "assistant":
                tokens, cost = _usage(message.get("usage"))
                summary.tokens += tokens
                summary.cost += cost
                model = _model_name(message)
                if model and model not in summary.models:
                    summary.models.append(model)
        if moment is None:
            moment = iso_to_ms(entry.get("timestamp"))
        if moment is not None and (summary.last_activity_ms is None or moment > summary.last_activity_ms):
            summary.last_activity_ms = int(moment)
    return summary


def _usage(usage: Any) -> tuple[int, float]:
    """(tokens, cost) of a usage record: ``totalTokens`` (else the sum of its parts) and ``cost.total``.
    Anything that is not a finite, non-negative number counts as nothing."""
    if not isinstance(usage, dict):
        return 0, 0.0
    total = _number(usage.get("totalTokens"))
    if total is None:
        total = sum(_number(usage.get(key)) or 0 for key in ("input", "output", "cacheRead", "cacheWrite"))
    cost = usage.get("cost")
    money = _number(cost.get("total")) if isinstance(cost, dict) else None
    return int(total), money or 0.0


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) and value >= 0 else None


def _model_name(message: dict[str, Any]) -> str:
    model, provider = message.get("model"), message.get("provider")
    if not isinstance(model, str) or not model:
        return ""
    return f"{provider}/{model}" if isinstance(provider, str) and provider else model


def _trunk_tail(session: SessionFile, trunk: list[int]) -> list[EntryView]:
    """The trunk's last turn (from its last user message), or its last few entries when it has none."""
    rows = trunk[-TRUNK_TAIL:]
    views = [present(session, entry, row) for row, entry in zip(rows, session.entries(rows))]
    views = [view for view in views if view.kind != "hidden"]
    users = [i for i, view in enumerate(views) if view.kind == "user"]
    return views[users[-1] :] if users else views


def _branches(picks: list[Pick], paths: list[list[int]], fork_point: int | None) -> list[Branch]:
    """The branches at the fork point, to choose from, when every pick is in one file and there are
    more than two of them (two are already both shown)."""
    session = picks[0].session
    if any(pick.session is not session for pick in picks):
        return []
    index = session.index
    children = list(index.roots) if fork_point is None else index.children(fork_point)
    if len(children) <= MIN_COLUMNS:
        return []
    on_paths = {row for rows in paths for row in rows}
    previews = [preview(entry) for entry in session.entries(children)]
    return [Branch(index.ids[row], text, row in on_paths) for row, text in zip(children, previews)]


# ---------------------------------------------------------------------- word diff of two columns


@dataclass(frozen=True)
class TurnText:
    """What the word diff compares of a turn."""

    prompt: str = ""
    answer: str = ""
    tools: str = ""


@dataclass
class RowDiff:
    number: int
    parts: list[tuple[str, WordDiff]]  # (what: Prompt | Answer | Tool calls, its diff)


def turn_text(turn: Turn | None) -> TurnText:
    """The prompt, the answer text and the tool calls (name and arguments) of a turn."""
    if turn is None:
        return TurnText()
    prompt, answer, tools = [], [], []
    for view in turn.entries:
        for block in view.blocks:
            if view.kind == "user" and block.kind == "text":
                prompt.append(block.text)
            elif view.kind == "assistant" and block.kind == "text":
                answer.append(block.text)
            elif view.kind == "assistant" and block.kind == "toolCall":
                tools.append(f"{block.name} {block.arguments}")
    return TurnText("\n\n".join(prompt), "\n\n".join(answer), "\n\n".join(tools))


def diff_rows(comparison: Comparison, left: int, right: int, budget: Budget) -> list[RowDiff]:
    """Row by row, the word diff from column ``left`` to column ``right`` (0-based)."""
    out = []
    for row in comparison.rows:
        a, b = turn_text(row.cells[left]), turn_text(row.cells[right])
        parts = [
            (title, word_diff(x, y, budget))
            for title, x, y in (
                ("Prompt", a.prompt, b.prompt),
                ("Answer", a.answer, b.answer),
                ("Tool calls", a.tools, b.tools),
            )
            if x or y
        ]
        out.append(RowDiff(row.number, parts))
    return out
