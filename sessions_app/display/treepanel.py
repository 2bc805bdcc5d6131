"""The tree panel: the session's structure as flat rows (never a recursive template), drawn with pi's
``/tree`` guide lines, costing the same in a 1k- and a 100k-entry session.

Filters follow pi's ``/tree``: *default* hides bookkeeping entries (labels, custom state, model and
thinking changes, names, usage, context edits) and assistant turns that only call tools; *user* keeps
user messages; *labeled* keeps labelled entries; *all* keeps everything. A hidden entry's children hang
from its nearest shown ancestor.

The tab's path is never folded. At each branch point the branch holding the tab's position comes
first (as in pi), so the path from the top to the position is the start of the panel: it is drawn
whole, up to ``PATH_WINDOW`` rows ending at the position, and a longer one is paged like the
transcript (one "Show earlier entries of your branch" row at the top loads ``PATH_PAGE`` more each
time). Other branches show their ends, branch points and labelled entries, and each straight stretch
between them folds into a "+N" row that opens on demand. The panel is drawn again whenever the file
grows, with the folds its reader opened and the pages of the path they loaded open as they left them.

How it stays cheap: a chat is mostly one long straight run. The shown entries of a filter are kept
as a ``Skeleton`` of *runs* (maximal chains where each entry has one shown child) linked at branch
points. It is built once per file and filter, then grown by the lines appended since (a line never
changes, so nothing already built is redone). A request then touches only what it draws. Previews
are cached per stored line.

Several threads draw from the cached skeleton of a file while a request grows it, so a skeleton is
never changed once published: growing copies it (its columns are flat arrays: a few hundred
microseconds for 100k rows) and publishes the copy, and a drawing keeps the one it started with.

Indentation grows only where the tree branches. Children of a branch point are drawn with ``├─``/``└─``
and the rows that continue them under ``│``, so siblings and continuations are told apart. A branch
point names the branches its "Compare" opens side by side (chosen as the navigator chooses them).
"""

from __future__ import annotations

import threading
from array import array
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from ..sessionfiles.index import NO_PARENT, SessionIndex
from ..sessionfiles.lines import only_tool_calls
from ..sessionfiles.store import SessionFile
from .compare import chosen_branches
from .entries import preview

FILTERS = ("default", "user", "labeled", "all")
_DEFAULT_HIDDEN = frozenset(
    {"label", "custom", "model_change", "thinking_level_change", "session_info", "usage", "context_edit"}
)
PATH_WINDOW = 150  # rows of the tab's path drawn when the panel opens, ending at the position
PATH_PAGE = 150  # "Show earlier entries of your branch" draws this many more
RUN_CHUNK = 100  # a "+N" fold opens this many entries at a time
SKELETONS_KEPT = 8  # (file, filter) skeletons cached per process
PREVIEW_WIDTH = 80

TEE, ELBOW, PIPE, BLANK = "├─ ", "└─ ", "│  ", "   "
# A conversation asked differently at many points nests its path one level deeper at each: past
# GUIDE_LEVELS levels a row draws only its last ones, the first left out GUIDE_STEP levels at a time.
GUIDE_LEVELS = 6
GUIDE_STEP = 3


