"""The active path as a chat transcript, built backwards from the tab's position one page at a time.

A page costs the same in a 1k- and a 100k-entry session: it walks ``PAGE_SIZE`` parents up from its
start and decodes only those entries. Older entries arrive when the reader scrolls to them. When the
path holds a compaction, the entries before its ``firstKeptEntryId`` are folded behind a card (they
are still in the file and load when the card is opened).

A page may also start further up the path (``window_page``: a jump to the start, a compaction, a
label, a date): the entries from there down, and newer ones as the reader scrolls to them, up to the
tab's position, so that reaching the start of a long session takes one load, not one per page.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..sessionfiles.index import NO_PARENT, SessionIndex
from ..sessionfiles.store import SessionFile
from ..sessionfiles.tree import ancestors, latest_position_under
from .budget import PageBudget
from .entries import EntryView, navigator_for, present

PAGE_SIZE = 40
RESUME_WITHIN = PAGE_SIZE // 2  # a resumed branch opens with the entry asked for at most this far up


@dataclass
class TranscriptPage:
    """A run of consecutive path entries, oldest first, and what comes before them."""

    entries: list[EntryView] = field(default_factory=list)
    older_than: str | None = None  # id of this page's oldest entry, when older entries are not shown yet
    fold_before: str | None = None  # entries older than this one are folded into ``fold``
    fold_id: str | None = None  # the compaction that folds them (carried to older pages)
    fold: EntryView | None = None  # the compaction whose card stands for the folded history
    newer_than: str | None = None  # id of this page's newest entry, when newer ones (to ``until``) are not shown yet
    until: str | None = None  # the tab's position, where the newer pages end


def transcript_page(
    session: SessionFile,
    start_row: int | None,
    *,
    fold_before: str | None = None,
    fold_id: str | None = None,
    fold: bool = True,
) -> TranscriptPage:
    """Up to PAGE_SIZE path entries ending at ``start_row`` (inclusive), walking towards the root.

    ``fold_before``/``fold_id`` carry a compaction met on a newer page; ``fold`` False reads through
    compactions (when a compaction card is opened to show what it folds).
    """
    page = TranscriptPage(fold_before=fold_before, fold_id=fold_id)
    if start_row is None:
        return page
    index = session.index
    rows: list[int] = []
    for row in ancestors(index, start_row):
        rows.append(row)
        if fold and page.fold_before is None and index.types[row] == "compaction":
            folded_from = _fold_point(session, row)
            if folded_from is not None:
                page.fold_before, page.fold_id = index.ids[folded_from], index.ids[row]
        if page.fold_before is not None and index.ids[row] == page.fold_before:
            compaction = index.row(page.fold_id) if page.fold_id else None
            if compaction is not None:
                page.fold = present(session, session.entries([compaction])[0], compaction)
            break
        if len(rows) == PAGE_SIZE:
            if index.parents[row] != NO_PARENT:
                page.older_than = index.ids[row]
            break
    rows.reverse()
    page.entries = _views(session, rows)
    PageBudget().fit([*reversed(page.entries), *([page.fold] if page.fold else [])])
    return page


def window_page(session: SessionFile, path_rows: list[int], first: int, until_row: int) -> TranscriptPage:
    """Up to PAGE_SIZE path entries from ``path_rows[first]`` down (``path_rows``: the path to
    ``until_row``, the tab's position, root first), read through compactions: the reader asked for
    what they fold."""
    rows = path_rows[first : first + PAGE_SIZE]
    index = session.index
    page = TranscriptPage(older_than=index.ids[rows[0]] if first > 0 else None)
    if first + PAGE_SIZE < len(path_rows):
        page.newer_than, page.until = index.ids[rows[-1]], index.ids[until_row]
    page.entries = _views(session, rows)
    PageBudget().fit(list(reversed(page.entries)))
    return page


def resumed_at(index: SessionIndex, row: int) -> int:
    """Where ``row``'s branch was last left, when ``row`` is on the page that opens there (within
    ``RESUME_WITHIN`` entries above it); else ``row`` itself. A search hit opens so: a question with its
    answer and what followed, not cut off at the hit, and a message sent from there goes on the branch."""
    latest = latest_position_under(index, row)
    for steps, above in enumerate(ancestors(index, latest)):
        if above == row:
            return latest
        if steps >= RESUME_WITHIN:
            break
    return row


def _fold_point(session: SessionFile, compaction_row: int) -> int | None:
    """The oldest path entry a compaction keeps in context: its ``firstKeptEntryId`` when that is on the
    path, else the compaction itself (nothing older kept). None when nothing older exists to fold."""
    index = session.index
    entry = session.entries([compaction_row])[0]
    kept_id = entry.get("firstKeptEntryId")
    kept = index.row(kept_id) if isinstance(kept_id, str) else None
    point = compaction_row
    if kept is not None and kept != compaction_row:
        for row in ancestors(index, index.parents[compaction_row]):
            if row == kept:
                point = kept
                break
    return point if index.parents[point] != NO_PARENT else None


def _views(session: SessionFile, rows: list[int]) -> list[EntryView]:
    """Entry views for path rows (oldest first); a branch point hidden from the transcript hands its
    navigator to the next visible entry, so every fork on the path stays switchable. A path that ends
    in hidden entries below a fork (a label set after moving back up a branch: pi hangs it under the
    position, beside the branch that went on) shows the last of them as a slim line holding the
    navigator: otherwise nothing would lead back to the other branches."""
    index = session.index
    views: list[EntryView] = []
    carried = None
    last_hidden = None
    for row, entry in zip(rows, session.entries(rows)):
        navigator = navigator_for(index, row) or carried
        view = present(session, entry, row, navigator=navigator)
        if view.kind == "hidden":
            carried, last_hidden = navigator, view
            continue
        carried = None
        views.append(view)
    if carried is not None and last_hidden is not None:
        last_hidden.kind = "silent"
        views.append(last_hidden)
    return views
