"""Branches side by side: columns that start where the compared entries' paths part and run down to
each one, cut into turns and aligned row by row, with a summary per column and word diffs between two.

Entries are matched by id, not by row, so that entries of different files can be compared: a fork
copies the path it was made from with ids unchanged, so a fork and its source share a trunk exactly
as two branches of one file do. The trunk ends at the deepest entry whose id is on every compared path.

A turn is a user message and what follows it until the next user message; what a column holds before
its first user message (an answer to a prompt in the trunk, say) is its continuation, row 0. Turns of
the same number share a row, so a shorter branch leaves cells empty.

A long branch is shown at both ends: the turns right after the fork and its newest ones (where what
is appended appears), whole turns each, with the turns between folded into one row. Its summary
counts every entry all the same: turns from the index, tokens, cost, models and activity from what
each message says, read once per line and kept (``_RowFacts``), so a comparison that follows a
growing branch reads only the lines appended since.
"""

from __future__ import annotations

import functools
import itertools
import math
import operator
import threading
import weakref
from array import array
from collections import OrderedDict
from collections.abc import Container, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

from ..sessionfiles import tree
from ..sessionfiles.index import NO_PARENT, SessionIndex, activity_time
from ..sessionfiles.store import SessionFile
from .budget import PageBudget
from .entries import LAZY_TEXT_CHARS, EntryView, head_of, present, preview
from .transcript import transcript_page
from .worddiff import Budget, WordDiff, word_diff

MIN_COLUMNS, MAX_COLUMNS = 2, 4
# A longer branch shows the turns holding its first HEAD_ENTRIES entries after the fork and those
# holding its newest TAIL_ENTRIES; a turn longer than its window shows its ends. Rendering costs about
# a millisecond an entry: four full columns stay near a second.
HEAD_ENTRIES, TAIL_ENTRIES = 50, 200
# Of a turn cut to fit a window, this share comes from its start (its prompt), the rest from its end.
CUT_HEAD_SHARE = 0.25
# How many trunk entries are read to show its last turn above the columns (its "earlier entries" come
# a transcript page at a time).
TRUNK_TAIL = 12
COLUMN_TITLE_CHARS = 60
# An entry with more text than this folds to a few lines in its cell (Show all).
FOLD_CHARS, FOLD_LINES = 1200, 24
# Label tags a column's summary shows; the rest behind "+N more".
SHOWN_LABELS = 6


@dataclass(frozen=True)
class Pick:
    """One compared entry, as the URL named it."""

    session: SessionFile
    row: int
    ref: str


@dataclass
class Turn:
    """A turn as a column shows it: its prompt and what answered it. A turn too long for its window
    leaves ``cut`` entries out after the first ``cut_at`` of its answer."""

    number: int  # 0: the continuation of the trunk's last turn
    prompt: EntryView | None
    answer: list[EntryView]
    long: frozenset[str] = frozenset()  # ids of its entries folded for their length
    cut: int = 0
    cut_at: int = 0

    @property
    def entries(self) -> list[EntryView]:
        return ([self.prompt] if self.prompt else []) + self.answer

    @property
    def answer_head(self) -> list[EntryView]:
        return self.answer[: self.cut_at] if self.cut else self.answer

    @property
    def answer_tail(self) -> list[EntryView]:
        return self.answer[self.cut_at :] if self.cut else []


@dataclass
class Summary:
    turns: int = 0
    tokens: int = 0
    cost: float = 0.0
    models: list[str] = field(default_factory=list)
    last_activity_ms: int | None = None
    labels: list[str] = field(default_factory=list)

    @property
    def shown_labels(self) -> list[str]:
        return self.labels[:SHOWN_LABELS]

    @property
    def more_labels(self) -> list[str]:
        return self.labels[SHOWN_LABELS:]


@dataclass(frozen=True)
class Fold:
    """Turns of a long branch left out between its first turns and its newest ones."""

    first: int  # turn numbers
    last: int
    entries: int


