"""Errors the core raises: each says what is wrong in words a user can act on."""


class SessionError(Exception):
    """Base class: anything the session core refuses to do."""


class NotASession(SessionError):
    """The file is not a pi session (its first JSON object is not a ``session`` header)."""


class UnsupportedFormat(NotASession):
    """A session file in a format pitree recognises but does not read (pi harness JSONL v4)."""


class EntryNotFound(SessionError):
    """An id that names no entry of the session."""

    def __init__(self, entry_id: str) -> None:
        super().__init__(f"Entry {entry_id} not found")
        self.entry_id = entry_id


class ReadOnlySession(SessionError):
    """A v1/v2 file: pitree reads it migrated in memory but never appends to it (fork it instead)."""


class WriteFailed(SessionError):
    """An append did not reach the file whole (short write, full disk, …)."""


class NotARegularFile(SessionError):
    """A path that is a FIFO, socket, device or folder: never opened for reading (it could block or never end)."""


class FileChanged(SessionError):
    """The bytes of an entry already read are not there any more: someone rewrote the file in place."""
