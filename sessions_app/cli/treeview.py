"""The whole tree of a session as text lines, like pi's ``/tree``: a straight run of entries stays at one
indent; only where an entry has several children (or the file several roots) do the branches get
connectors and indentation. Iterative throughout — chat trees are as deep as they are long.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from ..sessionfiles.index import SessionIndex
from ..sessionfiles.tree import path as tree_path
from .transcript import node_line

ON_PATH = "* "
OFF_PATH = "  "
LEAF_NOTE = "  ← leaf"
_BATCH = 2000


def layout(index: SessionIndex) -> list[tuple[int, str]]:
    """Every tree node as ``(row, prefix)`` in display order (depth first, children in pi's order)."""
    out: list[tuple[int, str]] = []
    stack: list[tuple[int, str, str]] = _branches(index.roots, "", top=True)
    while stack:
        row, prefix, below = stack.pop()
        out.append((row, prefix))
        children = index.children(row)
        if len(children) == 1:
            stack.append((children[0], below, below))
        elif children:
            stack.extend(_branches(children, below))
    return out


def _branches(rows: Sequence[int], below: str, *, top: bool = False) -> list[tuple[int, str, str]]:
    """Stack items for sibling ``rows`` (reversed, so the first pops first)."""
    if top and len(rows) == 1:
        return [(rows[0], "", "")]
    items = []
    last = len(rows) - 1
    for position, row in enumerate(rows):
        end = position == last
        items.append((row, below + ("└─ " if end else "├─ "), below + ("   " if end else "│  ")))
    items.reverse()
    return items


def tree_lines(
    index: SessionIndex,
    decode: Callable[[list[int]], list[dict[str, Any]]],
    *,
    width: int = 70,
) -> Iterator[str]:
    """One line per node: path marker, branch prefix, id, node line, label; the leaf marked.

    ``decode`` turns rows into entries (``SessionFile.entries``); it is called in batches so that a
    large file is never held decoded all at once.
    """
    leaf_row = index.leaf_row
    on_path = set(tree_path(index, leaf_row))
    labels = index.labels
    if leaf_row is None and index.node_count:
        yield "(the position is before the first entry: no active path)"
    nodes = layout(index)
    for start in range(0, len(nodes), _BATCH):
        batch = nodes[start : start + _BATCH]
        entries = decode([row for row, _ in batch])
        for (row, prefix), entry in zip(batch, entries):
            entry_id = index.ids[row]
            line = f"{ON_PATH if row in on_path else OFF_PATH}{prefix}{entry_id}  {node_line(entry, width)}"
            label = labels.get(entry_id)
            if label is not None:
                line += f"  (label: {label[0]})"
            if row == leaf_row:
                line += LEAF_NOTE
            yield line
