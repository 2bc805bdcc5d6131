"""One ``pi --mode rpc`` child process: commands written to its stdin, each answered by the response with
its id; every other record it prints (events, extension requests) handed on in order; its stderr to the
log, line by line, never anywhere a page could show it.

The framing is pi's (``docs/rpc.md`` in its package): one JSON object per line, split on ``\\n`` only,
since JSON strings may hold U+2028, which line readers split on. pi answers a command when it has
handled it; for a ``prompt`` that means accepted, and the turn goes on in events.

pi runs in a process group of its own, so that stopping it also stops the commands its tools started.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import itertools
import logging
import os
import secrets
import signal
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson

log = logging.getLogger(__name__)

PR_SET_PDEATHSIG = 1
RUN_VARIABLE = "PITREE_PI_RUN"  # in pi's environment, and so in its tools': which pi started a process
READ_CHUNK = 1 << 16
STDERR_LINE = 4000  # characters of one stderr line kept for the log
_ids = itertools.count(1)
# Looked up once, here: the child between fork and exec should do no more than call it.
_prctl = getattr(ctypes.CDLL(None, use_errno=True), "prctl", None) if sys.platform == "linux" else None


def _end_with_parent() -> None:
    """In pi's process, before it runs: be killed when the server process that started it ends, however
    it ends. Its driver lock ends with that process; a pi left running would go on writing the file
    without it, beside the pi another process may start."""
    if _prctl is not None:
        _prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL))


class PiExited(Exception):
    """pi is not running (it ended, or never started) and cannot answer."""


class PiRefused(Exception):
    """pi answered a command with ``success: false``; the message is pi's own."""


