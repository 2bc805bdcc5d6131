"""What pi streams of its turn before it writes it (``services.pi_stream``'s ``pi.state`` and
``pi.progress`` on the session's group) reaches every tab as a reply being written does: rendered once
on the server with the page's partial, one reply per entry pi continues under (the file's last entry,
pushed first), ended by the entry it became, and escaped."""

from __future__ import annotations

from typing import Any

from channels.layers import get_channel_layer

from sessions_app.channel_layer.groups import session_group
from sessions_app.live.fragments import PI_OUTPUT_SHOWN

LINEAR = "01-linear"


async def _send(session_id: str, **event: object) -> None:
    await get_channel_layer().group_send(session_group(session_id), event)


def _progress(text: str = "", running: list[dict[str, Any]] | None = None, thinking: str = "") -> dict[str, Any]:
    parts = [{"kind": "thinking", "text": thinking, "name": ""}] if thinking else []
    parts.append({"kind": "text", "text": text, "name": ""})
    return {"message": {"parts": parts} if text or thinking else None, "running": running or []}


async def test_every_tab_sees_pis_turn_under_the_entry_it_continues(open_tab, sessions) -> None:
    path = sessions.copy(LINEAR)
    sid = sessions.id(LINEAR)
    last = sessions.last(path)["id"]
    tabs = [await open_tab(sid, sessions.size(path)) for _ in range(2)]
    await _send(sid, type="pi.state", turn=1, at=last, working=True)
    await _send(sid, type="pi.progress", turn=1, at=last, stream=_progress("Let me **look**", thinking="hmm <b>"))
    for tab in tabs:
        messages = await tab.until(lambda m: m["t"] == "reply" and "look" in m["html"])
        started, grown = [m for m in messages if m["t"] == "reply"]
        assert started["pi"] and started["parent"] == last and started["reply"] == grown["reply"]
        assert "working…" in started["html"] and 'name="queue" value="steer"' in started["html"]
        assert "Let me <strong>look</strong>" in grown["html"]  # Markdown, rendered on the server
        assert "hmm &lt;b&gt;" in grown["html"] and "<b>" not in grown["html"]  # thinking, as text
        assert 'hx-include="#composer-text"' in grown["html"] and "csrfmiddlewaretoken" not in grown["html"]


async def test_what_pi_wrote_ends_its_reply_and_the_next_one_hangs_under_it(open_tab, sessions) -> None:
    path = sessions.copy(LINEAR)
    sid = sessions.id(LINEAR)
    last = sessions.last(path)["id"]
    tab = await open_tab(sid, sessions.size(path))
    await _send(sid, type="pi.progress", turn=1, at=last, stream=_progress("calling a tool"))
    (first,) = await tab.until(lambda m: m["t"] == "reply")
    written = sessions.append(path, "calling a tool", role="assistant")
    tool = {"id": "c1", "name": "bash", "arguments": {"command": "ls -la"}, "output": "total 0\n<script>"}
    await _send(sid, type="pi.progress", turn=1, at=last, stream=_progress(running=[tool]))
    seen = await tab.until(lambda m: m["t"] == "reply")
    kinds = [m["t"] for m in seen]
    # The entry pi wrote comes first, then the end of the reply it became, then what pi does under it.
    assert kinds.index("batch") < kinds.index("reply-end") < kinds.index("reply")
    assert {"t": "reply-end", "reply": first["reply"], "entry": written["id"]} in seen
    running = seen[-1]
    assert running["parent"] == written["id"] and running["reply"] != first["reply"]
    assert "$ ls -la" in running["html"] and "total 0\n&lt;script&gt;" in running["html"]
    await _send(sid, type="pi.state", turn=1, at=last, working=False, ending="done")
    end = (await tab.until(lambda m: m["t"] == "reply-end"))[-1]
    assert end == {"t": "reply-end", "reply": running["reply"], "entry": written["id"]}
    await _send(sid, type="pi.progress", turn=1, at=last, stream=_progress("late"))
    await _send(sid, type="pi.progress", turn=2, at=written["id"], stream=_progress("next turn"))
    after = await tab.until(lambda m: m["t"] == "reply")
    assert [m["t"] for m in after] == ["reply"] and "next turn" in after[0]["html"]  # the late piece was dropped
    later = await open_tab(sid, sessions.size(path))
    assert ["next turn" in m["html"] for m in later.received if m["t"] == "reply"] == [True]


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
    await first.until(lambda m: m["t"] == "reply")
    late = await open_tab(sid, sessions.size(path))
    (joined,) = [m for m in late.received if m["t"] == "reply"]
    assert "THE END" in joined["html"] and output not in joined["html"]
    await _send(sid, type="pi.state", turn=2, at=last, working=True, silent=120)
    silent = (await late.until(lambda m: m["t"] == "reply"))[-1]
    assert "No news from pi for 120 seconds" in silent["html"] and "THE END" in silent["html"]
