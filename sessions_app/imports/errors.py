"""Why an export is refused: the reason and the place, so the user can find it in the file."""

from __future__ import annotations

from ..sessionfiles.errors import SessionError


class ExportError(SessionError):
    """An export that cannot be imported (not one pitree reads, malformed, too large). Nothing was
    written: the message names the file and the place (a byte offset, a line, a conversation)."""
