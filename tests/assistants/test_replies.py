"""The registry of running replies: each reply a task of its own, announced through the channel layer,
stopped from anywhere, and stored once, whatever happens to whoever started it."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from channels.layers import get_channel_layer
from support.redisserver import redis_server, shut_down

from pitree_web import cache as fallback
from sessions_app.assistants import OfflineAssistant, Reply
from sessions_app.channel_layer.groups import session_group
from sessions_app.services import chat, replies
from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles.store import SessionFile

SLOW = 30.0  # seconds between offline chunks: a reply that is still being written when the test acts


class Tab:
    """A listener on the session's group, as a browser tab's consumer is."""

    def __init__(self, layer: Any, channel: str) -> None:
        self.layer, self.channel = layer, channel

    async def next(self, kind: str | None = None) -> dict[str, Any]:
        while True:
            event: dict[str, Any] = await asyncio.wait_for(self.layer.receive(self.channel), 10)
            if kind is None or event["type"] == kind:
                return event

    async def until_finished(self) -> list[dict[str, Any]]:
        events = [await self.next()]
        while events[-1]["type"] != "reply.finished":
            events.append(await self.next())
        return events


@pytest.fixture
async def tab(session: SessionFile) -> AsyncIterator[Tab]:
    layer = get_channel_layer()
    channel = await layer.new_channel()
    await layer.group_add(session_group(session.session_id), channel)
    yield Tab(layer, channel)
    await layer.group_discard(session_group(session.session_id), channel)


def offline_reply(session: SessionFile, delay: float = 0) -> Reply:
    return OfflineAssistant(delay=delay).reply([{"role": "user", "content": "Hello there?"}])


async def written(running: replies.RunningReply) -> None:
    """Wait until the reply has some text."""
    while not running.reply.text:
        await asyncio.sleep(0.01)


def stored(session: SessionFile) -> dict[str, Any]:
    last = SessionFile(session.path).path_entries()[-1]
    assert last["type"] == "message" and last["message"]["role"] == "assistant"
    return last


async def test_a_reply_is_announced_then_stored_once(session: SessionFile, tab: Tab) -> None:
    parent = session.leaf_id
    running = replies.start(session, parent, offline_reply(session), "tab-token_1")
    assert running.id == "tab-token_1" and replies.running(session.session_id) == [running]
    entry = await running.join()
    events = await tab.until_finished()

    progress, finished = events[:-1], events[-1]
    text = entry["message"]["content"][0]["text"]
    assert progress[0] == {"type": "reply.progress", "reply": running.id, "parent": parent, "text": "", "waiting": 0}
    assert progress[-1]["text"] == text  # the final text, before the end
    assert all(text.startswith(event["text"]) for event in progress)  # always the whole text so far
    assert len(progress) < len(text.split()) / 4  # throttled: far fewer events than chunks
    assert finished == {
        "type": "reply.finished",
        "reply": running.id,
        "parent": parent,
        "entry": entry["id"],
        "stopReason": "stop",
    }
    assert stored(session) == entry and entry["parentId"] == parent
    assert replies.running(session.session_id) == []


async def test_progress_keeps_coming_while_a_reply_streams(session: SessionFile, tab: Tab) -> None:
    running = replies.start(session, session.leaf_id, offline_reply(session, delay=0.02))
    texts = [(await tab.next("reply.progress"))["text"] for _ in range(3)]
    assert texts[0] == "" and texts[1] and texts[2].startswith(texts[1]) and len(texts[2]) > len(texts[1])
    running.stop()
    await running.join()


async def test_a_long_reply_comes_in_fewer_pieces_than_a_short_one_would(session: SessionFile, tab: Tab) -> None:
    # Each piece is the whole text, rendered anew for the tabs: 200 kB sent every 50 ms took a core whole.
    async def long_text() -> AsyncIterator[str]:
        for _ in range(200):
            yield "word " * 200  # a kilobyte
            await asyncio.sleep(0.005)

    running = replies.start(session, session.leaf_id, Reply(long_text(), provider="p", model="m", api="a"))
    await running.join()
    events = await tab.until_finished()
    progress = [event["text"] for event in events if event["type"] == "reply.progress"]
    assert progress[-1] == "word " * 200 * 200
    # At least a second of streaming: every 50 ms would be 20 pieces or more (the final text comes twice).
    assert len(progress) <= 10, [len(text) for text in progress]
    assert replies.progress_interval(1000) == replies.PROGRESS_INTERVAL  # a short reply still looks live


async def test_the_first_words_after_a_quiet_spell_go_at_once_and_those_soon_after_together(
    session: SessionFile, tab: Tab, monkeypatch
) -> None:
    words: asyncio.Queue[str | None] = asyncio.Queue()

    async def spoken() -> AsyncIterator[str]:
        while (word := await words.get()) is not None:
            yield word

    running = replies.start(session, session.leaf_id, Reply(spoken(), provider="p", model="m", api="a"))
    assert (await tab.next("reply.progress"))["text"] == ""  # the reply started
    await asyncio.sleep(4 * replies.PROGRESS_INTERVAL)  # quiet for longer than the interval
    monkeypatch.setattr(replies, "progress_interval", lambda chars: SLOW)  # the next interval: the whole test
    await words.put("after the pause")
    assert (await tab.next("reply.progress"))["text"] == "after the pause"  # not an interval later
    await words.put(", more")
    await words.put(", and more")
    with pytest.raises(TimeoutError):  # within the interval: held, to go together
        await asyncio.wait_for(tab.layer.receive(tab.channel), 0.3)
    await words.put(None)
    await running.join()
    events = await tab.until_finished()
    assert [event["text"] for event in events if event["type"] == "reply.progress"] == [
        "after the pause, more, and more"
    ]


async def test_a_malformed_or_taken_reply_id_is_replaced(session: SessionFile) -> None:
    first = replies.start(session, session.leaf_id, offline_reply(session, SLOW), "same")
    second = replies.start(session, session.leaf_id, offline_reply(session, SLOW), "same")
    third = replies.start(session, session.leaf_id, offline_reply(session, SLOW), "<script>")
    assert first.id == "same" and second.id != "same" and replies.REPLY_ID.fullmatch(third.id)
    await replies.shutdown()


async def test_stop_from_another_task_stores_the_text_so_far_as_aborted(session: SessionFile, tab: Tab) -> None:
    running = replies.start(session, session.leaf_id, offline_reply(session, SLOW))
    await written(running)
    shown = running.reply.text

    entry = await asyncio.create_task(replies.stop(session.session_id, running.id))
    assert entry is not None and entry == stored(session)
    message = entry["message"]
    assert message["content"] == [{"type": "text", "text": shown}]
    assert message["stopReason"] == "aborted" and message["errorMessage"]
    assert (await tab.next("reply.finished"))["stopReason"] == "aborted"
    assert replies.running(session.session_id) == []


async def test_stopping_an_unknown_or_finished_reply_says_so_and_writes_nothing(
    session: SessionFile, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(replies, "STOP_WAIT", 0.05)
    finished = replies.start(session, session.leaf_id, offline_reply(session))
    await finished.join()
    before = session.path.read_bytes()
    for reply_id in ("nothing-here", finished.id):
        with pytest.raises(replies.ReplyNotRunning, match=f"No reply {reply_id} is being written"):
            await replies.stop(session.session_id, reply_id)
    assert session.path.read_bytes() == before


async def test_a_reply_of_another_session_is_not_stopped(session: SessionFile, monkeypatch) -> None:
    monkeypatch.setattr(replies, "STOP_WAIT", 0.05)
    running = replies.start(session, session.leaf_id, offline_reply(session, SLOW))
    with pytest.raises(replies.ReplyNotRunning):
        await replies.stop("another-session", running.id)
    assert running.reply.stop_reason is None
    running.stop()
    await running.join()


async def test_the_caller_going_away_does_not_lose_the_reply(session: SessionFile, settings) -> None:
    """An async view is cancelled when its client disconnects: the reply is still written and stored."""
    settings.PITREE_OFFLINE_DELAY = 0.01
    caller = asyncio.create_task(chat.answer(session, session.leaf_id, "gone-client"))
    while not replies.running(session.session_id) or not replies.running(session.session_id)[0].reply.text:
        await asyncio.sleep(0.01)
    running = replies.running(session.session_id)[0]
    caller.cancel()
    with pytest.raises(asyncio.CancelledError):
        await caller
    entry = await running.join()
    assert entry["message"]["stopReason"] == "stop"  # complete, not aborted
    assert entry == stored(session) and "Hello there?" in entry["message"]["content"][0]["text"]


async def test_a_reply_is_marked_before_its_model_is_chosen_and_unmarked_if_it_never_starts(
    session: SessionFile, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Choosing the model may ask the server for its list: every process must refuse a second message
    under the same entry meanwhile, and a reply that fails before it starts leaves no mark behind."""
    asked, answer = asyncio.Event(), asyncio.Event()

    async def slow_list(assistant: Any) -> tuple[list[str], str]:
        asked.set()
        await answer.wait()
        raise OSError("the model server went away")

    monkeypatch.setattr(chat, "offered_models", slow_list)
    parent = session.leaf_id
    starting = asyncio.create_task(chat.start_reply(session, parent, "early_mark"))
    await asyncio.wait_for(asked.wait(), 10)
    assert await replies.answering(session.session_id, parent)
    answer.set()
    with pytest.raises(OSError, match="went away"):
        await starting
    assert not await replies.answering(session.session_id, parent)
    assert not replies.running(session.session_id)


