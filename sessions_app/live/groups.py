"""Channel-layer group names: one group per session, whatever its id looks like."""

import hashlib

_MAX = 90  # channel layers accept group names under 100 ASCII characters


def session_group(session_id: str) -> str:
    name = f"session.{session_id}"
    if len(name) <= _MAX and name.isascii():
        return name
    return "session.h" + hashlib.sha256(session_id.encode()).hexdigest()[:40]
