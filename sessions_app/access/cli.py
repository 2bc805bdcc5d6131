"""The command line as a user (``manage.py pitree --as USER …``): the same permission function as the web,
and FILE arguments resolved among the sessions that user sees, so that neither a listing nor an error
names a session they may not see. Without ``--as`` the command line is the unrestricted local owner
(whoever can run it can read the files anyway)."""

from __future__ import annotations

from pathlib import Path

from django.contrib.auth import get_user_model

from ..cli.resolve import FileArgumentError, resolve_file
from ..sessionfiles.catalog import AmbiguousId, Catalog
from ..sessionfiles.errors import SessionError
from ..sessionfiles.store import SessionFile, read_header
from .grants import Access, Actor
from .scoped import SessionView


def actor_named(name: str | None) -> Actor:
    """The actor ``--as NAME`` stands for (no name: the unrestricted local owner)."""
    if name is None:
        return Actor.local_owner()
    user = get_user_model().objects.filter(username=name, is_active=True).first()
    if user is None:
        raise FileArgumentError(f"--as {name}: no active user with that name")
    return Actor(user)


def open_as(access: Access, argument: str, catalog: Catalog, *, fsync: bool, max_line_bytes: int) -> SessionView:
    """The session a FILE argument names, as ``access`` may see it; as if it did not exist otherwise."""
    path = resolve_file(argument, catalog) if access.actor.unrestricted else _visible_path(access, argument, catalog)
    full = SessionFile.open(path, fsync=fsync, max_line_bytes=max_line_bytes, within=catalog.root)
    grant = access.grant(full.session_id, path)
    if grant is None:
        raise _unknown(argument, catalog)
    return SessionView(full, grant, access=access)


def _visible_path(access: Access, argument: str, catalog: Catalog) -> Path:
    path = Path(argument).expanduser()
    if path.is_file():
        header_id = read_header(path).get("id")
        if isinstance(header_id, str) and access.grant(header_id, path) is not None:
            return path
        raise _unknown(argument, catalog)
    if not argument:
        raise _unknown(argument, catalog)
    try:
        return catalog.find_path(
            argument, keep=lambda file, session_id: access.grant(session_id, Path(file)) is not None
        )
    except AmbiguousId as error:
        raise FileArgumentError(str(error)) from None
    except SessionError:  # none that this person may see: whether others exist is not said
        raise _unknown(argument, catalog) from None


def _unknown(argument: str, catalog: Catalog) -> FileArgumentError:
    return FileArgumentError(f"{argument}: no such file, and no session id starting with it in {catalog.root}")