async def test_stop_through_the_channel_layer_as_another_process_sends_it(session: SessionFile) -> None:
    layer = get_channel_layer()
    running = replies.start(session, session.leaf_id, offline_reply(session, SLOW))
    await written(running)
    inbox = await layer.new_channel()
    stop = {"type": "reply.stop", "reply": running.id, "reply_to": inbox}
    await layer.group_send(replies.replies_group(session.session_id), {**stop, "reply": "someone-else"})
    await layer.group_send(replies.replies_group(session.session_id), stop)
    assert await asyncio.wait_for(layer.receive(inbox), 10) == {"type": "reply.stopping", "reply": running.id}
    entry = await running.join()
    assert entry["message"]["stopReason"] == "aborted" and entry["message"]["content"]


async def test_stop_reaches_a_reply_this_process_does_not_know(session: SessionFile) -> None:
    """What a second server process sees: the reply is not in its registry, so Stop goes through the
    channel layer, and the process running the reply acknowledges and stops it."""
    running = replies.start(session, session.leaf_id, offline_reply(session, SLOW))
    await written(running)
    del replies._running[running.id]  # as if the registry were another process's
    assert await replies.stop(session.session_id, running.id) is None
    assert (await running.join())["message"]["stopReason"] == "aborted"


async def test_a_failing_channel_layer_costs_the_live_view_not_the_reply(session: SessionFile, monkeypatch) -> None:
    async def broken(group: str, message: dict[str, Any]) -> None:
        raise ConnectionError("redis is down")

    monkeypatch.setattr(get_channel_layer(), "group_send", broken)
    entry = await replies.start(session, session.leaf_id, offline_reply(session)).join()
    assert entry == stored(session) and entry["message"]["stopReason"] == "stop"


