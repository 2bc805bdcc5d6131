"""Let the websockets' tasks end before the interpreter does.

On SIGTERM daphne stops its event loop with connections' coroutines still waiting (a consumer on its
input queue, a tab's pump on its outbox). CPython 3.11 then finalizes those coroutines while it tears
the modules down, and closing a pending ``asyncio.Queue.get`` at that point dereferences a freed type
and crashes the process (SIGSEGV, seen with gdb in ``deque_remove``). So at exit, while the modules
are still whole, whatever is still pending on the server's loop is cancelled and given a moment to
finish: the consumers leave their feeds, the feeds close their watches.

Then the objects that exist are frozen out of the garbage collector (``gc.freeze``): the collections
of interpreter shutdown otherwise walk the whole heap of a server (Django, Twisted, the assistants'
SDKs), which took 0.4–1.6 s here, most of the 2 s a stop may take. Nothing else is skipped: every
later exit handler runs and the exit status is the interpreter's.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import gc
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


def _at_exit() -> None:
    finish_pending_tasks()
    gc.freeze()


def install() -> None:
    atexit.register(_at_exit)