class TreeRow(NamedTuple):
    """One drawn row: an entry, a fold standing for a gap in another branch's run, or (``earlier``)
    the part of the tab's path above what is drawn. A tuple: a panel makes hundreds, and each is a
    key of the rendered rows' cache."""

    depth: int  # branch levels above (aria-level − 1)
    guide: str  # the glyphs drawn before it ("│  ├─ ")
    entry_id: str = ""
    kind: str = ""  # user | assistant | toolResult | compaction | … | fold | earlier
    text: str = ""
    label: str | None = None
    on_path: bool = False
    is_position: bool = False
    compare: tuple[str, ...] = ()  # for a branch point: the heads of the branches its "Compare" opens
    folded: int = 0  # for a fold or an earlier row: how many entries it stands for …
    first_id: str = ""  # … from this one
    last_id: str = ""  # … to this one (opened with ``run_rows`` or ``earlier_rows``)

    @property
    def hidden_levels(self) -> int:
        """How many of the guide's first levels are not drawn. Deep in a much-branched tree the guide
        alone would be wider than the panel, pushing the entry out of sight; rows deeper by less than a
        step leave out as many levels, so that their guides still line up."""
        levels = len(self.guide) // len(PIPE)
        if levels <= GUIDE_LEVELS:
            return 0
        return ((levels - GUIDE_LEVELS - 1) // GUIDE_STEP + 1) * GUIDE_STEP

    @property
    def drawn_guide(self) -> str:
        """The guide as drawn: its levels after the ``hidden_levels`` first."""
        return self.guide[self.hidden_levels * len(PIPE) :]

    @property
    def branches(self) -> bool:
        """A branch point: its branches follow, and can be folded away in the browser."""
        return bool(self.compare)


@dataclass
class Skeleton:
    """The shown rows of one filter over the first ``length`` rows of an index, as runs.

    ``up[row]``: the nearest shown ancestor-or-self (NO_PARENT: none); ``run_of[row]``/``place[row]``:
    the run a shown row is in and where (-1 for hidden rows); ``runs[r]``: a run's rows, in order;
    ``forks[row]``: the runs hanging from a branch point (NO_PARENT: the top), in pi's child order.

    Never changed once ``skeleton()`` hands it out: ``grown`` makes a new one."""

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

    def grown(self, session: SessionFile, index: SessionIndex) -> Skeleton:
        """This skeleton with the rows ``index`` has beyond ``self.length`` taken in, as a new one:
        columns copied, runs and fork lists shared until one of them changes."""
        copy = Skeleton(
            self.mode,
            self.index,
            self.length,
            self.node_count,
            array("l", self.up),
            array("l", self.run_of),
            array("l", self.place),
            list(self.runs),
            dict(self.forks),
        )
        _Growth(copy).take(session, index)
        return copy


class _Growth:
    """One grow of a skeleton that nobody else sees yet. Its runs and fork lists are still those of
    the skeleton it was copied from, which other threads may be drawing: each is copied before it
    first changes (``owned`` are the runs copied or made by this grow)."""

    def __init__(self, skel: Skeleton) -> None:
        self.skel = skel
        self.owned: set[int] = set()

    def take(self, session: SessionFile, index: SessionIndex) -> None:
        """Take in the rows ``index`` has beyond the skeleton's length, parents before children: in
        file order, or, in the rare file where a parent comes after its child, in a walk of the tree."""
        skel = self.skel
        start, end = skel.length, len(index)
        skel.index = index
        order: Iterable[int] = range(start, end) if not index.forward_parents else _tree_order(index)
        shown = _shown_rows(session, index, skel.mode, range(start, end))
        for column in (skel.up, skel.run_of, skel.place):
            column.extend(array("l", [-1]) * (end - start))
        parents, up, run_of, place, runs, forks, owned = (
            index.parents,
            skel.up,
            skel.run_of,
            skel.place,
            skel.runs,
            skel.forks,
            self.owned,
        )
        touched: set[int] = set()
        for row in order:
            parent = parents[row]
            above = NO_PARENT if parent == NO_PARENT else up[parent]
            if row not in shown:
                up[row] = above
                continue
            up[row] = row
            if above != NO_PARENT and above not in forks:
                r = run_of[above]
                run = runs[r]
                if place[above] == len(run) - 1:  # the end of its run: the run goes on
                    if r not in owned:
                        runs[r] = run = array("l", run)
                        owned.add(r)
                    run_of[row], place[row] = r, len(run)
                    run.append(row)
                    continue
                self._split(above)  # a second child: ``above`` becomes a branch point
            new = len(runs)
            run_of[row], place[row] = new, 0
            forks[above] = [*forks.get(above, ()), new]
            runs.append(array("l", [row]))
            owned.add(new)
            touched.add(above)
        for point in touched:
            if len(forks[point]) > 1:
                forks[point] = _ordered_runs(index, runs, forks[point])
        skel.length = end
        skel.node_count = index.node_count

    def _split(self, point: int) -> None:
        """Cut the run holding ``point`` after it: what followed becomes the first run under it."""
        skel = self.skel
        r = skel.run_of[point]
        run = skel.runs[r]
        cut = skel.place[point] + 1
        tail = run[cut:]
        skel.runs[r] = run[:cut]
        new = len(skel.runs)
        skel.runs.append(tail)
        self.owned.update((r, new))
        run_of, place = skel.run_of, skel.place
        for at, row in enumerate(tail):
            run_of[row] = new
            place[row] = at
        # The branch point that ended the old run now ends the new one: its forks are unchanged.
        skel.forks[point] = [new]


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
    # Most of a first panel's cost: every assistant line is read. One without the word cannot hold
    # only tool calls, and the search for it costs a tenth of decoding the line.
    for row, line in zip(assistants, session.raw_lines(assistants)):
        if only_tool_calls(line):
            shown.discard(row)
    return shown


# ------------------------------------------------------------------------------------ the cache

_skeletons: OrderedDict[tuple[Path, str, Any], Skeleton] = OrderedDict()
_lock = threading.Lock()


def skeleton(session: SessionFile, mode: str) -> Skeleton:
    """The filter's skeleton for the session as it is now: cached, grown by what was appended since.
    What it returns is never changed afterwards, so callers read it without a lock.

    Built again from scratch when the index is not an extension of the one it reflects: the file was
    replaced or rebuilt (new columns), earlier rows changed (a late parent, a duplicate id), or, for
    the *labeled* filter, a label line came (labels change which old rows show). Built and grown
    outside the lock (a first build of a 100k-entry file takes a while, and other files' panels need
    not wait); one that another thread grew further meanwhile is kept."""
    index = session.index
    key = (session.path, mode, session.view_key)  # a view of part of the file has rows of its own
    with _lock:
        found = _skeletons.get(key)
    if found is not None and found.index.ids is index.ids and found.length >= len(index):
        built = found  # as long as this index, or grown by a thread that saw a newer one
    elif found is not None and _extends(found, index):
        built = found.grown(session, index)
    else:
        built = Skeleton(mode, index)
        _Growth(built).take(session, index)
    with _lock:
        cached = _skeletons.get(key)
        if cached is None or cached.index.ids is not built.index.ids or cached.length < built.length:
            _skeletons[key] = built
        _skeletons.move_to_end(key)
        while len(_skeletons) > SKELETONS_KEPT:
            _skeletons.popitem(last=False)
    return built


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


# A layout: what to draw, in order. (run, place, place) is an entry; (run, first, last) a fold of
# that stretch of a run; and one ``_Earlier`` may come first, for the path above what is drawn.
_Layout = list[tuple[int, int, int]]


class _Earlier(NamedTuple):
    first: int  # the top row of the path's part not drawn …
    last: int  # … and its bottom row
    size: int  # how many rows of the path it stands for


def tree_rows(
    session: SessionFile,
    position: int | None,
    mode: str = "default",
    *,
    window: int = PATH_WINDOW,
    opened: Iterable[tuple[int, int]] = (),
    loaded: int | None = None,
    page: int = PATH_PAGE,
) -> list[TreeRow]:
    """Rows to draw, in display order, for the tree as seen from ``position`` (the tab's entry): the
    path to it unfolded (its last ``window`` rows, the rest behind one "earlier" row), then the rest
    of the tree with other branches' straight runs folded.

    The panel is drawn again at every append, and what its reader opened stays open: ``opened`` are
    the (first, last) rows of the "+N" folds they opened, each drawn as ``run_rows`` opened it;
    ``loaded`` is the last row of the earliest page of the path they loaded (``earlier_rows`` with
    ``page``), drawn again with everything below it. Rows that are not where they were (another
    filter, another branch, a file read again) are passed over."""
    skel = skeleton(session, mode)
    view = _view(skel, position)
    keep = _labelled(skel)  # run → places drawn besides its ends
    _open_folds(skel, keep, opened)

    segments = [(run, 0, last) for run, last in reversed(view.path_runs.items())]  # from the top down
    earlier, shown_path = _window(skel, segments, _path_size(skel, view, segments, window, loaded, page))
    starts = {run: a for run, a, _ in shown_path}
    layout: _Layout = []
    stack = list(reversed(view.children(NO_PARENT)))
    while stack:
        run = stack.pop()
        rows = skel.runs[run]
        previous = -1
        if run in view.path_runs:
            last = view.path_runs[run]
            layout.extend((run, place, place) for place in range(starts.get(run, last + 1), last + 1))
            previous = last
        ends = {len(rows) - 1} if previous >= 0 else {0, len(rows) - 1}
        for place in sorted(p for p in ends | keep.get(run, set()) if p > previous):
            if place - previous > 1:
                layout.append((run, previous + 1, place - 1))
            layout.append((run, place, place))
            previous = place
        stack.extend(reversed(view.children(rows[-1])))
    return _draw(session, view, layout, earlier)


def _labelled(skel: Skeleton) -> dict[int, set[int]]:
    """The places of labelled entries, by run: drawn whatever folds around them."""
    index = skel.index
    keep: dict[int, set[int]] = {}
    for target in index.labels:
        row = index.row(target)
        if row is not None and row < skel.length and skel.run_of[row] >= 0:
            keep.setdefault(skel.run_of[row], set()).add(skel.place[row])
    return keep


def _open_folds(skel: Skeleton, keep: dict[int, set[int]], opened: Iterable[tuple[int, int]]) -> None:
    """Add to ``keep`` the entries of the "+N" folds the reader opened, each named by its two ends: its
    first ``RUN_CHUNK`` entries, as ``run_rows`` opened them (what was left of a long one folded
    again). A fold cut by a branch point since opens across it; one whose ends are no longer one
    above the other (the file was read again) opens nothing."""
    for first, last in opened:
        left = RUN_CHUNK
        for run, start, end in _chain(skel, first, last) or ():
            taken = min(end - start + 1, left)
            keep.setdefault(run, set()).update(range(start, start + taken))
            left -= taken
            if not left:
                break


def _path_size(skel: Skeleton, view: _View, segments: _Layout, window: int, loaded: int | None, page: int) -> int:
    """How many rows of the path are drawn: its last ``window``, or, when the reader loaded the pages
    above them as far as the one ending at ``loaded`` (a row of the path), ``page`` rows above that
    one and everything below it."""
    if loaded is None or loaded >= skel.length or skel.run_of[loaded] < 0:
        return window
    run, place = skel.run_of[loaded], skel.place[loaded]
    if place > view.path_runs.get(run, -1):
        return window  # not on the path (any more)
    above = 0  # rows of the path above ``loaded``
    for segment, first, last in segments:
        if segment == run:
            above += place - first
            break
        above += last - first + 1
    total = sum(last - first + 1 for _, first, last in segments)
    return max(window, total - above + page - 1)


def _window(skel: Skeleton, segments: _Layout, size: int) -> tuple[_Earlier | None, _Layout]:
    """The last ``size`` rows of a chain of run segments (top down), and what is above them."""
    total = sum(b - a + 1 for _, a, b in segments)
    if total <= size:
        return None, segments
    kept: _Layout = []
    left = size
    for run, a, b in reversed(segments):
        if left <= 0:
            break
        start = max(a, b - left + 1)
        kept.append((run, start, b))
        left -= b - start + 1
    kept.reverse()
    top_run, top_place, _ = segments[0]
    run, start, _ = kept[0]
    above = skel.runs[run][start - 1] if start > 0 else skel.run_parent(run)  # the branch point it hangs from
    return _Earlier(skel.runs[top_run][top_place], above, total - size), kept


def _chain(skel: Skeleton, first: int, last: int) -> _Layout | None:
    """The runs' stretches from ``first`` down to ``last`` (top down); None unless ``first`` is a
    shown ancestor-or-self of ``last``."""
    if first >= skel.length or last >= skel.length or skel.run_of[first] < 0 or skel.run_of[last] < 0:
        return None
    top_run, top_place = skel.run_of[first], skel.place[first]
    segments: _Layout = []
    row = last
    while True:
        run, place = skel.run_of[row], skel.place[row]
        if run == top_run:
            if top_place > place:
                return None
            segments.append((run, top_place, place))
            return segments[::-1]
        segments.append((run, 0, place))
        row = skel.run_parent(run)
        if row == NO_PARENT:
            return None


def run_rows(session: SessionFile, first: int, last: int, position: int | None, mode: str) -> list[TreeRow]:
    """The rows a "+N" fold stood for: its run from ``first`` to ``last``, ``RUN_CHUNK`` at a time
    (what remains of a long fold folds again). Empty when the two are not one run any more."""
    skel = skeleton(session, mode)
    segments = _chain(skel, first, last)
    if segments is None or len(segments) != 1:
        return []
    ((run, start, end),) = segments
    layout = [(run, place, place) for place in range(start, min(end + 1, start + RUN_CHUNK))]
    if end >= start + RUN_CHUNK:
        layout.append((run, start + RUN_CHUNK, end))
    return _draw(session, _view(skel, position), layout)


def earlier_rows(
    session: SessionFile, first: int, last: int, position: int | None, mode: str, *, page: int = PATH_PAGE
) -> list[TreeRow]:
    """The rows an "earlier" row stood for: the tab's path from ``first`` down to ``last``, its last
    ``page`` rows (what remains above them stays behind a new "earlier" row). Empty when ``last`` is
    not below ``first`` on one path any more."""
    skel = skeleton(session, mode)
    segments = _chain(skel, first, last)
    if segments is None:
        return []
    earlier, shown = _window(skel, segments, page)
    layout = [(run, place, place) for run, a, b in shown for place in range(a, b + 1)]
    return _draw(session, _view(skel, position), layout, earlier)


def _draw(session: SessionFile, view: _View, layout: _Layout, earlier: _Earlier | None = None) -> list[TreeRow]:
    """TreeRows for a layout; previews come from the cache, decoding only entries never drawn before."""
    skel, index = view.skel, view.skel.index
    runs, ids, types, roles, labels = skel.runs, index.ids, index.types, index.roles, index.labels
    texts = _previews(session, index, [runs[run][a] for run, a, b in layout if a == b])
    drawn: list[TreeRow] = []
    if earlier is not None:
        first_id, last_id = ids[earlier.first], ids[earlier.last]
        drawn.append(
            TreeRow(0, "", kind="earlier", on_path=True, folded=earlier.size, first_id=first_id, last_id=last_id)
        )
    current = -1
    for run, a, b in layout:
        if run != current:
            current, rows = run, runs[run]
            head, rest = view.guide(run)
            depth = len(rest) // len(PIPE)
            path_end = view.path_runs.get(run, -1)
        if a != b:
            drawn.append(
                TreeRow(depth, rest, kind="fold", folded=b - a + 1, first_id=ids[rows[a]], last_id=ids[rows[b]])
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


_previews_cache: OrderedDict[tuple[Any, ...], str] = OrderedDict()
PREVIEWS_KEPT = 20_000


def _previews(session: SessionFile, index: SessionIndex, rows: list[int]) -> dict[int, str]:
    """Plain-text previews, cached by stored line as the reader sees it (``SessionFile.line_key``; a
    line never changes): ``rows`` of ``index``, the index the skeleton drawn from reflects (the
    session's own may have grown since)."""
    found: dict[int, str] = {}
    missing: list[int] = []
    offsets, lengths = index.offsets, index.lengths
    keys = {row: session.line_key(offsets[row], lengths[row]) for row in rows}
    with _lock:
        for row in rows:
            text = _previews_cache.get(keys[row])
            if text is None:
                missing.append(row)
            else:
                found[row] = text
    if missing:
        fresh = {row: preview(entry, PREVIEW_WIDTH) for row, entry in zip(missing, session.entries(missing))}
        with _lock:
            for row, text in fresh.items():
                _previews_cache[keys[row]] = text
            while len(_previews_cache) > PREVIEWS_KEPT:
                _previews_cache.popitem(last=False)
        found.update(fresh)
    return found
