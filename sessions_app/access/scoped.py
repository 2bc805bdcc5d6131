"""A session as one grant sees it (``SessionView``): the whole file, or only the rows of a scope.

A scoped view is an index of its own, built by feeding the core's ``IndexBuilder`` the header and the
visible lines of the file, at their own byte offsets. Everything that reads a session (pages, the tree
panel, navigators, search, downloads, forks, the push) then works on it unchanged, and cannot show
what it does not hold: a sibling branch does not exist there, so "‹ 2/3 ›" counts only what the grant
sees, and an entry id from elsewhere is simply unknown (404).

- A live branch (``Scope(entry)``): the path to the entry, everything below it as it grows, and the
  ``leaf`` markers that move the position inside that part.
- A snapshot (``Scope(entry, offset)``): the path to the entry in the index of the file's first
  ``offset`` bytes (what the file held when it was shared). Later lines are never read, so later
  labels and names do not show either; a file whose first ``offset`` bytes changed since (their
  SHA-256 is kept with the share) shows nothing.

Labels are pi's global state (a label line may sit anywhere in the tree): a view keeps the labels the
file had (had then, for a snapshot) on the entries it shows, and no other. A line it holds that names
an entry it does not (a label set from this branch on another, a summary's ``fromId``) is shown without
that reference (``references.py``).

Writes go to the file itself, through its one write path, after the grant allows them; the parent a
write names must be in the view, and each write is recorded with its author.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Container, Generator, Iterable, Sequence
from contextlib import closing
from pathlib import Path
from typing import Any

import orjson
from django.core.exceptions import PermissionDenied

from ..display.tools import FORK, SHARE, SIBLING, WRITE
from ..services import pi
from ..sessionfiles.entries import Draft
from ..sessionfiles.index import LEAF, NO_PARENT, IndexBuilder, SessionIndex
from ..sessionfiles.store import AT_LEAF, Chained, Parent, SessionFile, feed_file, reopen_regular
from ..sessionfiles.tree import path as tree_path
from ..sessionfiles.tree import subtree
from .authorship import record
from .grants import FULL, Access, Grant, Scope
from .references import DROP, REFERENCES, cleaned_line

_CACHED_PARTS = 64
_CHUNK = 1 << 20

Plan = Callable[[SessionIndex], tuple[Draft, str | None] | None]


class SessionView(SessionFile):
    """One session file as one grant sees it. Reads as a ``SessionFile`` does; writes need a grant that
    allows them, and are recorded with the actor of ``access`` as author (not for the command line's
    local owner, who is nobody in the database)."""

    def __init__(self, full: SessionFile, grant: Grant, *, access: Access | None = None) -> None:
        # No SessionFile.__init__: ``full`` read the file; a view only looks at what it read.
        self.full = full
        self.grant = grant
        self.access = access  # who looks (lineage and forks ask it about other sessions)
        self.author = access.actor if access is not None else None
        self.path = full.path
        self.within = full.within
        self.fsync = full.fsync
        self.max_line_bytes = full.max_line_bytes
        self._part = None if grant.scope is None else _part(full.path, grant.scope)
        self._cleaned: dict[int, bytes] = {}  # line offset -> what the view shows of that line
        self.view_key = grant.scope
        self.index = self._current()

    @property
    def file_position(self) -> str | None:
        return self.full.index.leaf_id

    def line_key(self, offset: int, length: int) -> tuple[Any, ...]:
        """A line this view shows cleaned (padded to the same length, so at the same offsets) is not
        the file's line: its key holds what is shown, so that no cache hands one reader's line to
        another."""
        key = super().line_key(offset, length)
        shown = self._cleaned.get(offset)
        return key if shown is None else (*key, hashlib.blake2b(shown, digest_size=16).digest())

    def _current(self) -> SessionIndex:
        if self._part is None:
            return self.full.index
        index, self._cleaned = self._part.follow(self.full)
        return index

    def raw_lines(self, rows: Iterable[int]) -> Generator[bytes, None, None]:
        """The stored lines, except those that name an entry the view does not hold: those as cleaned."""
        if not self._cleaned:
            yield from super().raw_lines(rows)
            return
        rows = list(rows)
        offsets, cleaned = self.index.offsets, self._cleaned
        with closing(super().raw_lines(rows)) as lines:  # closed with this one, if its reader stops early
            for row, line in zip(rows, lines):
                shown = cleaned.get(offsets[row])
                yield line if shown is None else shown.rstrip(b" ")

    def _stored_as_is(self, row: int) -> bool:
        return self.index.offsets[row] not in self._cleaned

    def refresh(self) -> list[int]:
        """The file's new lines as the view sees them (all rows when the file was read again)."""
        before = self.index
        self.full.refresh()
        self.index = self._current()
        if self.index is before:
            return []
        if self.index.header is not before.header or len(self.index) < len(before):
            return list(range(len(self.index)))
        return list(range(len(before), len(self.index)))

    def _append(
        self, plan: Plan, *, position_then: Parent = AT_LEAF, entry_id: str | None = None, then: Sequence[Chained] = ()
    ) -> list[dict[str, Any]]:
        if not self.grant.can_write:
            raise PermissionDenied("You may read this session but not write to it.")

        def within_view(_: SessionIndex) -> tuple[Draft, str | None] | None:
            # The file has just caught up under its lock: so does the view, and the plan (the parent
            # it names, the position it moves) is checked against what the grant sees.
            self.index = self._current()
            planned = plan(self.index)
            if planned is not None and self._part is not None and not self._part.takes(self.full.index, *planned):
                raise _outside(self._part.scope)
            return planned

        with pi.writing(self.full.path):  # never among the lines of pi's turn
            written = self.full._append(within_view, position_then=position_then, entry_id=entry_id, then=then)
        self.index = self._current()
        if written and self.author is not None and not self.author.unrestricted:
            # The first entry is the one asked for: what a write chains below it (settings picked
            # while a reply was written, below that reply) was asked for by others (docs/format.md §5.2).
            record(self.session_id, written[0]["id"], self.author.user if self.author.signed_in else None)
        return written

    def writes_under(self, parent_id: str | None) -> bool:
        """Whether the scope lets an entry be written under ``parent_id`` (the grant's role aside): any
        parent for a whole grant; for a branch share, the shared entry or one below it (``_Part.under``,
        the rule the append itself checks), never one above it, where the entry would be a sibling
        outside the branch. The pages' tools (``trunk_of``) and ``refuse_outside_branch`` ask this."""
        return self._part is None or self._part.under(self.full.index, parent_id)

    def refuse_outside_branch(self, parent_id: str | None) -> None:
        """Refuse (403, as the append would) an entry under ``parent_id`` that a branch share's writer
        may not write (``writes_under``). Asked before a reply or a summary is: it could not be stored,
        so the model is not asked for it and no tab shows it being written. (The append checks again,
        under the file's lock.)"""
        if self._part is None:
            return
        self._part.follow(self.full)  # the rows under the shared entry, as of the file's index
        if not self.writes_under(parent_id):
            raise _outside(self._part.scope)


