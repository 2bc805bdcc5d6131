"""Channel-layer group names: two groups per session, whatever its id looks like: its tabs' feeds
(``session_group``) and its running replies (``replies_group``)."""

import hashlib

_MAX = 90  # channel layers accept group names under 100 ASCII characters


def session_group(session_id: str) -> str:
    name = f"session.{session_id}"
    if len(name) <= _MAX and name.isascii():
        return name
    return "session.h" + hashlib.sha256(session_id.encode()).hexdigest()[:40]


def replies_group(session_id: str) -> str:
    """The group where the running replies of a session listen for Stop, and for feeds that start
    listening to the session and ask for the text so far."""
    return "replies." + session_group(session_id).removeprefix("session.")
