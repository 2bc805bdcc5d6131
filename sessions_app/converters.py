"""URL converters: what a session or entry id may look like in a URL (pi's own id rule for sessions)."""


class SessionIdConverter:
    """pi's custom session id rule: letters, digits, ``.``, ``_``, ``-``; alphanumeric at both ends."""

    regex = r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,126}[A-Za-z0-9])?"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


class EntryIdConverter(SessionIdConverter):
    """Entry ids are 8 hex digits when pi or pitree write them, but a reader must accept any string
    (pi-format §1). They are only ever dictionary keys, never paths, so anything but ``/`` may appear
    in a URL; an id holding ``/`` is shown without links (see ``entry_url``)."""

    regex = r"[^/]{1,256}"
