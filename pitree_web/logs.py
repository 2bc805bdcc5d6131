"""Log records shaped for an operator reading a server's output."""

from __future__ import annotations

import logging


class Refusal(logging.Filter):
    """Django logs every request it refuses as suspicious (a ``Host`` not allowed, a forged cookie) at
    ERROR, with the exception's traceback. The fault is the client's, and the message names it in one
    line: kept as a warning without the traceback, so that a client sending such requests in a loop
    cannot fill the log with stack frames, nor pass for a failure of the server."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.exc_info = None
        record.exc_text = None
        if record.levelno > logging.WARNING:
            record.levelno, record.levelname = logging.WARNING, logging.getLevelName(logging.WARNING)
        return True
