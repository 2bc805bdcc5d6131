"""From pi streaming a piece of its turn to every open tab having it: N = 1 and 10 websocket tabs.

A fake OpenAI-compatible server (``tests/support/fake_openai``) streams each answer in pieces 120 ms
apart (further apart than a reply's pieces are paced, so that each is sent on its own), and writes into
each piece the moment it sent it (``perf_counter_ns``, one clock for every process of the machine). Two
measurements, side by side in one run:

- **pi alone**: ``pi --mode rpc`` and nothing else; the time from a piece leaving the fake to pi's
  ``message_update`` carrying it on pi's stdout: what pi itself adds;
- **through pitree**: pitree under daphne with ``PITREE_ASSISTANT=pi``, a message sent as a browser
  sends it, and N real websocket tabs (loopback, ``websockets``) on the session with the page's
  protocol; the time from a piece leaving the fake to each tab receiving the rendered turn holding it
  (or the entry pi wrote, for a piece pi wrote before the next progress was due: a turn's last, which
  pi prints in the same read as its ``message_end``: one piece in 25, so the p99 is that piece's way,
  by the file). Today's pitree and the baseline's (``_baseline.source_tree``: by default where this
  branch left ``main``) are served at once, each with its own pi; rounds alternate between them (which
  goes first rotates) and between 1 tab and 10.

pitree's share is the difference: target p99 ≤ 50 ms at 10 tabs for the whole way (pi's part included),
and today / baseline p99 ratios side by side.
Needs ``scripts/install-pi``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _common as C  # noqa: E402
import _servers  # noqa: E402
import _tabs  # noqa: E402
from _pi import Alone, scratch  # noqa: E402
from support import accounts  # noqa: E402
from support.fake_openai import FakeOpenAI, chunk, send_event, start_sse  # noqa: E402
from support.pi_agent import agent_environment, pi_settings  # noqa: E402

from sessions_app.sessionfiles.fork import create_session  # noqa: E402
from sessions_app.sessionfiles.store import SessionFile  # noqa: E402

PIECES = 25
GAP = 0.12  # seconds between two pieces
ROUNDS = 10  # turns through pitree, alternating 1 and 10 tabs
ALONE_ROUNDS = 4
TABS = (1, 10)
TIMEOUT = 120.0
STAMP = re.compile(r"\[(\d{9,})\]")


def _stamped(handler: Any, fake: FakeOpenAI) -> None:
    """An answer in ``PIECES`` pieces, each naming the moment it was sent."""
    start_sse(handler)
    send_event(handler, chunk(role="assistant", content=""))
    for _ in range(PIECES):
        time.sleep(GAP)
        send_event(handler, chunk(f"[{time.perf_counter_ns()}] "))
    send_event(handler, chunk(finish="stop"))
    send_event(handler, "[DONE]")


async def _pi_alone(root: Path, fake: FakeOpenAI, workspace: Path) -> list[float]:
    """Latencies from the fake to pi's stdout, pi driven by nothing but a JSONL client."""
    settings = pi_settings(root, fake)
    made = create_session(root / "alone", str(workspace), fsync=False)
    alone = Alone(list(settings.argv), dict(settings.env), workspace, made.path)
    latencies: list[float] = []

    def heard(record: dict[str, Any], now: int) -> None:
        event = record.get("assistantMessageEvent") if record.get("type") == "message_update" else None
        if isinstance(event, dict) and event.get("type") == "text_delta":
            latencies.extend((now - int(s)) / 1e9 for s in STAMP.findall(str(event.get("delta"))))

    await alone.start()
    try:
        await alone.turn("go")  # warms pi up
        for _ in range(ALONE_ROUNDS):
            await alone.turn("go", heard)
    finally:
        await alone.stop()
    return latencies


class Tab:
    """One websocket tab: when each stamped piece of pi's turn first reached it."""

    def __init__(self, socket: Any) -> None:
        self.socket = socket
        self.seen: dict[str, float] = {}  # stamp -> its latency

    @property
    def latencies(self) -> list[float]:
        return list(self.seen.values())

    async def read(self) -> None:
        async for raw in self.socket:
            now = time.perf_counter_ns()
            # pi's turn as it grows, or the entry pi wrote (a piece it wrote before it could be
            # streamed, the last say): every message is HTML, and only the model's text holds stamps.
            for stamp in STAMP.findall(str(raw)):
                if stamp not in self.seen:
                    self.seen[stamp] = (now - int(stamp)) / 1e9


async def _open_tab(server: _servers.Server, session_id: str, path: Path) -> Tab:
    """A tab as the page opens it: it says where it stands (its cursor and entry), then waits until live."""
    socket = await _tabs.connect(server.url, server.cookie, session_id)
    leaf = SessionFile(path, fsync=False).leaf_id
    await socket.send(json.dumps({"v": 1, "cursor": path.stat().st_size, "at": leaf, "notes": "none"}))
    while "do=live" not in str(await socket.recv()):
        pass
    return Tab(socket)


