"""The tree panel: the session's structure as flat rows (never a recursive template), drawn with pi's
``/tree`` guide lines, costing the same in a 1k- and a 100k-entry session.

Filters follow pi's ``/tree``: *default* hides bookkeeping entries (labels, custom state, model and
thinking changes, names, usage, context edits) and assistant turns that only call tools; *user* keeps
user messages; *labeled* keeps labelled entries; *all* keeps everything. A hidden entry's children hang
from its nearest shown ancestor.

How it stays cheap: a chat is mostly one long straight run. The shown entries of a filter are kept
as a ``Skeleton`` of *runs* (maximal chains where each entry has one shown child) linked at branch
points. It is built once per file and filter, then grown by the lines appended since (a line never
changes, so nothing already built is redone). A request then touches only what it draws: the runs
on the tab's path (a handful, however long), the ends of every run (so every branch point and branch
shows), labelled entries, and the few entries just above the tab's position; each gap in a run folds
into a "+N" row that loads on demand. Previews are cached per stored line.

Indentation grows only where the tree branches. Children of a branch point are drawn with ``├─``/``└─``
and the rows that continue them under ``│``, so siblings and continuations are told apart; at each
branch point the branch holding the tab's position comes first, as in pi. A branch point names the
branches its "Compare" opens side by side (chosen as the navigator chooses them).
"""

from __future__ import annotations

import threading
from array import array
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from ..sessionfiles.index import NO_PARENT, SessionIndex
from ..sessionfiles.lines import only_tool_calls
from ..sessionfiles.store import SessionFile
from .compare import chosen_branches
from .entries import preview

FILTERS = ("default", "user", "labeled", "all")
_DEFAULT_HIDDEN = frozenset(
    {"label", "custom", "model_change", "thinking_level_change", "session_info", "usage", "context_edit"}
)
NEAR_POSITION = 3  # entries shown unfolded just above the tab's position in its run
RUN_CHUNK = 100  # a "+N" fold opens this many entries at a time
SKELETONS_KEPT = 8  # (file, filter) skeletons cached per process
PREVIEW_WIDTH = 80

TEE, ELBOW, PIPE, BLANK = "├─ ", "└─ ", "│  ", "   "


class TreeRow(NamedTuple):
    """One drawn row: an entry, or a fold standing for a gap in a run (``folded`` entries). A tuple:
    a panel makes hundreds, and each is a key of the rendered rows' cache."""

    depth: int  # branch levels above (aria-level − 1)
    guide: str  # the glyphs drawn before it ("│  ├─ ")
    entry_id: str = ""
    kind: str = ""  # user | assistant | toolResult | compaction | … | fold
    text: str = ""
    label: str | None = None
    on_path: bool = False
    is_position: bool = False
    compare: tuple[str, ...] = ()  # for a branch point: the heads of the branches its "Compare" opens
    folded: int = 0  # for a fold row: how many entries it stands for …
    first_id: str = ""  # … from this one
    last_id: str = ""  # … to this one (opened with ``run_rows``)

    @property
    def branches(self) -> bool:
        """A branch point: its branches follow, and can be folded away in the browser."""
        return bool(self.compare)


