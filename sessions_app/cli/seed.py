"""``seed``: put pi's sample sessions into an empty sessions folder, as pi itself named and placed them."""

from __future__ import annotations

import json
import os
from pathlib import Path, PurePosixPath

SAMPLES_DIR = Path(__file__).resolve().parent.parent / "samples" / "pi"


def sample_files(samples_dir: Path = SAMPLES_DIR) -> tuple[str, list[tuple[Path, str]]]:
    """(session folder name, [(sample file, original file name)]) for the samples ``expected.json``
    describes: exactly the files pi's own listing (``__list``) showed — the ``.input`` twins of
    migrated or appended-to samples are not among them."""
    expected = json.loads((samples_dir / "expected.json").read_text(encoding="utf-8"))
    listed = {item["file"] for item in expected.get("__list", [])}
    folder = PurePosixPath(expected["__sessionDir"]).name
    files = []
    for key, sample in expected.items():
        if key.startswith("__"):
            continue
        original = sample["originalFileName"]
        if original in listed:
            files.append((samples_dir / f"{key}.jsonl", original))
    return folder, files


def has_sessions(sessions_dir: Path) -> bool:
    """Whether any ``.jsonl`` file exists under ``sessions_dir`` (at any depth)."""
    return sessions_dir.is_dir() and next(sessions_dir.rglob("*.jsonl"), None) is not None


def seed(sessions_dir: Path, samples_dir: Path = SAMPLES_DIR) -> list[Path]:
    """Copy the samples into ``sessions_dir/<pi's folder>/<original name>`` when ``sessions_dir`` holds
    no ``.jsonl`` file yet; returns the files written (none when it already had sessions). Never
    replaces a file."""
    if has_sessions(sessions_dir):
        return []
    folder, files = sample_files(samples_dir)
    target = sessions_dir / folder
    target.mkdir(parents=True, exist_ok=True)
    written = []
    for source, name in files:
        destination = target / name
        data = source.read_bytes()
        fd = os.open(destination, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        written.append(destination)
    return written
