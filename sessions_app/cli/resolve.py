"""FILE arguments: a path to a ``.jsonl`` file, or a session id / unique id prefix in the sessions folder."""

from __future__ import annotations

import os
from pathlib import Path

from ..sessionfiles.catalog import Catalog, UnknownSession
from ..sessionfiles.errors import SessionError


class FileArgumentError(SessionError):
    """A FILE argument that names no readable session file."""


def resolve_file(argument: str, catalog: Catalog) -> Path:
    """The session file a FILE argument names.

    An existing path wins. Something that looks like a path (ends in ``.jsonl`` or contains a path
    separator) but does not exist is an error; anything else is looked up as a session id, then as a
    unique id prefix, in the catalog's folder (which opens only the session found).
    """
    path = Path(argument).expanduser()
    if path.is_dir():
        raise FileArgumentError(f"{argument}: is a folder, not a session file")
    if path.exists():
        return path
    if argument.endswith(".jsonl") or os.sep in argument or (os.altsep and os.altsep in argument):
        raise FileArgumentError(f"{argument}: no such file")
    if not argument.strip():
        raise FileArgumentError("empty FILE argument")
    try:
        return catalog.find(argument).path
    except UnknownSession:
        raise FileArgumentError(
            f"{argument}: no such file, and no session id starting with it in {catalog.root}"
        ) from None


def entry_or_root(argument: str) -> str | None:
    """An entry id argument where ``root`` means "before the first entry" (None)."""
    return None if argument == "root" else argument
