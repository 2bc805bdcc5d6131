"""pitree's overhead on a whole pi turn: pi 1.6.0 driven through pitree's driver against pi driven alone.

One fake OpenAI-compatible server (``tests/support/fake_openai``) answers every turn the same way: it
asks for one ``bash`` call (``true``), then, with its result back, says a sentence. Three pis run side by
side, each on a session file of its own, warm (started, one turn done):

- **pi alone**: ``pi --mode rpc --session FILE``, a prompt written to its stdin, timed until its
  ``agent_settled`` record (the least any client of pi's protocol does);
- **pitree, same branch**: ``PiDriver.prompt`` at the file's leaf, then ``settled()``: the turn lock,
  reading the file's end, asking pi whether it knows it (``get_entries``), the prompt;
- **pitree, after a move**: each prompt continues under the first answer, so every turn first writes a
  ``pitree/continue`` line and has pi load the file again (``switch_session``): the cost of a branch
  change in the browser.

Rounds interleave the three, their order rotated. Ratios are per round, then the median. Target: pitree
on the same branch costs at most 1.2× pi alone.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _common as C  # noqa: E402
from _pi import Alone, scratch  # noqa: E402
from support.fake_openai import FakeOpenAI, call_tool, say  # noqa: E402
from support.pi_agent import pi_settings  # noqa: E402

from sessions_app.assistants.pi.driver import PiDriver  # noqa: E402
from sessions_app.assistants.pi.locks import FileDrivers, Turns  # noqa: E402
from sessions_app.sessionfiles.fork import create_session  # noqa: E402
from sessions_app.sessionfiles.store import SessionFile  # noqa: E402

ROUNDS = 30


def _respond(handler: Any, fake: FakeOpenAI) -> None:
    """A tool call, or the answer once the tool's result is back: the same turn for every pi."""
    last = fake.requests[-1].body["messages"][-1]
    (say("The command ran; all is well.") if last["role"] == "tool" else call_tool("bash", {"command": "true"}))(
        handler, fake
    )


async def _measure(report: C.Report, root: Path, fake: FakeOpenAI) -> dict[str, list[float]]:
    workspace = root / "workspace"
    workspace.mkdir()
    settings = pi_settings(root, fake)
    sessions = root / "sessions"
    made = [create_session(sessions, str(workspace), fsync=False) for _ in range(3)]
    locks = root / "locks"
    alone = Alone(list(settings.argv), dict(settings.env), workspace, made[0].path)
    same = PiDriver(made[1].path, workspace, settings, FileDrivers(locks), Turns(locks))
    moved = PiDriver(made[2].path, workspace, settings, FileDrivers(locks), Turns(locks))
    await alone.start()
    await alone.turn("warm up")
    for driver in (same, moved):
        await driver.prompt("warm up", at=None)
        await driver.settled()
    first_answer = SessionFile(made[2].path).leaf_id
    leaf: list[str | None] = [None]

    async def pitree_same() -> None:
        await same.prompt("again", at=leaf[0])
        await same.settled()

    async def pitree_moved() -> None:
        await moved.prompt("again, from the first answer", at=first_answer)
        await moved.settled()

    variants = {
        "pi alone": lambda: alone.turn("again"),
        "pitree, same branch": pitree_same,
        "pitree, after a move": pitree_moved,
    }
    times: dict[str, list[float]] = {name: [] for name in variants}
    try:
        for round_number in range(ROUNDS):
            names = list(variants)
            names = names[round_number % 3 :] + names[: round_number % 3]
            for name in names:
                leaf[0] = SessionFile.open(made[1].path).leaf_id  # where the tab stands: known before it sends
                started = time.perf_counter()
                await variants[name]()
                times[name].append(time.perf_counter() - started)
    finally:
        await alone.stop()
        await same.stop()
        await moved.stop()
    for name, found in times.items():
        report.line(f"{name:22} median {C.fmt_time(C.median(found)):>9}  p90 {C.fmt_time(C.pct(found, 90)):>9}")
    return times


def main() -> int:
    report = C.Report("pi_turn", "A whole pi turn (a bash call, then an answer): through pitree's driver vs pi alone")
    with scratch("pitree-pi-turn-", _respond) as (root, fake):
        times = asyncio.run(_measure(report, root, fake))
    alone = times["pi alone"]
    same = [a / b for a, b in zip(times["pitree, same branch"], alone)]
    moved = [a / b for a, b in zip(times["pitree, after a move"], alone)]
    report.line()
    report.line(f"{ROUNDS} rounds, interleaved; ratios per round, then their median")
    report.figure("pi alone: a turn, median", C.fmt_time(C.median(alone)))
    report.figure("pitree, same branch / pi alone", f"{C.median(same):.2f}×", "≤ 1.2×", C.median(same) <= 1.2)
    report.figure("pitree, after a move / pi alone", f"{C.median(moved):.2f}×")
    overhead = C.median([a - b for a, b in zip(times["pitree, same branch"], alone)])
    report.figure("pitree's overhead, same branch, median", C.fmt_time(max(overhead, 0.0)))
    return report.finish()


if __name__ == "__main__":
    sys.exit(main())
