"""The JSONL protocol as pi's docs describe it, against a small stand-in for pi (a Python script): records
split on "\\n" only, answers matched by id whatever their order, long records, lines that are not JSON,
stderr to the log and nowhere else, exits reported once."""

from __future__ import annotations

import asyncio
import logging
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from sessions_app.assistants.pi.rpc import RUN_VARIABLE, PiExited, PiProcess, PiRefused

pytestmark = pytest.mark.processes  # the stand-in for pi is a child Python

STAND_IN = textwrap.dedent(
    """
    import json, os, sys
    sys.stderr.write("stand-in started\\n" + "x" * 70000 + "\\n")
    sys.stderr.flush()
    held = []
    for line in sys.stdin.buffer:
        command = json.loads(line)
        kind, rid = command["type"], command.get("id")
        out = sys.stdout.buffer
        if kind == "echo":
            text = command["text"]
            out.write(json.dumps({"type": "event", "text": text}, ensure_ascii=False).encode() + b"\\n")
            out.write(b"not json at all\\n")
            out.write(json.dumps({"type": "response", "id": rid, "success": True, "data": text}, ensure_ascii=False).encode() + b"\\n")
        elif kind == "hold":  # answered after the next command
            held.append(rid)
        elif kind == "refuse":
            out.write(json.dumps({"type": "response", "id": rid, "success": False, "error": "no way"}).encode() + b"\\n")
        elif kind == "env":
            out.write(json.dumps({"type": "response", "id": rid, "success": True, "data": os.environ.get(command["name"])}).encode() + b"\\n")
        elif kind == "exit":
            sys.exit(3)
        for waiting in held[:-1] if kind == "hold" else held:
            out.write(json.dumps({"type": "response", "id": waiting, "success": True, "data": "late"}).encode() + b"\\n")
        held = held[-1:] if kind == "hold" else []
        out.flush()
    """
)


@pytest.fixture
async def stand_in(tmp_path: Path):
    script = tmp_path / "stand_in.py"
    script.write_text(STAND_IN)
    records: list[dict[str, Any]] = []
    exits: list[int] = []
    process = PiProcess(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "SECRET_OF_PI": "kept"},
        on_record=records.append,
        on_exit=exits.append,
        name="stand-in",
    )
    await process.start()
    yield process, records, exits
    await process.close(0.5)


async def test_records_split_on_newline_only_and_long_ones_whole(stand_in) -> None:
    process, records, _ = stand_in
    text = "a\u2028b\u2029c\x85d" + "é" * 200_000
    assert await process.request({"type": "echo", "text": text}, timeout=10) == text
    assert records == [{"type": "event", "text": text}]  # the line that is not JSON is dropped


async def test_answers_are_matched_by_id_in_any_order(stand_in) -> None:
    process, _, _ = stand_in
    held = await process.ask({"type": "hold"})
    assert await process.request({"type": "echo", "text": "now"}, timeout=10) == "now"
    assert await asyncio.wait_for(held, 10) == "late"


async def test_a_refusal_says_why(stand_in) -> None:
    process, _, _ = stand_in
    with pytest.raises(PiRefused, match="no way"):
        await process.request({"type": "refuse"}, timeout=10)


async def test_the_environment_is_given_with_a_mark_of_this_run(stand_in) -> None:
    process, _, _ = stand_in
    assert await process.request({"type": "env", "name": "SECRET_OF_PI"}, timeout=10) == "kept"
    assert await process.request({"type": "env", "name": RUN_VARIABLE}, timeout=10) == process.env[RUN_VARIABLE]


async def test_stderr_goes_to_the_log_only(stand_in, caplog) -> None:
    process, records, _ = stand_in
    caplog.set_level(logging.INFO, logger="sessions_app.assistants.pi.rpc")
    await process.request({"type": "echo", "text": "x"}, timeout=10)
    await process.close(0.5)
    # Its first line may be read while the fixture starts it: the records of both phases.
    logged = [r.getMessage() for r in caplog.get_records("setup") + caplog.get_records("call")]
    assert "pi (stand-in): stand-in started" in logged
    assert any(message.startswith("pi (stand-in): xxx") for message in logged)  # a 70 kB line, clipped
    assert all("stand-in started" not in str(record) for record in records)


async def test_an_exit_fails_what_waits_and_is_reported_once(stand_in) -> None:
    process, _, exits = stand_in
    held = await process.ask({"type": "hold"})
    with pytest.raises(PiExited):
        await process.request({"type": "exit"}, timeout=10)
    with pytest.raises(PiExited):
        await held
    await process.exited.wait()
    assert exits == [3]
    with pytest.raises(PiExited):
        await process.send({"type": "echo", "text": "anyone?"})
