"""A send or a regeneration whose answer is lost after the server took it (the connection dropped, the
server restarted mid-reply, a proxy gave up on a long reply): the answer comes only once the reply is
stored, so what the server wrote reaches the tab through its socket first. The tab must not say that
nothing was written, nor put the message back into the box, from where it would be sent twice."""

from __future__ import annotations

import contextlib
from types import SimpleNamespace
from typing import Any

import pytest
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import expect

LEAF = "db26dc72"  # 01-linear's leaf
ASSISTANT = "358d8704"  # its last answer, to the user message c256703f


@pytest.fixture(scope="module")
def server(start_daphne: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """pitree under daphne with a slow offline responder (0.3 s between chunks, about 5 s a reply), so
    that a reply is still being written when its answer is lost (overrides the suite's ``server``)."""
    root = tmp_path_factory.mktemp("pitree-lost-answer") / "sessions"
    root.mkdir()
    env = {"PITREE_SESSIONS_DIR": str(root), "PITREE_OFFLINE_DELAY": "0.3", "PITREE_FSYNC": "0"}
    daphne = start_daphne({**env, "PITREE_ASSISTANT": "offline"})
    return SimpleNamespace(url=daphne.url, root=root, daphne=daphne, log_tail=daphne.log_tail)


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
