"""Read-model queries over an index: paths, siblings, where a branch was last left, pi's tree shape.

Every walk here is iterative: chat trees are as deep as they are long, and the index guarantees that
following ``parents`` always ends (cycles and self-parents were cut when the rows were linked).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from itertools import islice
from typing import Any

from .index import NO_PARENT, SessionIndex


def ancestors(index: SessionIndex, row: int) -> Iterator[int]:
    """``row``, its parent, its grandparent … up to its root."""
    parents = index.parents
    while row != NO_PARENT:
        yield row
        row = parents[row]


def path(index: SessionIndex, row: int | None) -> list[int]:
    """Rows from the root to ``row`` (empty for None: the position before the first entry)."""
    if row is None:
        return []
    rows = list(ancestors(index, row))
    rows.reverse()
    return rows


def path_tail(index: SessionIndex, row: int | None, count: int) -> list[int]:
    """The last ``count`` rows of the path to ``row``, root side first: ``count`` steps up from ``row``,
    so its cost does not depend on how long the path is."""
    if row is None or count <= 0:
        return []
    rows = list(islice(ancestors(index, row), count))
    rows.reverse()
    return rows


def siblings(index: SessionIndex, row: int) -> list[int]:
    """The rows sharing ``row``'s parent, oldest first; the roots when ``row`` is one."""
    parent = index.parents[row]
    return list(index.roots) if parent == NO_PARENT else index.children(parent)


def subtree(index: SessionIndex, row: int) -> list[int]:
    """``row`` and every node below it, depth first."""
    found: list[int] = []
    stack = [row]
    while stack:
        node = stack.pop()
        found.append(node)
        stack.extend(index.children(node))
    return found


def latest_position_under(index: SessionIndex, row: int) -> int:
    """Where the user last was inside ``row``'s branch: the newest entry under it, or a later ``leaf``
    marker that moved back into it. Switching to a sibling branch resumes there."""
    members = subtree(index, row)
    newest = max(members)
    inside = set(members)
    for marker in reversed(index.leaf_rows):
        if marker < newest:
            break
        target = index.leaf_target_row(marker)
        if target is not None and target in inside:
            return target
    return newest


def followed(index: SessionIndex, row: int | None, cursor: int) -> int | None:
    """Where a tab stands that stood on ``row`` (None: before the first entry) when its page reflected
    the file up to byte ``cursor``, once it has followed what was appended since: an entry appended
    under where it stands continues its branch, and the tab moves onto it. The push path applies this
    rule to each tab as lines arrive (``live``), and a write from a tab applies it under the file's
    lock, so that a page a moment behind (the reply it was shown being written, just stored) never
    writes beside what it was about to show."""
    parents, first = index.parents, bisect.bisect_left(index.offsets, cursor, 0, len(index))
    at = NO_PARENT if row is None else row
    for later in range(first, len(index)):
        if parents[later] == at and index.is_node(later):
            at = later
    return None if at == NO_PARENT else at


def tree(index: SessionIndex) -> list[dict[str, Any]]:
    """pi's ``getTree()`` shape: ``[{id, type, label?, children}]``, roots in file order."""
    labels = index.labels

    def node(row: int) -> dict[str, Any]:
        entry_id = index.ids[row]
        out: dict[str, Any] = {"id": entry_id, "type": index.types[row]}
        if entry_id in labels:
            out["label"] = labels[entry_id][0]
        out["children"] = []
        return out

    top = [node(row) for row in index.roots]
    stack = list(zip(index.roots, top))
    while stack:
        row, out = stack.pop()
        for child in index.children(row):
            child_out = node(child)
            out["children"].append(child_out)
            stack.append((child, child_out))
    return top