def _outside(scope: Scope) -> PermissionDenied:
    return PermissionDenied(
        f"You may write only in the branch shared with you (entry {scope.entry_id} and what follows it), "
        "and move only to entries it holds. Nothing was written."
    )


def can_write(session: SessionFile) -> bool:
    """Whether a page offers writes on ``session``: a version 3 file in the sessions folder (not behind a
    link out of it), and a grant that writes."""
    return (
        not session.index.read_only
        and not session.outside
        and (not isinstance(session, SessionView) or session.grant.can_write)
    )


def may_fork(session: SessionFile) -> bool:
    """Whether the reader has a workspace a fork of ``session`` could go to (a link holder who is not
    signed in has none)."""
    access = session.access if isinstance(session, SessionView) else None
    return access is None or access.actor.signed_in or access.actor.sees_everything


def tools_of(session: SessionFile) -> frozenset[str]:
    """The entry tools a page of ``session`` offers its reader (``display.tools``); at the entries of
    ``trunk_of`` without ``SIBLING``."""
    writes = [WRITE, SIBLING] if can_write(session) else []
    shares = [SHARE] if not isinstance(session, SessionView) or session.grant.can_share else []
    return frozenset([*writes, *([FORK] if may_fork(session) else []), *shares])


def trunk_of(session: SessionFile) -> Container[str]:
    """For a reader who writes in a branch share, the entries whose sibling (an Edit & resend, a
    Regenerate) would be outside the branch: those at or above the shared entry, whose parent the view
    does not write under (``SessionView.writes_under``). Asked only of the entries a page shows."""
    if not isinstance(session, SessionView) or session.grant.scope is None or not can_write(session):
        return frozenset()
    return _Trunk(session)


