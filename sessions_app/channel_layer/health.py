"""Whether this process's channel layer answers: what a dead Redis costs, said once, and told to
whoever shows it (a session tab says that live updates from other servers are paused).

Only the layer's calls learn it: any call that fails or does not answer in time says the layer is
down, any that answers says it is back (``calls``). The in-memory layer of one process never fails.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

log = logging.getLogger(__name__)


class Health:
    """The layer's state in this process, and who is told when it changes (``listeners``, each called
    with whether it is paused now)."""

    def __init__(self) -> None:
        self.paused = False
        self.listeners: set[Callable[[bool], None]] = set()

    def failed(self, error: BaseException) -> None:
        if not self.paused:
            log.warning(
                "the channel layer does not answer (%s): live updates from other server processes are paused; "
                "this process's own go on",
                error or type(error).__name__,
            )
            self._set(True)

    def answered(self) -> None:
        if self.paused:
            log.warning("the channel layer answers again: live updates from other server processes resume")
            self._set(False)

    def _set(self, paused: bool) -> None:
        self.paused = paused
        for listener in list(self.listeners):
            listener(paused)


health = Health()
