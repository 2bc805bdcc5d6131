"""Replies being written travel through the channel layer's session group (they are not in the file
yet): every tab of the session receives each piece once, as rendered Markdown, a tab that opens
mid-reply starts with the text so far, and the end names the entry the reply became."""

from __future__ import annotations

import asyncio

from channels.layers import get_channel_layer

from sessions_app.assistants import OfflineAssistant
from sessions_app.live.feed import running_feeds
from sessions_app.live.groups import session_group
from sessions_app.services import replies
from sessions_app.sessionfiles.store import SessionFile

LINEAR = "01-linear"
TIMEOUT = 10  # seconds: a generous bound, never a speed assertion


async def _send(session_id: str, **event: object) -> None:
    await get_channel_layer().group_send(session_group(session_id), event)


async def test_every_tab_sees_the_reply_grow_once_per_piece(open_tab, sessions) -> None:
    path = sessions.copy(LINEAR)
    sid = sessions.id(LINEAR)
    tabs = [await open_tab(sid, sessions.size(path)) for _ in range(2)]
    for text in ["Here", "Here is **bold", "Here is **bold** text"]:
        await _send(sid, type="reply.progress", reply="r1", parent="db26dc72", text=text)
    await _send(sid, type="reply.finished", reply="r1", parent="db26dc72", entry="abcd1234", stopReason="stop")
    for tab in tabs:
        messages = await tab.until(lambda m: m["t"] == "reply-end")
        pieces = [m for m in messages if m["t"] == "reply"]
        assert len(pieces) == 3 and all(m["reply"] == "r1" and m["parent"] == "db26dc72" for m in pieces)
        assert "<strong>bold</strong> text" in pieces[-1]["html"]  # Markdown, rendered on the server
        assert 'id="reply-r1"' in pieces[-1]["html"] and 'data-parent="db26dc72"' in pieces[-1]["html"]
        assert 'name="reply" value="r1"' in pieces[-1]["html"]  # Stop, from any tab
        assert "csrfmiddlewaretoken" not in pieces[-1]["html"]  # nobody's token: htmx sends it as a header
        assert messages[-1] == {"t": "reply-end", "reply": "r1", "entry": "abcd1234"}


async def test_a_tab_opened_mid_reply_starts_with_the_text_so_far(open_tab, sessions) -> None:
    path = sessions.copy(LINEAR)
    sid = sessions.id(LINEAR)
    first = await open_tab(sid, sessions.size(path))
    await _send(sid, type="reply.progress", reply="r2", parent="db26dc72", text="So far, so good")
    await first.until(lambda m: m["t"] == "reply")
    late = await open_tab(sid, sessions.size(path))
    (joined,) = [m for m in late.received if m["t"] == "reply"]
    assert "So far, so good" in joined["html"]
    await _send(sid, type="reply.finished", reply="r2", parent="db26dc72", entry=None, stopReason="aborted")
    await late.until(lambda m: m["t"] == "reply-end")
    after = await open_tab(sid, sessions.size(path))
    assert after.received == [{"t": "live"}]  # a finished reply is not shown to tabs opened later


async def test_reply_text_is_escaped_markdown(open_tab, sessions) -> None:
    path = sessions.copy(LINEAR)
    sid = sessions.id(LINEAR)
    tab = await open_tab(sid, sessions.size(path))
    await _send(sid, type="reply.progress", reply="r3", parent="db26dc72", text='<img src=x onerror="alert(1)">')
    (message,) = await tab.until(lambda m: m["t"] == "reply")
    assert "<img" not in message["html"] and "&lt;img" in message["html"]


async def test_events_of_other_kinds_or_without_a_reply_id_are_ignored(open_tab, sessions) -> None:
    path = sessions.copy(LINEAR)
    sid = sessions.id(LINEAR)
    tab = await open_tab(sid, sessions.size(path))
    await _send(sid, type="reply.progress", text="no id")
    await _send(sid, type="something.else", reply="x")
    await _send(sid, type="reply.progress", reply="r4", parent=None, text="ok")
    (message,) = await tab.until(lambda m: m["t"] == "reply")
    assert message["reply"] == "r4" and message["parent"] is None


async def test_a_piece_that_arrives_after_its_reply_ended_is_dropped(open_tab, sessions) -> None:
    """A progress whose send timed out may go through after the end: tabs opened later must not show
    a reply that has ended."""
    path = sessions.copy(LINEAR)
    sid = sessions.id(LINEAR)
    tab = await open_tab(sid, sessions.size(path))
    await _send(sid, type="reply.finished", reply="r5", parent="db26dc72", entry=None, stopReason="stop")
    await _send(sid, type="reply.progress", reply="r5", parent="db26dc72", text="late")
    await _send(sid, type="reply.progress", reply="r6", parent="db26dc72", text="on time")
    seen = await tab.until(lambda m: m["t"] == "reply")
    assert [m["t"] for m in seen] == ["reply-end", "reply"] and seen[-1]["reply"] == "r6"
    later = await open_tab(sid, sessions.size(path))
    assert [m.get("reply") for m in later.received if m["t"] == "reply"] == ["r6"]


async def test_the_last_tab_leaving_ends_the_feed_even_if_a_cancelled_receive_would_not_end(
    open_tab, sessions, monkeypatch
) -> None:
    """channels_redis's ``receive`` did not always end when cancelled: the feed never cancels it, it
    sends its own channel a message that ends the reading."""
    layer = get_channel_layer()
    original = layer.receive

    async def stubborn(channel: str) -> dict:
        while True:
            try:
                return await original(channel)
            except asyncio.CancelledError:
                continue  # a cancellation that is swallowed

    monkeypatch.setattr(layer, "receive", stubborn)
    path = sessions.copy(LINEAR)
    await open_tab(sessions.id(LINEAR), sessions.size(path))
    (feed,) = running_feeds()
    (left,) = list(feed.tabs)
    await asyncio.wait_for(feed.leave(left), TIMEOUT)
    assert running_feeds() == [] and feed._inbox is None


async def test_with_redis_a_reply_reaches_the_tabs_of_its_own_process_as_it_is_written(
    open_tab, sessions, redis_url, settings
) -> None:
    """A reply at a tenth of a second a chunk, a tab of the same process, channels_redis: the tab sees
    the text grow while the reply is written (all channels of a process share channels_redis's one
    receive lock), and the reply is stored and ends in the tab."""
    settings.CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [{"address": redis_url, "socket_timeout": 30}]},
        }
    }
    path = sessions.copy(LINEAR)
    tab = await open_tab(sessions.id(LINEAR), sessions.size(path))
    session = SessionFile(path, fsync=False)
    reply = OfflineAssistant(delay=0.1).reply([{"role": "user", "content": "Slowly, please"}])
    running = replies.start(session, "db26dc72", reply)
    await tab.until(lambda m: m["t"] == "reply" and "Offline responder" in m["html"])
    assert not running.task.done()  # it came while the reply was being written, not at its end
    entry = await asyncio.wait_for(running.join(), TIMEOUT * 3)
    assert entry["message"]["stopReason"] == "stop" and sessions.last(path)["id"] == entry["id"]
    ends = await tab.until(lambda m: m["t"] == "reply-end")
    assert ends[-1] == {"t": "reply-end", "reply": running.id, "entry": entry["id"]}
