"""What the pi benchmarks (``pi_stream.py``, ``pi_turn.py``) share: the test suite's fake model server and
pi set-up on the import path, a scratch folder with a fake that answers as the benchmark says, and pi
driven alone, the baseline both measure pitree against.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import _common as C

sys.path.insert(0, str(C.ROOT / "tests"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pitree_web.settings")

from support.fake_openai import FakeOpenAI


@contextlib.contextmanager
def scratch(prefix: str, respond: Callable[[Any, FakeOpenAI], None]) -> Iterator[tuple[Path, FakeOpenAI]]:
    """A folder of the benchmark's own and a fake model server answering with ``respond``; both gone
    afterwards."""
    root = Path(tempfile.mkdtemp(prefix=prefix))
    fake = FakeOpenAI()
    fake.respond = respond
    try:
        yield root, fake
    finally:
        fake.stop()
        shutil.rmtree(root, ignore_errors=True)


class Alone:
    """pi with nothing of pitree's in between: ``pi --mode rpc --session FILE`` and a JSONL client as
    small as pi's docs allow."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path, path: Path) -> None:
        self.argv, self.env, self.cwd, self.path = argv, env, cwd, path
        self.process: asyncio.subprocess.Process | None = None

    async def start(self) -> None:
        self.process = await asyncio.create_subprocess_exec(
            *self.argv, "--mode", "rpc", "--session", str(self.path), cwd=self.cwd, env=self.env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, limit=1 << 26,
        )  # fmt: skip

    async def turn(self, text: str, heard: Callable[[dict[str, Any], int], None] | None = None) -> None:
        """A prompt, until pi's ``agent_settled``; ``heard(record, when)`` gets each record pi printed
        meanwhile, with the moment it was read (``perf_counter_ns``)."""
        assert self.process is not None and self.process.stdin and self.process.stdout
        self.process.stdin.write(json.dumps({"type": "prompt", "message": text}).encode() + b"\n")
        await self.process.stdin.drain()
        while True:
            record = json.loads(await self.process.stdout.readuntil(b"\n"))
            if record.get("type") == "agent_settled":
                return
            if heard is not None:
                heard(record, time.perf_counter_ns())

    async def stop(self) -> None:
        if self.process is not None:
            assert self.process.stdin
            self.process.stdin.close()
            await self.process.wait()
