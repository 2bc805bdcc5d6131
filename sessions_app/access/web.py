"""Requests and access: who a request is (``actor_of``), what it may see (``access_of``), and the one
call every session view makes first (``open_session``).

A stranger gets the same 404 for a session that exists as for one that does not, so ids do not leak.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib.auth.middleware import LoginRequiredMiddleware
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponseBase

from ..models import Share
from ..services.lookup import catalog
from ..sessionfiles.catalog import AmbiguousId, UnknownSession
from ..sessionfiles.errors import NotASession
from ..sessionfiles.store import SessionFile
from .grants import Access, Actor
from .past import PastView
from .scoped import SessionView

LINKS_KEY = "pitree_links"  # the ids of the share links this browser opened (in its Django session)
MAX_LINKS = 50


def actor_of(request: HttpRequest) -> Actor:
    """The request's user (None when anonymous) and the share links its browser opened."""
    user = request.user if request.user.is_authenticated else None
    return Actor(user, links_of(getattr(request, "session", None)))


def links_of(session: Any) -> frozenset[int]:
    """The link shares a Django session holds (a socket's scope has one too)."""
    if session is None:
        return frozenset()
    found = session.get(LINKS_KEY, [])
    return frozenset(x for x in found if isinstance(x, int)) if isinstance(found, list) else frozenset()


def remember_link(request: HttpRequest, share_id: int) -> None:
    links = [x for x in request.session.get(LINKS_KEY, []) if isinstance(x, int) and x != share_id]
    request.session[LINKS_KEY] = [*links[-(MAX_LINKS - 1) :], share_id]


def access_of(request: HttpRequest) -> Access:
    """The request's access (built once per request)."""
    found: Access | None = getattr(request, "_pitree_access", None)
    if found is None:
        found = Access(actor_of(request), settings.PITREE_SESSIONS_DIR)
        request._pitree_access = found  # type: ignore[attr-defined]
    return found


def not_found(session_id: str) -> Http404:
    return Http404(f"No session with id {session_id!r}.")


def open_session(request: HttpRequest, session_id: str, *, write: bool = False, drive: bool = False) -> SessionView:
    """The session as this request may see it; 404 when it may not see it (or it does not exist), 403
    when it may see but not write it and ``write`` is asked for, or may not have pi work in it and
    ``drive`` is asked for (``Grant.can_drive``)."""
    session = open_for(access_of(request), session_id, write=write or drive)
    if drive and not session.grant.can_drive:
        raise PermissionDenied(
            "Only the members of this session's workspace may have pi work in it: pi runs commands on the server."
        )
    return session


def open_for(access: Access, session_id: str, *, write: bool = False) -> SessionView:
    """``open_session`` for any actor (a socket's, the command line's). ``<id>@<line>`` is the session as
    it was after that line of its file (``access.past``), for readers of the whole session: read-only."""
    present_id, at, line = session_id.partition("@")
    if at:
        view = open_for(access, present_id)
        if not view.grant.whole or not line.isdigit() or write:
            raise PermissionDenied("A past state of a session is read-only.") if write else not_found(session_id)
        return PastView(view, max(int(line), 1))
    try:
        path = catalog().locate(session_id)
    except UnknownSession as error:
        # The owner learns what is wrong in the folder; anyone else, only that nothing is there.
        raise (Http404(str(error)) if access.actor.sees_everything else not_found(session_id)) from None
    except AmbiguousId:
        # As above, without the files' names (a page names no file: the command line does).
        said = f"Several files hold session {session_id!r}; `manage.py pitree ls` names them."
        raise (Http404(said) if access.actor.sees_everything else not_found(session_id)) from None
    except NotASession:
        if access.actor.sees_everything:
            raise
        raise not_found(session_id) from None
    grant = access.grant(session_id, path)
    if grant is None:
        raise not_found(session_id)
    if write and not grant.can_write:
        raise PermissionDenied("You may read this session but not write to it.")
    full = SessionFile.open(
        path, fsync=settings.PITREE_FSYNC, max_line_bytes=settings.PITREE_MAX_LINE_BYTES, within=catalog().root
    )
    return SessionView(full, grant, access=access)


def has_working_link(links: frozenset[int]) -> bool:
    """Whether any of these link shares still grants something (not revoked, not expired)."""
    return bool(links) and Share.active().filter(pk__in=links, token_hash__isnull=False).exists()


class LoginOrLinkMiddleware(LoginRequiredMiddleware):
    """Every view needs a signed-in user or a share link that still works, except those marked
    ``login_not_required`` (sign-in, opening a link). What a link holder may see is then decided per
    session by the views themselves, through ``open_session`` and ``access_of``.

    A browser whose links were all revoked or expired is still answered per session where a session
    is asked for: 404, as a stranger is (the session is not theirs any more), not a sign-in page that
    would tell it apart from a session that never existed for them. Elsewhere it signs in."""

    def process_view(
        self,
        request: HttpRequest,
        view_func: Callable[..., Any],
        view_args: tuple[Any, ...],
        view_kwargs: dict[str, Any],
    ) -> HttpResponseBase | None:
        if not request.user.is_authenticated and getattr(view_func, "login_required", True):
            links = actor_of(request).links
            if (links and "session_id" in view_kwargs) or has_working_link(links):  # the query last
                return None
        return super().process_view(request, view_func, view_args, view_kwargs)
