"""What pi streams of its turn before it writes it (``services.pi_stream``'s ``pi.state`` and
``pi.progress`` on the session's group) reaches every tab as a reply being written does: rendered once
on the server with the page's partial, a placeholder under the entry pi continues under (the file's
last entry, pushed first) whose inside is swapped as it grows, gone when pi wrote the entry it became,
and escaped."""

from __future__ import annotations

from typing import Any

from channels.layers import get_channel_layer
from support.pushes import Push

from sessions_app.channel_layer.groups import session_group
from sessions_app.live.fragments import PI_OUTPUT_SHOWN

LINEAR = "01-linear"


async def _send(session_id: str, **event: object) -> None:
    await get_channel_layer().group_send(session_group(session_id), event)


def _progress(text: str = "", running: list[dict[str, Any]] | None = None, thinking: str = "") -> dict[str, Any]:
    parts = [{"kind": "thinking", "text": thinking, "name": ""}] if thinking else []
    parts.append({"kind": "text", "text": text, "name": ""})
    return {"message": {"parts": parts} if text or thinking else None, "running": running or []}


def _turn(push: Push) -> Any:
    """The placeholder of pi's turn a push appends (None: none)."""
    return next((el for el in push.appended if "data-pi" in dict(el.attributes)), None)


def _attr(element: Any, name: str) -> str:
    return dict(element.attributes).get(name) or ""


def _grown(push: Push, reply: str) -> str:
    """The inside of pi's turn as a push swaps it in ("" when it does not)."""
    return push.html_of(f"reply-{reply}-text")


def _gone(push: Push, reply: str) -> bool:
    swap = push.by_id(f"reply-{reply}")
    return swap is not None and swap.style == "delete"


async def test_every_tab_sees_pis_turn_under_the_entry_it_continues(open_tab, sessions) -> None:
    path = sessions.copy(LINEAR)
    sid = sessions.id(LINEAR)
    last = sessions.last(path)["id"]
    tabs = [await open_tab(sid, sessions.size(path)) for _ in range(2)]
    await _send(sid, type="pi.state", turn=1, at=last, working=True)
    await _send(sid, type="pi.progress", turn=1, at=last, stream=_progress("Let me **look**", thinking="hmm <b>"))
    for tab in tabs:
        pushes = await tab.until(lambda m: any("look" in _grown(m, r) for r in tab_replies(m)))
        placed = [m for m in pushes if _turn(m) is not None]
        assert len(placed) == 1  # one placeholder; its inside is swapped as it grows
        started = _turn(placed[0])
        reply = _attr(started, "data-reply")
        assert _attr(started, "data-parent") == last and _attr(started, "id") == f"reply-{reply}"
        html = placed[0].raw
        assert "working…" in html and 'name="queue" value="steer"' in html and 'name="reply"' in html
        assert 'hx-include="#composer-text"' in html and "csrfmiddlewaretoken" not in html
        assert _grown(pushes[-1], reply)
        grown = pushes[-1].raw
        assert "Let me <strong>look</strong>" in grown  # Markdown, rendered on the server
        assert "hmm &lt;b&gt;" in grown and "<b>" not in grown  # thinking, as text


def tab_replies(push: Push) -> list[str]:
    """The replies whose inside a push swaps in."""
    return [s.target.removeprefix("#reply-").removesuffix("-text") for s in push.swaps if s.target.endswith("-text")]


async def test_what_pi_wrote_takes_its_turns_place_and_the_next_one_hangs_under_it(open_tab, sessions) -> None:
    path = sessions.copy(LINEAR)
    sid = sessions.id(LINEAR)
    last = sessions.last(path)["id"]
    tab = await open_tab(sid, sessions.size(path))
    await _send(sid, type="pi.progress", turn=1, at=last, stream=_progress("calling a tool"))
    first = _attr(_turn((await tab.until(lambda m: _turn(m) is not None))[-1]), "data-reply")
    written = sessions.append(path, "calling a tool", role="assistant")
    tool = {"id": "c1", "name": "bash", "arguments": {"command": "ls -la"}, "output": "total 0\n<script>"}
    await _send(sid, type="pi.progress", turn=1, at=last, stream=_progress(running=[tool]))
    seen = await tab.until(lambda m: _turn(m) is not None)
    # The entry pi wrote comes first, in the place of the turn it was; then what pi does under it.
    moved = next(i for i, m in enumerate(seen) if written["id"] in m.entries)
    assert _gone(seen[moved], first) and seen[moved].state["position"] == written["id"]
    running = _turn(seen[-1])
    second = _attr(running, "data-reply")
    assert _attr(running, "data-parent") == written["id"] and second != first
    assert "$ ls -la" in seen[-1].raw and "total 0\n&lt;script&gt;" in seen[-1].raw
    await _send(sid, type="pi.state", turn=1, at=last, working=False, ending="done")
    await tab.until(lambda m: _gone(m, second))
    await _send(sid, type="pi.progress", turn=1, at=last, stream=_progress("late"))
    await _send(sid, type="pi.progress", turn=2, at=written["id"], stream=_progress("next turn"))
    after = await tab.until(lambda m: _turn(m) is not None)
    assert "next turn" in after[-1].raw
    assert not any("late" in m.raw for m in after)  # the late piece of the ended turn was dropped
    later = await open_tab(sid, sessions.size(path))
    assert ["next turn" in m.raw for m in later.received if _turn(m) is not None] == [True]