class _Trunk(Container[str]):
    """``trunk_of``'s entries, each found when asked (a page asks of the few it shows)."""

    def __init__(self, session: SessionView) -> None:
        self.session = session

    def __contains__(self, entry_id: object) -> bool:
        index = self.session.index
        row = index.row(entry_id) if isinstance(entry_id, str) else None
        if row is None:
            return False
        parent = index.parents[row]
        return not self.session.writes_under(None if parent == NO_PARENT else index.ids[parent])


def write_context(session: SessionFile) -> dict[str, Any]:
    """What a page needs to offer writes (``can_write``) and the entry tools the reader may use
    (``tools``, not all of them at the ``trunk``), or say what the reader may do (``grant``)."""
    return {
        "can_write": can_write(session),
        "tools": tools_of(session),
        "trunk": trunk_of(session),
        "grant": session.grant if isinstance(session, SessionView) else FULL,
    }


# ------------------------------------------------------------------------------- scoped parts


class _Part:
    """The visible rows of one scope of one file, followed as the file grows (shared by every view of
    that scope in this process)."""

    def __init__(self, path: Path, scope: Scope) -> None:
        self.path = path
        self.scope = scope
        self._lock = threading.Lock()
        self._source: dict[str, Any] | None = None  # the header object of the index followed (new: read again)
        self._consumed = 0  # rows of the file's index looked at
        self._builder: IndexBuilder | None = None
        self._below: set[int] = set()  # file rows at or under the anchor (a live branch)
        self._shown: set[int] = set()  # file rows fed to the builder
        self._labels: dict[str, tuple[str, str]] = {}
        self._cleaned: dict[int, bytes] = {}  # offset -> a shown line without its hidden reference
        self._index: SessionIndex | None = None

    def follow(self, full: SessionFile) -> tuple[SessionIndex, dict[int, bytes]]:
        """The view's index now, and its cleaned lines (grown along with it; replaced when it is)."""
        source = full.index
        with self._lock:
            if self._index is None or source.header is not self._source or len(source) < self._consumed:
                self._start(full, source)
            elif len(source) > self._consumed and not self.scope.snapshot:
                self._grow(full, source)
            assert self._index is not None
            return self._index, self._cleaned

    def _start(self, full: SessionFile, source: SessionIndex) -> None:
        self._source = source.header
        self._consumed = len(source)
        self._builder = builder = IndexBuilder(str(full.path), max_line_bytes=full.max_line_bytes)
        builder.feed(orjson.dumps(source.header or {}) + b"\n", 0, at_eof=False)
        self._below, self._shown = set(), set()
        self._cleaned = {}
        spans: list[tuple[int, int]] = []
        self._labels = {}
        anchor = source.row(self.scope.entry_id)
        if source.read_only or anchor is None:
            pass  # scoped shares are made of version 3 files only; an anchor gone shows nothing
        elif self.scope.snapshot_offset is not None:
            if prefix_digest(full.path, self.scope.snapshot_offset) == self.scope.snapshot_digest:
                then, rows, self._labels = _snapshot(full, self.scope.entry_id, self.scope.snapshot_offset)
                on_path = {then.ids[row] for row in rows}
                spans = self._clean(full.path, then, rows, on_path.__contains__)
        else:
            spans = self._clean(full.path, source, self._branch(source, anchor), self._holds(source))
            self._labels = source.labels
        _feed(full.path, builder, spans, self._cleaned)
        self._publish(builder)

    def _branch(self, source: SessionIndex, anchor: int) -> list[int]:
        self._below = set(subtree(source, anchor))
        self._shown = set(tree_path(source, anchor)) | self._below
        for marker in source.leaf_rows:
            if source.leaf_target_row(marker) in self._shown:
                self._shown.add(marker)
        return sorted(self._shown)

    def _grow(self, full: SessionFile, source: SessionIndex) -> None:
        rows: list[int] = []
        for row in range(self._consumed, len(source)):
            if source.is_node(row):
                if source.parents[row] == NO_PARENT or source.parents[row] not in self._below:
                    continue
                self._below.add(row)
            elif source.leaf_target_row(row) not in self._shown:
                continue
            self._shown.add(row)
            rows.append(row)
        self._consumed = len(source)
        self._labels = source.labels
        assert self._builder is not None
        _feed(full.path, self._builder, self._clean(full.path, source, rows, self._holds(source)), self._cleaned)
        self._publish(self._builder)

    def takes(self, source: SessionIndex, draft: Draft, parent_id: str | None) -> bool:
        """Whether a write stays in this (live branch) scope: an entry under the anchor or below it,
        or a move of the file's position to an entry the view holds (never "before the first entry",
        nor a new root: neither is in the branch)."""
        if draft.type == LEAF:
            target = draft.fields.get("targetId")
            return isinstance(target, str) and self._holds(source)(target)
        return self.under(source, parent_id)

    def under(self, source: SessionIndex, parent_id: str | None) -> bool:
        """Whether an entry under ``parent_id`` stays in this (live branch) scope: the parent is the
        anchor or below it."""
        row = None if parent_id is None else source.row(parent_id)
        return row is not None and row in self._below

    def _holds(self, source: SessionIndex) -> Callable[[str], bool]:
        """Whether a live branch shows the entry with this id."""

        def holds(entry_id: str) -> bool:
            row = source.row(entry_id)
            return row is not None and row in self._shown

        return holds

    def _clean(
        self, path: Path, index: SessionIndex, rows: list[int], holds: Callable[[str], bool]
    ) -> list[tuple[int, int]]:
        """The spans of ``rows`` (file order) to feed; a line naming an entry that ``holds`` refuses is
        noted in ``_cleaned`` without that reference, or left out when it cannot be (``references``)."""
        naming = [row for row in rows if index.types[row] in REFERENCES]
        lines = dict(zip(naming, _read_lines(path, [(index.offsets[row], index.lengths[row]) for row in naming])))
        spans: list[tuple[int, int]] = []
        for row in rows:
            offset = index.offsets[row]
            if row in lines:
                cleaned = cleaned_line(index.types[row], lines[row], holds)
                if cleaned == DROP:
                    self._shown.discard(row)
                    self._below.discard(row)
                    continue
                if cleaned is not None:
                    self._cleaned[offset] = cleaned
            spans.append((offset, index.lengths[row]))
        return spans

    def _publish(self, builder: IndexBuilder) -> None:
        builder.commit()
        index = builder.snapshot()
        # Labels are the file's (as of the snapshot), on the entries this view shows only.
        index._labels = {target: label for target, label in self._labels.items() if index.row(target) is not None}
        self._index = index


