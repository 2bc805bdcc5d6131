"""How pitree starts pi: which node runs which pi, in what environment. No Django import (the tests and
benchmarks start pi the same way).

pi 1.6.0 is pinned, installed by ``scripts/install-pi`` into a cache outside the repository, with Node
22 from npm's ``node`` package beside it when the machine's node is older than pi needs; the folders
are named by version and found here by the script's own rules. ``PITREE_PI_COMMAND`` names another
pi (say, one on the PATH), in which case none of this is looked at.
"""

from __future__ import annotations

import functools
import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

PI_PACKAGE = "@earendil-works/pi-coding-agent"
PI_VERSION = "1.6.0"
NODE_VERSION = "22.23.3"  # what scripts/install-pi installs when the machine's node is older
NODE_NEEDED = (22, 19)  # pi's "engines"
# Variables pi is not given: pitree's own settings (its secret key, database and Redis addresses…) have
# no business in a process that runs whatever commands a model asks for.
HIDDEN_PREFIXES = ("PITREE_", "DJANGO_")


class PiUnavailable(Exception):
    """pi cannot be started here; the message says what to install or set."""


def cache_dir() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pitree"


def pi_dir() -> Path:
    """Where scripts/install-pi installs pi's npm package (``PITREE_PI_DIR`` overrides it)."""
    explicit = os.environ.get("PITREE_PI_DIR")
    return Path(explicit).expanduser().resolve() if explicit else cache_dir() / f"pi-coding-agent-{PI_VERSION}"


def package_dir() -> Path:
    return pi_dir() / "node_modules" / PI_PACKAGE


def pi_command(configured: str = "") -> list[str]:
    """The argument list that starts pi (``pi`` itself, options to come): ``configured`` when given
    (``PITREE_PI_COMMAND``), else pinned pi on a node recent enough."""
    if configured:
        return shlex.split(configured)
    cli = package_dir() / "dist" / "bundle" / "cli.js"
    if not cli.is_file():
        raise PiUnavailable(f"pi {PI_VERSION} is not installed in {pi_dir()}: run scripts/install-pi")
    return [_node(), str(cli)]


def _node() -> str:
    """A node that runs pi: npm's Node 22 that scripts/install-pi installed, else the machine's."""
    installed = cache_dir() / f"node-{NODE_VERSION}" / "node_modules" / ".bin" / "node"
    if installed.is_file():
        return str(installed)
    found = shutil.which("node")
    if found is None:
        raise PiUnavailable("node is not on the PATH: install Node.js, then run scripts/install-pi")
    version = _version(found)
    if version < NODE_NEEDED:
        needed = ".".join(map(str, NODE_NEEDED))
        raise PiUnavailable(f"pi needs node {needed} or newer, {found} is {version}: run scripts/install-pi")
    return found


@functools.cache
def _version(node: str) -> tuple[int, ...]:
    try:
        printed = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30, check=True).stdout
    except (OSError, subprocess.SubprocessError) as error:
        raise PiUnavailable(f"{node} --version failed: {error}") from error
    return tuple(int(part) for part in re.findall(r"\d+", printed)[:3])


def pi_environment(base: Mapping[str, str]) -> dict[str, str]:
    """``base`` (the server's environment) without pitree's own variables: pi keeps everything its users
    configure it with (``PI_CODING_AGENT_DIR``, provider keys, ``HOME``, proxies)."""
    return {name: value for name, value in base.items() if not name.startswith(HIDDEN_PREFIXES)}
