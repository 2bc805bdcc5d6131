"""Fixtures for driving a real pi 1.6.0: a fake OpenAI-compatible server each test scripts, a temporary
pi agent folder naming it, a workspace for pi's tools, a sessions folder with one session whose ``cwd``
is that workspace, and drivers that are stopped at the end of the test, whatever happened.

pi takes 1 to 8 s to start on a machine shared with other test runs, so these tests are slow; they fail
rather than skip when pi is missing: ``scripts/install-pi`` installs it.
"""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from support.fake_openai import FakeOpenAI, running_fake
from support.pi_agent import pi_settings

from sessions_app.assistants.pi.command import PiUnavailable, pi_command
from sessions_app.assistants.pi.driver import PiDriver, PiSettings
from sessions_app.assistants.pi.locks import FileDrivers, Turns, locks_folder
from sessions_app.sessionfiles import tree
from sessions_app.sessionfiles.fork import create_session
from sessions_app.sessionfiles.store import SessionFile, clear_cache

_PI_NODE = Path(__file__).resolve().parents[1] / "pi_compat" / "pi_node.py"


def _load_pi_node() -> Any:
    """pi's SessionManager harness of tests/pi_compat (loaded by path: test folders are not packages)."""
    name = "pitree_pi_compat_pi_node"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, _PI_NODE)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


@pytest.fixture(scope="session")
def pi_reader() -> Any:
    """``pi_reader(path)``: what pi's own SessionManager makes of a file (pi_node.open_in_pi)."""
    pi_node = _load_pi_node()
    reason = pi_node.pi_unavailable_reason()
    if reason is not None:
        pytest.fail(f"pi is not available ({reason}): run scripts/install-pi", pytrace=False)
    return lambda path: pi_node.open_in_pi([path], leaf_contexts=True)[0]


@pytest.fixture(autouse=True)
def _pi_installed(request: pytest.FixtureRequest) -> None:
    """A test that starts pi fails at once, naming the fix, when pi is missing; the others (pacing,
    reading pi's records) need no pi and run in the quick tier, which installs nothing."""
    if request.node.get_closest_marker("processes") is None:
        return
    try:
        pi_command()
    except PiUnavailable as error:
        pytest.fail(str(error), pytrace=False)


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with running_fake() as server:
        yield server


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "workspace"
    folder.mkdir()
    return folder


@pytest.fixture
def session(sessions_dir: Path, workspace: Path) -> SessionFile:
    """A new session (header only) whose cwd is the workspace."""
    clear_cache()
    return create_session(sessions_dir, str(workspace), fsync=False)


@pytest.fixture
def settings_for(tmp_path: Path, fake: FakeOpenAI) -> Callable[..., PiSettings]:
    return lambda **waits: pi_settings(tmp_path, fake, **waits)


@pytest.fixture
async def make_driver(
    sessions_dir: Path, workspace: Path, settings_for: Callable[..., PiSettings]
) -> AsyncIterator[Callable[..., PiDriver]]:
    """``make_driver(session, **waits)``: a driver for a session file, as a server process would make
    one (its own lock objects, the shared lock folder); every driver made is stopped afterwards."""
    made: list[PiDriver] = []

    def make(session: SessionFile, **waits: float) -> PiDriver:
        folder = locks_folder(sessions_dir)
        driver = PiDriver(session.path, workspace, settings_for(**waits), FileDrivers(folder), Turns(folder))
        made.append(driver)
        return driver

    yield make
    await asyncio.gather(*(driver.stop() for driver in made))


class Recorder:
    """Every record a driver publishes, and a way to wait for one."""

    def __init__(self, driver: PiDriver) -> None:
        self.records: list[dict[str, Any]] = []
        self._changed = asyncio.Event()
        driver.listeners.add(self._take)

    def _take(self, record: dict[str, Any]) -> None:
        self.records.append(record)
        self._changed.set()

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [record for record in self.records if record.get("type") == kind]

    async def wait_for(self, check: Callable[[dict[str, Any]], bool], timeout: float = 60.0) -> dict[str, Any]:
        async with asyncio.timeout(timeout):
            seen = 0
            while True:
                for record in self.records[seen:]:
                    if check(record):
                        return record
                seen = len(self.records)
                self._changed.clear()
                await self._changed.wait()


@pytest.fixture
def recorder() -> Callable[[PiDriver], Recorder]:
    return Recorder


def _without_leaf_markers(nodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """pi's tree minus pitree's ``leaf`` markers (childless unknown entries to pi)."""
    return [{**node, "children": _without_leaf_markers(node["children"])} for node in nodes if node["type"] != "leaf"]


@pytest.fixture
def read_alike(pi_reader: Any) -> Callable[[Path], SessionFile]:
    """``read_alike(path)``: asserts that pi's SessionManager reads the file as pitree does (leaf, path,
    context, tree, every branch's context, no repair) and returns pitree's reading."""

    def check(path: Path) -> SessionFile:
        clear_cache()
        session = SessionFile(path)
        index = session.index
        got = pi_reader(path)
        assert got["error"] is None
        assert got["fileChanged"] is False
        assert index.skipped() == []
        assert got["leafId"] == session.leaf_id
        assert got["branchIds"] == [index.ids[row] for row in session.path_rows()]
        assert got["context"] == session.context().as_json()
        assert _without_leaf_markers(got["tree"]) == tree.tree(index)
        for leaf, context in got["leafContexts"].items():
            if index.row(leaf) is not None:
                assert context == session.context(leaf).as_json(), leaf
        return session

    return check