def _feed(path: Path, builder: IndexBuilder, spans: list[tuple[int, int]], cleaned: dict[int, bytes]) -> None:
    """Feed the builder each line at its own offset (file order), a cleaned line as cleaned. Lines that
    follow each other in the file are read and fed as one run (a linear history is mostly one run), up
    to ``_CHUNK`` bytes; a cleaned line is a run of its own."""
    if not spans:
        return
    fd, _ = reopen_regular(path)
    try:
        for start, end in _runs(spans, cleaned):
            shown = cleaned.get(start)
            data = shown + b"\n" if shown is not None else os.pread(fd, end - start, start)
            builder.feed(data if data.endswith(b"\n") else data + b"\n", start, at_eof=False)
    finally:
        os.close(fd)


def _runs(spans: list[tuple[int, int]], apart: dict[int, bytes]) -> list[tuple[int, int]]:
    """``(offset, length)`` spans of lines as ``[start, end)`` runs of adjacent whole lines (their
    newlines included); a line starting at an offset of ``apart`` is a run of its own."""
    runs: list[tuple[int, int]] = []
    for offset, length in spans:
        end = offset + length + 1
        joins = runs and runs[-1][1] == offset and end - runs[-1][0] <= _CHUNK
        if joins and offset not in apart and runs[-1][0] not in apart:
            runs[-1] = (runs[-1][0], end)
        else:
            runs.append((offset, end))
    return runs


