"""The session page under 50 concurrent clients, next to a minimal Django view on the same server.

One daphne process serves pitree (as ``./scripts/run`` does) with a sessions folder holding a
1,000-entry session and 200 smaller ones, plus ``/bench/minimal/`` (a view that returns "ok" through
the same middleware; ``_load_settings``/``_load_urls`` add it for this benchmark only). A load
generator in another process (``_loadgen.py``) keeps CLIENTS keep-alive connections busy on one URL for
SECONDS; the two URLs alternate for ROUNDS rounds after a warm-up, so both see the same machine load.

Target: session page throughput ≥ 0.25× the minimal view's (median of the per-round ratios).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _accounts
import _common as C
import _gen

HERE = Path(__file__).resolve().parent
CLIENTS = 50
SECONDS = 6.0
ROUNDS = 3
OTHER_SESSIONS = 200
TARGET = 0.25


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def session_folder() -> tuple[Path, str]:
    """A sessions folder for the server, and the id of the 1k-entry session in it."""
    folder = Path(tempfile.mkdtemp(prefix="pitree-load-"))
    big = _gen.session_file(1_000, seed=3)
    (folder / "--bench--").mkdir()
    shutil.copy(big, folder / "--bench--" / big.name)
    for source in sorted(_gen.sessions_folder().rglob("*.jsonl"))[:OTHER_SESSIONS]:
        target = folder / source.parent.name / source.name
        target.parent.mkdir(exist_ok=True)
        shutil.copy(source, target)
    with open(big, "rb") as handle:
        session_id = json.loads(handle.readline())["id"]
    return folder, session_id


def _serve(folder: Path, port: int) -> tuple[subprocess.Popen[bytes], str]:
    """Start the server; returns it and a signed-in session's ``Cookie`` header value."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "_load_settings",
        "PYTHONPATH": os.pathsep.join([str(HERE), str(C.ROOT)]),
        "PITREE_SESSIONS_DIR": str(folder),
        "PITREE_FSYNC": "0",
    }
    env.pop("PITREE_DEBUG", None)
    link = _accounts.prepare_server_env(env)
    command = [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), "pitree_web.asgi:application"]
    server = subprocess.Popen(command, cwd=C.ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/bench/minimal/", timeout=2):
                return server, _accounts.session_cookie(f"http://127.0.0.1:{port}", link)
        except OSError:
            time.sleep(0.2)
    server.kill()
    raise RuntimeError("daphne did not start")


def _load(url: str, seconds: float, cookie: str) -> dict:
    out = subprocess.run(
        [sys.executable, str(HERE / "_loadgen.py"), url, str(CLIENTS), str(seconds), cookie],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)


def main() -> int:
    report = C.Report("load", f"Session page vs a minimal view, {CLIENTS} concurrent clients, one daphne process")
    folder, session_id = session_folder()
    port = _free_port()
    server, cookie = _serve(folder, port)
    try:
        base = f"http://127.0.0.1:{port}"
        urls = {"minimal view": f"{base}/bench/minimal/", "session page": f"{base}/s/{session_id}/"}
        for url in urls.values():
            _load(url, 2.0, cookie)  # warm-up: caches filled, code paths imported
        runs: dict[str, list[dict]] = {name: [] for name in urls}
        for round_no in range(ROUNDS):
            order = list(urls.items()) if round_no % 2 == 0 else list(reversed(urls.items()))
            for name, url in order:
                result = _load(url, SECONDS, cookie)
                runs[name].append(result)
                report.line(
                    f"round {round_no + 1} {name:<13} {result['rps']:8.1f} req/s  p50 {C.fmt_time(result['p50']):>8}"
                    f"  p99 {C.fmt_time(result['p99']):>8}  errors {result['error_count']}"
                )
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=15)
        shutil.rmtree(folder, ignore_errors=True)

    ratios = [page["rps"] / minimal["rps"] for page, minimal in zip(runs["session page"], runs["minimal view"])]
    ratio = C.median(ratios)
    errors = sum(r["error_count"] for results in runs.values() for r in results)
    report.line()
    for name, results in runs.items():
        rps = C.median([r["rps"] for r in results])
        p50 = C.median([r["p50"] for r in results])
        p99 = C.median([r["p99"] for r in results])
        report.line(f"{name:<13} median {rps:8.1f} req/s  p50 {C.fmt_time(p50)}  p99 {C.fmt_time(p99)}")
        report.figure(f"{name}: req/s, p50 / p99", f"{rps:.0f}/s, {C.fmt_time(p50)} / {C.fmt_time(p99)}")
    report.line(f"session page / minimal view throughput: {ratio:.2f}× (errors: {errors})")
    report.figure(
        "session page / minimal view throughput", f"{ratio:.2f}×", f"≥ {TARGET}×", ratio >= TARGET and not errors
    )
    return report.finish()


if __name__ == "__main__":
    sys.exit(main())
