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
    """A write did not reach the file whole (a full disk, a read-only folder, …) and was taken back:
    nothing was written. ``why`` says it in words a user can act on ("the disk is full")."""

    def __init__(self, path: object, why: str) -> None:
        super().__init__(f"{path}: nothing was written: {why}")
        self.why = why


class NotARegularFile(SessionError):
    """A path that is a FIFO, socket, device or folder: never opened for reading (it could block or never end)."""


class FileChanged(SessionError):
    """The bytes of an entry already read are not there any more: someone rewrote the file in place."""
