"""Several models at once (a beam) as it streams: from a model's piece to every open tab having it,
a beam of 3 answers of ~400 tokens into 10 tabs, and one reply alone into 10 tabs, side by side.

A fake OpenAI-compatible server (``tests/support/fake_openai``) streams each answer as ``TOKENS`` pieces
``GAP`` apart (a model writing ~50 tokens a second); every ``STAMP_EVERY``-th piece holds the moment it
was sent (``perf_counter_ns``, one clock for every process of the machine). pitree runs under daphne
with ``PITREE_ASSISTANT=openai``; this process holds the tabs, real websocket clients (loopback,
``websockets``) that speak the pages' protocol:

- **beam**: 10 tabs of the beam's page (the follow socket, naming the beam's three replies), the
  beam asked as the composer asks it (``/beam/``, three models); the answers stream at once;
- **single**: 10 tabs of the session page standing where the message is sent (``/send/``), one reply.

Each stamped piece's latency is from leaving the fake to a tab first receiving a message that holds it
(a reply's text is sent whole, at most every 50 ms: the pacing is part of what a reader waits).
Rounds alternate the two. Target: beam p99 ≤ 100 ms; the ratio to a single reply says whether a beam
is as live as one reply.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import shutil
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _common as C  # noqa: E402
import _servers  # noqa: E402
from pi_stream import Tab  # noqa: E402  (a tab timing each stamped piece's first arrival)

sys.path.insert(0, str(C.ROOT / "tests"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pitree_web.settings")

from support import accounts  # noqa: E402
from support.fake_openai import FakeOpenAI, chunk, listing, send_event, start_sse  # noqa: E402

from sessions_app.sessionfiles.fork import create_session  # noqa: E402
from sessions_app.sessionfiles.store import SessionFile  # noqa: E402

MODELS = ("model-a", "model-b", "model-c")
TOKENS = 400
GAP = 0.02  # seconds between two pieces of one answer
STAMP_EVERY = 10
TABS = 10
ROUNDS = 3  # of each kind, alternating (after one warm-up of each)
TIMEOUT = 120.0
WORDS = ("the", "answer", "goes", "on", "with", "a", "few", "more", "plain", "words")


class Gate:
    """The fake's answers wait for ``open()`` (the tabs are listening by then)."""

    def __init__(self) -> None:
        self.event = threading.Event()

    def open(self) -> None:
        self.event.set()

    def close(self) -> None:
        self.event.clear()


def _stamped(gate: Gate) -> Any:
    counter = itertools.count()

    def respond(handler: Any, fake: FakeOpenAI) -> None:
        """An answer of ``TOKENS`` pieces, every ``STAMP_EVERY``-th naming the moment it was sent."""
        gate.event.wait(TIMEOUT)
        start_sse(handler)
        send_event(handler, chunk(role="assistant", content=""))
        for token in range(TOKENS):
            time.sleep(GAP)
            word = WORDS[next(counter) % len(WORDS)]
            text = f"[{time.perf_counter_ns()}] " if token % STAMP_EVERY == 0 else f"{word} "
            send_event(handler, chunk(text))
        send_event(handler, chunk(finish="stop"))
        send_event(handler, "[DONE]")

    return respond


async def _connect(server: _servers.Server, path: str) -> Any:
    from websockets.asyncio.client import connect
    from websockets.typing import Origin

    return await connect(
        f"{server.url.replace('http', 'ws')}{path}",
        origin=Origin(server.url),
        additional_headers={"Cookie": server.cookie},
        open_timeout=TIMEOUT,
        max_queue=None,
    )


async def _until_live(socket: Any) -> Tab:
    while "do=live" not in str(await socket.recv()):
        pass
    return Tab(socket)


async def _session_tab(server: _servers.Server, session_id: str, path: Path) -> Tab:
    socket = await _connect(server, f"/ws/s/{session_id}/")
    leaf = SessionFile(path, fsync=False).leaf_id
    await socket.send(json.dumps({"v": 1, "cursor": path.stat().st_size, "at": leaf, "notes": "none"}))
    return await _until_live(socket)


async def _beam_tab(server: _servers.Server, session_id: str, path: Path, replies: list[str]) -> Tab:
    socket = await _connect(server, "/ws/follow/")
    follow = [{"session": session_id, "cursor": path.stat().st_size, "id": None}]
    await socket.send(json.dumps({"follow": follow, "replies": replies}))
    return await _until_live(socket)


def _post(server: _servers.Server, session_id: str, action: str, fields: list[tuple[str, str]]) -> Any:
    """A composer's form post (``send``, ``beam``); returns the response, read whole."""
    opener, request = accounts.form_post(server.url, server.cookie, session_id, action, {}, TIMEOUT)
    request.data = urllib.parse.urlencode(fields).encode()
    with opener.open(request, timeout=TIMEOUT) as response:
        assert response.status == 200, response.status
        return response.headers, response.read()


