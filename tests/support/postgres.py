"""A PostgreSQL server of a test's own (Debian's ``postgresql`` package; ./scripts/test installs it): a
cluster made in a temporary folder, on a free port of 127.0.0.1, removed when it stops.

``initdb`` and ``postgres`` refuse to run as root, and CI runs the tests as root on a clean machine:
there the cluster belongs to ``nobody``, and its programs run as that user (the folder is made for
it under the system's temporary folder, which every user may enter; a test's own ``tmp_path`` is not).
Anyone else runs them as themselves. Nothing is made durable (``fsync=off``): a test's database is
thrown away.

Run as a program, it wraps a command: ``python tests/support/postgres.py CMD ARGS…`` starts a cluster,
runs the command with ``PITREE_DATABASE_URL`` naming it, stops the cluster and exits with the command's
status (how ./scripts/test runs the permission matrix on PostgreSQL).
"""

from __future__ import annotations

import contextlib
import grp
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg

USER = "pitree"  # the cluster's superuser, trusted from 127.0.0.1 without a password
DATABASE = "pitree"
START_SECONDS = 30


class PostgresMissing(RuntimeError):
    """No PostgreSQL programs on this machine."""


def binaries() -> Path:
    """The folder holding ``initdb`` and ``postgres``: on the ``PATH``, else Debian's
    ``/usr/lib/postgresql/<version>/bin`` (the newest), which the package does not put on the ``PATH``."""
    found = shutil.which("initdb")
    if found is not None and shutil.which("postgres") is not None:
        return Path(found).resolve().parent
    versions = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: int(p.parts[-3]), reverse=True)
    if not versions:
        raise PostgresMissing("no PostgreSQL: run ./scripts/test (it installs it) or apt-get install postgresql")
    return versions[0].parent


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _as_owner(folder: Path) -> dict[str, Any]:
    """Popen's arguments that run a program as the cluster's owner: ``nobody`` for root, who then
    hands it the folder; anyone else as themselves."""
    if os.geteuid() != 0:
        return {}
    nobody = pwd.getpwnam("nobody")
    os.chown(folder, nobody.pw_uid, nobody.pw_gid)
    return {"user": nobody.pw_uid, "group": grp.getgrgid(nobody.pw_gid).gr_gid, "extra_groups": []}


@contextlib.contextmanager
def postgres_server() -> Iterator[str]:
    """Start a fresh cluster with an empty database ``pitree``; yield its URL
    (``postgres://pitree@127.0.0.1:PORT/pitree``); stop it and remove its folder afterwards."""
    bin_dir = binaries()
    folder = Path(tempfile.mkdtemp(prefix="pitree-postgres-"))
    owner = _as_owner(folder)
    data, log = folder / "data", folder / "postgres.log"
    process: subprocess.Popen[bytes] | None = None
    try:
        subprocess.run(
            [bin_dir / "initdb", "-D", data, "-U", USER, "--auth=trust", "-E", "UTF8", "--no-locale", "--no-sync"],
            cwd=folder,
            capture_output=True,
            check=True,
            **owner,
        )
        port = _free_port()
        settings = {
            "listen_addresses": "127.0.0.1",
            "port": str(port),
            "unix_socket_directories": str(folder),
            "fsync": "off",
            "synchronous_commit": "off",
            "full_page_writes": "off",
            "max_connections": "300",  # two servers' threads, each with a connection of its own, and the tests'
        }
        arguments = [item for name, value in settings.items() for item in ("-c", f"{name}={value}")]
        with open(log, "wb") as out:
            process = subprocess.Popen(
                [bin_dir / "postgres", "-D", data, *arguments],
                cwd=folder,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                **owner,
            )
        url = f"postgres://{USER}@127.0.0.1:{port}"
        _wait_and_create(url, process, log)
        yield f"{url}/{DATABASE}"
    except subprocess.CalledProcessError as error:
        raise RuntimeError(f"initdb failed:\n{error.stdout.decode(errors='replace')}") from error
    finally:
        if process is not None and process.poll() is None:
            process.terminate()  # SIGTERM: "smart" shutdown; sessions still open are ended by SIGINT
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.send_signal(2)
                process.wait(timeout=10)
        shutil.rmtree(folder, ignore_errors=True)


def _wait_and_create(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + START_SECONDS
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"postgres exited with {process.returncode}:\n{log.read_text(errors='replace')}")
        try:
            with psycopg.connect(f"{url}/postgres", autocommit=True, connect_timeout=2) as connection:
                connection.execute(f"CREATE DATABASE {DATABASE}")
                return
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise RuntimeError(f"postgres did not start:\n{log.read_text(errors='replace')}") from None
            time.sleep(0.1)


def main(command: list[str]) -> int:
    with postgres_server() as url:
        return subprocess.run(command, env={**os.environ, "PITREE_DATABASE_URL": url}, check=False).returncode


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: python tests/support/postgres.py COMMAND [ARGUMENTS…]")
    sys.exit(main(sys.argv[1:]))
