"""A session as it was (``sessionfiles.past``), as a reader sees it: what their grant shows of the
whole session, read-only for everyone, addressed as ``<session id>@<line>`` so that every link its
pages make (branches, the tree, older entries, compare, fork) stays in that state."""

from __future__ import annotations

from ..sessionfiles.past import PastSession, last_line
from .grants import Grant, Role
from .scoped import SessionView


class PastView(SessionView):
    """``view`` (a whole grant's) as it was after line ``line``: nothing can be written in it; a fork
    from it holds what the session held then."""

    def __init__(self, view: SessionView, line: int) -> None:
        past = PastSession(view.full, line)
        grant = Grant(Role.VIEWER, share_id=view.grant.share_id, expires_at=view.grant.expires_at)
        super().__init__(past, grant, access=view.access)
        self.view_key = past.view_key
        self.line = line
        self.lines = last_line(view.full.index)  # the file's lines now

    @property
    def session_id(self) -> str:
        return f"{self.header['id']}@{self.line}"

    @property
    def present_id(self) -> str:
        return str(self.header["id"])
