"""A small HTTP/1.1 load generator, run as its own process by ``load.py`` and ``machines.py``.

    python bench/_loadgen.py URL[,URL…] CLIENTS SECONDS [COOKIE]

``CLIENTS`` keep-alive connections each send ``GET URL`` and wait for the whole answer, again and
again, for ``SECONDS``, sending ``COOKIE`` (a ``Cookie`` header value, e.g. a signed-in session); with
several URLs (the same page on several servers) the connections take them in turn. Prints one JSON
object: requests, requests per second, p50/p99 latency in seconds, and errors (non-200 answers or
broken connections). Plain asyncio streams, no dependency, so that the measuring costs little next to
the server it measures.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from urllib.parse import urlsplit


async def _client(host: str, port: int, request: bytes, stop: float, latencies: list[float], errors: list[str]) -> None:
    reader, writer = await asyncio.open_connection(host, port)
    try:
        while time.perf_counter() < stop:
            started = time.perf_counter()
            writer.write(request)
            status = await reader.readline()
            length = None
            while (line := await reader.readline()) not in (b"\r\n", b""):
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            if length is None:
                errors.append(f"no Content-Length: {status!r}")
                return
            await reader.readexactly(length)
            latencies.append(time.perf_counter() - started)
            if not status.startswith(b"HTTP/1.1 200"):
                errors.append(status.decode(errors="replace").strip())
    except (OSError, asyncio.IncompleteReadError) as error:
        errors.append(repr(error))
    finally:
        writer.close()


def _percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p / 100))] if ordered else float("nan")


def _target(url: str, cookie: str) -> tuple[str, int, bytes]:
    """Host, port and the request bytes of a GET of ``url``."""
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    target = parts.path + (f"?{parts.query}" if parts.query else "")
    cookie_line = f"Cookie: {cookie}\r\n" if cookie else ""
    return (
        host,
        port,
        f"GET {target} HTTP/1.1\r\nHost: {host}:{port}\r\nAccept: text/html\r\n{cookie_line}\r\n".encode(),
    )


async def main(urls: str, clients: int, seconds: float, cookie: str = "") -> dict[str, float | int | list[str]]:
    targets = [_target(url, cookie) for url in urls.split(",")]
    latencies: list[float] = []
    errors: list[str] = []
    started = time.perf_counter()
    stop = started + seconds
    await asyncio.gather(*(_client(*targets[n % len(targets)], stop, latencies, errors) for n in range(clients)))
    elapsed = time.perf_counter() - started
    return {
        "requests": len(latencies),
        "rps": len(latencies) / elapsed,
        "p50": _percentile(latencies, 50),
        "p99": _percentile(latencies, 99),
        "errors": errors[:5],
        "error_count": len(errors),
    }


if __name__ == "__main__":
    cookie = sys.argv[4] if len(sys.argv) > 4 else ""
    print(json.dumps(asyncio.run(main(sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), cookie))))
