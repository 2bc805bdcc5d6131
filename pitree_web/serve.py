"""``python -m pitree_web.serve``: daphne's command line, with the same options (what ``./scripts/run``
starts, and what several processes run), except that its access log never shows a link's token.

Share links (``/l/<token>/``) and one-time sign-in links (``/accounts/once/<token>/``) carry their
secret in the path, and daphne's access log (on stdout at its default verbosity) writes every path:
anyone reading the log could open the shares. Here each logged path has such a token replaced.
"""

from __future__ import annotations

import re
from typing import Any

from daphne.cli import CommandLineInterface
from daphne.server import Server

# The routes sharing:link and accounts:once (tests/teams/test_accounts.py checks that they match).
_TOKEN = re.compile(r"^(/l/|/accounts/once/)[^/?#]+")


def redacted(path: str) -> str:
    """``path`` with a link's token replaced by ``[token]``."""
    return _TOKEN.sub(r"\1[token]", path)


class RedactingServer(Server):
    """daphne's server, logging every action with its path redacted."""

    def log_action(self, protocol: str, action: str, details: dict[str, Any]) -> None:
        path = details.get("path")
        if isinstance(path, str):
            details = {**details, "path": redacted(path)}
        super().log_action(protocol, action, details)


class CommandLine(CommandLineInterface):
    server_class = RedactingServer


if __name__ == "__main__":
    CommandLine.entrypoint()