@dataclass
class Skeleton:
    """The shown rows of one filter over the first ``length`` rows of an index, as runs.

    ``up[row]``: the nearest shown ancestor-or-self (NO_PARENT: none); ``run_of[row]``/``place[row]``:
    the run a shown row is in and where (-1 for hidden rows); ``runs[r]``: a run's rows, in order;
    ``forks[row]``: the runs hanging from a branch point (NO_PARENT: the top), in pi's child order."""

    mode: str
    index: SessionIndex
    length: int = 0
    node_count: int = 0
    up: array = field(default_factory=lambda: array("l"))
    run_of: array = field(default_factory=lambda: array("l"))
    place: array = field(default_factory=lambda: array("l"))
    runs: list[array] = field(default_factory=list)
    forks: dict[int, list[int]] = field(default_factory=dict)

    def run_parent(self, run: int) -> int:
        """The branch point a run hangs from (NO_PARENT for a top run)."""
        first = self.runs[run][0]
        parent = self.index.parents[first]
        return NO_PARENT if parent == NO_PARENT else self.up[parent]

    def grow(self, session: SessionFile, index: SessionIndex) -> None:
        """Take in the rows ``index`` has beyond ``self.length``, parents before children: in file
        order, or, in the rare file where a parent comes after its child, in a walk of the tree."""
        start, end = self.length, len(index)
        self.index = index
        order: Iterable[int] = range(start, end) if not index.forward_parents else _tree_order(index)
        shown = _shown_rows(session, index, self.mode, range(start, end))
        for column in (self.up, self.run_of, self.place):
            column.extend(array("l", [-1]) * (end - start))
        parents, up, run_of, place = index.parents, self.up, self.run_of, self.place
        touched: set[int] = set()
        for row in order:
            parent = parents[row]
            above = NO_PARENT if parent == NO_PARENT else up[parent]
            if row not in shown:
                up[row] = above
                continue
            up[row] = row
            if above != NO_PARENT and above not in self.forks:
                run = self.runs[run_of[above]]
                if place[above] == len(run) - 1:  # the end of its run: the run goes on
                    run_of[row], place[row] = run_of[above], len(run)
                    run.append(row)
                    continue
                self._split(above)  # a second child: ``above`` becomes a branch point
            run_of[row], place[row] = len(self.runs), 0
            self.forks.setdefault(above, []).append(len(self.runs))
            self.runs.append(array("l", [row]))
            touched.add(above)
        for point in touched:
            if len(self.forks[point]) > 1:
                self.forks[point] = _ordered_runs(index, self.runs, self.forks[point])
        self.length = end
        self.node_count = index.node_count

    def _split(self, point: int) -> None:
        """Cut the run holding ``point`` after it: what followed becomes the first run under it."""
        run = self.runs[self.run_of[point]]
        cut = self.place[point] + 1
        tail = run[cut:]
        del run[cut:]
        new = len(self.runs)
        self.runs.append(tail)
        for place, row in enumerate(tail):
            self.run_of[row] = new
            self.place[row] = place
        # The branch point that ended the old run now ends the new one: its forks are unchanged.
        self.forks[point] = [new]


def _tree_order(index: SessionIndex) -> list[int]:
    """Every node, parents before children (a depth-first walk)."""
    order: list[int] = []
    stack = list(reversed(index.roots))
    while stack:
        row = stack.pop()
        order.append(row)
        stack.extend(reversed(index.children(row)))
    return order


def _ordered_runs(index: SessionIndex, runs: list[array], ids: list[int]) -> list[int]:
    first = {runs[r][0]: r for r in ids}
    return [first[row] for row in index.order_children(list(first))]


def _shown_rows(session: SessionFile, index: SessionIndex, mode: str, rows: Iterable[int]) -> set[int]:
    """Which of ``rows`` the filter shows."""
    types, roles = index.types, index.roles
    nodes = [row for row in rows if index.is_node(row)]
    if mode == "all":
        return set(nodes)
    if mode == "user":
        return {row for row in nodes if types[row] == "message" and roles[row] == "user"}
    if mode == "labeled":
        labels = index.labels
        return {row for row in nodes if index.ids[row] in labels}
    shown = {row for row in nodes if types[row] not in _DEFAULT_HIDDEN}
    assistants = [row for row in shown if types[row] == "message" and roles[row] == "assistant"]
    for row, line in zip(assistants, session.raw_lines(assistants)):
        if only_tool_calls(line):
            shown.discard(row)
    return shown


# ------------------------------------------------------------------------------------ the cache

_skeletons: OrderedDict[tuple[Path, str], Skeleton] = OrderedDict()
_lock = threading.Lock()


def skeleton(session: SessionFile, mode: str) -> Skeleton:
    """The filter's skeleton for the session as it is now: cached, grown by what was appended since.

    Built again from scratch when the index is not an extension of the one it reflects: the file was
    replaced or rebuilt (new columns), earlier rows changed (a late parent, a duplicate id), or, for
    the *labeled* filter, a label line came (labels change which old rows show)."""
    index = session.index
    key = (session.path, mode)
    with _lock:
        found = _skeletons.get(key)
        if found is not None and not _extends(found, index):
            found = None
        if found is None:
            found = Skeleton(mode, index)
        if found.length < len(index):
            found.grow(session, index)
        _skeletons[key] = found
        _skeletons.move_to_end(key)
        while len(_skeletons) > SKELETONS_KEPT:
            _skeletons.popitem(last=False)
        return found