def _read_lines(path: Path, spans: list[tuple[int, int]]) -> list[bytes]:
    """The bytes of each ``(offset, length)`` line, read with one open file."""
    if not spans:
        return []
    fd, _ = reopen_regular(path)
    try:
        return [os.pread(fd, length, offset) for offset, length in spans]
    finally:
        os.close(fd)


def _snapshot(
    full: SessionFile, entry_id: str, offset: int
) -> tuple[SessionIndex, list[int], dict[str, tuple[str, str]]]:
    """The rows of the path to ``entry_id`` (in the index they are rows of) and the labels, in the
    file's first ``offset`` bytes.

    Usually the file's own index tells: its rows before ``offset`` are those bytes, linked as they were,
    unless a later line reused an id or named a parent that came later (either may relink earlier
    rows); then those bytes are indexed again on their own."""
    now = full.index
    anchor = now.row(entry_id)
    relinked = now.forward_parents or now.node_count + len(now.leaf_rows) != len(now)
    if anchor is not None and not relinked and now.offsets[anchor] + now.lengths[anchor] < offset:
        return now, tree_path(now, anchor), _labels_before(full, offset)
    builder = IndexBuilder(str(full.path), max_line_bytes=full.max_line_bytes)
    fd, _ = reopen_regular(full.path)
    try:
        feed_file(fd, builder, offset, at_eof=False)
        builder.commit()
    finally:
        os.close(fd)
    then = builder.snapshot()
    anchor = then.row(entry_id)
    if anchor is None:
        return then, [], {}
    return then, tree_path(then, anchor), then.labels


def _labels_before(full: SessionFile, offset: int) -> dict[str, tuple[str, str]]:
    """The labels that the file's label lines before ``offset`` leave set (the last one wins, as pi reads)."""
    index = full.index
    rows = [row for row in range(len(index)) if index.types[row] == "label" and index.offsets[row] < offset]
    labels: dict[str, tuple[str, str]] = {}
    for row, entry in zip(rows, full.entries(rows)):
        target, text = entry.get("targetId"), entry.get("label")
        if not isinstance(target, str):
            continue
        if text:
            labels[target] = (text if isinstance(text, str) else str(text), index.timestamps[row])
        else:
            labels.pop(target, None)
    return labels


def prefix_digest(path: Path | str, offset: int) -> str:
    """SHA-256 of a file's first ``offset`` bytes: a snapshot checks that what it shows is still
    what was shared."""
    digest = hashlib.sha256()
    fd, _ = reopen_regular(path)
    try:
        position = 0
        while position < offset:
            chunk = os.pread(fd, min(_CHUNK, offset - position), position)
            if not chunk:
                return ""  # shorter than it was: not the file that was shared
            digest.update(chunk)
            position += len(chunk)
    finally:
        os.close(fd)
    return digest.hexdigest()


_parts: OrderedDict[tuple[Path, Scope], _Part] = OrderedDict()
_parts_lock = threading.Lock()


def _part(path: Path, scope: Scope) -> _Part:
    key = (Path(path).absolute(), scope)
    with _parts_lock:
        part = _parts.get(key)
        if part is None:
            part = _parts[key] = _Part(key[0], scope)
            while len(_parts) > _CACHED_PARTS:
                _parts.popitem(last=False)
        else:
            _parts.move_to_end(key)
        return part


def clear_cache() -> None:
    with _parts_lock:
        _parts.clear()