@dataclass
class Column:
    number: int  # 1-based, as the page and the diff parameters count
    ref: str
    session_id: str
    read_only: bool
    end_id: str  # the column's last entry: where "continue on this branch" goes
    head_id: str | None  # its first entry after the trunk (None: the column adds nothing to it)
    continuation: Turn | None
    turns: list[Turn]  # the turns shown, in order (numbers jump over ``gap``)
    summary: Summary
    entries: int = 0  # entries on the branch after the trunk
    shown: int = 0  # of which shown
    gap: Fold | None = None
    title: str = ""  # what its first entry says, in a line: a heading that reads better than an id

    @property
    def not_shown(self) -> int:
        return self.entries - self.shown

    def turn(self, number: int) -> Turn | None:
        if number == 0:
            return self.continuation
        return next((turn for turn in self.turns if turn.number == number), None)

    def folds(self, number: int) -> bool:
        """Whether turn ``number`` exists on this branch but is folded into its gap."""
        return self.gap is not None and self.gap.first <= number <= self.gap.last


@dataclass(frozen=True)
class Slot:
    """One column's cell of a row, as the page lays it out."""

    column: Column
    turn: Turn | None
    folded: bool  # the turn is on this branch, folded into its gap


@dataclass
class Row:
    number: int  # 0: the continuation of the trunk's last turn
    cells: list[Turn | None]
    folded: list[bool]  # per column: the turn is there, folded into the column's gap
    columns: list[Column]

    is_gap = False

    @property
    def slots(self) -> list[Slot]:
        return [Slot(*parts) for parts in zip(self.columns, self.cells, self.folded)]


@dataclass
class Gap:
    """The row where columns fold the turns between their first and their newest ones."""

    folds: list[Fold | None]
    columns: list[Column]

    is_gap = True

    @property
    def slots(self) -> list[tuple[Column, Fold | None]]:
        return list(zip(self.columns, self.folds))


@dataclass(frozen=True)
class Branch:
    """A child of the fork point, offered for picking which branches are compared."""

    id: str
    preview: str
    chosen: bool


