"""Fixtures for the push path: websockets on the real ASGI application, sessions written by "others".

pytest runs with ``--import-mode=importlib``, so helpers are handed out as fixtures, not imported.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from channels.layers import channel_layers
from channels.testing import WebsocketCommunicator
from support.daphne import Daphne, launch_daphne
from support.pushes import Push, parse
from support.redisserver import redis_server

from pitree_web.asgi import application
from sessions_app.services.lookup import _catalog_for
from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles.errors import SessionError
from sessions_app.sessionfiles.store import AT_LEAF, SessionFile, clear_cache
from sessions_app.sessionfiles.tree import path as tree_path

SAMPLES = Path(__file__).resolve().parents[2] / "sessions_app" / "samples" / "pi"
EXPECTED = json.loads((SAMPLES / "expected.json").read_text())
WORKSPACE = "--home-alice-projects-todo-api--"
LINEAR = "01-linear"
TREE = "02-tree-branches"
ORIGIN = (b"origin", b"http://testserver")
HOST = (b"host", b"testserver")
TIMEOUT = 10  # seconds a test waits for a message before it fails (never a speed assertion)


@pytest.fixture(autouse=True)
def _live_settings(settings: Any) -> None:
    settings.PITREE_FSYNC = False
    settings.PITREE_OFFLINE_DELAY = 0
    settings.PITREE_ASSISTANT = "offline"


@pytest.fixture(params=["auto", "poll"], ids=["inotify", "poll"])
def watch_mode(request: pytest.FixtureRequest, settings: Any) -> str:
    """Every test with a tab runs twice: files watched with inotify, and with stat polling."""
    settings.PITREE_WATCH = request.param
    return str(request.param)


@pytest.fixture(autouse=True)
def _fresh_state() -> Any:
    """No test sees another's cached files, catalog or channel layer (whose queues belong to a loop)."""
    clear_cache()
    _catalog_for.cache_clear()
    channel_layers.backends.clear()
    yield
    clear_cache()
    channel_layers.backends.clear()


class Sessions:
    """Sample sessions copied into the test's sessions folder, and writes made as another program would."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def copy(self, key: str, source: str | None = None) -> Path:
        """Sample ``key`` under its original file name (its content from sample ``source`` if given)."""
        folder = self.root / WORKSPACE
        folder.mkdir(exist_ok=True)
        target = folder / EXPECTED[key]["originalFileName"]
        shutil.copy(SAMPLES / f"{source or key}.jsonl", target)
        return target

    @staticmethod
    def id(key: str) -> str:
        return str(EXPECTED[key]["sessionId"])

    @staticmethod
    def size(path: Path) -> int:
        return path.stat().st_size

    @staticmethod
    def last(path: Path) -> dict[str, Any]:
        """The last line of the file, decoded."""
        return dict(orjson.loads(path.read_bytes().splitlines()[-1]))

    @staticmethod
    def append(path: Path, text: str, parent: Any = AT_LEAF, role: str = "user") -> dict[str, Any]:
        """Append a message through a SessionFile of its own (as another process would); ``parent``
        defaults to the file's leaf, as pi appends."""
        if role == "user":
            draft = E.user_message(text)
        else:
            draft = E.assistant_message(text, provider="test", model="test", api="test")
        return SessionFile(path, fsync=False).append(draft, parent)


@pytest.fixture
def sessions(sessions_dir: Path) -> Sessions:
    return Sessions(sessions_dir)


class Tab:
    """A websocket of a session page, speaking the page's protocol: it says where its page is, and
    reads what it is pushed as the browser would apply it (``support.pushes``)."""

    def __init__(self, communicator: WebsocketCommunicator, hello: dict[str, Any] | None) -> None:
        self.ws = communicator
        self.hello = hello or {}
        self.received: list[Push] = []

    async def next(self) -> Push:
        push = parse(await self.ws.receive_from(timeout=TIMEOUT))
        self.received.append(push)
        return push

    async def until(self, accept: Callable[[Push], bool]) -> list[Push]:
        """Messages up to and including the first that ``accept`` takes."""
        seen = []
        while True:
            push = await self.next()
            seen.append(push)
            if accept(push):
                return seen

    async def until_entry(self, entry_id: str) -> list[Push]:
        """Messages up to the one that appends ``entry_id`` to the tab's transcript."""
        return await self.until(lambda m: entry_id in m.entries)

    async def until_state(self, **data: str) -> list[Push]:
        """Messages up to the one that says the tab stands as ``data`` says (``position``, ``cursor`` …)."""
        return await self.until(lambda m: all(m.state.get(k.replace("_", "-")) == v for k, v in data.items()))

    async def move(self, **hello: Any) -> None:
        """The tab's page is another one now (``hello``'s fields over those it said last)."""
        self.hello = {**self.hello, "v": self.hello.get("v", 0) + 1, **hello}
        await self.ws.send_json_to(self.hello)

    def entry_ids(self) -> list[str]:
        """Every entry appended to the tab's transcript, in order (duplicates included: tests count them)."""
        return [entry for m in self.received for entry in m.entries]

    @property
    def state(self) -> dict[str, str]:
        """Where the tab stands, as the last message that said it says."""
        return next((m.state for m in reversed(self.received) if m.state), {})


