"""The index of a session file: one row per entry line, kept in columns, grown as the file grows.

Nothing here decodes a message body. A row holds what the tree needs (id, type, role, parent, timestamp,
byte span); everything shown is decoded from the file on demand by the store. Columns of plain arrays,
shared type and role strings and one buffer of timestamps keep a 100k-entry file's index near a
quarter of the file (an id string and its ``by_id`` slot are most of a row).

Two classes share the columns. ``IndexBuilder`` reads lines and links rows; only the store's refresh
uses it, one thread at a time. ``SessionIndex`` is what everyone else reads: an immutable snapshot that
sees the first ``len(index)`` rows and the state derived from exactly those rows. Several threads read
a cached file while one refreshes it, so a refresh must never show a reader a half-added row:

- columns and ``by_id`` only ever grow, and a row is complete before a snapshot counts it; a snapshot
  ignores rows (and ``first child`` links) at or past its length;
- what a refresh changes about earlier rows is copied before it is changed (labels, the lists of
  children of branching nodes), once per refresh, so a snapshot's copies never change;
- the two changes that would rewrite earlier rows in place (a later line reusing an earlier id, a
  missing parent appearing later) make the store read the whole file into a new builder instead.

Publishing a length costs nothing per row, which is why it beat the alternatives: copying the columns
on each refresh costs O(rows) (a 100k-row file: milliseconds, against ~30 µs for a refresh that reads
one line), and a lock would make every reader wait for a refresh's disk reads.

Rules implemented here (docs/format.md §4, §5, §8):
- bad lines are skipped and reported with their 1-based line number, never fatal — except a file whose
  first JSON object is not a ``session`` header, which is refused;
- a line longer than ``max_line_bytes`` is skipped and reported without being decoded;
- the leaf after load: each entry moves it to itself, a ``leaf`` marker to its (earlier, real) target;
- ``leaf`` markers and superseded duplicates are rows but not tree nodes;
- a parent that is missing, no string, the entry itself, a ``leaf`` marker, or closes a cycle is
  reported and the entry becomes a root, so every walk over ``parents`` ends;
- ``message_count`` counts message rows that are nodes (not superseded by a later duplicate);
- roots keep file order; children are in the order pi's ``getTree()`` sorts them (``order_children``).
"""

from __future__ import annotations

import codecs
import functools
import hashlib
import math
from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterable, Sequence
from itertools import accumulate, compress, islice
from operator import add, attrgetter, ne
from typing import Any, NamedTuple

import orjson

from .entries import clip, label_text, session_name
from .instants import MAX_MS, iso_to_ms, js_date_ms
from .lines import (
    DECODE_ERRORS,
    MAX_DEPTH,
    UNSET,
    BadLine,
    Head,
    OddParentHead,
    decode_head,
    decode_known_head,
    fast_path_may_nest_deeper,
    header_of,
    nested_too_deeply,
    parse_value,
    read_head,
)
from .migrate import read_version

NO_PARENT = -1
PENDING = -2  # a parent id not resolved while reading (not seen yet, or unusual): see ``commit``
LEAF = "leaf"
MAX_LINE_BYTES = 64 << 20
"""The longest line read by default; a longer one is skipped and reported (the settings may change it)."""
MESSAGE = "message"
# Types whose lines change more than their own row (the leaf, labels, the name), or are not entries.
_SPECIAL_TYPES = frozenset({LEAF, "label", "session_info", "session"})
_EFFECTS = (LEAF, "label", "session_info")  # the special types a chunk read in bulk may hold
_ACTIVE_ROLES = frozenset({"user", "assistant"})
_ACTIVE_MESSAGES = frozenset({(MESSAGE, "user"), (MESSAGE, "assistant")})  # (type, role) pairs that date a session
# The types and roles pi writes: every index shares these string objects instead of keeping its own.
_KNOWN_STRINGS = (
    *_SPECIAL_TYPES,
    *("message", "model_change", "thinking_level_change", "compaction", "branch_summary", "custom"),
    *("custom_message", "context_edit", "usage"),
    *("user", "assistant", "toolResult", "bashExecution", "custom", "branchSummary", "compactionSummary"),
)
_UTF8_STEP = 1 << 14
_utf8_decode = codecs.utf_8_decode
_ID = attrgetter("id")
_PARENT_ID = attrgetter("parentId")
_TYPE = attrgetter("type")
_ROLE = attrgetter("message.role")
_TIMESTAMP = attrgetter("timestamp")
_MESSAGE_TIMESTAMP = attrgetter("message.timestamp")
_MESSAGE_CONTENT = attrgetter("message.content")


class NeedsRebuild(Exception):
    """Raised by a refresh whose lines change earlier rows: the store reads the file again, whole."""


def is_utf8(data: bytes | memoryview) -> bool:
    """A strict UTF-8 check, 16 KB at a time so that the decoded text stays small and in cache (each
    step stops before a character cut at its end, and the next starts there)."""
    view = memoryview(data)
    size = len(view)
    start = 0
    try:
        while size - start > _UTF8_STEP:
            start += _utf8_decode(view[start : start + _UTF8_STEP], "strict", False)[1]
        _utf8_decode(view[start:], "strict", True)
    except UnicodeDecodeError:
        return False
    return True