async def test_a_tab_opened_mid_turn_starts_with_what_pi_shows_and_long_output_is_cut_to_its_end(
    open_tab, sessions
) -> None:
    path = sessions.copy(LINEAR)
    sid = sessions.id(LINEAR)
    last = sessions.last(path)["id"]
    first = await open_tab(sid, sessions.size(path))
    output = "x" * PI_OUTPUT_SHOWN + "THE END"
    tool = {"id": "c1", "name": "bash", "arguments": {"command": "yes"}, "output": output}
    await _send(sid, type="pi.progress", turn=2, at=last, stream=_progress(running=[tool]))
    await first.until(lambda m: _turn(m) is not None)
    late = await open_tab(sid, sessions.size(path))
    (joined,) = [m for m in late.received if _turn(m) is not None]
    assert "THE END" in joined.raw and output not in joined.raw
    reply = _attr(_turn(joined), "data-reply")
    await _send(sid, type="pi.state", turn=2, at=last, working=True, silent=120)
    silent = (await late.until(lambda m: bool(_grown(m, reply))))[-1].raw
    assert "No news from pi for 120 seconds" in silent and "THE END" in silent


async def test_a_message_pi_wrote_before_its_last_progress_arrived_is_not_shown_twice(open_tab, sessions) -> None:
    """pi writes a message before it says the message ended: the progress made just before may reach
    the feed after the file has the message. ``since`` (the file's size when the message began) tells
    it: the entry takes the turn's place, and no placeholder under it repeats its text."""
    path = sessions.copy(LINEAR)
    sid = sessions.id(LINEAR)
    last = sessions.last(path)["id"]
    began = sessions.size(path)
    tab = await open_tab(sid, began)
    await _send(sid, type="pi.progress", turn=1, at=last, stream=_progress("the answer, so far"), since=began)
    first = _attr(_turn((await tab.until(lambda m: _turn(m) is not None))[-1]), "data-reply")
    written = sessions.append(path, "the answer, whole", role="assistant")
    await _send(sid, type="pi.progress", turn=1, at=last, stream=_progress("the answer, whole"), since=began)
    await _send(sid, type="pi.state", turn=1, at=last, working=False, ending="done")
    await _send(sid, type="pi.progress", turn=2, at=written["id"], stream=_progress("next turn"))
    seen = await tab.until(lambda m: "next turn" in m.raw)
    moved = next(m for m in seen if written["id"] in m.entries)
    assert _gone(moved, first) and moved.state["position"] == written["id"]
    assert [m for m in seen if _turn(m) is not None] == [seen[-1]]  # no placeholder but the next turn's
    assert [m for m in seen if "the answer, whole" in m.raw] == [moved]  # in the entry alone


async def test_pi_working_on_after_what_it_wrote_shows_under_it_whatever_its_message_began_at(
    open_tab, sessions
) -> None:
    """Nothing in flight after pi wrote a line (a tool's result, before its next message): the turn
    waits under that line, as always; ``since`` only concerns the message it names."""
    path = sessions.copy(LINEAR)
    sid = sessions.id(LINEAR)
    last = sessions.last(path)["id"]
    began = sessions.size(path)
    tab = await open_tab(sid, began)
    await _send(sid, type="pi.progress", turn=1, at=last, stream=_progress("calling a tool"), since=began)
    await tab.until(lambda m: _turn(m) is not None)
    written = sessions.append(path, "a tool's result", role="user")
    await _send(sid, type="pi.progress", turn=1, at=last, stream=_progress(), since=began)
    waiting = _turn((await tab.until(lambda m: _turn(m) is not None))[-1])
    assert _attr(waiting, "data-parent") == written["id"]