def _leaf(path: Path) -> str:
    return SessionFile(path, fsync=False).leaf_id or ""


async def _round(server: _servers.Server, gate: Gate, session_id: str, path: Path, kind: str) -> list[Tab]:
    """One beam (or one reply) streamed into ``TABS`` tabs; the tabs, once every answer is stored."""
    gate.close()
    fields = [("text", "go"), ("parent", _leaf(path)), ("cursor", str(path.stat().st_size))]
    if kind == "beam":
        headers, _ = await asyncio.to_thread(
            _post, server, session_id, "beam", [*fields, *(("ask", m) for m in MODELS)]
        )
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(headers["HX-Redirect"]).query)
        replies = [ref.split(":", 1)[0] for ref in query["a"]]
        tabs = [await _beam_tab(server, session_id, path, replies) for _ in range(TABS)]
        readers = [asyncio.create_task(tab.read()) for tab in tabs]
        gate.open()
        expected = len(MODELS)
        prompt = query["beam"][0]
        while (
            sum(1 for line in _lines(path) if line.get("parentId") == prompt and line["type"] == "message") < expected
        ):
            await asyncio.sleep(0.1)
    else:
        tabs = [await _session_tab(server, session_id, path) for _ in range(TABS)]
        readers = [asyncio.create_task(tab.read()) for tab in tabs]
        gate.open()
        await asyncio.to_thread(_post, server, session_id, "send", fields)  # answered once the reply is stored
    await asyncio.sleep(0.3)  # the last pieces, sent as the answers were stored
    for tab in tabs:
        await tab.socket.close()
    await asyncio.gather(*readers, return_exceptions=True)
    return tabs


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_bytes().splitlines()[1:]]


async def _measure(root: Path, fake: FakeOpenAI, gate: Gate) -> dict[str, list[float]]:
    sessions = root / "sessions"
    made = create_session(sessions, str(root), fsync=False)
    env = {"PITREE_ASSISTANT": "openai", "PITREE_OPENAI_BASE_URL": fake.base_url, "PITREE_OPENAI_MODEL": MODELS[0]}
    found: dict[str, list[float]] = {"beam": [], "single": []}
    pieces = {"beam": TOKENS // STAMP_EVERY * len(MODELS), "single": TOKENS // STAMP_EVERY}
    with _servers.serving(C.ROOT, sessions, files=None, **env) as server:
        for number in range(2 * (ROUNDS + 1)):
            kind = ("beam", "single")[number % 2]
            tabs = await _round(server, gate, made.session_id, made.path, kind)
            if number < 2:
                continue  # warm-up: imports, templates, the first feed
            for tab in tabs:
                if len(tab.seen) != pieces[kind]:
                    raise SystemExit(f"a {kind} tab saw {len(tab.seen)} of {pieces[kind]} stamped pieces")
                found[kind] += tab.latencies
    return found


def main() -> int:
    report = C.Report("beam", "A beam as it streams: 3 answers × 400 tokens into 10 tabs, and one reply alone")
    root = Path(tempfile.mkdtemp(prefix="pitree-beam-"))
    gate = Gate()
    fake = FakeOpenAI()
    fake.list_models = listing(*MODELS)
    fake.respond = _stamped(gate)
    try:
        found = asyncio.run(_measure(root, fake, gate))
    finally:
        gate.open()
        fake.stop()
        shutil.rmtree(root, ignore_errors=True)
    report.line(
        f"{TOKENS} pieces an answer, {GAP * 1000:.0f} ms apart, every {STAMP_EVERY}th stamped; "
        f"{ROUNDS} rounds of each kind, alternating, {TABS} tabs each"
    )
    for kind, latencies in found.items():
        report.line(
            f"{kind:6}  median {C.fmt_time(C.median(latencies)):>9}  p99 {C.fmt_time(C.pct(latencies, 99)):>9}  "
            f"({len(latencies)} arrivals)"
        )
    beam, single = found["beam"], found["single"]
    report.figure("beam of 3 → 10 tabs, p99", C.fmt_time(C.pct(beam, 99)), "≤ 100 ms", C.pct(beam, 99) <= 0.100)
    report.figure("beam of 3 → 10 tabs, median", C.fmt_time(C.median(beam)))
    report.figure("p99 ratio beam / single reply (10 tabs each)", f"{C.pct(beam, 99) / C.pct(single, 99):.2f}×")
    return report.finish()


if __name__ == "__main__":
    sys.exit(main())
