"""Fixtures for view tests: a sessions folder seeded with pi's samples, laid out as pi lays them out."""

from __future__ import annotations

import json
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import httpx2
import pytest
from django.core.cache import caches

from pitree_web.asgi import application
from sessions_app.services.lookup import _catalog_for
from sessions_app.sessionfiles.store import SessionFile, clear_cache

SAMPLES = Path(__file__).resolve().parents[2] / "sessions_app" / "samples" / "pi"
SAMPLE_DIR = "--home-alice-projects-todo-api--"
EXPECTED = json.loads((SAMPLES / "expected.json").read_text())


@pytest.fixture(autouse=True)
def _fresh_state(settings):
    """Replies come at once, and no test sees another test's cached files or listing."""
    settings.PITREE_OFFLINE_DELAY = 0
    settings.PITREE_ASSISTANT = "offline"
    settings.PITREE_FSYNC = False
    clear_cache()

    _catalog_for.cache_clear()
    caches["fragments"].clear()
    caches["default"].clear()  # what django-ratelimit and the busy requests counted
    yield
    clear_cache()


@pytest.fixture
def samples(sessions_dir: Path) -> Path:
    """The sessions folder holding every sample pi listed, under its original file name."""
    folder = sessions_dir / SAMPLE_DIR
    folder.mkdir()
    for key, expected in EXPECTED.items():
        if not key.startswith("__"):
            shutil.copy(SAMPLES / f"{key}.jsonl", folder / expected["originalFileName"])
    return folder


class Samples:
    """Where each sample lives in the seeded folder, and how to read files back as a fresh reader."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def path(self, key: str) -> Path:
        return self.folder / EXPECTED[key]["originalFileName"]

    @staticmethod
    def id(key: str) -> str:
        return EXPECTED[key]["sessionId"]

    @staticmethod
    def reopen(path: Path) -> SessionFile:
        """The file as another process sees it (not the cached object the views used)."""
        return SessionFile(path)

    @staticmethod
    def lines(path: Path) -> list[dict]:
        return [json.loads(line) for line in path.read_bytes().split(b"\n") if line.strip().startswith(b"{")]


@pytest.fixture
def pi(samples: Path) -> Samples:
    return Samples(samples)


@pytest.fixture
async def asgi(owner_session) -> AsyncIterator[httpx2.AsyncClient]:
    """HTTP on the ASGI application itself, as daphne serves it: unlike Django's test clients, every
    request runs in its own thread-sensitive context, so one request waiting for a reply does not hold
    up another (a Stop). CSRF is enforced, so the client carries the token a page gave it. It is
    signed in as the owner."""
    transport = httpx2.ASGITransport(app=application)
    async with httpx2.AsyncClient(
        transport=transport, base_url="http://testserver", headers={"HX-Request": "true"}
    ) as client:
        client.cookies.set(*owner_session)
        await client.get("/")
        client.headers["x-csrftoken"] = client.cookies["csrftoken"]
        yield client
