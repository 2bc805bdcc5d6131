"""An uploaded session survives a power cut once the page says it is saved: its data, its name in its
workspace folder, and the name of that folder when the upload created it (``store.write_new``, the
path new sessions and forks take)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from sessions_app.sessionfiles.fork import encode_cwd


def test_an_upload_into_a_new_workspace_folder_syncs_the_file_and_both_folders(
    client: Any, sessions_dir: Path, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.PITREE_FSYNC = True
    synced: list[Path] = []
    real = os.fsync

    def record(fd: int) -> None:
        synced.append(Path(os.readlink(f"/proc/self/fd/{fd}")))
        real(fd)

    monkeypatch.setattr(os, "fsync", record)
    data = (
        b'{"type":"session","version":3,"id":"uploaded-one","timestamp":"2026-03-02T09:00:00.000Z","cwd":"/srv/up"}\n'
    )
    response = client.post("/upload/", {"file": SimpleUploadedFile("s.jsonl", data), "cwd": "/srv/up"})
    assert response.status_code == 302, response.content.decode()[:300]
    (path,) = (sessions_dir / encode_cwd("/srv/up")).glob("*.jsonl")
    assert path.read_bytes() == data
    assert synced[synced.index(path) :][:3] == [path, path.parent, sessions_dir]