def _extends(built: Skeleton, index: SessionIndex) -> bool:
    old = built.index
    if index.ids is not old.ids or len(index) < built.length or index.forward_parents:
        return False
    new_nodes = sum(1 for row in range(built.length, len(index)) if index.is_node(row))
    if index.node_count != built.node_count + new_nodes:
        return False  # an older row was shadowed by a duplicate id
    return not (built.mode == "labeled" and len(index) != built.length)


# ------------------------------------------------------------------------------------ drawing


@dataclass
class _View:
    """One request's look at a skeleton: the tab's position, the runs on its path, and (filled as
    they are asked for) the order of each branch point's runs and each run's guide glyphs."""

    skel: Skeleton
    position: int  # the shown row standing for the tab's position (NO_PARENT: none)
    path_runs: dict[int, int]  # run on the path → the last place in it that is on the path
    _children: dict[int, list[int]] = field(default_factory=dict)
    _guides: dict[int, tuple[str, str]] = field(default_factory=dict)

    def on_path(self, run: int, place: int) -> bool:
        last = self.path_runs.get(run)
        return last is not None and place <= last

    def children(self, point: int) -> list[int]:
        """The runs under a branch point, the one holding the path first (as pi orders them)."""
        found = self._children.get(point)
        if found is None:
            runs = self.skel.forks.get(point, [])
            first = [r for r in runs if r in self.path_runs]
            found = self._children[point] = first + [r for r in runs if r not in self.path_runs] if first else runs
        return found

    def guide(self, run: int) -> tuple[str, str]:
        """(glyphs before a run's first row, glyphs before its other rows and everything under it)."""
        found = self._guides.get(run)
        if found is not None:
            return found
        chain = [run]  # the run and the runs above it whose guides are not known yet, nearest first
        while (point := self.skel.run_parent(chain[-1])) != NO_PARENT and self.skel.run_of[point] not in self._guides:
            chain.append(self.skel.run_of[point])
        for current in reversed(chain):
            point = self.skel.run_parent(current)
            above = "" if point == NO_PARENT else self._guides[self.skel.run_of[point]][1]
            siblings = self.children(point)
            if len(siblings) > 1:
                last = siblings[-1] == current
                self._guides[current] = (above + (ELBOW if last else TEE), above + (BLANK if last else PIPE))
            else:
                self._guides[current] = (above, above)
        return self._guides[run]


def _view(skel: Skeleton, position: int | None) -> _View:
    if position is None or position >= skel.length:
        return _View(skel, NO_PARENT, {})
    shown = skel.up[position]
    path_runs: dict[int, int] = {}
    point = shown
    while point != NO_PARENT:
        run = skel.run_of[point]
        path_runs[run] = skel.place[point]
        point = skel.run_parent(run)
    return _View(skel, shown, path_runs)


def tree_rows(session: SessionFile, position: int | None, mode: str = "default") -> list[TreeRow]:
    """Rows to draw, in display order, for the tree as seen from ``position`` (the tab's entry)."""
    skel = skeleton(session, mode)
    view = _view(skel, position)
    index = skel.index
    keep: dict[int, set[int]] = {}  # run → places drawn besides its ends
    for target in index.labels:
        row = index.row(target)
        if row is not None and row < skel.length and skel.run_of[row] >= 0:
            keep.setdefault(skel.run_of[row], set()).add(skel.place[row])
    if view.position != NO_PARENT:
        place = skel.place[view.position]
        keep.setdefault(skel.run_of[view.position], set()).update(range(max(place - NEAR_POSITION, 0), place + 1))

    layout: list[tuple[int, int, int]] = []  # (run, first place, last place): one entry, or a fold
    stack = list(reversed(view.children(NO_PARENT)))
    while stack:
        run = stack.pop()
        rows = skel.runs[run]
        previous = -1
        for place in sorted({0, len(rows) - 1} | keep.get(run, set())):
            if place - previous > 1:
                layout.append((run, previous + 1, place - 1))
            layout.append((run, place, place))
            previous = place
        stack.extend(reversed(view.children(rows[-1])))
    return _draw(session, view, layout)