class PiProcess:
    """The child and its pipes. ``on_record`` gets every record that is not a response to a request of
    ours, in order; ``on_exit`` gets the exit status once, after the last record."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        on_record: Callable[[dict[str, Any]], None],
        on_exit: Callable[[int], None],
        name: str,
    ) -> None:
        self.argv, self.cwd, self.name = list(argv), cwd, name
        self.env = {**env, RUN_VARIABLE: secrets.token_hex(12)}
        self._on_record, self._on_exit = on_record, on_exit
        self._process: asyncio.subprocess.Process | None = None
        self._pending: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self.exited = asyncio.Event()

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    @property
    def returncode(self) -> int | None:
        return self._process.returncode if self._process is not None else None

    async def start(self) -> None:
        """Start pi; raises ``OSError`` when the program cannot be run at all."""
        self._process = await asyncio.create_subprocess_exec(
            *self.argv,
            cwd=self.cwd,
            env=self.env,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
            preexec_fn=_end_with_parent,
        )
        self._tasks = [
            asyncio.create_task(self._read_records(), name=f"pi {self.name} stdout"),
            asyncio.create_task(self._read_stderr(), name=f"pi {self.name} stderr"),
        ]

    async def request(self, command: dict[str, Any], timeout: float | None = None) -> Any:
        """Send a command and return the ``data`` of pi's answer. Raises ``PiRefused`` when pi refuses it,
        ``PiExited`` when pi ends first, ``TimeoutError`` after ``timeout`` seconds (pi may still answer;
        the answer is then dropped)."""
        answer = await self.ask(command)
        async with asyncio.timeout(timeout):
            return await answer

    async def ask(self, command: dict[str, Any]) -> asyncio.Future[Any]:
        """Send a command; the future gives the ``data`` of pi's answer (or raises as ``request`` does).
        For a caller that must send in order but may wait for the answer later."""
        request_id = f"pitree-{next(_ids)}"
        response: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = response
        try:
            await self.send({**command, "id": request_id})
        except BaseException:
            self._pending.pop(request_id, None)
            raise
        return asyncio.ensure_future(self._data(request_id, response, str(command.get("type"))))

    async def _data(self, request_id: str, response: asyncio.Future[dict[str, Any]], kind: str) -> Any:
        try:
            answer = await response
        finally:
            self._pending.pop(request_id, None)
        if not answer.get("success"):
            raise PiRefused(str(answer.get("error") or f"pi refused {kind}"))
        return answer.get("data")

    async def send(self, record: dict[str, Any]) -> None:
        """Write one record (a command no answer is awaited for, an extension's answer)."""
        process = self._process
        if process is None or process.stdin is None or self.exited.is_set() or process.stdin.is_closing():
            raise PiExited(f"pi ({self.name}) is not running")
        process.stdin.write(orjson.dumps(record) + b"\n")
        try:
            await process.stdin.drain()
        except (BrokenPipeError, ConnectionResetError) as error:
            raise PiExited(f"pi ({self.name}) is not running") from error

    async def close(self, grace: float) -> None:
        """Stop pi as its docs ask: close its stdin and let it finish; then SIGTERM to its group, then
        SIGKILL, ``grace`` seconds apart. Returns once it has exited."""
        process = self._process
        if process is None:
            return
        if process.stdin is not None and not process.stdin.is_closing():
            process.stdin.close()
        for sent in (None, signal.SIGTERM, signal.SIGKILL):
            if sent is not None:
                self._signal(sent)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(grace):
                    await self.exited.wait()
                return
        await self.exited.wait()

    def _end_leftovers(self) -> None:
        """What pi started and left behind when it ended (a tool's command, when pi itself was killed)
        goes too. pi runs its tools' commands in sessions of their own, which do not end with pi's
        group; but they inherit ``RUN_VARIABLE``, whose value is this process's alone."""
        for pid in _processes_with(RUN_VARIABLE, self.env[RUN_VARIABLE]):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)

    def kill(self) -> None:
        """SIGKILL pi's whole group at once (a pi that no longer answers)."""
        self._signal(signal.SIGKILL)

    def _signal(self, sent: signal.Signals) -> None:
        if self._process is not None and self._process.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self._process.pid, sent)

    async def _read_records(self) -> None:
        process = self._process
        assert process is not None and process.stdout is not None
        pending = bytearray()
        try:
            while chunk := await process.stdout.read(READ_CHUNK):
                start = len(pending)
                pending += chunk
                end = pending.rfind(b"\n", start)
                if end < 0:
                    continue
                lines, pending = bytes(pending[:end]), pending[end + 1 :]
                for line in lines.split(b"\n"):
                    self._take(line)
        finally:
            code = await process.wait()
            await asyncio.to_thread(self._end_leftovers)
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.gather(*self._tasks[1:], return_exceptions=True)
            self.exited.set()
            for answer in self._pending.values():
                if not answer.done():
                    answer.set_exception(PiExited(f"pi ({self.name}) ended with status {code}"))
            self._on_exit(code)

    def _take(self, line: bytes) -> None:
        line = line.removesuffix(b"\r")
        if not line.strip():
            return
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError:
            log.warning("pi (%s) printed a line that is not JSON: %.200r", self.name, line)
            return
        if not isinstance(record, dict):
            log.warning("pi (%s) printed a record that is not an object: %.200r", self.name, line)
            return
        if record.get("type") == "response":
            answer = self._pending.get(str(record.get("id")))
            if answer is not None and not answer.done():
                answer.set_result(record)
                return
            if record.get("success") is False:
                log.warning("pi (%s) refused a command: %s", self.name, record.get("error"))
            return
        try:
            self._on_record(record)
        except Exception:
            log.exception("pi (%s): a record could not be handled", self.name)

    async def _read_stderr(self) -> None:
        process = self._process
        assert process is not None and process.stderr is not None
        pending = b""
        while chunk := await process.stderr.read(READ_CHUNK):
            *lines, pending = (pending + chunk).split(b"\n")
            for line in lines:
                self._log(line)
            pending = pending[-STDERR_LINE:]
        if pending:
            self._log(pending)

    def _log(self, line: bytes) -> None:
        text = line.decode("utf-8", "replace").rstrip()
        if text:
            log.info("pi (%s): %s", self.name, text[:STDERR_LINE])


def _processes_with(variable: str, value: str) -> list[int]:
    """The processes of this user whose environment, as they started, holds ``variable=value`` (Linux)."""
    wanted = f"{variable}={value}".encode()
    try:
        names = os.listdir("/proc")
    except OSError:  # no /proc here
        return []
    found = []
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as environ:
                if wanted in environ.read().split(b"\0"):
                    found.append(int(name))
        except OSError:  # gone meanwhile, or another user's
            continue
    return found
