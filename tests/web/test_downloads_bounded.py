"""Downloads are made as they are sent: a Markdown download that is being made holds no thread another
page needs (built whole in the thread every sync view shares, six of them made another user's list
wait seconds), and a download to a client that reads slowly holds a piece or two in the server's
memory, whatever the file's size (a 31 MB session's Markdown took 22 times its size)."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.daphne import Daphne, launch_daphne

from sessions_app.transfer import markdown as markdown_module

TREE = "02-tree-branches"
ENTRIES = 2000
ENTRY_BYTES = 8 * 1024


async def test_a_download_being_made_holds_no_thread_other_pages_need(async_client, pi, monkeypatch) -> None:
    release = threading.Event()
    real = markdown_module._markdown_entry

    def slow(entry):
        assert release.wait(30)
        return real(entry)

    monkeypatch.setattr(markdown_module, "_markdown_entry", slow)
    response = await async_client.get(f"/s/{pi.id(TREE)}/download.md")
    assert response.status_code == 200

    async def read() -> bytes:
        return b"".join([piece async for piece in response.streaming_content])

    reading = asyncio.create_task(read())  # stuck on its first entry, as a large one would take its time
    await asyncio.sleep(0.2)
    page = await asyncio.wait_for(async_client.get("/"), 20)  # a sync view, in the thread they all share
    assert page.status_code == 200 and not reading.done()
    release.set()
    text = (await reading).decode()
    assert text.startswith("# ") and "## You" in text


def _session(folder: Path) -> Path:
    """A session of 2,000 entries of 8 KB each (16 MB), as the probe made."""
    lines = [{"type": "session", "version": 3, "id": "big0", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}]
    parent = None
    for n in range(ENTRIES):
        entry_id = f"{n:08x}"
        text = f"entry {n} " + "lorem ipsum dolor sit amet " * (ENTRY_BYTES // 27)
        message = {"role": "user", "content": text, "timestamp": 1}
        lines.append(
            {
                "type": "message",
                "id": entry_id,
                "parentId": parent,
                "timestamp": "2026-01-01T00:00:01.000Z",
                "message": message,
            }
        )
        parent = entry_id
    path = folder / "--w--" / "2026-01-01T00-00-00-000Z_big0.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"".join(json.dumps(line).encode() + b"\n" for line in lines))
    return path


def _one_message(folder: Path) -> Path:
    """A session of one 8 MB message of text beyond Latin-1 (a Python string of 2 bytes a character)."""
    header = {"type": "session", "version": 3, "id": "one0", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}
    text = "Grüße, 中文 and “quotes”\n" * (8 * 1024 * 1024 // 30)
    entry = {
        "type": "message",
        "id": "00000001",
        "parentId": None,
        "timestamp": "2026-01-01T00:00:01.000Z",
        "message": {"role": "user", "content": text, "timestamp": 1},
    }
    path = folder / "--w--" / "2026-01-01T00-00-01-000Z_one0.jsonl"
    path.write_bytes(b"".join(json.dumps(line, ensure_ascii=False).encode() + b"\n" for line in (header, entry)))
    return path


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[Daphne, Path]]:
    path = _session(tmp_path / "sessions")
    _one_message(tmp_path / "sessions")
    started = launch_daphne({"PITREE_SESSIONS_DIR": str(tmp_path / "sessions")}, tmp_path / "daphne.log")
    yield started, path
    started.stop()


def _peak_growth_kb(server: Daphne, url: str) -> int:
    """How much the server's peak memory grew while a client took the first 64 KB of ``url`` and then
    read nothing for two seconds."""
    Path(f"/proc/{server.process.pid}/clear_refs").write_text("5")  # the peak starts again from here
    before = server.memory_kb("VmRSS")
    with socket.create_connection(("127.0.0.1", server.port), timeout=20) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
        head = f"GET {url} HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: {server.cookie}\r\n\r\n"
        sock.sendall(head.encode())
        received = b""
        while len(received) < 64 * 1024:
            received += sock.recv(16 * 1024)
        assert received.startswith(b"HTTP/1.1 200")
        time.sleep(2)  # the client reads nothing: what the server made meanwhile waits in its memory
        return server.memory_kb("VmHWM") - before


@pytest.mark.processes
@pytest.mark.parametrize("name", ["download.md", "download.jsonl", "download.jsonl?entry=000007cf"])
def test_a_slow_reader_costs_the_server_a_few_pieces_whatever_the_file_s_size(server, name: str) -> None:
    daphne, path = server
    # The same download of the small session first: the code that writes it, imported then, is the
    # server's for good, not what a slow reader costs it (with it, the growth once passed the bound by 3 %).
    small = f"{daphne.url}/s/one0/{name.partition('?')[0]}"
    with urllib.request.urlopen(urllib.request.Request(small, headers={"Cookie": daphne.cookie}), timeout=60) as whole:
        assert len(whole.read()) > 0
    grown = _peak_growth_kb(daphne, f"/s/big0/{name}")
    assert grown * 1024 < path.stat().st_size / 4, f"{grown:,} kB for a {path.stat().st_size:,}-byte file"


@pytest.mark.processes
def test_the_markdown_of_one_huge_message_costs_the_server_a_few_pieces(server) -> None:
    """The message's text is read from the file a piece at a time (decoded whole, its line costs about
    four times its size: the bytes, a string of two bytes a character, the decoder's scratch). Read in
    pieces it costs a few of them, and whatever the server holds for a reader slower than it (0.1–0.4×
    the file, measured): under the file's size, a quarter of what decoding it whole costs."""
    daphne, path = server
    size = (path.parent / "2026-01-01T00-00-01-000Z_one0.jsonl").stat().st_size
    _peak_growth_kb(daphne, "/s/one0/download.jsonl")  # opens the session: its index holds the line once
    grown = _peak_growth_kb(daphne, "/s/one0/download.md")
    assert grown * 1024 < size, f"{grown:,} kB for a {size:,}-byte file"
