"""pi driving one session file, from this process: started when needed, told where to continue, stopped
when idle. Everything pi writes, pi writes; pitree adds at most one line of its own before a command,
so that pi continues under the entry the browser is on.

Where pi continues: pi has no command to move to an entry in place. It continues under the file's last
line (its leaf after loading; a ``leaf`` marker of pitree's is such a line to pi, and what pi hangs
under one pitree reads as a root, docs/format.md §11.3). So before a command that makes pi write
(a prompt, a model or thinking level, a compaction), under the turn lock: if the file's last line is
not the entry the browser is on, pitree appends a ``custom`` entry of type ``pitree/continue`` under
that entry (a node to both readers, outside the context, invisible in pitree's transcript), and pi
loads the file again (``switch_session``). pi then hangs what it writes, the entries it writes when it
loads a file included, under that line: in pitree's reading and in pi's own.

A pi that crashes or stops answering mid-turn is reported (``pitree_exit``, ``pitree_silent``), the
lock it held is released, and the next command starts a new one; what it wrote stays as written (a torn
last line gets its newline from the next append, which pitree makes before pi loads the file again).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...sessionfiles.entries import continue_here
from ...sessionfiles.errors import SessionError
from ...sessionfiles.store import SessionFile
from .locks import Drivers, Held, Turns, lock_key
from .rpc import PiExited, PiProcess, PiRefused

log = logging.getLogger(__name__)

Listener = Callable[[dict[str, Any]], None]
DONE, ABORTED, ENDED = "done", "aborted", "ended"  # how a turn ended (``PiDriver.settled``)


class PiFailed(SessionError):
    """pi could not do what was asked (not installed, would not start, refused, ended); the message
    says which, in words a page may show (pi's stderr goes to the log only)."""


class PiBusy(SessionError):
    """A prompt while pi works: it can be queued (steer, follow-up) or pi stopped first."""

    def __init__(self) -> None:
        super().__init__("pi is working in this session: send this as a steer or a follow-up, or stop pi first.")


class PiIdle(SessionError):
    """A steer or follow-up while pi is not working: it is sent as an ordinary message instead."""

    def __init__(self) -> None:
        super().__init__("pi is not working in this session any more: send this as a new message.")


class PiOnAnotherBranch(SessionError):
    """A message from a tab standing off the branch pi's running turn continues: pi would answer it
    there, so it is refused rather than put into that turn."""

    def __init__(self) -> None:
        super().__init__("pi is working on another branch of this session; wait for it or stop it. Nothing was sent.")


class PiElsewhere(SessionError):
    """Another server process runs pi for this session (its driver lock is held there)."""

    def __init__(self) -> None:
        super().__init__("pi is running this session in another server process.")


@dataclass(frozen=True)
class PiSettings:
    """How pi is started and how long pitree waits for it (seconds)."""

    argv: Sequence[str]
    env: Mapping[str, str]
    idle: float = 600.0  # an idle pi is stopped after this long
    start_wait: float = 60.0  # a starting pi's first answer, and loading a file
    answer_wait: float = 30.0  # pi's answer to a command (a prompt's means accepted, not done)
    abort_wait: float = 10.0  # an abort, before pi is ended instead
    stop_grace: float = 1.0  # between closing pi's stdin, SIGTERM and SIGKILL
    silence: float = 120.0  # a turn with no news from pi for this long is reported


class PiDriver:
    """pi for one session file. ``listeners`` get every record pi prints that is not an answer to a
    command of ours (its events, in order), and pitree's own ``pitree_*`` records: ``pitree_start``
    (``pid``: pi runs and answers), ``pitree_exit``
    (``code``, ``turn``: whether pi was working, ``asked``: whether pitree stopped it),
    ``pitree_silent`` (``seconds`` without news mid-turn)."""

    def __init__(
        self, path: Path, cwd: Path, settings: PiSettings, drivers: Drivers, turns: Turns, name: str = ""
    ) -> None:
        self.path, self.cwd, self.settings = Path(path), Path(cwd), settings
        self.key = lock_key(path)
        self.name = name or self.path.name
        self._drivers, self._turns = drivers, turns
        self.listeners: set[Listener] = set()
        self.turn_at: str | None = None  # the entry the latest turn continued under
        # The file's size when the latest turn was asked: it names the turn alike in every process (the
        # file only grows, and each turn pi takes writes at least the message it answers).
        self.turn_from = 0
        self._commands = asyncio.Lock()  # one command set up at a time
        self._process: PiProcess | None = None
        self._held: Held | None = None
        self._loaded = False  # pi has the file loaded (switch_session), as of its last load
        self._size_then = -1  # the file's size when pi's last command ended (-1: not known)
        self._turn: int | None = None  # the turn lock's descriptor while pi may write
        self._settled: asyncio.Future[str] | None = None  # how a running turn ended: DONE, ABORTED, ENDED
        self._accepted = False  # pi has answered the command that began the turn
        self._taken = asyncio.Event()  # set once a turn's prompt is accepted, or the turn has ended
        self._abort_asked = False  # Stop came before that answer: pi is stopped once it answers
        self._stopping = False
        self._last_news = time.monotonic()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._idle_timer: asyncio.Task[None] | None = None
        self._lease_watch: asyncio.Task[None] | None = None
        self._released: asyncio.Task[None] | None = None  # the driver lock of the pi that last ended

    # ------------------------------------------------------------------ state

    @property
    def running(self) -> bool:
        return self._process is not None

    @property
    def busy(self) -> bool:
        """pi may be writing the file (a turn, or a command that writes, being set up or running)."""
        return self._turn is not None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    async def settled(self) -> str:
        """Wait until pi is not working; how its last turn ended: ``DONE``, ``ABORTED`` (stopped, or it
        failed before it began) or ``ENDED`` (pi itself ended: crashed, or killed)."""
        while self._settled is not None and not self._settled.done():
            await asyncio.shield(self._settled)
        return self._settled.result() if self._settled is not None else DONE

    # ------------------------------------------------------------------ commands

    async def prompt(self, text: str, at: str | None, images: Sequence[dict[str, Any]] = ()) -> str:
        """Send a message for pi to answer, continuing under entry ``at`` (None: a new root); returns
        pi's disposition (``started``, or ``handled`` for an extension command). The turn goes on in
        events until ``agent_settled``. ``PiBusy`` while pi works."""
        command: dict[str, Any] = {"type": "prompt", "message": text}
        if images:
            command["images"] = list(images)
        data = await self._write(at, command, turn=True)
        return str((data or {}).get("disposition") or "started")

    async def queue(self, kind: str, text: str, images: Sequence[dict[str, Any]] = ()) -> str:
        """A message for pi while it works: ``steer`` (after its current tool calls) or ``follow_up``
        (once it is done). ``PiIdle`` when pi is not working."""
        if kind not in ("steer", "follow_up"):
            raise ValueError(kind)
        process = self._process
        if process is None or not self.busy:
            raise PiIdle()
        command: dict[str, Any] = {"type": kind, "message": text}
        if images:
            command["images"] = list(images)
        data = await self._ask(process, command)
        return str((data or {}).get("disposition") or "queued")

    async def steer_turn(self, at: str | None, text: str) -> bool:
        """A message sent under entry ``at`` by a tab that did not know pi works: while pi's turn runs
        and ``at`` is on its branch (where it continues, or an entry pi wrote in it), the message steers
        it (True), as the tab's Enter would have; False when no turn runs. A turn being set up is
        waited for: a steer reaches pi only after the prompt it steers. ``PiOnAnotherBranch`` when
        ``at`` is off the turn's branch."""
        while self.busy and self._settled is not None and not self._settled.done():
            turn, process = self._settled, self._process
            if not self._accepted or process is None:
                await self._taken.wait()
                continue
            if not await asyncio.to_thread(self._on_turn, at):
                raise PiOnAnotherBranch()
            if self._settled is turn and self.busy:  # the same turn still runs after the file was read
                await self._ask(process, {"type": "steer", "message": text})
                return True
        return False

    def _on_turn(self, at: str | None) -> bool:
        """Whether ``at`` is on the running turn's branch: where the turn continues, or on the way from
        there to what pi wrote last (nobody else writes during a turn: the file's last node is pi's)."""
        if at == self.turn_at:
            return True
        index = SessionFile.open(self.path).index
        start = index.row(self.turn_at) if self.turn_at is not None else None
        row = next((row for row in range(len(index) - 1, -1, -1) if index.is_node(row)), -1)
        while row >= 0 and row != start:
            if index.ids[row] == at:
                return True
            row = index.parents[row]
        return False

    async def abort(self) -> bool:
        """Stop what pi is doing (Stop); False when it was doing nothing. A pi that does not settle within
        ``abort_wait`` seconds is ended."""
        if not self.busy:
            return False
        process = self._process
        if process is None or not self._accepted:  # still being set up: aborted once its prompt is accepted
            self._abort_asked = True
            return True
        try:
            await process.request({"type": "abort"}, timeout=self.settings.abort_wait)
        except (TimeoutError, PiExited, PiRefused) as error:
            log.warning("pi (%s) did not stop when asked (%s): ending it", self.name, error)
            process.kill()
        return True

    async def models(self) -> list[dict[str, Any]]:
        """The models pi is configured with (its ``models.json``, providers, keys), as pi describes them."""
        async with self._commands:
            process = await self._started()
        data = await self._ask(process, {"type": "get_available_models"})
        models = (data or {}).get("models")
        return [model for model in models if isinstance(model, dict)] if isinstance(models, list) else []

    async def set_model(self, provider: str, model_id: str, at: str | None) -> dict[str, Any]:
        """pi switches model, and records it (``model_change``) on the branch of ``at``."""
        data = await self._write(at, {"type": "set_model", "provider": provider, "modelId": model_id})
        return data if isinstance(data, dict) else {}

    async def set_thinking_level(self, level: str, at: str | None) -> None:
        await self._write(at, {"type": "set_thinking_level", "level": level})

    async def compact(self, at: str | None, instructions: str | None = None) -> dict[str, Any]:
        """pi folds the branch of ``at`` into a summary (its ``compact``), which may take a while."""
        command: dict[str, Any] = {"type": "compact"}
        if instructions:
            command["customInstructions"] = instructions
        data = await self._write(at, command, wait=None)
        return data if isinstance(data, dict) else {}

    async def stop(self) -> None:
        """Stop pi (idle time over, server shutting down): its turn aborted first, then its stdin closed,
        then signals."""
        self._cancel_idle_timer()
        process = self._process
        if process is None:
            return
        self._stopping = True
        if self.busy:
            with contextlib.suppress(TimeoutError, PiExited, PiRefused):
                await process.request({"type": "abort"}, timeout=self.settings.stop_grace)
        await process.close(self.settings.stop_grace)
        await self._wait_exit_handled()

    # ------------------------------------------------------------------ how a command runs

    async def _write(
        self, at: str | None, command: dict[str, Any], *, turn: bool = False, wait: float | None = -1.0
    ) -> Any:
        """A command that makes pi write, under the turn lock, once pi continues at ``at``. With ``turn``
        the lock is held until pi settles (``agent_settled``), else until pi answers."""
        wait = self.settings.answer_wait if wait == -1.0 else wait
        async with self._commands:
            if self.busy:
                raise PiBusy()
            self._cancel_idle_timer()
            await self._started()  # first: pi may run in another process, whose turn holds the lock below
            try:
                self._turn = await self._turns.begin(self.key)
            except TimeoutError as error:
                raise PiFailed("pitree's own writes kept this session busy; try again.") from error
            self._accepted = self._abort_asked = False
            if turn:  # from now on a message of another tab waits for this turn (``steer_turn``)
                self._settled = asyncio.get_running_loop().create_future()
                self._taken.clear()
            try:
                process = await self._ready_at(at)
                if turn:
                    self._last_news = time.monotonic()
                    self.turn_at, self.turn_from = at, _end_of(self.path)[0]
                self._accepted = not turn  # a command that is no turn is aborted as it runs
                answer = await process.ask(command)
            except BaseException:
                self._end_turn(ABORTED)
                raise
        try:
            data = await self._answer(answer, wait)
        except BaseException:
            self._end_turn(ABORTED)
            raise
        self._accepted = True
        self._taken.set()
        if not turn or (isinstance(data, dict) and data.get("disposition") == "handled"):
            self._end_turn(DONE)
        else:
            self._watch(self._watch_silence())
            if self._abort_asked:
                self._watch(self.abort())
        return data

    async def _ready_at(self, at: str | None) -> PiProcess:
        """pi, running, with the file loaded and its last line at ``at`` (see the module's docstring)."""
        last, marked, size = await asyncio.to_thread(self._mark, at)
        process = await self._started()
        untouched = self._loaded and size == self._size_then  # nobody wrote since pi last did
        if marked or not (untouched or await self._knows(process, last)):
            data = await self._ask(process, {"type": "switch_session", "sessionPath": str(self.path)})
            if isinstance(data, dict) and data.get("cancelled"):
                raise PiFailed("An extension of pi would not open this session.")
            self._loaded = True
        return process

    def _mark(self, at: str | None) -> tuple[str | None, bool, int]:
        """Make the file's last line ``at`` (or a ``pitree/continue`` entry under it): returns the last
        line's id, whether it was appended now, and the file's size. Also when the file ends in a torn
        line: the append first ends it, or pi would glue its next line to it."""
        session = SessionFile.open(self.path)
        index = session.index
        last = index.ids[len(index) - 1] if len(index) else None
        size, whole = _end_of(self.path)
        if last == at and whole:
            return last, False, size
        written = session.append(continue_here(), at)
        return str(written["id"]), True, _end_of(self.path)[0]

    async def _knows(self, process: PiProcess, last: str | None) -> bool:
        """Whether pi has the file loaded as it is: it knows its last line, and that is its leaf."""
        if not self._loaded or last is None:
            return False
        try:
            data = await self._ask(process, {"type": "get_entries", "since": last})
        except PiFailed as error:
            if isinstance(error.__cause__, PiRefused):  # an entry pi has not read
                return False
            raise
        return isinstance(data, dict) and data.get("leafId") == last and not data.get("entries")

    async def _started(self) -> PiProcess:
        """The running pi, started now if need be (with no session: ``_ready_at`` loads the file)."""
        if self._process is not None:
            return self._process
        held = await self._drivers.acquire(self.key)
        if held is None:
            raise PiElsewhere()
        argv = [*self.settings.argv, "--mode", "rpc", "--no-session"]
        process = PiProcess(
            argv, cwd=self.cwd, env=self.settings.env, on_record=self._on_record, on_exit=self._on_exit, name=self.name
        )
        self._stopping, self._loaded = False, False
        try:
            await process.start()
        except OSError as error:
            await held.release()
            log.warning("pi (%s) could not be started: %s", self.name, error)
            raise PiFailed(f"pi could not be started: {error.strerror or error}") from error
        self._process, self._held = process, held
        self._lease_watch = asyncio.create_task(self._watch_lease(held), name=f"pi {self.name} lease")
        try:
            await process.request({"type": "get_state"}, timeout=self.settings.start_wait)
        except (TimeoutError, PiExited, PiRefused) as error:
            process.kill()
            await self._wait_exit_handled()
            raise PiFailed("pi did not start (the server's log says why).") from error
        log.info("pi (%s) started, process %s, in %s", self.name, process.pid, self.cwd)
        self._publish({"type": "pitree_start", "pid": process.pid})
        return process

    async def _ask(self, process: PiProcess, command: dict[str, Any]) -> Any:
        return await self._answer(await process.ask(command), self.settings.answer_wait)

    async def _answer(self, answer: asyncio.Future[Any], wait: float | None) -> Any:
        try:
            async with asyncio.timeout(wait):
                return await answer
        except PiRefused as error:
            raise PiFailed(f"pi refused: {error}") from error
        except PiExited as error:
            raise PiFailed("pi ended before it answered (the server's log says why).") from error
        except TimeoutError as error:
            raise PiFailed(f"pi did not answer within {wait:g} s.") from error

    # ------------------------------------------------------------------ what pi says

    def _on_record(self, record: dict[str, Any]) -> None:
        self._last_news = time.monotonic()
        kind = record.get("type")
        if kind == "agent_settled":
            self._end_turn(ABORTED if record.get("aborted") else DONE)
        elif kind == "extension_ui_request" and record.get("method") in ("select", "confirm", "input", "editor"):
            # pitree shows no extension dialogs: answered as dismissed, so pi does not wait forever.
            answer = {"type": "extension_ui_response", "id": record.get("id"), "cancelled": True}
            process = self._process
            if process is not None:
                self._watch(process.send(answer))
        self._publish(record)

    def _on_exit(self, code: int) -> None:
        turn = self.busy
        if self._stopping:
            log.info("pi (%s) stopped", self.name)
        else:
            log.warning("pi (%s) ended with status %s%s", self.name, code, " during a turn" if turn else "")
        self._process, self._loaded = None, False
        self._end_turn(ENDED)
        self._cancel_idle_timer()
        held, self._held = self._held, None
        if self._lease_watch is not None:
            self._lease_watch.cancel()
        if held is not None:
            self._released = asyncio.ensure_future(held.release())
        self._publish({"type": "pitree_exit", "code": code, "turn": turn, "asked": self._stopping})

    def _publish(self, record: dict[str, Any]) -> None:
        for listener in list(self.listeners):
            try:
                listener(record)
            except Exception:
                log.exception("pi (%s): a listener failed", self.name)

    def _end_turn(self, ending: str) -> None:
        turn, self._turn = self._turn, None
        if turn is not None:
            # What pi wrote is the file's end now (nobody else writes during a turn): while the file
            # keeps this size, pi's leaf is its last line, and the next command need not ask pi.
            self._size_then = _end_of(self.path)[0] if self._loaded and ending != ENDED else -1
            self._turns.end(turn)
        settled = self._settled
        if settled is not None and not settled.done():
            settled.set_result(ending)
        self._taken.set()
        if turn is not None and self._process is not None and not self._stopping:
            self._arm_idle_timer()

    # ------------------------------------------------------------------ background duties

    def _watch(self, work: Any) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _watch_silence(self) -> None:
        """Report a turn that has gone ``silence`` seconds without news (a model that stalls, a tool
        that hangs), again after each further ``silence`` seconds; Stop ends it."""
        told = self._last_news
        while self.busy:
            await asyncio.sleep(min(1.0, self.settings.silence / 4))
            quiet = time.monotonic() - self._last_news
            if self.busy and quiet >= self.settings.silence and time.monotonic() - told >= self.settings.silence:
                told = time.monotonic()
                self._publish({"type": "pitree_silent", "seconds": round(quiet)})

    async def _watch_lease(self, held: Held) -> None:
        """A driver lock that is lost (a Redis lease) ends this pi: another process may start its own."""
        await held.lost.wait()
        process = self._process
        if process is not None and self._held is held:
            log.warning("pi (%s): its lock was lost; ending it", self.name)
            process.kill()

    def _arm_idle_timer(self) -> None:
        self._cancel_idle_timer()
        self._idle_timer = asyncio.get_running_loop().create_task(self._stop_when_idle(), name=f"pi {self.name} idle")

    def _cancel_idle_timer(self) -> None:
        timer, self._idle_timer = self._idle_timer, None
        if timer is not None and timer is not asyncio.current_task():
            timer.cancel()

    async def _stop_when_idle(self) -> None:
        await asyncio.sleep(self.settings.idle)
        if not self.busy and not self._commands.locked():
            self._idle_timer = None
            await self.stop()

    async def _wait_exit_handled(self) -> None:
        """Until the exit of the pi being stopped has been handled (its lock released)."""
        while self._process is not None:
            await asyncio.sleep(0.01)
        if self._released is not None:
            await asyncio.gather(self._released, return_exceptions=True)


def _end_of(path: Path) -> tuple[int, bool]:
    """The file's size, and whether it ends with a newline (pi appends without checking)."""
    with open(path, "rb") as file:
        size = os.fstat(file.fileno()).st_size
        return size, size == 0 or os.pread(file.fileno(), 1, size - 1) == b"\n"
