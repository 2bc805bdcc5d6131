"""pi answering in sessions (``PITREE_ASSISTANT=pi``), as the web app uses it: where pi may run, this
process's drivers (``assistants.pi.driver``: one per session file it runs pi for), and the one that runs
pi for a session in another server process, reached through the channel layer.

One pi per session across processes: the process holding a session's driver lock runs its pi and
listens on the session's pi group (``pi_group``) for as long as pi runs. Another process that is asked
for something of that session (a message, Stop, the models…) finds the lock taken and sends the
command to the group instead; the holder answers on the asker's own channel. A message's answer comes
when pi's turn ends, with word every ``HEARTBEAT`` seconds meanwhile, so that an asker whose holder
died stops waiting after ``HEARTBEAT_LOST``.

Who may drive pi (the members of the session's workspace) is ``access``'s to say; this module
refuses sessions whose working folder does not exist or is outside ``PITREE_PI_ROOTS``.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import sys
import weakref
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

from channels.layers import BaseChannelLayer, get_channel_layer
from django.conf import settings

from ..assistants.pi.command import PiUnavailable, pi_command, pi_environment
from ..assistants.pi.driver import (
    DONE,
    ENDED,
    PiBusy,
    PiDriver,
    PiElsewhere,
    PiFailed,
    PiIdle,
    PiOnAnotherBranch,
    PiSettings,
)
from ..assistants.pi.locks import Drivers, FileDrivers, PiWorking, RedisDrivers, Turns, lock_key, locks_folder
from ..channel_layer.calls import Inbox, call
from ..channel_layer.groups import replies_group
from ..sessionfiles.errors import SessionError
from ..sessionfiles.store import SessionFile
from .pi_stream import Broadcast

log = logging.getLogger(__name__)

ANSWER_WAIT = 5.0  # seconds an asker waits for the holder's first word
HEARTBEAT = 5.0  # seconds between the holder's words while a forwarded message is being answered
HEARTBEAT_LOST = 20.0  # seconds without a word after which an asker gives up
SHUTDOWN_GRACE = 1.0

STEERED, MOVED_ON = "steered", "moved on"  # how ``send`` went, besides how pi's turn ended

__all__ = [
    "DONE",
    "ENDED",
    "MOVED_ON",
    "STEERED",
    "PiBusy",
    "PiFailed",
    "PiIdle",
    "PiNotAllowed",
    "PiOnAnotherBranch",
    "PiWorking",
]


class PiNotAllowed(SessionError):
    """pi may not run in this session (its working folder is missing, or not one pi may work in)."""


def enabled() -> bool:
    return bool(settings.PITREE_ASSISTANT == "pi")


def pi_group(key: str) -> str:
    return f"pi.{key}"


def allowed_cwd(session: SessionFile) -> Path:
    """The session's working folder, when pi may run there: it exists, and it is one of
    ``PITREE_PI_ROOTS`` or inside one (by real paths: a link cannot lead out); and the file is one
    pitree would write (not a version 1 or 2 file, not a link out of the sessions folder)."""
    if not enabled():
        raise PiNotAllowed("pi is not this server's assistant (PITREE_ASSISTANT=pi turns it on).")
    if session.index.read_only or session.outside:  # pi would write what pitree never writes
        raise PiNotAllowed("This session is read-only here, so pi cannot work in it; fork it to continue.")
    cwd = session.cwd
    if not cwd or not os.path.isabs(cwd):
        raise PiNotAllowed("This session names no working folder, so pi cannot work in it.")
    real = os.path.realpath(cwd)
    if not os.path.isdir(real):
        raise PiNotAllowed("This session's working folder does not exist on this server, so pi cannot work in it.")
    for root in settings.PITREE_PI_ROOTS:
        base = os.path.realpath(root)
        if os.path.commonpath([real, base]) == base:
            return Path(real)
    raise PiNotAllowed(
        "pi may not work in this session's folder: it is outside the folders this server lets pi work in"
        " (PITREE_PI_ROOTS)."
    )


def _locks_folder() -> Path:
    return locks_folder(settings.PITREE_SESSIONS_DIR)


@contextlib.contextmanager
def writing(path: Path) -> Iterator[None]:
    """Around one of pitree's own appends to a session file: with pi on, refused (``PiWorking``) while
    pi works in that session, in any process, so that no line of pitree's lands among pi's."""
    if not enabled():
        yield
        return
    with Turns(_locks_folder()).writing(lock_key(path)):
        yield


def _settings() -> PiSettings:
    try:
        argv = pi_command(settings.PITREE_PI_COMMAND)
    except PiUnavailable as error:
        log.warning("pi: %s", error)
        raise PiFailed("pi is not installed on this server (the server's log says what to do).") from error
    return PiSettings(argv=argv, env=pi_environment(os.environ), idle=settings.PITREE_PI_IDLE_SECONDS)


def _drivers() -> Drivers:
    if settings.PITREE_REDIS_URL:
        return RedisDrivers(settings.PITREE_REDIS_URL)
    return FileDrivers(_locks_folder())


class Registry:
    """The pi drivers of one server process (one per event loop), and their presence on the channel
    layer while their pi runs."""

    def __init__(self) -> None:
        self.drivers: dict[Path, PiDriver] = {}
        self._broadcasts: dict[Path, Broadcast] = {}
        self._inboxes: dict[Path, Inbox] = {}

    def driver(self, session: SessionFile) -> PiDriver:
        path = Path(os.path.abspath(session.path))
        cwd = allowed_cwd(session)
        found = self.drivers.get(path)
        if found is None or found.cwd != cwd:
            found = self.drivers[path] = PiDriver(path, cwd, _settings(), _drivers(), Turns(_locks_folder()))
            found.listeners.add(functools.partial(self._on_record, found))
            broadcast = self._broadcasts[path] = Broadcast(found, session.session_id)
            found.listeners.add(broadcast.take)
        return found

    def _on_record(self, driver: PiDriver, record: dict[str, Any]) -> None:
        kind = record.get("type")
        if kind == "pitree_start":
            _spawn(self._listen(driver))
        elif kind == "pitree_exit":
            inbox = self._inboxes.pop(driver.path, None)
            if inbox is not None:
                _spawn(inbox.close())

    async def _listen(self, driver: PiDriver) -> None:
        """While this process runs pi for the session, commands for it from other processes reach it,
        and so do the feeds that start meanwhile, asking for what pi's turn shows so far (as they ask
        the replies being written: ``reply.resend``)."""
        layer = get_channel_layer()
        broadcast = self._broadcasts[driver.path]
        if layer is None or driver.path in self._inboxes:
            return

        async def serve(message: dict[str, Any]) -> None:
            if message.get("type") == "pi.command" and isinstance(message.get("reply_to"), str):
                _spawn(_answer(driver, message, layer))
            elif message.get("type") == "reply.resend":
                broadcast.resend()

        groups = [pi_group(driver.key), replies_group(broadcast.session_id)]
        inbox = Inbox(layer, serve, f"pitree-pi {driver.name}", groups)
        self._inboxes[driver.path] = inbox
        try:
            await inbox.open()
        except Exception:
            log.warning("pi (%s): other processes cannot reach it", driver.name, exc_info=True)
            if self._inboxes.get(driver.path) is inbox:
                del self._inboxes[driver.path]
            await inbox.close()
            return
        if not driver.running and self._inboxes.get(driver.path) is inbox:  # it ended meanwhile
            del self._inboxes[driver.path]
            await inbox.close()

    async def stop_all(self, grace: float = SHUTDOWN_GRACE) -> None:
        drivers = list(self.drivers.values())
        if drivers:
            await asyncio.wait([asyncio.ensure_future(driver.stop()) for driver in drivers], timeout=grace * 3)


_registries: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Registry] = weakref.WeakKeyDictionary()
_background: set[asyncio.Future[Any]] = set()


def registry() -> Registry:
    """This process's registry (per event loop: a driver's locks and futures belong to one loop)."""
    loop = asyncio.get_running_loop()
    found = _registries.get(loop)
    if found is None:
        found = _registries[loop] = Registry()
        _stop_drivers_on_server_shutdown()
    return found


def _spawn(work: Awaitable[Any]) -> None:
    task = asyncio.ensure_future(work)
    _background.add(task)
    task.add_done_callback(_background.discard)


# ---------------------------------------------------------------------------------- what views ask


async def answer(session: SessionFile, text: str, at: str | None) -> str:
    """pi answers ``text`` under entry ``at``; returns once its turn has ended, how it ended (``DONE``,
    ``ABORTED``, ``ENDED``: pi itself ended before it was done)."""
    return str(await _run(session, "answer", {"text": text, "at": at}))


async def send(session: SessionFile, text: str, at: str | None, *, steer: bool, went_on: bool) -> str:
    """A message from the composer of a tab standing at ``at``, which may not know yet that pi works
    (``steer``: it may go into pi's running turn). While pi's turn runs on the tab's branch, the message
    steers it (``STEERED``), as the tab's Enter would have; off that branch it is refused
    (``PiOnAnotherBranch``). Otherwise: ``MOVED_ON`` when the page missed how the conversation went on
    after ``at`` (``went_on``, which the view found), else pi answers it as ``answer`` does."""
    return str(await _run(session, "send", {"text": text, "at": at, "steer": steer, "went_on": went_on}))


async def queue(session: SessionFile, kind: str, text: str) -> str:
    """A message for pi while it works (``steer`` or ``follow_up``)."""
    return str(await _run(session, "queue", {"kind": kind, "text": text}))


async def stop(session: SessionFile) -> bool:
    """Stop what pi is doing in the session; False when it was doing nothing."""
    return bool(await _run(session, "abort", {}, start=False))


async def models(session: SessionFile) -> list[dict[str, Any]]:
    return list(await _run(session, "models", {}))


async def set_model(session: SessionFile, provider: str, model_id: str, at: str | None) -> None:
    await _run(session, "set_model", {"provider": provider, "model_id": model_id, "at": at})


async def set_thinking_level(session: SessionFile, level: str, at: str | None) -> None:
    await _run(session, "set_thinking_level", {"level": level, "at": at})


async def compact(session: SessionFile, at: str | None, instructions: str | None) -> None:
    await _run(session, "compact", {"at": at, "instructions": instructions})


def working(session: SessionFile) -> bool:
    """Whether pi works in the session in this process (a message then goes to its queue)."""
    driver = registry().drivers.get(Path(os.path.abspath(session.path)))
    return driver is not None and driver.busy


async def _run(session: SessionFile, op: str, args: dict[str, Any], *, start: bool = True) -> Any:
    """Do ``op`` with the session's pi: here, or in the process that runs it."""
    driver = registry().driver(session)
    if driver.running or start:
        try:
            return await _do(driver, op, args)
        except PiElsewhere:
            pass
    elif await _runs_nowhere(driver):
        return False  # Stop, and no pi to stop
    layer = get_channel_layer()
    if layer is None:
        raise PiElsewhere()
    return await _forward(layer, driver, op, args)


async def _runs_nowhere(driver: PiDriver) -> bool:
    held = await _drivers().acquire(driver.key)
    if held is None:
        return False
    await held.release()
    return True


async def _do(driver: PiDriver, op: str, args: dict[str, Any]) -> Any:
    if op == "send":
        return await _send(driver, args["text"], args["at"], steer=args["steer"], went_on=args["went_on"])
    if op == "answer":
        await driver.prompt(args["text"], args["at"])
        return await driver.settled()
    if op == "queue":
        return await driver.queue(args["kind"], args["text"])
    if op == "abort":
        return await driver.abort()
    if op == "models":
        return await driver.models()
    if op == "set_model":
        return await driver.set_model(args["provider"], args["model_id"], args["at"])
    if op == "set_thinking_level":
        return await driver.set_thinking_level(args["level"], args["at"])
    if op == "compact":
        return await driver.compact(args["at"], args["instructions"])
    raise ValueError(op)


async def _send(driver: PiDriver, text: str, at: str | None, *, steer: bool, went_on: bool) -> str:
    """``send``, where pi runs (``PiElsewhere`` when that is another process: the message goes there)."""
    if steer and await driver.steer_turn(at, text):
        return STEERED
    if went_on:
        if driver.running or await _runs_nowhere(driver):
            return MOVED_ON
        raise PiElsewhere()
    try:
        await driver.prompt(text, at)
    except PiBusy:  # another tab's message began a turn meanwhile (two sent at once)
        if steer and await driver.steer_turn(at, text):
            return STEERED
        raise
    return await driver.settled()


# ------------------------------------------------------------------- across server processes

_ERRORS: dict[str, Callable[[str], SessionError]] = {
    "PiBusy": lambda _: PiBusy(),
    "PiIdle": lambda _: PiIdle(),
    "PiElsewhere": lambda _: PiElsewhere(),
    "PiOnAnotherBranch": lambda _: PiOnAnotherBranch(),
    "PiNotAllowed": PiNotAllowed,
}


async def _answer(driver: PiDriver, message: dict[str, Any], layer: BaseChannelLayer) -> None:
    """Do a forwarded command and answer it, with word every ``HEARTBEAT`` seconds while it runs."""
    reply_to, ask = message["reply_to"], message.get("ask")
    op, args = str(message.get("op")), message.get("args") or {}
    if op == "abort" and not driver.running:
        answer: dict[str, Any] = {"result": False}
    else:
        work = asyncio.ensure_future(_do(driver, op, args))
        while True:
            done, _ = await asyncio.wait({work}, timeout=HEARTBEAT)
            if done:
                break
            with contextlib.suppress(Exception):
                await call(layer.send(reply_to, {"type": "pi.working", "ask": ask}))
        try:
            answer = {"result": work.result()}
        except SessionError as error:
            answer = {"error": str(error), "kind": type(error).__name__}
        except Exception as error:
            log.exception("pi (%s): a command from another process failed", driver.name)
            answer = {"error": f"pi failed: {type(error).__name__}", "kind": "PiFailed"}
    try:
        await call(layer.send(reply_to, {"type": "pi.answer", "ask": ask, **answer}))
    except Exception:
        log.warning("pi (%s): could not answer another process", driver.name, exc_info=True)


async def _forward(layer: BaseChannelLayer, driver: PiDriver, op: str, args: dict[str, Any]) -> Any:
    """Send ``op`` to the process that runs the session's pi and wait for its answer."""
    heard: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    async def take(message: dict[str, Any]) -> None:
        await heard.put(message)

    inbox = Inbox(layer, take, f"pitree-pi-ask {driver.name}")
    try:
        channel = await inbox.open()
        ask = {"type": "pi.command", "op": op, "args": args, "reply_to": channel, "ask": channel}
        await call(layer.group_send(pi_group(driver.key), ask))
        wait = ANSWER_WAIT
        while True:
            try:
                message = await asyncio.wait_for(heard.get(), wait)
            except TimeoutError:
                if op == "abort":
                    return False
                raise PiFailed(
                    "pi is running this session in another server process, which did not answer; try again."
                ) from None
            if message.get("type") == "pi.answer":
                break
            wait = HEARTBEAT_LOST
    finally:
        await inbox.close()
    if "error" in message:
        make = _ERRORS.get(str(message.get("kind")), PiFailed)
        raise make(str(message["error"]))
    return message.get("result")


# ------------------------------------------------------------------------------ shutdown

_hooked: set[int] = set()


def _stop_drivers_on_server_shutdown() -> None:
    """Under daphne, SIGTERM runs Twisted's "before shutdown" triggers while the loop still runs: the
    moment to stop every pi this process runs (its turn aborted, its stdin closed, then signals).
    Without a reactor (tests, other servers) nothing is hooked; pi ends with the process anyway."""
    reactor: Any = sys.modules.get("twisted.internet.reactor")
    if reactor is None or not getattr(reactor, "running", False) or id(reactor) in _hooked:
        return
    from twisted.internet.defer import Deferred  # noqa: PLC0415 (loaded where daphne runs, not everywhere)

    def stop() -> Any:
        return Deferred.fromFuture(asyncio.ensure_future(registry().stop_all()))

    reactor.addSystemEventTrigger("before", "shutdown", stop)
    _hooked.add(id(reactor))