@pytest.fixture
async def open_tab(
    watch_mode: str, owner_cookie: tuple[bytes, bytes], sessions_dir: Path
) -> AsyncIterator[Callable[..., Any]]:
    """``await open_tab(session_id, cursor)``: a connected tab that has said where its page is: at
    ``cursor`` (with ``line_id``, the id of the line that ends there, as pages say it), standing on ``at``
    (by default the file's position when the tab opens), and (unless ``wait`` is False) received what it
    missed, up to the message that says it is live."""
    tabs: list[WebsocketCommunicator] = []

    async def connect(
        session_id: str,
        cursor: int | None = None,
        hello: Any = None,
        wait: bool = True,
        line_id: str | None = None,
        **where: Any,
    ) -> Tab:
        communicator = WebsocketCommunicator(application, f"/ws/s/{session_id}/", headers=[ORIGIN, HOST, owner_cookie])
        connected, _ = await communicator.connect(timeout=TIMEOUT)
        assert connected
        tabs.append(communicator)
        said = None
        if hello is None and cursor is not None:
            at, top = _leaf(sessions_dir, session_id, cursor, where.get("at"))
            said = {"v": 1, "cursor": cursor, "top": top, "notes": "none", **where}
            said["at"] = at
            if line_id is not None:
                said["id"] = line_id
        tab = Tab(communicator, said)
        if hello is not None:
            await communicator.send_to(text_data=hello)
        elif said is not None:
            await communicator.send_json_to(said)
            if wait:
                await tab.until(lambda m: m.live)
        return tab

    yield connect
    for communicator in tabs:
        await communicator.disconnect(timeout=TIMEOUT)


def _leaf(root: Path, session_id: str, cursor: int, at: str | None) -> tuple[str, str]:
    """Where a page opened when the file ended at byte ``cursor`` stands: on ``at``, or at the session's
    URL on the file's position (its leaf) then ("" for none); and the first entry of its path, as a page
    that loaded all of it (a sample's path is one page) names it."""
    found = list(root.glob(f"*/*_{session_id}.jsonl"))
    if not found:
        return at or "", ""
    with tempfile.TemporaryDirectory() as folder:
        prefix = Path(folder) / found[0].name
        prefix.write_bytes(found[0].read_bytes()[:cursor])
        try:
            session = SessionFile(prefix, fsync=False)
        except SessionError:  # not even the header: a page of no file at all
            return at or "", ""
        at = session.leaf_id if at is None else at
        row = session.index.row(at) if at else None
        path = tree_path(session.index, row)
        return at or "", session.index.ids[path[0]] if path else ""


# --- real servers: daphne processes and a redis-server --------------------------------------------

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def daphne(tmp_path: Path) -> Iterator[Callable[..., Daphne]]:
    """``daphne(root, **env)``: pitree served by a daphne process of its own, on a free port, with the
    owner signed in (``server.cookie``). The servers of one test share a database, as processes
    serving one site do."""
    started: list[Daphne] = []

    def start(root: Path, **env: str) -> Daphne:
        environment = {
            "PITREE_SESSIONS_DIR": str(root),
            "PITREE_FSYNC": "0",
            "PITREE_OFFLINE_DELAY": "0.01",
            "PITREE_ASSISTANT": "offline",
            **env,
        }
        log = tmp_path / f"daphne-{len(started)}.log"
        server = launch_daphne(environment, log, site=started[0] if started else None)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    """A redis-server of this test's own."""
    with redis_server(tmp_path) as url:
        yield url