class Texts:
    """A column of strings kept as one UTF-8 buffer and the end of each string in it: a 24-character
    timestamp costs 32 bytes instead of an 80-byte ``str`` and its list slot. ``texts[row]`` decodes
    one on demand. The buffer only grows, so a snapshot reads the rows it counts while a refresh
    appends (each call is one C operation under the GIL)."""

    __slots__ = ("_data", "_ends")

    def __init__(self) -> None:
        self._data = bytearray()
        self._ends = array("q")

    def __getitem__(self, row: int) -> str:
        ends = self._ends
        return self._data[ends[row - 1] if row else 0 : ends[row]].decode("utf-8", "surrogatepass")

    def __len__(self) -> int:
        return len(self._ends)

    def append(self, text: str) -> None:
        self._data += text.encode("utf-8", "surrogatepass")
        self._ends.append(len(self._data))

    def extend(self, texts: list[str], joined: str) -> None:
        """Append ``texts``, whose concatenation the caller has at hand (``joined``)."""
        start = len(self._data)
        if joined.isascii():  # a character per byte: the ends follow from the lengths
            self._data += joined.encode("ascii")
            self._ends.extend(islice(accumulate(map(len, texts), initial=start), 1, None))
        else:
            for text in texts:
                self.append(text)


class LineNumbers:
    """The 1-based line of each row without a number per row: a row's line is the row plus a shift
    that changes only where a line is no row (the header, a skipped line), so only those changes are
    kept. ``line_numbers[row]`` finds its shift by bisection. Both arrays only grow, and a change
    recorded for later rows does not affect earlier ones, so a snapshot reads its rows while a
    refresh appends."""

    __slots__ = ("_rows", "_shifts")

    def __init__(self) -> None:
        self._rows = array("q")  # the first row of each shift
        self._shifts = array("q")

    def __getitem__(self, row: int) -> int:
        return row + self._shifts[bisect_right(self._rows, row) - 1]

    def note(self, row: int, line: int) -> None:
        """Row ``row`` (and those after it, until the next note) is on line ``line`` (and onwards)."""
        shifts = self._shifts
        if not shifts or shifts[-1] != line - row:
            self._rows.append(row)
            shifts.append(line - row)


def positions(values: list[Any] | bytes, value: Any) -> Iterable[int]:
    """The positions of ``value`` in ``values``, found by the C search of ``index``/``find``."""
    if isinstance(values, bytes):
        position = values.find(value)
        while position >= 0:
            yield position
            position = values.find(value, position + 1)
        return
    position = -1
    try:
        while True:
            position = values.index(value, position + 1)
            yield position
    except ValueError:
        return


def _shown(value: Any) -> str:
    """A JSON value as a report quotes it: its JSON text, cut short."""
    try:
        text = orjson.dumps(value).decode()
    except orjson.JSONEncodeError:  # nested too deep, or an integer beyond 64 bits
        text = f"({type(value).__name__})"
    return clip(text, 40)


def _instant(timestamps: Texts, odd_timestamps: dict[int, Any], row: int) -> float:
    odd = odd_timestamps.get(row, UNSET)
    if odd is not UNSET:
        return js_date_ms(odd)
    return js_date_ms(timestamps[row]) if timestamps[row] else math.nan  # "" here: absent (undefined)


def _js_compare(a: tuple[float, int], b: tuple[float, int]) -> int:
    """pi's comparator, ``a - b`` on instants, where JS's sort takes a NaN result for "equal"."""
    difference = a[0] - b[0]
    if math.isnan(difference):
        return 0
    return (difference > 0) - (difference < 0)


_JS_ORDER = functools.cmp_to_key(_js_compare)


def order_children(rows: Sequence[int], instant: Callable[[int], float]) -> list[int]:
    """Rows in the order pi's ``getTree()`` sorts a node's children: its comparator, applied by a
    TimSort to the children in file order.

    With valid instants this is by instant, ties in file order. An invalid timestamp is NaN in pi,
    which makes the comparator call it "equal" to everything; the result then depends on the sort
    algorithm itself. V8's ``Array.prototype.sort`` is a port of CPython's list sort, so Python's
    sort with the same comparator gives pi's order — up to 127 siblings exactly (checked against
    node); beyond that, CPython 3.11 merges runs in another order than V8, and with invalid
    timestamps among 128 or more siblings the two may place some of them differently.
    """
    keyed = [(instant(row), row) for row in sorted(rows)]
    if any(math.isnan(ms) for ms, _ in keyed):
        keyed.sort(key=_JS_ORDER)
    else:
        keyed.sort(key=lambda item: item[0])
    return [row for _, row in keyed]


def cut_lines(buf: bytes, pos: int, end: int) -> tuple[list[memoryview], int]:
    """The whole lines of ``buf[pos:end]`` (without their newlines, as views: nothing is copied), and
    where the first unterminated one starts."""
    view = memoryview(buf)
    lines: list[memoryview] = []
    cut = lines.append
    find = buf.find
    while True:
        newline = find(b"\n", pos, end)
        if newline < 0:
            return lines, pos
        cut(view[pos:newline])
        pos = newline + 1


def activity_time(message_ts: Any, entry_ts: Any) -> int | None:
    """pi's activity time of a user or assistant message: ``message.timestamp`` when it is a number,
    else the entry's timestamp; None where JS would get an invalid date (a number outside its range)."""
    if type(message_ts) is int and -MAX_MS <= message_ts <= MAX_MS:
        return message_ts  # what pi writes: one test instead of a call per message
    if isinstance(message_ts, int | float) and not isinstance(message_ts, bool):
        return iso_to_ms(message_ts)
    return None if entry_ts is UNSET else iso_to_ms(entry_ts)


def dates_session(head: Head) -> bool:
    """Whether a user or assistant message dates the session: pi's list skips one without a
    ``content`` (docs/format.md §10)."""
    return head.message.content is not UNSET


