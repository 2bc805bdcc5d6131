"""A send, an edit or a regeneration whose answer is lost after the server took it (the connection
dropped, the server restarted mid-reply, a proxy gave up on a long reply): the answer comes only once
the reply is stored, so what the server wrote reaches the tab through its socket first. The tab must
not say that nothing was written, nor put the message back into the box, from where it would be sent
twice; and it shows what the server stored without being asked to."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import expect
from support.daphne import Daphne, launch_daphne

LEAF = "db26dc72"  # 01-linear's leaf
ASSISTANT = "358d8704"  # its last answer, to the user message c256703f


class Restartable:
    """pitree under daphne that a test may stop and start again (``restart``), as its owner would: on
    the same port, with the same environment (database, sessions folder, caches), so that its open
    pages reconnect."""

    def __init__(self, daphne: Daphne, root: Path, logs: Path) -> None:
        self.daphne, self.root, self.logs = daphne, root, logs
        self.url = daphne.url
        self.restarts = 0

    def log_tail(self, chars: int = 4000) -> str:
        return self.daphne.log_tail(chars)

    def restart(self) -> None:
        """SIGTERM (replies being written are stored as they are, ``aborted``), then start again."""
        old = self.daphne
        old.stop()
        self.restarts += 1
        self.daphne = launch_daphne(old.env, self.logs / f"daphne-{self.restarts}.log", site=old, port=old.port)


@pytest.fixture(scope="module")
def server(start_daphne: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Restartable]:
    """pitree under daphne with a slow offline responder (0.3 s between chunks, about 5 s a reply), so
    that a reply is still being written when its answer is lost (overrides the suite's ``server``)."""
    root = tmp_path_factory.mktemp("pitree-lost-answer") / "sessions"
    root.mkdir()
    env = {
        "PITREE_SESSIONS_DIR": str(root),
        "PITREE_OFFLINE_DELAY": "0.3",
        "PITREE_FSYNC": "0",
        "PITREE_ASSISTANT": "offline",
    }
    started = Restartable(start_daphne(env), root, tmp_path_factory.mktemp("pitree-restarted"))
    yield started
    started.daphne.stop()  # the one running now (start_daphne stops the first one)


def _lose_answers(page: Any, path: str, after_ms: float | None = None) -> None:
    """Requests to ``path`` reach the server, but the browser never gets their answer: the connection
    drops as it comes, or ``after_ms`` after the request was sent (the server goes on meanwhile)."""

    def handle(route: Any) -> None:
        with contextlib.suppress(PlaywrightError):  # timed out: the server is still at it
            route.fetch(timeout=after_ms)
        route.abort("connectionreset")

    page.route(f"**{path}", handle)


def test_a_message_whose_answer_is_lost_mid_reply_is_stored_once(page, ui, sessions, record) -> None:
    seeded = sessions.seed("01-linear")
    ui.open(page, seeded.url)
    _lose_answers(page, "/send/", after_ms=1500)
    box = page.locator("#composer textarea[name=text]")
    box.fill("Do not send me twice")
    box.press("Control+Enter")

    expect(page.locator("#flash")).to_contain_text("it had taken what you sent")
    expect(box).to_have_value("")
    growing = page.locator("#entries > article[data-reply].is-streaming")
    expect(growing.locator(".stream")).to_contain_text("Offline responder")  # the reply goes on, here
    ui.wait_position_change(page, LEAF)
    reply = seeded.entries()[-1]
    assert reply["message"]["role"] == "assistant" and reply["message"]["stopReason"] == "stop"
    assert ui.position(page) == reply["id"]
    sent = [e for e in seeded.entries() if e.get("message", {}).get("content") == "Do not send me twice"]
    assert len(sent) == 1 and sent[0]["id"] == reply["parentId"]
    expect(box).to_have_value("")
    assert not record.errors


def test_a_sent_message_whose_answer_is_lost_is_not_offered_again(page, ui, sessions, record) -> None:
    seeded = sessions.seed("01-linear")
    ui.open(page, seeded.url)
    _lose_answers(page, "/send/")
    box = page.locator("#composer textarea[name=text]")
    box.fill("Only once, please")
    box.press("Control+Enter")

    # The tab ends where the answer would have taken it: the reply stored, the message sent once.
    ui.wait_position_change(page, LEAF)
    reply = seeded.entries()[-1]
    assert reply["message"]["role"] == "assistant" and ui.position(page) == reply["id"]
    sent = [e for e in seeded.entries() if e.get("message", {}).get("content") == "Only once, please"]
    assert len(sent) == 1 and sent[0]["id"] == reply["parentId"]
    expect(page.locator(f"#entry-{sent[0]['id']}")).to_contain_text("Only once, please")
    expect(box).to_have_value("")
    expect(page.locator("#entries article.is-pending")).to_have_count(0)
    expect(page.locator("#flash")).not_to_contain_text("Nothing was written")
    assert not record.errors


def test_a_regeneration_whose_answer_is_lost_shows_the_new_answer(page, ui, sessions, record) -> None:
    seeded = sessions.seed("01-linear")
    ui.open(page, seeded.url)
    _lose_answers(page, "/regenerate/")
    ui.tool(page, ASSISTANT, "Regenerate").click()

    # Where the answer would have taken the tab: the new answer, a sibling of the one it replaced.
    ui.wait_position_change(page, LEAF)
    reply = seeded.entries()[-1]
    assert reply["message"]["role"] == "assistant" and reply["parentId"] == "c256703f"
    assert ui.position(page) == reply["id"]
    expect(page.locator(f"#entry-{reply['id']} .navigator__count")).to_have_text("2/2")
    expect(page.locator(f"#entry-{ASSISTANT}")).to_have_count(0)
    expect(page.locator("#entries article.is-pending")).to_have_count(0)
    expect(page.locator("#flash")).not_to_contain_text("Nothing was written")
    assert not record.errors


@pytest.mark.parametrize("asked", ["edit", "regenerate"])
def test_an_answer_lost_to_a_server_restart_shows_what_was_stored(page, ui, sessions, server, record, asked) -> None:
    # The restarted server never ends the reply the tab waited for: the tab kept what it had hidden and
    # offered to "Follow it", while the file held the message and the reply stored as the server stopped.
    seeded = sessions.seed("01-linear")
    ui.open(page, seeded.url)
    page.wait_for_function("() => document.getElementById('live').dataset.live === 'live'")
    if asked == "edit":
        panel = ui.open_panel(page, "c256703f", "edit")
        panel.locator("textarea[name=text]").fill("Asked again, differently")
        panel.locator("button[type=submit]").click()
    else:
        ui.tool(page, ASSISTANT, "Regenerate").click()
    growing = page.locator("#entries > article[data-reply].is-streaming")
    expect(growing.locator(".stream")).to_contain_text("Offline responder")
    server.restart()

    reply = seeded.entries()[-1]
    assert reply["message"]["role"] == "assistant" and reply["message"]["stopReason"] == "aborted"
    ui.wait_position(page, reply["id"])
    asked_under = seeded.entry(reply["parentId"])
    if asked == "edit":
        assert asked_under["message"]["content"] == "Asked again, differently"
    expect(page.locator(f"#entry-{asked_under['id']}")).to_be_visible()
    sibling = asked_under if asked == "edit" else reply  # of the message edited, or of the answer redone
    expect(page.locator(f"#entry-{sibling['id']} .navigator__count")).to_have_text("2/2")
    expect(page.locator("#entries [data-hidden-for], #entries [data-reply], #entries .is-pending")).to_have_count(0)
    expect(page.locator("#moved-note")).to_have_count(0)
    assert not record.errors
