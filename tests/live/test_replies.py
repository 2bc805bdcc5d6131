"""Replies being written travel through the channel layer's session group (they are not in the file
yet): every tab of the session receives each piece once, as rendered Markdown, a tab that opens
mid-reply starts with the text so far, and the end names the entry the reply became."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from channels.layers import get_channel_layer
from support.pushes import Push

from sessions_app.assistants import OfflineAssistant, Reply
from sessions_app.channel_layer.groups import replies_group, session_group
from sessions_app.live.feed import running_feeds
from sessions_app.services import replies
from sessions_app.sessionfiles.store import SessionFile

LINEAR = "01-linear"
TIMEOUT = 10  # seconds: a generous bound, never a speed assertion


async def _send(session_id: str, **event: object) -> None:
    await get_channel_layer().group_send(session_group(session_id), event)


def _grown(push: Push, reply: str) -> str | None:
    """The message as sent, when it shows the reply's text: its placeholder appended, or its text swapped
    in."""
    if reply in push.placeholders or push.by_id(f"reply-{reply}-text") is not None:
        return push.raw
    return None


def _gone(push: Push, reply: str) -> bool:
    swap = push.by_id(f"reply-{reply}")
    return swap is not None and swap.style == "delete"


async def test_every_tab_sees_the_reply_grow_once_per_piece(open_tab, sessions) -> None:
    path = sessions.copy(LINEAR)
    sid = sessions.id(LINEAR)
    tabs = [await open_tab(sid, sessions.size(path)) for _ in range(2)]  # at db26dc72, which it answers
    for text in ["Here", "Here is **bold", "Here is **bold** text"]:
        await _send(sid, type="reply.progress", reply="r1", parent="db26dc72", text=text)
    for tab in tabs:
        pieces = [
            _grown(m, "r1")
            for m in await tab.until(
                lambda m: (
                    "bold** text" in (_grown(m, "r1") or "") or "<strong>bold</strong> text" in (_grown(m, "r1") or "")
                )
            )
        ]
        assert len(pieces) == 3 and tab.received[-3].placeholders == ["r1"]  # then its text, twice
        assert "<strong>bold</strong> text" in pieces[-1]  # Markdown, rendered on the server
        placeholder = pieces[0]
        assert 'id="reply-r1"' in placeholder and 'data-parent="db26dc72"' in placeholder
        assert 'name="reply" value="r1"' in placeholder  # Stop, from any tab
        assert "csrfmiddlewaretoken" not in placeholder  # nobody's token: htmx sends it as a header
    # The reply is stored where it answers: its entry takes the placeholder's place in every tab.
    stored = sessions.append(path, "Here is **bold** text", parent="db26dc72", role="assistant")
    await _send(sid, type="reply.finished", reply="r1", parent="db26dc72", entry=stored["id"], stopReason="stop")
    for tab in tabs:
        push = (await tab.until_entry(stored["id"]))[-1]
        assert _gone(push, "r1") and push.state["position"] == stored["id"]


async def test_a_tab_opened_mid_reply_starts_with_the_text_so_far(open_tab, sessions) -> None:
    path = sessions.copy(LINEAR)
    sid = sessions.id(LINEAR)
    first = await open_tab(sid, sessions.size(path))
    await _send(sid, type="reply.progress", reply="r2", parent="db26dc72", text="So far, so good")
    await first.until(lambda m: _grown(m, "r2") is not None)
    late = await open_tab(sid, sessions.size(path))
    (joined,) = [m for m in late.received if m.placeholders]
    assert "So far, so good" in _grown(joined, "r2")
    await _send(sid, type="reply.finished", reply="r2", parent="db26dc72", entry=None, stopReason="aborted")
    await late.until(lambda m: _gone(m, "r2"))  # nothing was stored: the placeholder goes
    after = await open_tab(sid, sessions.size(path))
    assert not [m for m in after.received if m.placeholders]  # a finished reply is not shown to tabs opened later


async def test_a_reply_shows_only_where_it_answers_the_entry_the_tab_stands_on(open_tab, sessions) -> None:
    path = sessions.copy(LINEAR)
    sid = sessions.id(LINEAR)
    tab = await open_tab(sid, sessions.size(path))  # at db26dc72
    elsewhere = await open_tab(sid, sessions.size(path), at="358d8704", notes="position")
    await _send(sid, type="reply.progress", reply="r7", parent="358d8704", text="A sibling of db26dc72")
    await elsewhere.until(lambda m: m.placeholders == ["r7"])
    await _send(sid, type="reply.progress", reply="r8", parent="db26dc72", text="Here")
    seen = await tab.until(lambda m: bool(m.placeholders))
    assert [m.placeholders for m in seen if m.placeholders] == [["r8"]]
    # The tab moves to where r7 answers (a ‹ › switch, say): it is shown there, and r8 goes.
    await tab.move(at="358d8704", replies=["r8"], notes="position")
    push = (await tab.until(lambda m: bool(m.placeholders)))[-1]
    assert push.placeholders == ["r7"] and _gone(push, "r8")


async def test_reply_text_is_escaped_markdown(open_tab, sessions) -> None:
    path = sessions.copy(LINEAR)
    sid = sessions.id(LINEAR)
    tab = await open_tab(sid, sessions.size(path))
    await _send(sid, type="reply.progress", reply="r3", parent="db26dc72", text='<img src=x onerror="alert(1)">')
    (message,) = await tab.until(lambda m: _grown(m, "r3") is not None)
    assert "<img" not in _grown(message, "r3") and "&lt;img" in message.raw


async def test_events_of_other_kinds_or_without_a_reply_id_are_ignored(open_tab, sessions) -> None:
    path = sessions.copy(LINEAR)
    sid = sessions.id(LINEAR)
    tab = await open_tab(sid, sessions.size(path))
    await _send(sid, type="reply.progress", text="no id", parent="db26dc72")
    await _send(sid, type="something.else", reply="x", parent="db26dc72")
    await _send(sid, type="reply.progress", reply="r4", parent="db26dc72", text="ok")
    (message,) = await tab.until(lambda m: bool(m.placeholders))
    assert message.placeholders == ["r4"]


async def test_a_piece_that_arrives_after_its_reply_ended_is_dropped(open_tab, sessions) -> None:
    """A progress whose send timed out may go through after the end: tabs opened later must not show
    a reply that has ended."""
    path = sessions.copy(LINEAR)
    sid = sessions.id(LINEAR)
    tab = await open_tab(sid, sessions.size(path))
    await _send(sid, type="reply.finished", reply="r5", parent="db26dc72", entry=None, stopReason="stop")
    await _send(sid, type="reply.progress", reply="r5", parent="db26dc72", text="late")
    await _send(sid, type="reply.progress", reply="r6", parent="db26dc72", text="on time")
    seen = await tab.until(lambda m: bool(m.placeholders))
    assert [m.placeholders for m in seen if m.swaps] == [["r6"]]
    later = await open_tab(sid, sessions.size(path))
    assert [m.placeholders for m in later.received if m.placeholders] == [["r6"]]


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


@pytest.mark.processes
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
    await tab.until(lambda m: "Offline responder" in (_grown(m, running.id) or ""))
    assert not running.task.done()  # it came while the reply was being written, not at its end
    entry = await asyncio.wait_for(running.join(), TIMEOUT * 3)
    assert entry["message"]["stopReason"] == "stop" and sessions.last(path)["id"] == entry["id"]
    push = (await tab.until_entry(entry["id"]))[-1]
    assert _gone(push, running.id)


class Held:
    """A reply whose first words come at once and the rest only when the test says so (a model that
    pauses), and the events it sends to the session's group, heard as a tab's feed would hear them."""

    def __init__(self, session_id: str) -> None:
        self.group = session_group(session_id)
        self.rest = asyncio.Event()
        self.layer = get_channel_layer()
        self.channel = ""

    async def listen(self) -> None:
        self.channel = await self.layer.new_channel()
        await self.layer.group_add(self.group, self.channel)

    async def heard(self, accept: Any) -> dict[str, Any]:
        """The first event of the reply that ``accept`` takes."""
        while True:
            event: dict[str, Any] = await asyncio.wait_for(self.layer.receive(self.channel), TIMEOUT)
            if accept(event):
                return event

    def reply(self, first: str = "First words") -> Reply:
        async def deltas() -> AsyncIterator[str]:
            if first:
                yield first
            await self.rest.wait()
            yield ", then the rest."

        return Reply(deltas(), provider="test", model="test", api="test")


@pytest.fixture
async def held(sessions) -> AsyncIterator[Held]:
    """A held reply's events, heard from the session's group; whatever the test's outcome, no reply is
    left running after it."""
    found = Held(sessions.id(LINEAR))
    await found.listen()
    yield found
    found.rest.set()
    await replies.shutdown()


def _texts(messages: list[Push], reply: str) -> list[str]:
    return [text for m in messages if (text := _grown(m, reply)) is not None]


def _stop_asked(monkeypatch: pytest.MonkeyPatch) -> asyncio.Event:
    """Set once a Stop has asked every process for its reply (it found none running here)."""
    layer = get_channel_layer()
    asked = asyncio.Event()
    send = layer.group_send

    async def spying(group: str, message: dict[str, Any]) -> None:
        if message["type"] == "reply.stop":
            asked.set()
        await send(group, message)

    monkeypatch.setattr(layer, "group_send", spying)
    return asked


async def test_a_tab_whose_feed_starts_mid_reply_gets_the_text_so_far_then_the_rest(open_tab, sessions, held) -> None:
    """The reply's first words were sent while no tab of the session was open in this process (its
    feed was not listening yet: a page that has just loaded, a socket that reconnects): the tab shows
    them as it joins, not with words that may be long in coming, then the rest; the entry once."""
    path = sessions.copy(LINEAR)
    sid = sessions.id(LINEAR)
    running = replies.start(SessionFile(path, fsync=False), "db26dc72", held.reply())
    await held.heard(lambda e: e["type"] == "reply.progress" and e["text"] == "First words")

    tab = await open_tab(sid, sessions.size(path), wait=False)
    shown = await tab.until(lambda m: _grown(m, running.id) is not None)
    assert "First words" in _texts(shown, running.id)[-1] and not running.task.done()
    held.rest.set()
    entry = await asyncio.wait_for(running.join(), TIMEOUT)
    await tab.until_entry(entry["id"])
    assert all("First words" in html for html in _texts(tab.received, running.id))  # whole each time: nothing missing
    assert tab.entry_ids() == [entry["id"]]


async def test_a_reply_listens_before_it_is_announced(sessions, held, monkeypatch) -> None:
    """A feed that joins the session's group just after a reply's first progress (which it missed) asks
    for the text so far, and is answered at once, though the model has said nothing yet: the reply
    listened before it announced itself."""
    sid = sessions.id(LINEAR)
    layer = get_channel_layer()
    send = layer.group_send
    announced = asyncio.Event()

    async def a_feed_joins_just_after(group: str, message: dict[str, Any]) -> None:
        await send(group, message)
        if message["type"] == "reply.progress" and not announced.is_set():
            announced.set()
            await send(replies_group(sid), {"type": "reply.resend"})

    monkeypatch.setattr(layer, "group_send", a_feed_joins_just_after)
    running = replies.start(SessionFile(sessions.copy(LINEAR), fsync=False), "db26dc72", held.reply(first=""))
    for _ in range(2):  # the announcement, then the answer to the feed
        progress = await held.heard(lambda e: e["type"] == "reply.progress")
        assert progress["reply"] == running.id and progress["text"] == ""
    assert not running.task.done()


async def test_a_stop_that_comes_before_its_reply_starts_stops_it_as_it_starts(sessions, monkeypatch) -> None:
    """A page shows Stop as soon as it sends: its Stop may come before the request that sends has
    started the reply. The reply then stops as it starts (stored ``aborted``, without text, as any reply
    stopped before its first words) and Stop says it stopped it."""
    monkeypatch.setattr(replies, "STOP_WAIT", TIMEOUT)  # a bound on a loaded machine: it ends when the reply stops
    path = sessions.copy(LINEAR)
    sid = sessions.id(LINEAR)
    asked = _stop_asked(monkeypatch)
    stopping = asyncio.create_task(replies.stop(sid, "early"))
    await asyncio.wait_for(asked.wait(), TIMEOUT)  # it found no reply, here or elsewhere

    reply = OfflineAssistant(delay=0).reply([{"role": "user", "content": "Hello there?"}])
    running = replies.start(SessionFile(path, fsync=False), "db26dc72", reply, "early")
    entry = await asyncio.wait_for(running.join(), TIMEOUT)
    assert entry["message"]["stopReason"] == "aborted" and entry["message"]["content"] == []
    assert sessions.last(path)["id"] == entry["id"]
    assert await asyncio.wait_for(stopping, TIMEOUT) is None  # stopped: not "no such reply"


async def test_a_stop_that_found_no_reply_still_stops_it_if_it_starts_later(sessions, monkeypatch) -> None:
    """Stop waits a while for the reply to start; one that starts later still stops as it starts."""
    monkeypatch.setattr(replies, "STOP_WAIT", 0.05)
    path = sessions.copy(LINEAR)
    sid = sessions.id(LINEAR)
    with pytest.raises(replies.ReplyNotRunning):
        await replies.stop(sid, "late")
    reply = OfflineAssistant(delay=0).reply([{"role": "user", "content": "Hello there?"}])
    entry = await asyncio.wait_for(
        replies.start(SessionFile(path, fsync=False), "db26dc72", reply, "late").join(), TIMEOUT
    )
    assert entry["message"]["stopReason"] == "aborted" and entry["message"]["content"] == []
    # Remembered once: the next reply with that id runs its course.
    again = OfflineAssistant(delay=0).reply([{"role": "user", "content": "Hello there?"}])
    other = await asyncio.wait_for(
        replies.start(SessionFile(path, fsync=False), entry["id"], again, "late").join(), TIMEOUT
    )
    assert other["message"]["stopReason"] == "stop"


async def test_a_reply_that_starts_elsewhere_while_stop_waits_is_asked_again(sessions, held, monkeypatch) -> None:
    """Another process starts the reply after Stop asked every process (it was not listening yet, and
    this process's memory of the Stop is not that process's): Stop hears the reply's first progress
    in the session's group and asks again, and the reply stops with the words it had."""
    # This process's memory of the Stop is not the other's:
    monkeypatch.setattr(replies, "_remember_stop", lambda session_id, reply_id: None, raising=False)
    monkeypatch.setattr(replies, "STOP_WAIT", TIMEOUT)  # a bound on a loaded machine: it ends when the reply stops
    path = sessions.copy(LINEAR)
    sid = sessions.id(LINEAR)
    asked = _stop_asked(monkeypatch)
    stopping = asyncio.create_task(replies.stop(sid, "elsewhere"))
    await asyncio.wait_for(asked.wait(), TIMEOUT)
    running = replies.start(SessionFile(path, fsync=False), "db26dc72", held.reply(), "elsewhere")
    assert await asyncio.wait_for(stopping, TIMEOUT) is None
    entry = await asyncio.wait_for(running.join(), TIMEOUT)
    assert entry["message"]["stopReason"] == "aborted"
    assert entry["message"]["content"] in ([], [{"type": "text", "text": "First words"}])