def newest_activity(heads: Sequence[Head], types: Sequence[str], roles: Sequence[str | None]) -> int | None:
    """The newest ``activity_time`` of the user and assistant messages among ``heads`` that date the
    session: pi writes integer times and a content for each, so one ``max`` usually does."""
    active = list(compress(heads, map(_ACTIVE_MESSAGES.__contains__, zip(types, roles))))
    if UNSET in map(_MESSAGE_CONTENT, active):
        active = list(filter(dates_session, active))
    times = list(map(_MESSAGE_TIMESTAMP, active))
    if times and set(map(type, times)) == {int} and min(times) >= -MAX_MS and max(times) <= MAX_MS:
        return max(times)
    found = [activity_time(head.message.timestamp, head.timestamp) for head in active]
    return max((ms for ms in found if ms is not None), default=None)


class Chunk(NamedTuple):
    """The heads of a chunk of lines that are all ordinary entries, and their columns."""

    heads: list[Head]
    ids: list[str]
    types: list[str]
    roles: list[str | None]
    timestamps: list[str]
    joined_timestamps: str
    lengths: list[int]


def read_chunk(
    lines: list[memoryview] | list[bytes], max_line_bytes: int, strings: dict[Any, Any] | None
) -> Chunk | None:
    """Decode whole lines that are all ordinary entries, or None if one is not (the careful reader
    then takes them one by one).

    "Ordinary" is what the typed head decoder accepts (a string ``type``, id, parentId, timestamp and
    role), within the length limit, nested no deeper than ``MAX_DEPTH``, and not a second header. The
    caller checks what depends on the rest of the file: valid UTF-8 (per chunk), the version, ids seen
    before. ``strings`` gives every
    type and role one string object (``setdefault``) when they are not among those pi writes; None
    leaves them as decoded (for a caller that keeps none of them).
    """
    lengths = list(map(len, lines))
    longest = max(lengths)
    if longest > max_line_bytes:
        return None
    if longest > 2 * MAX_DEPTH and fast_path_may_nest_deeper() and any(map(nested_too_deeply, lines)):
        return None  # a line only the careful path refuses (``lines.fast_path_may_nest_deeper``)
    try:
        heads: list[Head] = list(map(decode_known_head, lines))
        types = list(map(_TYPE, heads))
        roles = list(map(_ROLE, heads))
    except DECODE_ERRORS:  # a type or role pi does not write, or a line only the careful path reads
        try:
            heads = list(map(decode_head, lines))
        except DECODE_ERRORS:
            return None
        types = list(map(_TYPE, heads))
        roles = list(map(_ROLE, heads))
        if strings is not None:
            types = list(map(strings.setdefault, types, types))
            roles = list(map(strings.setdefault, roles, roles))
    ids = list(map(_ID, heads))
    if None in ids or "session" in types:
        return None
    stamps = list(map(_TIMESTAMP, heads))
    try:
        joined = "".join(stamps)
    except TypeError:  # a timestamp missing (UNSET): the careful path notes it
        return None
    return Chunk(heads, ids, types, roles, stamps, joined, lengths)


