"""A server of several whose Redis dies: the page says that live updates from other servers are paused,
keeps following the file meanwhile (the push needs no Redis), and says it no more once Redis is back."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect
from support.lines import message
from support.redisserver import redis_server, shut_down

PAUSED = "Live updates from other servers are paused"


@pytest.fixture(scope="module")
def redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Any]]:
    folder = tmp_path_factory.mktemp("redis")
    with redis_server(folder) as url:
        yield url, folder


@pytest.fixture(scope="module")
def server(serve: Any, redis: tuple[str, Any]) -> Any:
    return serve({"PITREE_REDIS_URL": redis[0], "PITREE_OFFLINE_DELAY": "0.02", "PITREE_ASSISTANT": "offline"})


def test_the_page_says_when_other_servers_cannot_reach_it(page, ui, sessions, redis, record) -> None:
    url, folder = redis
    seeded = sessions.write_lines([message("a0000001", None, "user", "hello", 1)])
    ui.open(page, seeded.url)
    page.wait_for_function("() => document.getElementById('live').dataset.live === 'live'")
    note = page.locator("#live-layer")
    expect(note).to_have_count(0)

    port = shut_down(url)
    expect(note).to_be_visible(timeout=20_000)
    expect(note).to_contain_text(PAUSED)
    seeded.append(message("a0000002", "a0000001", "assistant", "still here", 2))  # it still arrives
    expect(page.locator("#entry-a0000002")).to_have_count(1)

    with redis_server(folder, port):
        expect(note).to_be_hidden(timeout=30_000)
    assert not record.errors, record.errors
