"""How long ago something happened, as pages say it."""

from __future__ import annotations

import time

from sessions_app.templatetags.pitree import ago


def test_under_a_minute_is_just_now_and_later_counts_minutes() -> None:
    now_ms = int(time.time() * 1000)
    assert ago(now_ms) == "just now"  # it said "0 minutes ago"
    assert ago(now_ms + 60_000) == "just now"  # a clock slightly ahead of this one
    assert ago(now_ms - 5 * 60_000 - 1000) == "5\xa0minutes ago"