async def test_a_cancellation_that_the_channel_layer_swallows_does_not_hold_the_reply(
    session: SessionFile, tab: Tab, monkeypatch: pytest.MonkeyPatch
) -> None:
    """channels_redis sometimes swallows a cancellation that arrives inside ``group_send`` (the call
    returns as if nothing happened): the stream ends while a progress is being sent, and the reply must
    still be stored and announced."""
    layer = get_channel_layer()
    original = layer.group_send
    sending = asyncio.Event()

    async def swallowing(group: str, message: dict[str, Any]) -> None:
        if message["type"] == "reply.progress" and message["text"]:
            sending.set()
            with contextlib.suppress(asyncio.CancelledError):  # as channels_redis sometimes does
                await asyncio.sleep(0.2)  # a round trip to Redis
        await original(group, message)

    async def deltas() -> AsyncIterator[str]:
        yield "Some text"
        await sending.wait()  # the stream ends while its progress is being sent

    monkeypatch.setattr(layer, "group_send", swallowing)
    reply = Reply(deltas(), provider="test", model="test", api="test")
    running = replies.start(session, session.leaf_id, reply)
    entry = await asyncio.wait_for(running.join(), 10)
    assert entry == stored(session) and entry["message"]["content"] == [{"type": "text", "text": "Some text"}]
    assert (await tab.next("reply.finished"))["entry"] == entry["id"]


