"""Stop in the browser: shown only while this tab's reply is written; the text so far is kept.

This module runs its own server whose offline responder waits a second between chunks, so that a
reply is reliably still being written when the test presses Stop.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from playwright.sync_api import expect


@pytest.fixture(scope="module")
def server(start_daphne: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """pitree under daphne with a slow offline responder (overrides the suite's ``server`` here)."""
    root = tmp_path_factory.mktemp("pitree-stop") / "sessions"
    root.mkdir()
    env = {"PITREE_SESSIONS_DIR": str(root), "PITREE_OFFLINE_DELAY": "1", "PITREE_FSYNC": "0"}
    daphne = start_daphne({**env, "PITREE_ASSISTANT": "offline"})
    return SimpleNamespace(url=daphne.url, root=root, daphne=daphne, log_tail=daphne.log_tail)


def test_stop_keeps_the_text_so_far_and_hides_again(page, ui, sessions, record):
    seeded = sessions.seed("01-linear")
    ui.open(page, seeded.url)
    stop = page.locator("#stop-reply")
    expect(stop).to_be_hidden()

    page.locator("#composer textarea[name=text]").fill("Tell me slowly")
    page.locator("#composer button[type=submit]").click()
    expect(stop).to_be_visible()
    expect(page.locator("#entries article.is-pending .stream")).to_contain_text("Offline responder")
    stop.get_by_role("button", name="Stop").click()

    reply_id = ui.wait_position_change(page, "db26dc72")
    user, reply = seeded.entries()[-2:]
    assert user["message"]["content"] == "Tell me slowly" and reply["id"] == reply_id
    assert reply["parentId"] == user["id"] and reply["message"]["stopReason"] == "aborted"
    kept = reply["message"]["content"][0]["text"]
    assert kept.startswith("**Offline responder**") and "Regenerate writes another" not in kept  # cut short
    expect(page.locator(f"#entry-{reply_id}")).to_contain_text("Offline responder")
    expect(page.locator("#stop-reply")).to_be_hidden()
    expect(page.locator("#flash")).to_be_empty()
    assert not record.errors
