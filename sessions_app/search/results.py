"""A search over a catalog's sessions: the index caught up with the folder first, then one page of hits,
each with its session's title. The web view and the command line both ask here."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from ..sessionfiles.catalog import Catalog, SessionInfo
from .index import PAGE_SIZE, CatchUp, Hit, SearchIndex
from .query import fts_query, only_excluded


@dataclass(frozen=True)
class Results:
    query: str
    session: str | None
    page: int
    hits: list[Hit]
    has_next: bool
    catch_up: CatchUp | None  # None when the query had nothing to search for (the files were not looked at)
    session_title: str | None = None  # the title of the ``session`` searched in, when it is listed

    @property
    def searched(self) -> bool:
        return self.catch_up is not None

    @property
    def only_excluded(self) -> bool:
        """Whether the query held words to leave out and none to find, so nothing was searched."""
        return only_excluded(self.query)

    @property
    def first_number(self) -> int:
        """The rank of the page's first hit among all hits (1 on the first page)."""
        return (self.page - 1) * PAGE_SIZE + 1

    @property
    def last_number(self) -> int:
        """The rank of the page's last hit among all hits."""
        return self.first_number + len(self.hits) - 1


@dataclass(frozen=True)
class Visible:
    """What a search may show someone: hits in ``sessions`` only (titled as listed there), and in the
    files of ``entries`` (paths) only the entries named there."""

    sessions: list[SessionInfo]
    entries: dict[str, frozenset[str]]

    def keeps(self, path: str, entry_id: str) -> bool:
        found = self.entries.get(path)
        return found is None or entry_id in found


def search(
    index: SearchIndex,
    catalog: Catalog,
    query: str,
    *,
    session: str | None = None,
    page: int = 1,
    visible: Callable[[list[SessionInfo]], Visible | None] | None = None,
) -> Results:
    """Page ``page`` (from 1) of the entries matching ``query``, best first; ``session`` keeps one
    session's. The files are listed (bad ones skipped, as the catalog skips them) and whatever changed
    since the last search is indexed before the query runs. ``visible`` says, from the listing, what the
    person searching may see (None from it, or no ``visible``: everything)."""
    if fts_query(query) is None:
        return Results(query, session, page, [], False, None)
    listed = catalog.listing()  # the same object while nothing changed: the catch-up then looks at no file
    caught_up = index.catch_up(listed, max_line_bytes=catalog.max_line_bytes)
    seen = visible(list(listed)) if visible is not None else None
    sessions: Sequence[SessionInfo] = listed
    if seen is None:
        hits, has_next = index.search(query, session=session, page=page)
    else:
        sessions = seen.sessions
        keep = seen.keeps if seen.entries else None
        paths = [str(info.path) for info in sessions]
        hits, has_next = index.search(query, session=session, page=page, paths=paths, keep=keep)
    listed_by_path = _by_path(sessions) if hits else {}
    titles = {hit.path: listed_by_path[hit.path].title for hit in hits if hit.path in listed_by_path}
    hits = [replace(hit, title=titles.get(hit.path) or hit.session_id) for hit in hits]
    session_title = next((info.title for info in sessions if info.id == session), None) if session else None
    return Results(query, session, page, hits, has_next, caught_up, session_title)


class _ByPath:
    """Sessions by path, kept for the last listing asked about: a watching catalog hands out the same
    listing while nothing changed, so a warm search titles its page's hits without going through the
    thousands of sessions listed."""

    def __init__(self) -> None:
        self._last: tuple[Sequence[SessionInfo], dict[str, SessionInfo]] = ((), {})

    def __call__(self, sessions: Sequence[SessionInfo]) -> dict[str, SessionInfo]:
        listed, by_path = self._last
        if listed is not sessions:
            by_path = {str(info.path): info for info in sessions}
            self._last = (sessions, by_path)  # one assignment: another thread sees either one whole
        return by_path


_by_path = _ByPath()
