"""The tree panel: the whole session as flat rows (never a recursive template), straight runs folded.

Filters follow pi's ``/tree``: *default* hides bookkeeping entries (labels, custom state, model and
thinking changes, names, usage, context edits) and assistant turns that only call tools; *user* keeps
user messages; *labeled* keeps labelled entries; *all* keeps everything. A hidden entry's children hang
from its nearest shown ancestor. Indentation grows only where the tree branches, so a 10,000-turn chat
stays one column; within a straight run only its ends, labelled entries and the active position are
shown, the rest collapse into "+N".
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass

from ..sessionfiles.index import NO_PARENT
from ..sessionfiles.lines import only_tool_calls
from ..sessionfiles.store import SessionFile
from ..sessionfiles.tree import ancestors
from .entries import preview

FILTERS = ("default", "user", "labeled", "all")
_DEFAULT_HIDDEN = frozenset(
    {"label", "custom", "model_change", "thinking_level_change", "session_info", "usage", "context_edit"}
)


@dataclass
class TreeRow:
    depth: int
    entry_id: str = ""
    kind: str = ""  # user | assistant | tool | … | fold
    text: str = ""
    label: str | None = None
    on_path: bool = False
    is_position: bool = False
    folded: int = 0  # for a fold row: how many entries it stands for …
    first_id: str = ""  # … from this one
    last_id: str = ""  # … to this one (opened with ``run_rows``)


def tree_rows(session: SessionFile, position: int | None, mode: str = "default") -> list[TreeRow]:
    """Rows to render, in display order, for the tree as seen from ``position`` (the tab's leaf)."""
    index = session.index
    on_path = set(ancestors(index, position)) if position is not None else set()
    shown = _shown(session, mode, position)
    children = _shown_children(session, shown)
    keep = {row for row in shown if index.ids[row] in index.labels}
    if position in shown:
        keep.add(position)

    layout: list[tuple[int, int] | tuple[list[int], int]] = []  # (row, depth) or (folded rows, depth)
    tops = children[NO_PARENT]
    stack = [(root, 0 if len(tops) == 1 else 1) for root in reversed(tops)]
    while stack:
        row, depth = stack.pop()
        run = [row]
        while len(children.get(run[-1], ())) == 1:
            run.append(children[run[-1]][0])
        layout.extend(_fold_run(run, depth, keep))
        stack.extend((child, depth + 1) for child in reversed(children.get(run[-1], [])))

    return _render(session, layout, on_path, position)


def run_rows(session: SessionFile, first: int, last: int, position: int | None, mode: str, depth: int) -> list[TreeRow]:
    """The rows a fold stood for: the shown entries from ``first`` down to ``last`` (a straight run)."""
    index = session.index
    shown = _shown(session, mode, position)
    run: list[int] = []
    for row in ancestors(index, last):
        if row in shown:
            run.append(row)
        if row == first:
            break
    else:
        return []  # ``first`` is not above ``last``: a stale fold
    run.reverse()
    on_path = set(ancestors(index, position)) if position is not None else set()
    return _render(session, [(row, depth) for row in run], on_path, position)


def _render(session: SessionFile, layout: list, on_path: set[int], position: int | None) -> list[TreeRow]:
    """TreeRows for a layout, decoding only the entries that are displayed."""
    index = session.index
    displayed = [item for item, _ in layout if isinstance(item, int)]
    previews = dict(zip(displayed, (preview(entry) for entry in session.entries(displayed))))
    rows: list[TreeRow] = []
    for item, depth in layout:
        if not isinstance(item, int):
            rows.append(
                TreeRow(
                    depth=depth, kind="fold", folded=len(item), first_id=index.ids[item[0]], last_id=index.ids[item[-1]]
                )
            )
            continue
        label = index.labels.get(index.ids[item])
        rows.append(
            TreeRow(
                depth=depth,
                entry_id=index.ids[item],
                kind=str(index.roles[item] if index.types[item] == "message" else index.types[item]),
                text=previews[item],
                label=label[0] if label else None,
                on_path=item in on_path,
                is_position=item == position,
            )
        )
    return rows


def _fold_run(run: list[int], depth: int, keep: set[int]) -> list:
    """A straight run shows its ends and the rows in ``keep``; each gap between them becomes one fold."""
    out: list = []
    hidden: list[int] = []
    last = len(run) - 1
    for i, row in enumerate(run):
        if i in (0, last) or row in keep:
            if hidden:
                out.append((hidden, depth))
                hidden = []
            out.append((row, depth))
        else:
            hidden.append(row)
    return out


def _shown(session: SessionFile, mode: str, position: int | None) -> set[int]:
    index = session.index
    nodes = [row for row in range(len(index)) if index.is_node(row)]
    if mode == "all":
        return set(nodes)
    if mode == "user":
        return {row for row in nodes if index.types[row] == "message" and index.roles[row] == "user"}
    if mode == "labeled":
        return {row for row in nodes if index.ids[row] in index.labels}
    shown = {row for row in nodes if index.types[row] not in _DEFAULT_HIDDEN}
    assistants = [row for row in shown if index.roles[row] == "assistant" and row != position]
    for row, line in zip(assistants, session.raw_lines(assistants)):
        if only_tool_calls(line):
            shown.discard(row)
    return shown


def _shown_children(session: SessionFile, shown: set[int]) -> dict[int, list[int]]:
    """Children among shown rows: each shown row hangs from its nearest shown ancestor (NO_PARENT for top),
    siblings in the tree's order (timestamp, then file order)."""
    index = session.index
    children: dict[int, list[int]] = {NO_PARENT: []}
    if index.forward_parents:  # a parent after its child: walk the tree itself
        stack = [(root, NO_PARENT) for root in reversed(index.roots)]
        while stack:
            row, above = stack.pop()
            if row in shown:
                children.setdefault(above, []).append(row)
                above = row
            stack.extend((child, above) for child in reversed(index.children(row)))
        return children
    # Parents precede children (files pi and pitree write): one pass in file order.
    parents = index.parents
    nearest = array("l", [NO_PARENT]) * len(index)  # each row's nearest shown ancestor-or-self
    for row in range(len(index)):
        if not index.is_node(row):
            continue
        parent = parents[row]
        above = NO_PARENT if parent == NO_PARENT else nearest[parent]
        if row in shown:
            children.setdefault(above, []).append(row)
            nearest[row] = row
        else:
            nearest[row] = above
    for above, siblings in children.items():
        if len(siblings) > 1:
            children[above] = index.order_children(siblings)
    return children
