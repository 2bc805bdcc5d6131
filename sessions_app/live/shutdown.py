"""Let the websockets' tasks end before the interpreter does.

On SIGTERM daphne stops its event loop with connections' coroutines still waiting (a consumer on its
input queue, a tab's pump on its outbox). CPython 3.11 then finalizes those coroutines while it tears
the modules down, and closing a pending ``asyncio.Queue.get`` at that point dereferences a freed type
and crashes the process (SIGSEGV, seen with gdb in ``deque_remove``). So at exit, while the modules
are still whole, whatever is still pending on the server's loop is cancelled and given a moment to
finish: the consumers leave their feeds, the feeds close their watches.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import warnings

GRACE = 0.5  # seconds the pending tasks get to finish; the server must stop within 2 s of SIGTERM


def finish_pending_tasks() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            loop = asyncio.get_event_loop_policy().get_event_loop()
        except RuntimeError:
            return
    if loop.is_closed() or loop.is_running():
        return
    pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
    if not pending:
        return
    for task in pending:
        task.cancel()
    with contextlib.suppress(Exception):
        loop.run_until_complete(asyncio.wait(pending, timeout=GRACE))


def install() -> None:
    atexit.register(finish_pending_tasks)
