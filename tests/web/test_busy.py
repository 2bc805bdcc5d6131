"""Expensive requests one person may have under way at once: one more is answered 429 at once, saying
why; others are not held back by it, and the count goes down as each ends (a download at its last
byte)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

import pytest
from django.test import AsyncClient

from sessions_app.views import search as search_view

HTMX = {"HX-Request": "true"}


@pytest.fixture
def held(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """Searches wait until the event is set (as a search over a huge folder would take its time)."""
    release = threading.Event()
    real = search_view.search

    def slow(*args, **kwargs):
        assert release.wait(30)
        return real(*args, **kwargs)

    monkeypatch.setattr(search_view, "search", slow)
    yield release
    release.set()


async def _started(count: int) -> None:
    """Let the requests started so far reach their search (each takes its place first)."""
    for _ in range(20 * count):
        await asyncio.sleep(0.01)


async def test_one_search_too_many_is_refused_at_once(async_client, samples, settings, held) -> None:
    settings.PITREE_BUSY_PER_USER = 2
    running = [asyncio.create_task(async_client.get("/search/?q=todo", headers=HTMX)) for _ in range(2)]
    await _started(2)
    refused = await async_client.get("/search/?q=todo", headers=HTMX)
    assert refused.status_code == 429 and refused["Retry-After"] == "5"
    assert "You have 2 searches, downloads or uploads under way already" in refused.content.decode()
    assert refused["HX-Retarget"] == "#flash"
    held.set()
    assert [response.status_code for response in await asyncio.gather(*running)] == [200, 200]
    assert (await async_client.get("/search/?q=todo", headers=HTMX)).status_code == 200  # counted down


async def test_another_person_is_not_held_back(async_client, samples, settings, held, django_user_model) -> None:
    settings.PITREE_BUSY_PER_USER = 1
    running = asyncio.create_task(async_client.get("/search/?q=todo", headers=HTMX))
    await _started(1)
    assert (await async_client.get("/search/?q=todo", headers=HTMX)).status_code == 429
    other = await asyncio.to_thread(django_user_model.objects.create_user, "other", password=None)
    someone_else = AsyncClient()
    await someone_else.aforce_login(other)
    held.set()  # (their search finds nothing they may see: what matters is that it is not refused)
    assert (await someone_else.get("/search/?q=todo", headers=HTMX)).status_code == 200
    assert (await running).status_code == 200


async def test_a_refused_search_is_said_on_a_page_without_htmx(async_client, samples, settings, held) -> None:
    settings.PITREE_BUSY_PER_USER = 1
    running = asyncio.create_task(async_client.get("/search/?q=todo"))
    await _started(1)
    page = await async_client.get("/search/?q=todo")
    assert page.status_code == 429 and "under way already" in page.content.decode()
    held.set()
    assert (await running).status_code == 200