async def test_a_channel_layer_that_never_answers_does_not_keep_the_reply_from_the_file(
    session: SessionFile, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def hanging(group: str, message: dict[str, Any]) -> None:
        await asyncio.Event().wait()

    monkeypatch.setattr(get_channel_layer(), "group_send", hanging)
    entry = await asyncio.wait_for(replies.start(session, session.leaf_id, offline_reply(session)).join(), 30)
    assert entry == stored(session) and entry["message"]["stopReason"] == "stop"


async def test_a_failed_append_is_still_announced(session: SessionFile, tab: Tab) -> None:
    running = replies.start(session, "no-such-parent", offline_reply(session))
    with pytest.raises(Exception, match="no-such-parent"):
        await running.join()
    assert await tab.next("reply.finished") == {
        "type": "reply.finished",
        "reply": running.id,
        "parent": "no-such-parent",
        "entry": None,
        "stopReason": "stop",
    }


async def test_shutdown_stores_every_running_reply_as_aborted(session: SessionFile) -> None:
    parent = session.leaf_id
    first = replies.start(session, parent, offline_reply(session, SLOW))
    second = replies.start(session, parent, offline_reply(session, SLOW))
    await written(first)
    await written(second)
    await replies.shutdown(grace=10)
    assert first.task.done() and second.task.done() and replies.running(session.session_id) == []
    on_file = {e["id"]: e for e in map(json.loads, session.path.read_bytes().splitlines()[1:])}
    for running in (first, second):
        entry = running.task.result()
        assert on_file[entry["id"]] == entry and entry["parentId"] == parent
        assert entry["message"]["stopReason"] == "aborted"
        assert entry["message"]["content"] == [{"type": "text", "text": running.reply.text}]


@pytest.mark.processes
async def test_a_reply_started_while_the_caches_redis_is_dead_is_marked_there_once_it_answers(
    session: SessionFile, tmp_path: Path, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The mark that refuses a message under a reply in every process (``replies.answering``) lives in
    the default cache, whose dead Redis the process's memory stands in for (pitree_web/cache.py): the
    reply is written all the same, and its next renewal puts the mark where the other processes look."""
    monkeypatch.setattr(replies, "ANSWERING_LEASE", 3.0)  # renewed every second (Redis counts whole seconds)
    monkeypatch.setattr(fallback, "RETRY_SECONDS", 0.0)
    with redis_server(tmp_path) as url:
        settings.CACHES = {
            **settings.CACHES,
            "default": {"BACKEND": "pitree_web.cache.FallbackRedisCache", "LOCATION": url},
        }
        port = shut_down(url)
    parent = session.leaf_id
    running = replies.start(session, parent, offline_reply(session, SLOW))
    await written(running)
    assert await replies.answering(session.session_id, parent)
    key = replies._answering_key(session.session_id, parent)
    with redis_server(tmp_path, port):
        other_process = fallback.FallbackRedisCache(url, {})
        deadline = asyncio.get_running_loop().time() + 10
        while other_process.get(key) != running.id:
            assert asyncio.get_running_loop().time() < deadline, "the mark never reached Redis"
            await asyncio.sleep(0.05)
        running.stop()
        assert (await running.join())["message"]["stopReason"] == "aborted"
        assert other_process.get(key) is None  # gone with the reply
        assert not await replies.answering(session.session_id, parent)


async def test_a_pick_while_a_reply_is_written_goes_below_it_in_the_write_that_stores_it(session: SessionFile) -> None:
    """A tab's model or thinking level picked while a reply answers where it stands: never beside the
    reply (a branch of its own), but below it, in one write with it (docs/format.md §5.2)."""
    parent = session.leaf_id
    running = replies.start(session, parent, offline_reply(session, delay=SLOW))
    await written(running)
    assert await replies.chain(session.session_id, parent, E.thinking_level_change("high")) is True
    assert await replies.chain(session.session_id, "elsewhere", E.thinking_level_change("low"), "no-such") is False
    size = session.path.stat().st_size
    running.stop()
    entry = await running.join()
    lines = [json.loads(line) for line in session.path.read_bytes()[size:].splitlines()]
    assert [line["type"] for line in lines] == ["message", "thinking_level_change"]
    assert lines[0]["id"] == entry["id"] and lines[1]["parentId"] == entry["id"] and lines[1]["thinkingLevel"] == "high"
    # Once the reply is stored, none takes it: the caller writes it, below the reply (it follows the tab).
    assert await replies.chain(session.session_id, parent, E.thinking_level_change("low"), running.id) is False


async def test_a_pick_that_comes_as_the_reply_is_stored_waits_for_it(session: SessionFile, monkeypatch) -> None:
    """The reply's write has begun: the pick is not in it, and the caller gets the answer once the reply
    is stored, so that its own write, following the tab, lands below the reply."""
    parent = session.leaf_id
    running = replies.start(session, parent, offline_reply(session, delay=SLOW))
    await written(running)
    storing = asyncio.Event()
    append = session.append

    def slow_append(*args: Any, **kwargs: Any) -> dict[str, Any]:
        storing.set()
        time.sleep(0.3)  # the write under way while the pick comes
        return append(*args, **kwargs)

    monkeypatch.setattr(session, "append", slow_append)
    running.stop()
    await storing.wait()
    assert await replies.chain(session.session_id, parent, E.thinking_level_change("high")) is False
    assert stored(session)["id"] == (await running.join())["id"]  # stored by the time the answer came


async def test_a_pick_reaches_a_reply_of_another_process_through_its_replies_group(session: SessionFile) -> None:
    """A reply written by another process is asked as Stop asks it: ``reply.then`` on the replies group,
    answered with whether it took the pick (here the in-memory layer plays both processes)."""
    parent = session.leaf_id
    running = replies.start(session, parent, offline_reply(session, delay=SLOW))
    await written(running)
    layer = get_channel_layer()
    draft = E.model_change("pitree", "other")
    assert await replies._chained_elsewhere(layer, session.session_id, running.id, draft) is True
    running.stop()
    entry = await running.join()
    (chained,) = [
        line
        for line in map(json.loads, session.path.read_bytes().splitlines())
        if line["type"] == "model_change" and line["modelId"] == "other"
    ]
    assert chained["parentId"] == entry["id"]
    assert (
        await replies._chained_elsewhere(layer, session.session_id, running.id, draft) is False
    )  # stored: nobody answers


async def test_a_silence_found_past_its_limit_is_announced_at_once(
    session: SessionFile, tab: Tab, settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A busy server may look at a silent reply only after the limit has passed: the tabs hear that it
    waits then, not a refresh period later."""
    settings.PITREE_REPLY_WAITING_AFTER = 0.3
    monkeypatch.setattr(replies, "progress_interval", lambda chars: 0.6)  # each look comes past the limit
    news = asyncio.Event()

    async def deltas() -> Any:
        await news.wait()
        yield "At last"

    running = replies.start(session, session.leaf_id, Reply(deltas(), provider="p", model="m", api="a"))
    assert (await tab.next("reply.progress"))["waiting"] == 0
    waited = await tab.next("reply.progress")
    assert waited["waiting"] == 1, waited  # told at the first look past 0.3 s, not 5 s later
    news.set()
    await running.join()


async def test_a_reply_whose_model_server_says_nothing_is_announced_as_waiting(
    session: SessionFile, tab: Tab, settings
) -> None:
    """Past PITREE_REPLY_WAITING_AFTER without news, a progress event says how long it has waited, and
    says it again while the silence lasts; news ends the waiting."""
    settings.PITREE_REPLY_WAITING_AFTER = 0.3
    news = asyncio.Event()

    async def deltas() -> Any:
        await news.wait()
        yield "At last"

    began = time.monotonic()
    running = replies.start(session, session.leaf_id, Reply(deltas(), provider="p", model="m", api="a"))
    first = await tab.next("reply.progress")
    assert (first["text"], first["waiting"]) == ("", 0)  # the start: nothing to wait for yet
    waited = await tab.next("reply.progress")
    assert time.monotonic() - began >= 0.3  # said once the silence passed 0.3 s
    assert (waited["text"], waited["waiting"]) == ("", 1)  # whole seconds, at least one
    news.set()
    spoke = await tab.next("reply.progress")
    assert (spoke["text"], spoke["waiting"]) == ("At last", 0)
    await running.join()