@dataclass
class Comparison:
    columns: list[Column]
    rows: list[Row | Gap]
    trunk_session_id: str
    trunk_end_id: str | None  # None: the paths share nothing
    trunk_length: int
    trunk_tail: list[EntryView]
    trunk_long: frozenset[str]
    trunk_earlier: str | None  # the first trunk entry shown, when entries above it are not
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
    left (the newest position under the picked entry, on into the answer of a prompt left there), else
    it stops at the picked entry."""
    ends = [_column_end(p.session.index, p.row) if latest else p.row for p in picks]
    paths = [tree.path(p.session.index, end) for p, end in zip(picks, ends)]
    id_paths = [[p.session.index.ids[row] for row in rows] for p, rows in zip(picks, paths)]
    shared = set(id_paths[0]).intersection(*id_paths[1:])
    trunk_at = max((i for i, entry_id in enumerate(id_paths[0]) if entry_id in shared), default=-1)
    trunk_end = id_paths[0][trunk_at] if trunk_at >= 0 else None

    columns = []
    budget = PageBudget()  # the columns share one page
    for number, (pick, rows, ids) in enumerate(zip(picks, paths, id_paths), start=1):
        start = ids.index(trunk_end) + 1 if trunk_end is not None else 0
        columns.append(_column(number, pick, rows[start:], budget))
    first = picks[0].session
    trunk = paths[0][: trunk_at + 1]
    tail = _trunk_tail(first, trunk)
    budget.fit(reversed(tail))
    shown_from = first.index.row(tail[0].id) if tail else None
    return Comparison(
        columns=columns,
        rows=_align(columns),
        trunk_session_id=first.session_id,
        trunk_end_id=trunk_end,
        trunk_length=trunk_at + 1,
        trunk_tail=tail,
        trunk_long=_long(tail),
        trunk_earlier=tail[0].id if shown_from is not None and shown_from != trunk[0] else None,
        branches=_branches(picks, paths, paths[0][trunk_at] if trunk_at >= 0 else None),
    )


# ---------------------------------------------------------------------- a column

# The entry types that are part of the conversation: those the context makes messages of
# (docs/format.md §6.4). The others (labels, names, model and thinking changes, extension state) only
# say something about it.
_CONVERSATION = frozenset({"message", "custom_message", "branch_summary", "compaction"})


def _column_end(index: SessionIndex, pick: int) -> int:
    """Where the column of ``pick``'s branch ends: where the branch was last left (docs/format.md
    §5.5), and on into the newest answer when that was at a prompt that has one. A position left at a
    prompt is common after moving back up a branch: a label, a name or a model change set there is
    hung under the prompt beside its answer, and is then the branch's newest entry; a column stopped
    there would show the prompt without the answer the comparison is for ("No answer yet").

    One step is enough in a file written in order (a child after its parent): nothing of the
    conversation is below its newest entry, so no other prompt is. A file written out of order may
    still stop at a prompt; following on again could walk the branch once per turn."""
    end = tree.latest_position_under(index, pick)
    prompt = _unanswered_prompt(index, pick, end)
    newest = _newest_talk_below(index, prompt) if prompt is not None else None
    return tree.latest_position_under(index, newest) if newest is not None else end


def _unanswered_prompt(index: SessionIndex, pick: int, end: int) -> int | None:
    """The user message the path from ``pick`` down to ``end`` stops at, when nothing of the
    conversation follows it there (only entries about it, if any)."""
    for row in tree.ancestors(index, end):
        if index.types[row] in _CONVERSATION:
            return row if index.types[row] == "message" and index.roles[row] == "user" else None
        if row == pick:
            break
    return None


def _newest_talk_below(index: SessionIndex, row: int) -> int | None:
    """The newest entry of the conversation below ``row`` (past the labels and names between them), or
    None when nothing of it is below."""
    types = index.types
    below = tree.subtree(index, row)[1:]
    return max((entry for entry in below if types[entry] in _CONVERSATION), default=None)


# A turn as (its number, start, end): a slice of its branch's rows, ``rows[start:end]``. Most turns of a
# long branch are never more than this, made in bulk.
_Span = tuple[int, int, int]


@dataclass
class _TurnRows:
    """A turn to show: its rows, less ``cut`` of them after the first ``kept`` when it is too long."""

    number: int
    rows: list[int]
    cut: int = 0
    kept: int = 0


def _column(number: int, pick: Pick, rows: list[int], budget: PageBudget) -> Column:
    session = pick.session
    index = session.index
    spans = _spans(index, rows)
    shown, gap = _windows(spans, rows)
    wanted = [row for turn in shown for row in turn.rows]
    views = {}
    title = ""
    for row, entry in zip(wanted, session.entries(wanted)):
        view = present(session, entry, row)
        if view.kind != "hidden":
            views[row] = view
            title = title or preview(entry, COLUMN_TITLE_CHARS)
    budget.fit(reversed(views.values()))
    built = [_turn(turn, views) for turn in shown]
    continuation = next((turn for turn in built if turn.number == 0), None)
    end = rows[-1] if rows else pick.row
    return Column(
        number=number,
        ref=pick.ref,
        session_id=session.session_id,
        read_only=index.read_only,
        end_id=index.ids[end],
        head_id=next((index.ids[row] for row in wanted if row in views), None),
        continuation=continuation if continuation and continuation.answer else None,
        turns=[turn for turn in built if turn.number > 0],
        summary=_summary(session, rows, _turn_count(index, rows, spans)),
        entries=len(rows),
        shown=len(wanted),
        gap=gap,
        title=title,
    )


def _spans(index: SessionIndex, rows: list[int]) -> list[_Span]:
    """A branch's rows cut into turns from the index alone (a user message starts one), so that a long
    branch is cut without decoding it; a turn 0 holds what comes before the first user message."""
    is_user = map(functools.partial(operator.eq, "user"), map(index.roles.__getitem__, rows))
    starts = [at for at in itertools.compress(range(len(rows)), is_user) if index.types[rows[at]] == "message"]
    edges = [*starts, len(rows)]
    spans = list(zip(itertools.count(1), edges, itertools.islice(edges, 1, None)))
    if rows and (not starts or starts[0] > 0):
        spans.insert(0, (0, 0, edges[0]))
    return spans


def _turn_count(index: SessionIndex, rows: list[int], spans: list[_Span]) -> int:
    """The turns a branch takes part in: its own, and the shared turn when it answers that one too (a
    regenerated answer is a turn of its branch, not none)."""
    if not spans:
        return 0
    number, start, end = spans[0]
    continues = number == 0 and any(index.types[row] == "message" for row in rows[start:end])
    return spans[-1][0] + continues


def _windows(spans: list[_Span], rows: list[int]) -> tuple[list[_TurnRows], Fold | None]:
    """The turns a column shows, and the fold of those it leaves out: all of them when they fit, else
    whole turns from the start (HEAD_ENTRIES) and from the end (TAIL_ENTRIES)."""
    if len(rows) <= HEAD_ENTRIES + TAIL_ENTRIES:
        return [_TurnRows(number, rows[start:end]) for number, start, end in spans], None
    head = 1  # the first turn, and those after it that end within HEAD_ENTRIES
    while head < len(spans) and spans[head][2] <= HEAD_ENTRIES:
        head += 1
    tail = 0  # the last turn, and those before it that start within TAIL_ENTRIES of the end
    while head + tail < len(spans) and (tail == 0 or len(rows) - spans[-tail - 1][1] <= TAIL_ENTRIES):
        tail += 1
    # A window's one turn may be longer than the window (an agent's run of tool calls): its ends.
    shown = [_cut(spans[0], rows, HEAD_ENTRIES if tail else HEAD_ENTRIES + TAIL_ENTRIES)]
    shown += [_cut(span, rows, HEAD_ENTRIES) for span in spans[1:head]]
    shown += [_cut(span, rows, TAIL_ENTRIES) for span in spans[len(spans) - tail :]]
    left_out = spans[head : len(spans) - tail]
    gap = Fold(left_out[0][0], left_out[-1][0], left_out[-1][2] - left_out[0][1]) if left_out else None
    return shown, gap


def _cut(span: _Span, rows: list[int], limit: int) -> _TurnRows:
    """The rows of a turn, at most ``limit`` of them: its first ones (the prompt) and its last ones
    (where it ends, and where what is appended to it appears)."""
    number, start, end = span
    if end - start <= limit:
        return _TurnRows(number, rows[start:end])
    kept = max(1, int(limit * CUT_HEAD_SHARE))
    picked = rows[start : start + kept] + rows[end - (limit - kept) : end]
    return _TurnRows(number, picked, cut=end - start - limit, kept=kept)


def _turn(turn: _TurnRows, views: dict[int, EntryView]) -> Turn:
    first = views.get(turn.rows[0])
    prompt = first if turn.number > 0 and first is not None and first.kind == "user" else None
    shown = [views[row] for row in turn.rows if row in views]
    answer = shown[1:] if prompt else shown
    cut_at = sum(1 for row in turn.rows[: turn.kept] if row in views) - (1 if prompt else 0)
    return Turn(turn.number, prompt, answer, _long(shown), turn.cut, cut_at)


def _long(views: list[EntryView]) -> frozenset[str]:
    """The entries long enough to be folded in a cell (blocks already folded as large do not count)."""
    return frozenset(view.id for view in views if view.longer_than(FOLD_CHARS, FOLD_LINES))


def _align(columns: list[Column]) -> list[Row | Gap]:
    """One row per turn number any column shows, in order; a column's gap row goes right after the last
    turn it shows before the gap."""
    numbers = sorted({turn.number for column in columns for turn in column.turns} | _continued(columns))
    gap_at: dict[int, list[int]] = {}
    for at, column in enumerate(columns):
        if column.gap is not None:
            row = next(i for i, number in enumerate(numbers) if number >= column.gap.first)
            gap_at.setdefault(row, []).append(at)
    out: list[Row | Gap] = []
    for i, number in enumerate(numbers):
        if i in gap_at:
            out.append(Gap([column.gap if at in gap_at[i] else None for at, column in enumerate(columns)], columns))
        cells = [column.turn(number) for column in columns]
        out.append(Row(number, cells, [column.folds(number) for column in columns], columns))
    return out


def _continued(columns: list[Column]) -> set[int]:
    return {0} if any(column.continuation for column in columns) else set()


# ---------------------------------------------------------------------- the summary


class _MessageFacts(msgspec.Struct):
    role: Any = None
    timestamp: Any = None
    provider: Any = None
    model: Any = None
    usage: Any = None


class _LineFacts(msgspec.Struct):
    """What a summary reads of a message line (the content, most of the line, is skipped unread)."""

    timestamp: Any = msgspec.UNSET
    message: _MessageFacts | None = None


_DECODE_FACTS = msgspec.json.Decoder(_LineFacts)
_NO_TIME = -(2**63)


class _RowFacts:
    """Tokens, cost, model and activity time of one index's rows, in columns, each row worked out once:
    a message by a typed decode of its line that skips the content, any other row from the index (its
    timestamp; no tokens). A 100k-entry branch is read once, in about the time its
    file takes to open, then only its new lines; a summary is then a few passes over the columns."""

    def __init__(self, offsets: array[int]) -> None:
        self.source = weakref.ref(offsets)  # the index's rows these are of (a reload makes new ones)
        self.known = bytearray()
        self.tokens = array("q")
        self.cost = array("d")
        self.model = array("i")  # into ``models``; 0: none
        self.activity = array("q")  # ms; _NO_TIME: none
        self.models = [""]
        self._model_ids = {"": 0}
        self.lock = threading.Lock()  # one reader of these rows' lines at a time

    def read(self, session: SessionFile, rows: list[int]) -> None:
        """Make sure the facts of ``rows`` (rows of ``session``'s index) are known (``lock`` held)."""
        index = session.index
        grow = len(index) - len(self.known)
        if grow > 0:
            self.known.extend(bytes(grow))
            for column in (self.tokens, self.cost, self.model):
                column.frombytes(bytes(column.itemsize * grow))  # zeros
            self.activity.extend(array("q", [_NO_TIME]) * grow)
        missing = [row for row in rows if not self.known[row]]
        types = index.types
        messages = [row for row in missing if types[row] == "message"]
        for row, line in zip(messages, session.raw_lines(messages)):
            self._note(row, line)
        for row in missing:
            if not self.known[row]:
                moment = index.instant(row)
                self.activity[row] = _NO_TIME if math.isnan(moment) else int(moment)
                self.known[row] = 1

    def _note(self, row: int, line: bytes) -> None:
        try:
            facts = _DECODE_FACTS.decode(line)
        except (msgspec.DecodeError, RecursionError):  # a message that is no object, nesting too deep
            facts = _LineFacts()
        message = facts.message or _MessageFacts()
        moment = activity_time(message.timestamp, facts.timestamp)
        self.activity[row] = _NO_TIME if moment is None else moment
        if message.role == "assistant":
            self.tokens[row], self.cost[row] = _usage(message.usage)
            name = _model_name(message.model, message.provider)
            if name not in self._model_ids:
                self._model_ids[name] = len(self.models)
                self.models.append(name)
            self.model[row] = self._model_ids[name]
        self.known[row] = 1


_FACTS: OrderedDict[int, _RowFacts] = OrderedDict()
_FACTS_FILES = 16
_FACTS_LOCK = threading.Lock()


def _facts(session: SessionFile, rows: list[int]) -> _RowFacts:
    """The facts of ``rows``, worked out where they were not yet, kept for the few indexes compared
    last. The lines are read under the facts' own lock: the first comparison of a long branch does
    not hold up those of other files."""
    offsets = session.index.offsets
    with _FACTS_LOCK:
        facts = _FACTS.get(id(offsets))
        if facts is None or facts.source() is not offsets:
            facts = _FACTS[id(offsets)] = _RowFacts(offsets)
            while len(_FACTS) > _FACTS_FILES:
                _FACTS.popitem(last=False)
        _FACTS.move_to_end(id(offsets))
    with facts.lock:
        facts.read(session, rows)
    return facts


def _summary(session: SessionFile, rows: list[int], turns: int) -> Summary:
    """Tokens, cost and models of the assistant messages of a whole branch, its newest activity (the
    messages' own times, as pi reads them; other entries' timestamps) and its labels."""
    index = session.index
    facts = _facts(session, rows)
    newest = max(map(facts.activity.__getitem__, rows), default=_NO_TIME)
    models = dict.fromkeys(map(facts.model.__getitem__, rows))
    on_branch = set(rows)
    labelled = sorted(row for row in map(index.row, index.labels) if row is not None and row in on_branch)
    return Summary(
        turns=turns,
        tokens=sum(map(facts.tokens.__getitem__, rows)),
        cost=sum(map(facts.cost.__getitem__, rows)),
        models=[facts.models[model] for model in models if model],
        last_activity_ms=None if newest == _NO_TIME else newest,
        labels=[index.labels[index.ids[row]][0] for row in labelled],
    )


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


def _model_name(model: Any, provider: Any) -> str:
    if not isinstance(model, str) or not model:
        return ""
    return f"{provider}/{model}" if isinstance(provider, str) and provider else model


# ---------------------------------------------------------------------- the trunk and the branches


def _trunk_tail(session: SessionFile, trunk: list[int]) -> list[EntryView]:
    """The trunk's last turn (from its last user message), or its last few entries when it has none."""
    rows = trunk[-TRUNK_TAIL:]
    views = _visible(session, rows)
    users = [i for i, view in enumerate(views) if view.kind == "user"]
    return views[users[-1] :] if users else views


@dataclass
class TrunkPage:
    """Entries of a trunk above one it shows already, and the first of them when more are above."""

    entries: list[EntryView]
    long: frozenset[str]
    earlier: str | None


def trunk_page(session: SessionFile, before: int) -> TrunkPage:
    """A transcript page of the path above row ``before``, compactions read through (the shared trunk
    is a path: what is above an entry of it is the rest of it)."""
    parent = session.index.parents[before]
    page = transcript_page(session, parent if parent != NO_PARENT else None, fold=False)
    return TrunkPage(page.entries, _long(page.entries), page.older_than)


def _visible(session: SessionFile, rows: list[int]) -> list[EntryView]:
    views = [present(session, entry, row) for row, entry in zip(rows, session.entries(rows))]
    return [view for view in views if view.kind != "hidden"]


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
    cut: bool = False  # a text too large for the page is compared by its head only


@dataclass
class RowDiff:
    number: int
    parts: list[tuple[str, WordDiff]]  # (what: Prompt | Answer | Tool calls, its diff)
    folded: bool = False  # a side folds this turn (a long branch): not compared here
    cut: bool = False  # a side's text too large for the page: its head is what is compared


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
    texts = ["\n\n".join(prompt), "\n\n".join(answer), "\n\n".join(tools)]
    # A diff of two megabyte texts would be megabytes of page (and the time budget spent on one row).
    prompt_text, answer_text, tools_text = (head_of(text) if len(text) > LAZY_TEXT_CHARS else text for text in texts)
    return TurnText(prompt_text, answer_text, tools_text, cut=any(len(text) > LAZY_TEXT_CHARS for text in texts))


def diff_rows(comparison: Comparison, left: int, right: int, budget: Budget) -> list[RowDiff]:
    """Row by row, the word diff from column ``left`` to column ``right`` (0-based)."""
    out = []
    for row in comparison.rows:
        if isinstance(row, Gap):
            continue
        if row.folded[left] or row.folded[right]:
            out.append(RowDiff(row.number, [], folded=True))
            continue
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
        out.append(RowDiff(row.number, parts, cut=a.cut or b.cut))
    return out
