"""The quick tier's rule, and the check that keeps it true (a pytest plugin the root conftest loads).

A test that starts a process of its own — a daphne, a redis-server, pi under node, ``manage.py`` in a
child, a writer in another process — carries ``@pytest.mark.processes`` (or its module's
``pytestmark``); every test under tests/browser carries it without saying so. ``./scripts/test
--quick`` runs the others, which need nothing but this process: they stay quick and cannot hang on a
server. A test without the mark that starts a process fails at once, naming the mark, so nothing slow
or flaky joins the quick tier unnoticed.

A test that sweeps a space — every route with hostile input, every file of a hostile folder through
every command — carries ``@pytest.mark.sweep``: the whole suite runs it, the quick tier leaves it out
(the routes and files it sweeps each have tests of their own there). So does the quick tier run each
property test on the profile's few examples (tests/support/properties.py).

The standard library's own look at the machine is no process of the test's: ``platform`` runs
``uname -p`` (the openai SDK asks it once per process) and ``ctypes.util`` runs ``ldconfig`` to find a
C library (asyncinotify's libc), whichever test happens to ask first.
"""

from __future__ import annotations

import inspect
import multiprocessing.process
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

MARK = "processes"
BROWSER = Path(__file__).resolve().parents[1] / "browser"
SYSTEM_LOOKS = ("platform", "ctypes.util")  # standard modules that run a system tool to learn the machine

_running: list[pytest.Item] = []  # the test being set up, run or torn down: one, or none between tests


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the browser tests, and run the marked tests first: they spend much of their time waiting on
    the processes they start, which the machine's cores fill with other tests' work while there are
    any left; run last, they would leave the cores idle at the end of the whole suite's run."""
    for item in items:
        if item.path.is_relative_to(BROWSER):
            item.add_marker(MARK)
    items.sort(key=lambda item: item.get_closest_marker(MARK) is None)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    _running.append(item)
    try:
        return (yield)
    finally:
        _running.clear()


def _refuse_unmarked(what: str) -> None:
    if _running and _running[0].get_closest_marker(MARK) is None and not _a_system_look():
        pytest.fail(
            f"{_running[0].nodeid} starts {what}: mark it @pytest.mark.{MARK} (tests/support/tiers.py)",
            pytrace=False,
        )


def _a_system_look() -> bool:
    frame = inspect.currentframe()
    while frame is not None:
        if frame.f_globals.get("__name__") in SYSTEM_LOOKS:
            return True
        frame = frame.f_back
    return False


_popen_init = subprocess.Popen.__init__
_process_start = multiprocessing.process.BaseProcess.start


def _checked_popen_init(self: subprocess.Popen[Any], args: Any, *rest: Any, **options: Any) -> None:
    _refuse_unmarked(f"a process ({args!r:.80})")
    _popen_init(self, args, *rest, **options)


def _checked_process_start(self: multiprocessing.process.BaseProcess) -> None:
    _refuse_unmarked(f"a multiprocessing process ({self.name})")
    _process_start(self)


subprocess.Popen.__init__ = _checked_popen_init  # type: ignore[method-assign]
multiprocessing.process.BaseProcess.start = _checked_process_start  # type: ignore[method-assign]