def _send(server: _servers.Server, session_id: str, path: Path) -> None:
    """A message sent as the composer sends it, from the file's leaf (where the tabs stand: a tab is shown
    the turns that continue its entry); returns once pi's turn has ended (the send's answer)."""
    fields = {"text": "go", "parent": SessionFile(path, fsync=False).leaf_id or ""}
    opener, request = accounts.form_post(server.url, server.cookie, session_id, "send", fields, TIMEOUT)
    with opener.open(request, timeout=TIMEOUT) as response:
        assert response.status == 200, response.status


Latencies = dict[tuple[str, int], list[float]]  # (tree, tabs) -> seconds


async def _through_pitree(
    root: Path, fake: FakeOpenAI, workspace: Path, trees: list[tuple[str, Path]]
) -> tuple[Latencies, Latencies]:
    """Each tree's pitree served at once; rounds alternate between them and between 1 and 10 tabs. The
    latencies of every piece, and those of each turn's last piece (which comes by the file)."""
    found: Latencies = {(name, n): [] for name, _ in trees for n in TABS}
    last: Latencies = {(name, n): [] for name, _ in trees for n in TABS}
    with contextlib.ExitStack() as stack:
        served: list[tuple[str, _servers.Server, Any]] = []
        for name, tree in trees:
            sessions = root / f"sessions-{len(served)}"
            made = create_session(sessions, str(workspace), fsync=False)
            agent = {
                k: v for k, v in agent_environment(root / f"served-{len(served)}", fake).items() if k.startswith("PI_")
            }
            env = {"PITREE_ASSISTANT": "pi", "PITREE_PI_ROOTS": str(workspace), **agent}
            server = stack.enter_context(_servers.serving(tree, sessions, files=None, **env))
            await asyncio.to_thread(_send, server, made.session_id, made.path)  # pi started, warm
            served.append((name, server, made))
        for round_number in range(ROUNDS):
            count = TABS[round_number % len(TABS)]
            order = served if round_number // len(TABS) % 2 == 0 else served[::-1]  # which goes first rotates
            for name, server, made in order:
                tabs = [await _open_tab(server, made.session_id, made.path) for _ in range(count)]
                readers = [asyncio.create_task(tab.read()) for tab in tabs]
                try:
                    await asyncio.to_thread(_send, server, made.session_id, made.path)
                    await asyncio.sleep(0.2)  # the turn's last messages, sent as its answer went
                finally:
                    for tab in tabs:
                        await tab.socket.close()
                    await asyncio.gather(*readers, return_exceptions=True)
                for tab in tabs:
                    found[(name, count)] += tab.latencies
                    last[(name, count)].append(tab.seen[max(tab.seen, key=int)])
                    if len(tab.seen) != PIECES:
                        raise SystemExit(f"a tab of {name} saw {len(tab.seen)} of the turn's {PIECES} pieces")
    return found, last


def main() -> int:
    report = C.Report("pi_stream", "pi's turn as it streams: from the model's piece to every open tab (real pi 1.6.0)")
    trees = _servers.trees()
    with scratch("pitree-pi-stream-", _stamped) as (root, fake):
        workspace = root / "workspace"
        workspace.mkdir()
        alone = asyncio.run(_pi_alone(root, fake, workspace))
        tabs, lasts = asyncio.run(_through_pitree(root, fake, workspace, trees))
    report.line(
        f"{PIECES} pieces a turn, {GAP * 1000:.0f} ms apart; pi alone {ALONE_ROUNDS} turns, each pitree {ROUNDS}"
    )
    report.line(
        f"pi alone                    median {C.fmt_time(C.median(alone)):>9}  p99 {C.fmt_time(C.pct(alone, 99)):>9}"
    )
    for (name, count), found in tabs.items():
        report.line(
            f"{name:18} {count:>2} tab(s)   median {C.fmt_time(C.median(found)):>9}  "
            f"p99 {C.fmt_time(C.pct(found, 99)):>9}  ({len(found)} arrivals); "
            f"a turn's last piece: median {C.fmt_time(C.median(lasts[(name, count)]))}"
        )
    ten, one = tabs[("today", 10)], tabs[("today", 1)]
    report.figure("model piece → 10 tabs, p99", C.fmt_time(C.pct(ten, 99)), "≤ 50 ms", C.pct(ten, 99) <= 0.050)
    report.figure("pitree's share at 10 tabs (median, minus pi alone)", C.fmt_time(C.median(ten) - C.median(alone)))
    report.figure("p99 ratio 10 tabs / 1 tab", f"{C.pct(ten, 99) / C.pct(one, 99):.2f}×")
    if len(trees) > 1:
        name = trees[1][0]
        for count in TABS:
            ratio = C.pct(tabs[("today", count)], 99) / C.pct(tabs[(name, count)], 99)
            report.line(f"p99 at {count:>2} tab(s), today / {name}: {ratio:.2f}×")
            report.figure(f"p99 at {count} tab(s), today / {name}", f"{ratio:.2f}×")
            ratio = C.median(lasts[("today", count)]) / C.median(lasts[(name, count)])
            report.line(f"a turn's last piece, median at {count:>2} tab(s), today / {name}: {ratio:.2f}×")
            report.figure(f"a turn's last piece, median at {count} tab(s), today / {name}", f"{ratio:.2f}×")
    return report.finish()


if __name__ == "__main__":
    sys.exit(main())