class IndexBuilder:
    """Reads lines into the columns and links rows into the tree; ``snapshot()`` publishes the result.

    Lines are read a chunk at a time (``feed``), and most chunks in bulk (``_read_bulk``): every head
    decoded by one ``map``, each column extended once, only the rows that need a decision (roots,
    branch points, leaf markers, labels, names) visited one by one. A chunk that holds anything
    unusual — a line that is no ordinary entry, a reused id, a v1 file, invalid UTF-8 — is read line
    by line instead (``_index_line``), the reference that reports every problem; both give the same
    rows. The tree is linked the same way at ``commit``: in bulk when every parent was an earlier
    node, row by row otherwise.
    """

    bulk = True
    """Read and link in bulk where a chunk allows it. False reads every line and links every row the
    careful way: the reference that the tests compare the bulk paths with."""
    bulk_from = 8
    """Chunks of fewer lines (a refresh after an append) cost less read one by one than in bulk."""

    def __init__(self, source: str = "", *, max_line_bytes: int = MAX_LINE_BYTES) -> None:
        self.source = source
        self.max_line_bytes = max_line_bytes
        self.header: dict[str, Any] | None = None
        self.version = 1
        # One row per entry line, in file order (leaf markers and superseded duplicates included).
        self.ids: list[str] = []
        self.types: list[str] = []
        self.roles: list[str | None] = []
        self.timestamps = Texts()  # "" where the timestamp is not a string
        self.odd_timestamps: dict[int, Any] = {}  # rows whose timestamp is present but not a string
        self.parents = array("i")
        self.offsets = array("q")
        self.lengths = array("l")
        self.line_numbers = LineNumbers()
        self.by_id: dict[str, int] = {}  # the last row with an id wins (pi's byId)
        self.shadowed: set[int] = set()  # rows superseded by a later duplicate id
        # Tree structure over node rows; most nodes have one child, so lists only where there are more.
        self.roots: list[int] = []
        self.first_child = array("i")
        self.more_children: dict[int, list[int]] = {}  # copied before a refresh changes it
        self._orphans: dict[str, list[int]] = {}  # missing parent id -> rows waiting for it
        # State pi derives while loading.
        self.leaf_id: str | None = None
        self.labels: dict[str, tuple[str, str]] = {}  # target id -> (label, timestamp); copied before a change
        self.name: str | None = None
        self.message_count = 0
        self.last_activity_ms: int | None = None
        self.leaf_rows: list[int] = []
        self.leaf_targets: dict[int, str | None] = {}  # valid leaf markers -> where they moved the leaf
        self.reports: list[tuple[int, str]] = []  # (1-based line, what is wrong)
        self._skipped: tuple[int, str] | None = None  # the first line before the header that was not JSON
        # Reading position.
        self.offset = 0  # bytes consumed from the start of the file
        self.line_count = 0  # physical lines consumed
        self.tail_pending: tuple[int, str] | None = None  # an unterminated last line not consumed yet
        self.swallow_newline = False  # an unterminated last line was taken; its "\n" may follow
        self.skip_from: int | None = None  # start of an over-long line whose end is not read yet
        self.forward_parents = False  # some entry's parent comes later in the file (not in files pi writes)
        self._batch_first = 0  # rows from here on are read but not linked or published yet
        self._pending: dict[int, str] = {}  # batch rows whose parent id was not resolved while reading
        self._batch_duplicates = False  # a batch row reused an id: parents are resolved again by id
        self._irregular: list[int] = []  # batch rows whose parent is not simply the row before (see commit)
        self._shared_labels = False  # ``labels`` belongs to a published snapshot: copy before changing
        self._shared_children = False  # likewise ``more_children``
        self._v1_parsed = 0  # v1 migration: count of parsed JSON values after the header
        self.v1_ids: dict[int, str] = {}
        self.v1_own_ids: dict[int, str] = {}  # v1 lines that carry an id of their own (pi's rewrite replaces it)
        self._check_utf8 = False  # the chunk being fed holds invalid UTF-8: check each line
        self._strings = {name: name for name in _KNOWN_STRINGS}  # one object per distinct type and role

    # ------------------------------------------------------------------ reading

    def feed(self, buf: bytes, base_offset: int, *, at_eof: bool, end: int | None = None) -> None:
        """Index the complete lines of ``buf[:end]``, which starts at byte ``base_offset`` of the file.

        Stops before an unterminated last line. With ``at_eof`` (a cold load that read to the end) such
        a line is taken if it parses as a whole JSON object, as pi does; otherwise it is reported as
        torn and left unconsumed, to be read again once a writer completes it.
        """
        view = memoryview(buf)
        end = len(buf) if end is None else end
        # msgspec skips unknown keys without validating their UTF-8, so a line with a bad byte inside an
        # unknown string would become an entry that orjson later refuses to decode (context, listing
        # crash). One check per chunk; lines are checked one by one only when the chunk has a bad byte.
        self._check_utf8 = not buf.isascii() and not is_utf8(view[:end])
        pos = 1 if self.swallow_newline and end and buf[0] == 0x0A else 0
        if end:
            self.swallow_newline = False
        first = pos
        lines, pos = cut_lines(buf, pos, end)
        self._index_lines(lines, base_offset + first)
        self.offset = base_offset + pos
        self.tail_pending = None
        if pos < end:
            self._tail(view[pos:end], base_offset + pos, end - pos, at_eof)

    def _index_lines(self, lines: list[memoryview], offset: int) -> None:
        """Whole lines starting at byte ``offset``: line by line up to the header, then in bulk if the
        rest allows it."""
        done = 0
        while done < len(lines) and self.header is None:
            offset = self._one_line(lines[done], offset)
            done += 1
        rest = lines[done:] if done else lines
        if len(rest) < self.bulk_from or not self._read_bulk(rest, offset):
            for line in rest:
                offset = self._one_line(line, offset)

    def _one_line(self, line: memoryview, offset: int) -> int:
        """Read one line (the careful way); returns where the next one starts."""
        self.line_count += 1
        length = len(line)
        if length > self.max_line_bytes:
            self._report_long_line(length)
        else:
            self._index_line(line, offset, length)
        return offset + length + 1

    def _read_bulk(self, lines: list[memoryview], offset: int) -> bool:
        """Read a chunk of lines in bulk if they are all ordinary entries (``read_chunk``) with new ids,
        in a chunk of valid UTF-8 after a v2/v3 header; False (nothing read) otherwise, so that the
        caller reads them one by one. Everything else about a row is decided here as ``_index_line``
        decides it: a parent that is missing, later, the row itself or a leaf marker is left PENDING
        for ``commit``; leaf markers, labels and names take effect in file order.
        """
        if not self.bulk or self.version == 1 or self._check_utf8:
            return False
        chunk = read_chunk(lines, self.max_line_bytes, self._strings)
        if chunk is None:
            return False
        heads, ids, types, roles, stamps, joined, lengths = chunk
        by_id = self.by_id
        if not by_id.keys().isdisjoint(ids):
            return False
        first, count, known = len(self.ids), len(heads), len(by_id)
        by_id.update(zip(ids, range(first, first + count)))
        if len(by_id) != known + count:  # an id twice in the chunk
            for entry_id in ids:
                by_id.pop(entry_id, None)  # none of them was there before
            return False

        # Every line is a row: the columns grow once each.
        previous = self.ids[-1] if first else None
        self.ids += ids
        self.types += types
        self.roles += roles
        self.timestamps.extend(stamps, joined)
        self.first_child.extend(array("i", [NO_PARENT]) * count)
        self.offsets.extend(map(add, accumulate(lengths, initial=offset), range(count)))  # + 1 per newline
        self.lengths.fromlist(lengths)
        self.line_numbers.note(first, self.line_count + 1)
        self.line_count += count
        self.parents.fromlist(self._bulk_parents(heads, types, first, [previous, *ids[:-1]]))

        effects = sorted(position for kind in _EFFECTS if kind in types for position in positions(types, kind))
        for position in effects:
            self._take_effect(heads[position], first + position)
        if types[-1] != LEAF:
            self.leaf_id = ids[-1]
        if MESSAGE in types:
            self.message_count += types.count(MESSAGE)
            self._note_activity(newest_activity(heads, types, roles))
        return True

    def _bulk_parents(self, heads: list[Head], kinds: list[str], first: int, before: list[str | None]) -> list[int]:
        """The parent rows of the rows ``first…`` just read, whose heads are ``heads``; ``before`` holds
        the id of the row before each.

        Nearly every parent is the row before: one ``ne`` over the chunk finds the others, which are
        resolved as ``_add_row`` resolves them (an earlier node, else PENDING). A leaf marker is no
        node, so the marker and the row after it are looked at too, as is the first row of the file."""
        parent_ids = list(map(_PARENT_ID, heads))
        count = len(parent_ids)
        check = set(positions(bytes(map(ne, parent_ids, before)), 1))
        if LEAF in kinds:
            for position in positions(kinds, LEAF):
                check.update((position, position + 1))
        if not first or self.types[first - 1] == LEAF:
            check.add(0)
        parents = list(range(first - 1, first - 1 + count))
        types, irregular, get = self.types, self._irregular, self.by_id.get
        for position in sorted(check):
            if position == count:
                break
            row = first + position
            parent_id = parent_ids[position]
            parent = NO_PARENT if parent_id is None else get(parent_id, PENDING)
            if parent >= row or parent == PENDING or (parent != NO_PARENT and types[parent] == LEAF):
                self._pending[row] = parent_id
                parent = PENDING
            parents[position] = parent
            irregular.append(row)
        return parents

    def _take_effect(self, head: Head, row: int) -> None:
        """A leaf marker, label or name read in bulk: what ``_unusual_line`` does after adding its row."""
        kind = self.types[row]
        if kind == LEAF:
            if row and self.types[row - 1] != LEAF:
                self.leaf_id = self.ids[row - 1]  # the position just before the marker
            self._move_leaf(row, head.targetId, self.line_numbers[row])
        elif kind == "label":
            self._apply_label(head.targetId, head.label, self.timestamps[row])
        else:
            self.name = session_name(head.name)

    def long_line(self, start: int, end: int, *, terminated: bool) -> None:
        """The reader met a line longer than the limit, from byte ``start`` to ``end`` (its newline,
        or as far as the file went). It is skipped without being held in memory; an unterminated one
        is skipped on until its newline arrives."""
        if terminated:
            self.line_count += 1
            self._report_long_line(end - start)
            self.offset = end + 1
            self.skip_from = None
        else:
            self.offset = end
            self.skip_from = start
            self.tail_pending = (
                self.line_count + 1,
                f"skipped: longer than {self.max_line_bytes:,} bytes (not terminated yet)",
            )

    def _report_long_line(self, length: int) -> None:
        where = "skipped before the header" if self.header is None else "skipped"
        self.reports.append((self.line_count, f"{where}: {length:,} bytes, longer than {self.max_line_bytes:,}"))

    def _tail(self, line: memoryview, offset: int, length: int, at_eof: bool) -> None:
        """An unterminated last line. At the end of a cold load it is read if it is a whole JSON object
        (an entry, or the header of a file that holds nothing else), as pi reads it."""
        if not bytes(line).strip():
            return
        if at_eof:
            try:
                value = parse_value(line)
            except BadLine:
                value = None
            if isinstance(value, dict):
                self.line_count += 1
                self._index_line(line, offset, length)
                self.offset = offset + length
                self.swallow_newline = True
                return
        self.tail_pending = (self.line_count + 1, "unterminated last line (torn write): not read")

    def _index_line(self, line: memoryview, offset: int, length: int) -> None:
        """One line, the careful way: what every odd line (the header, bad lines, v1, reused ids) takes,
        reporting what it finds. ``_read_bulk`` must give the same rows for the lines it accepts."""
        if self.header is None or self._check_utf8 or self.version == 1:
            self._unusual_line(line, None, offset, length)
            return
        try:
            head = decode_head(line)
        except DECODE_ERRORS:
            self._unusual_line(line, None, offset, length)
            return
        if length > 2 * MAX_DEPTH and fast_path_may_nest_deeper() and nested_too_deeply(line):
            self._unusual_line(line, None, offset, length)
            return
        if head.id is None or head.type in _SPECIAL_TYPES or head.id in self.by_id:
            self._unusual_line(line, head, offset, length)
            return
        self._add_row(head.id, head, offset, length, head.parentId)

    def _unusual_line(self, line: memoryview, head: Head | None, offset: int, length: int) -> None:
        lineno = self.line_count
        if self.header is None:
            self._find_header(line, lineno)
            return
        if self._check_utf8 and not is_utf8(line):
            self.reports.append((lineno, "skipped: not valid UTF-8"))
            return
        if head is None:
            try:
                head = read_head(line)
            except BadLine as bad:
                if bad.value is not None:
                    self._v1_parsed += 1
                self.reports.append((lineno, f"skipped: {bad.reason}"))
                return
        if head.type == "session":
            self._v1_parsed += 1
            self.reports.append((lineno, "skipped: a second session header"))
            return
        parent_id = head.parentId
        if isinstance(head, OddParentHead) and self.version > 1:
            self.reports.append((lineno, f"parentId {_shown(head.odd_parent)} is not a string: shown as a root"))
        if self.version == 1:
            entry_id = self._v1_id(lineno)
            parent_id = self.ids[-1] if self.ids else None
            self.v1_ids[self._v1_parsed] = entry_id
            if head.id is not None:
                self.v1_own_ids[self._v1_parsed] = head.id
            self._v1_parsed += 1
        elif head.id is None:
            self.reports.append((lineno, "skipped: no string 'id'"))
            return
        else:
            entry_id = head.id

        previous = self.by_id.get(entry_id)
        if previous is not None and previous < self._batch_first:
            raise NeedsRebuild  # earlier parent ids now name this line: published rows would change
        row = self._add_row(entry_id, head, offset, length, parent_id)
        if previous is not None:
            self.shadowed.add(previous)
            if self.types[previous] == MESSAGE:
                self.message_count -= 1  # a superseded line is no message of the session any more
            self.reports.append((self.line_numbers[previous], f"duplicate id {entry_id}: superseded by line {lineno}"))
            self._batch_duplicates = True
        kind = self.types[row]
        if kind == LEAF:
            self._move_leaf(row, head.targetId, lineno)
        elif kind == "label":
            self._apply_label(head.targetId, head.label, self.timestamps[row])
        elif kind == "session_info":
            self.name = session_name(head.name)

    def _add_row(self, entry_id: str, head: Head, offset: int, length: int, parent_id: str | None) -> int:
        """Append a row; its parent is resolved now when it is an earlier ordinary row (else PENDING)."""
        row = len(self.ids)
        strings = self._strings
        kind = strings.setdefault(head.type, head.type)
        role = head.role
        if role is not None:
            role = strings.setdefault(role, role)
        timestamp = head.timestamp
        if type(timestamp) is not str:
            if timestamp is not UNSET:
                self.odd_timestamps[row] = timestamp
            timestamp = ""
        self.ids.append(entry_id)
        self.types.append(kind)
        self.roles.append(role)
        self.timestamps.append(timestamp)
        self.first_child.append(NO_PARENT)
        self.offsets.append(offset)
        self.lengths.append(length)
        self.line_numbers.note(row, self.line_count)
        if parent_id is None:
            parent = NO_PARENT
        else:
            parent = self.by_id.get(parent_id, PENDING)
            if parent == PENDING or self.types[parent] == LEAF:
                self._pending[row] = parent_id
                parent = PENDING
        self.parents.append(parent)
        self._irregular.append(row)
        if kind != LEAF:
            self.leaf_id = entry_id
        if kind == MESSAGE:
            self.message_count += 1
            if role in _ACTIVE_ROLES and dates_session(head):
                self._note_activity(activity_time(head.message.timestamp, head.timestamp))
        self.by_id[entry_id] = row
        return row

    def _find_header(self, line: memoryview, lineno: int) -> None:
        try:
            value = parse_value(line)
        except BadLine as bad:
            self.reports.append((lineno, f"skipped before the header: {bad.reason}"))
            self._skipped = self._skipped or (lineno, bad.reason)
            return
        if not isinstance(value, dict):
            self.reports.append((lineno, "skipped before the header: not a JSON object"))
            return
        self.header = header_of(value, self.source, lineno, self._skipped)
        self.version = read_version(value)

    def _v1_id(self, lineno: int) -> str:
        """A stable id for a v1 line (pi assigns random ones when it rewrites; pitree never rewrites)."""
        seed = f"{self.header.get('id') if self.header else ''}:{lineno}"
        for salt in range(1000):
            candidate = hashlib.blake2s(f"{seed}:{salt}".encode(), digest_size=4).hexdigest()
            if candidate not in self.by_id:
                return candidate
        raise AssertionError("unreachable: 1000 hash collisions")

    def _move_leaf(self, row: int, target: Any, lineno: int) -> None:
        self.leaf_rows.append(row)
        if target is UNSET:
            self.reports.append((lineno, "leaf entry without 'targetId': ignored"))
        elif target is None:
            self.leaf_id = None
            self.leaf_targets[row] = None
        else:
            target_row = self.by_id.get(target) if isinstance(target, str) else None
            if target_row is None or target_row >= row or self.types[target_row] == LEAF:
                self.reports.append((lineno, f"leaf entry targets {target!r}, not an earlier entry: ignored"))
            else:
                self.leaf_id = target
                self.leaf_targets[row] = target

    def _note_activity(self, activity: int | None) -> None:
        """pi's ``modified``: the newest user/assistant message time (``activity_time``)."""
        if activity is not None and (self.last_activity_ms is None or activity > self.last_activity_ms):
            self.last_activity_ms = activity

    def _apply_label(self, target: Any, text: Any, timestamp: str) -> None:
        if not isinstance(target, str):
            return
        if self._shared_labels:
            self.labels = dict(self.labels)
            self._shared_labels = False
        shown = label_text(text)
        if shown is None:
            self.labels.pop(target, None)
        else:
            self.labels[target] = (shown, timestamp)

    def instant(self, row: int) -> float:
        return _instant(self.timestamps, self.odd_timestamps, row)

    # ------------------------------------------------------------------ linking

    def commit(self) -> range:
        """Link the rows read since the last commit into the tree; returns them (file order).

        When every parent was resolved to an earlier node while reading (files pi writes), ``_link``
        does it in bulk. Otherwise parents left unresolved while reading are resolved now that the
        whole batch is known (a parent may come later in the file), and checked for cycles after that,
        so that a cycle among rows of the same batch is seen whole. Only an edge to a later row can
        close a cycle, and normal appends have none, so the check costs nothing on the common path.
        """
        published = self._batch_first
        rows = range(published, len(self.ids))
        pending, self._pending = self._pending, {}
        duplicates, self._batch_duplicates = self._batch_duplicates, False
        irregular, self._irregular = self._irregular, []
        self._batch_first = len(self.ids)
        if self.bulk and not (pending or duplicates or self.forward_parents or self._orphans):
            self._link(rows, irregular)
            return rows
        parents, ids, types, shadowed = self.parents, self.ids, self.types, self.shadowed
        later_edge = False
        for row in rows:
            parent = parents[row]
            if types[row] == LEAF or row in shadowed:
                parents[row] = NO_PARENT
                continue
            if parent == PENDING:
                parent = self._resolve_parent(row, pending[row])
            elif parent != NO_PARENT and duplicates:
                parent = self._resolve_parent(row, ids[parent])  # by id again: the last duplicate wins
            later_edge = later_edge or parent > row
            parents[row] = parent
        if later_edge:
            self.forward_parents = True
            for row in rows:
                parent = parents[row]
                if parent > row and self._is_ancestor(row, parent):
                    self.reports.append(
                        (self.line_numbers[row], f"parent {ids[parent]} closes a cycle: shown as a root")
                    )
                    parents[row] = NO_PARENT
        if self._orphans:
            self._check_orphans(rows)
        self._add_children(row for row in rows if types[row] != LEAF and row not in shadowed)
        return rows

    def _link(self, rows: range, irregular: list[int]) -> None:
        """Link a batch whose every parent is an earlier node, and whose rows are all new ids.

        A row whose parent is the row just before it is that row's first child (no other child can
        come between them), so one slice assignment links all of those; only the rows in
        ``irregular`` (roots, branches, leaf markers, rows read the careful way), in file order, are
        visited. The first child of the last row published before the batch has none yet: its
        children are all in this batch or later."""
        first_child, parents, types = self.first_child, self.parents, self.types
        low = max(rows.start, 1)
        if rows.stop > low:
            first_child[low - 1 : rows.stop - 1] = array("i", range(low, rows.stop))
        for row in irregular:
            if row >= low:
                first_child[row - 1] = NO_PARENT
            if types[row] == LEAF:
                parents[row] = NO_PARENT
        self._add_children(row for row in irregular if types[row] != LEAF)

    def _add_children(self, rows: Iterable[int]) -> None:
        """Link each node of ``rows`` (file order) under its parent: a root, a first child, or one more."""
        parents, first_child = self.parents, self.first_child
        branching: dict[int, list[int]] = {}
        for row in rows:
            parent = parents[row]
            if parent == NO_PARENT:
                self.roots.append(row)
            elif first_child[parent] == NO_PARENT:
                first_child[parent] = row  # most nodes have one child: no list for them
            else:
                branching.setdefault(parent, []).append(row)
        if branching:
            if self._shared_children:
                self.more_children = dict(self.more_children)
                self._shared_children = False
            for parent, added in branching.items():
                known = self.more_children.get(parent) or [first_child[parent]]
                self.more_children[parent] = order_children([*known, *added], self.instant)

    def _check_orphans(self, rows: range) -> None:
        """Rows of earlier refreshes whose parent was missing and has now appeared would change parent
        in place; that is a rebuild. A parent that would close a cycle leaves them roots."""
        for row in rows:
            waiting = self._orphans.pop(self.ids[row], None) if self._is_node(row) else None
            if waiting and any(not self._is_ancestor(child, row) for child in waiting):
                raise NeedsRebuild

    def _is_node(self, row: int) -> bool:
        return self.types[row] != LEAF and row not in self.shadowed

    def _resolve_parent(self, row: int, parent_id: str | None) -> int:
        if parent_id is None:
            return NO_PARENT
        parent = self.by_id.get(parent_id, NO_PARENT)
        line = self.line_numbers[row]
        if parent == NO_PARENT:
            self.reports.append((line, f"parent {parent_id} not found: shown as a root"))
            self._orphans.setdefault(parent_id, []).append(row)
        elif parent == row:
            self.reports.append((line, "entry is its own parent: shown as a root"))
            return NO_PARENT
        elif self.types[parent] == LEAF:
            self.reports.append((line, f"parent {parent_id} is a leaf marker: shown as a root"))
            return NO_PARENT
        return parent

    def _is_ancestor(self, row: int, start: int) -> bool:
        seen: set[int] = set()
        node = start
        while node != NO_PARENT and node not in seen:
            if node == row:
                return True
            seen.add(node)
            node = self.parents[node]
        return False

    def snapshot(self) -> SessionIndex:
        """What readers may see now: every committed row and the state derived from them."""
        self._shared_labels = self._shared_children = True
        return SessionIndex(self)