def run_rows(session: SessionFile, first: int, last: int, position: int | None, mode: str) -> list[TreeRow]:
    """The rows a "+N" fold stood for: its run from ``first`` to ``last``, ``RUN_CHUNK`` at a time
    (what remains of a long fold folds again). Empty when the two are not one run any more."""
    skel = skeleton(session, mode)
    if first >= skel.length or last >= skel.length:
        return []
    run = skel.run_of[first]
    if run < 0 or skel.run_of[last] != run or skel.place[first] > skel.place[last]:
        return []
    start, end = skel.place[first], skel.place[last]
    layout = [(run, place, place) for place in range(start, min(end + 1, start + RUN_CHUNK))]
    if end >= start + RUN_CHUNK:
        layout.append((run, start + RUN_CHUNK, end))
    return _draw(session, _view(skel, position), layout)


def _draw(session: SessionFile, view: _View, layout: list[tuple[int, int, int]]) -> list[TreeRow]:
    """TreeRows for a layout; previews come from the cache, decoding only entries never drawn before."""
    skel, index = view.skel, view.skel.index
    runs, ids, types, roles, labels = skel.runs, index.ids, index.types, index.roles, index.labels
    texts = _previews(session, [runs[run][a] for run, a, b in layout if a == b])
    drawn: list[TreeRow] = []
    current = -1
    for run, a, b in layout:
        if run != current:
            current, rows = run, runs[run]
            head, rest = view.guide(run)
            depth = len(rest) // len(PIPE)
            path_end = view.path_runs.get(run, -1)
        if a != b:
            drawn.append(
                TreeRow(
                    depth,
                    rest,
                    kind="fold",
                    on_path=a <= path_end,
                    folded=b - a + 1,
                    first_id=ids[rows[a]],
                    last_id=ids[rows[b]],
                )
            )
            continue
        row = rows[a]
        entry_id = ids[row]
        label = labels.get(entry_id)
        kind = roles[row] if types[row] == "message" else types[row]
        drawn.append(
            TreeRow(
                depth,
                head if a == 0 else rest,
                entry_id,
                str(kind),
                texts[row],
                label[0] if label else None,
                a <= path_end,
                row == view.position,
                _compared(view, row) if a == len(rows) - 1 else (),
            )
        )
    return drawn


def _compared(view: _View, point: int) -> tuple[str, ...]:
    """The entries a branch point's "Compare" names (none for a row that is not one): the first
    entry of each branch drawn under it, chosen as the navigator chooses. The branch heads, not the
    file's siblings: under a filter a row's branches may part at hidden entries below it."""
    runs = view.skel.runs
    forks = view.skel.forks.get(point, [])
    if len(forks) < 2:
        return ()
    heads = [runs[run][0] for run in forks]
    on_path = {runs[run][0] for run in forks if run in view.path_runs}
    return tuple(view.skel.index.ids[row] for row in chosen_branches(heads, on_path))


_previews_cache: OrderedDict[tuple[Path, int, int], str] = OrderedDict()
PREVIEWS_KEPT = 20_000


def _previews(session: SessionFile, rows: list[int]) -> dict[int, str]:
    """Plain-text previews, cached by stored line (a line never changes)."""
    index = session.index
    found: dict[int, str] = {}
    missing: list[int] = []
    with _lock:
        for row in rows:
            key = (session.path, index.offsets[row], index.lengths[row])
            text = _previews_cache.get(key)
            if text is None:
                missing.append(row)
            else:
                found[row] = text
    if missing:
        fresh = {row: preview(entry, PREVIEW_WIDTH) for row, entry in zip(missing, session.entries(missing))}
        with _lock:
            for row, text in fresh.items():
                _previews_cache[(session.path, index.offsets[row], index.lengths[row])] = text
            while len(_previews_cache) > PREVIEWS_KEPT:
                _previews_cache.popitem(last=False)
        found.update(fresh)
    return found