async def test_every_tab_is_told_once_that_a_reply_started_and_a_tab_back_of_those_it_asked_for(
    open_tab, sessions
) -> None:
    """A tab whose request's answer was lost tells that the server took the request by its reply (whose
    id is the request's): every tab hears once that a reply started, wherever it answers; a tab that
    connects again names the replies it asked for, and hears of those the server started meanwhile."""
    path = sessions.copy(LINEAR)
    sid = sessions.id(LINEAR)
    elsewhere = await open_tab(sid, sessions.size(path), at="358d8704", notes="position")
    for text in ("One", "One, two"):
        await _send(sid, type="reply.progress", reply="asked1", parent="db26dc72", text=text)
    told = await elsewhere.until(lambda m: "reply:asked1" in m.todo)
    assert told[-1].swaps == []  # not where it stands: told only that it started
    await _send(sid, type="reply.finished", reply="asked1", parent="db26dc72", entry=None, stopReason="error")
    await _send(sid, type="reply.progress", reply="later", parent="db26dc72", text="x")
    await elsewhere.until(lambda m: "reply:later" in m.todo)
    assert [word for m in elsewhere.received for word in m.todo if word.startswith("reply:")] == [
        "reply:asked1",
        "reply:later",
    ]
    back = await open_tab(sid, sessions.size(path), asked=["asked1", "never-started"])
    assert [word for m in back.received for word in m.todo if word.startswith("reply:")] == ["reply:asked1"]