class RowsById:
    """``id -> row`` for the rows a snapshot sees (``in``, ``get``, ``[]``); the dict it reads keeps growing."""

    __slots__ = ("_by_id", "_length")

    def __init__(self, by_id: dict[str, int], length: int) -> None:
        self._by_id = by_id
        self._length = length

    def get(self, entry_id: str, default: int | None = None) -> int | None:
        row = self._by_id.get(entry_id)
        return row if row is not None and row < self._length else default

    def __contains__(self, entry_id: object) -> bool:
        return isinstance(entry_id, str) and self.get(entry_id) is not None

    def __getitem__(self, entry_id: str) -> int:
        row = self.get(entry_id)
        if row is None:
            raise KeyError(entry_id)
        return row


class SessionIndex:
    """A file's index as of one refresh: the first ``len(index)`` rows, and pi's derived state for them.

    Columns (``ids``, ``types``, ``roles``, ``timestamps``, ``parents``, ``offsets``, ``lengths``,
    ``line_numbers``) are shared with later snapshots and may be longer than this one: index them with
    rows below ``len(index)`` only (rows, children, roots and paths handed out here always are).
    """

    __slots__ = (
        "_first_child",
        "_labels",
        "_leaf_count",
        "_leaf_rows",
        "_leaf_targets",
        "_length",
        "_more_children",
        "_odd_timestamps",
        "_report_count",
        "_reports",
        "_root_count",
        "_roots",
        "_shadowed",
        "_shadowed_count",
        "_v1_ids",
        "_v1_own_ids",
        "by_id",
        "forward_parents",
        "header",
        "ids",
        "last_activity_ms",
        "leaf_id",
        "lengths",
        "line_numbers",
        "message_count",
        "name",
        "offset",
        "offsets",
        "parents",
        "roles",
        "source",
        "tail_pending",
        "timestamps",
        "types",
        "version",
    )

    def __init__(self, built: IndexBuilder) -> None:
        self._length = length = len(built.ids)
        self.source = built.source
        self.header = built.header
        self.version = built.version
        self.ids = built.ids
        self.types = built.types
        self.roles = built.roles
        self.timestamps = built.timestamps
        self.parents = built.parents
        self.offset = built.offset  # bytes of the file this snapshot reflects (a reader's cursor)
        self.offsets = built.offsets
        self.lengths = built.lengths
        self.line_numbers = built.line_numbers
        self.by_id = RowsById(built.by_id, length)
        self.leaf_id = built.leaf_id
        self.name = built.name
        self.message_count = built.message_count
        self.last_activity_ms = built.last_activity_ms
        self.tail_pending = built.tail_pending
        self.forward_parents = built.forward_parents
        self._labels = built.labels
        self._roots = built.roots
        self._root_count = len(built.roots)
        self._first_child = built.first_child
        self._more_children = built.more_children
        self._leaf_rows = built.leaf_rows
        self._leaf_count = len(built.leaf_rows)
        self._leaf_targets = built.leaf_targets
        self._shadowed = built.shadowed
        self._shadowed_count = len(built.shadowed)
        self._reports = built.reports
        self._report_count = len(built.reports)
        self._odd_timestamps = built.odd_timestamps
        self._v1_ids = built.v1_ids
        self._v1_own_ids = built.v1_own_ids

    @property
    def read_only(self) -> bool:
        """v1/v2 files are migrated in memory only and never appended to (docs/format.md §8.6)."""
        return self.version < 3

    def __len__(self) -> int:
        return self._length

    @property
    def labels(self) -> dict[str, tuple[str, str]]:
        """``{target id: (label, timestamp of the label line)}`` (docs/format.md §4.4). Do not change it."""
        return self._labels

    @property
    def roots(self) -> list[int]:
        """Rows without a parent, in file order (pi keeps roots in file order)."""
        return self._roots[: self._root_count]

    @property
    def leaf_rows(self) -> list[int]:
        """The ``leaf`` marker rows, in file order."""
        return self._leaf_rows[: self._leaf_count]

    def row(self, entry_id: str) -> int | None:
        """The row of a tree node with this id (None for unknown ids and ``leaf`` markers)."""
        row = self.by_id.get(entry_id)
        return row if row is not None and self.types[row] != LEAF else None

    def children(self, row: int) -> list[int]:
        """A node's children in pi's order (see ``order_children``)."""
        more = self._more_children.get(row)
        if more is not None:
            return list(more)
        first = self._first_child[row]
        return [first] if 0 <= first < self._length else []

    def instant(self, row: int) -> float:
        """The row's timestamp as pi's ``new Date(timestamp).getTime()`` (NaN when invalid or absent)."""
        return _instant(self.timestamps, self._odd_timestamps, row)

    def order_children(self, rows: Sequence[int]) -> list[int]:
        """``rows`` (siblings, in any order) as pi orders children: for views that show a filtered tree."""
        return order_children(rows, self.instant)

    def is_node(self, row: int) -> bool:
        """Rows that are tree nodes: not a ``leaf`` marker, not superseded by a later duplicate."""
        return self.types[row] != LEAF and row not in self._shadowed

    def leaf_target_row(self, marker: int) -> int | None:
        """The node a valid ``leaf`` marker moved the position to (None: before the first entry, or invalid)."""
        target = self._leaf_targets.get(marker)
        return None if target is None else self.row(target)

    @property
    def leaf_row(self) -> int | None:
        return None if self.leaf_id is None else self.row(self.leaf_id)

    @property
    def node_count(self) -> int:
        return self._length - self._leaf_count - self._shadowed_count

    def v1_id_for_parsed_index(self, parsed_index: int, row: int) -> str | None:
        """The id a v1 ``firstKeptEntryIndex`` of the compaction at ``row`` names: it counts parsed lines
        with the header as 0 (docs/format.md §8.6). pi's migration gives ids in file order and resolves
        each compaction as it goes, so a position after the compaction names the entry by the id its
        line carries (v1 lines carry none: nothing)."""
        kept = self._v1_ids.get(parsed_index - 1)
        if kept is None or self.by_id[kept] <= row:
            return kept
        return self._v1_own_ids.get(parsed_index - 1)

    def skipped(self) -> list[tuple[int, str]]:
        """Every line skipped or reported, in line order (an unterminated tail included)."""
        reports = sorted(self._reports[: self._report_count])
        if self.tail_pending is not None:
            reports.append(self.tail_pending)
        return reports
