"""The whole session tree reduced to what a picture of it needs; the map page lays it out in the browser
(d3-hierarchy) from this data.

Only some entries become nodes: the roots, branch points, the first entry of each branch, branch ends,
labelled entries, the tab's position and the entries other files were forked from. Every straight
run between two of them folds into the edge that joins them, which carries its length. A session too
large for that to stay readable (more than MAX_NODES such nodes) folds more, in steps: first the
branch heads, then the labelled entries (listed below the map instead); the page says which.

One pass over the index's parent column finds them (no entry is decoded but the ones drawn), so the
data of a 100,000-entry session costs tens of milliseconds.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..sessionfiles.index import NO_PARENT
from ..sessionfiles.store import SessionFile
from ..sessionfiles.tree import ancestors
from .entries import preview

MAX_NODES = 300
START = ""  # the map's own root: the session itself, above its first entries
FOLD_LEVELS = (
    "every branch point, branch, branch end and labelled entry",
    "branch points, branch ends and labelled entries (the first entry of each branch is folded)",
    "branch points and branch ends only (labelled entries are listed below the map)",
)
_TOOL_ROLES = frozenset({"toolResult", "bashExecution"})


@dataclass(frozen=True)
class Fork:
    """Another file forked from this session, drawn below the entry it was forked at."""

    session_id: str
    title: str
    at: str | None  # the last entry it copied (None: not found here; drawn under the start)
    leaf: str | None  # its own position, what a comparison with it names


@dataclass
class MapNode:
    id: str  # an entry id; START; or "fork:<session id>"
    parent: str | None  # the nearest drawn ancestor (None for START)
    kind: str  # start | user | assistant | tool | other | fork
    folded: int = 0  # entries folded into the edge from ``parent``
    label: str | None = None
    text: str = ""
    on_path: bool = False
    is_position: bool = False
    branches: int = 0  # children, when this is a branch point …
    first_branch: str = ""  # … and the first of them (a comparison of its branches names it)
    session_id: str = ""  # for forks: the other session …
    fork_leaf: str | None = None  # … and its position


@dataclass
class TreeMap:
    nodes: list[MapNode]
    entries: int
    level: int  # index into FOLD_LEVELS
    hidden_labels: list[tuple[str, str]] = field(default_factory=list)  # (entry id, label) not drawn

    @property
    def folding(self) -> str:
        return FOLD_LEVELS[self.level]


def tree_map(session: SessionFile, position: int | None, forks: Sequence[Fork] = ()) -> TreeMap:
    """The map of ``session`` seen from ``position`` (the tab's leaf: its path is highlighted)."""
    index = session.index
    parents = index.parents
    # Rows of this snapshot only (the columns may be longer); leaf markers and superseded rows have no
    # parent, so they count as nobody's child.
    children_count = Counter(parents[: len(index)])
    branch_points = {row for row, count in children_count.items() if count > 1 and row != NO_PARENT}
    ends = {row for row in set(range(len(index))).difference(children_count) if index.is_node(row)}
    heads = {child for row in branch_points for child in index.children(row)}
    labelled = {row for row in map(index.row, index.labels) if row is not None}
    fork_rows = {fork: index.row(fork.at) if fork.at is not None else None for fork in forks}
    structure = set(index.roots) | branch_points | ends | {row for row in fork_rows.values() if row is not None}
    if position is not None:
        structure.add(position)

    levels = (structure | heads | labelled, structure | labelled, structure)
    level = next((i for i, kept in enumerate(levels) if len(kept) <= MAX_NODES), len(levels) - 1)
    kept = levels[level]

    on_path = set(ancestors(index, position)) if position is not None else set()
    drawn_parents = {row: _drawn_parent(parents, row, kept) for row in sorted(kept)}
    siblings: dict[int, list[int]] = {}
    for row, (above, _) in drawn_parents.items():
        siblings.setdefault(above, []).append(row)
    rows = [row for group in siblings.values() for row in index.order_children(group)]  # pi's child order
    previews = [preview(entry, 160) for entry in session.entries(rows)]
    nodes = [MapNode(START, None, "start")]
    for row, text in zip(rows, previews):
        above, folded = drawn_parents[row]
        label = index.labels.get(index.ids[row])
        nodes.append(
            MapNode(
                id=index.ids[row],
                parent=index.ids[above] if above != NO_PARENT else START,
                kind=_kind(index.types[row], index.roles[row]),
                folded=folded,
                label=label[0] if label else None,
                text=text,
                on_path=row in on_path,
                is_position=row == position,
                branches=children_count[row] if row in branch_points else 0,
                first_branch=index.ids[index.children(row)[0]] if row in branch_points else "",
            )
        )
    for fork, at in fork_rows.items():
        nodes.append(
            MapNode(
                id=f"fork:{fork.session_id}",
                parent=index.ids[at] if at is not None else START,
                kind="fork",
                text=fork.title,
                session_id=fork.session_id,
                fork_leaf=fork.leaf,
            )
        )
    hidden = sorted(labelled - kept)
    return TreeMap(
        nodes=nodes,
        entries=index.node_count,
        level=level,
        hidden_labels=[(index.ids[row], index.labels[index.ids[row]][0]) for row in hidden],
    )


def _drawn_parent(parents: array[int], row: int, kept: set[int]) -> tuple[int, int]:
    """The nearest kept ancestor of ``row`` and how many entries lie between them. Rows between two
    kept ones have one child each, so every row is walked over once in all."""
    steps = 0
    above = parents[row]
    while above != NO_PARENT and above not in kept:
        steps += 1
        above = parents[above]
    return above, steps


def _kind(entry_type: str, role: str | None) -> str:
    if entry_type != "message":
        return "other"
    if role in ("user", "assistant"):
        return role
    return "tool" if role in _TOOL_ROLES else "other"
