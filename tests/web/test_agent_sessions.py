"""Agent sessions you can read, for every session whoever wrote it: a tool call's fold is titled by what
it does (the bash command, the file path), its output is monospace with its exit code and truncation said
in words, an edit is a diff of its old and new text, a file read or written is highlighted by its name,
thinking is folded, pictures are inline; a tool pitree does not know shows its arguments as JSON."""

from __future__ import annotations

import html
import re
from typing import Any

from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles.fork import create_session

USAGE = dict(E.ZERO_USAGE)
PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="


def _assistant(*content: dict[str, Any], stop: str = "toolUse") -> E.Draft:
    message = {"role": "assistant", "content": list(content), "api": "x", "provider": "p", "model": "m"}
    return E.message({**message, "usage": USAGE, "stopReason": stop, "timestamp": 1})


def _call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}


def _result(call_id: str, name: str, text: str, *, error: bool = False, details: Any = None) -> E.Draft:
    message = {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": [{"type": "text", "text": text}],
    }
    if details is not None:
        message["details"] = details
    return E.message({**message, "isError": error, "timestamp": 2})


def _article(page: str, entry_id: str) -> str:
    found = re.search(rf'<article[^>]*id="entry-{entry_id}".*?</article>', page, re.S)
    assert found, entry_id
    return found.group(0)


def _summary(article: str, css: str) -> str:
    found = re.search(rf'<details class="fold {css}"><summary>(.*?)</summary>', article, re.S)
    assert found, css
    return html.unescape(re.sub(r"<[^>]+>", "", found.group(1)).strip())


def test_a_coding_agents_turn_reads_as_pi_shows_it(client, sessions_dir) -> None:
    session = create_session(sessions_dir, "/w", fsync=False)
    user = session.append(E.user_message("Fix it"))["id"]
    thinking = {"type": "thinking", "thinking": "Look at the file first.", "thinkingSignature": "s"}
    calls = session.append(
        _assistant(
            thinking,
            _call("c1", "bash", command="pytest -q tests/\necho done", timeout=60),
            _call("c2", "read", path="src/app.py", offset=10, limit=20),
        ),
        user,
    )["id"]
    truncation = {"truncated": True, "outputLines": 2000, "totalLines": 5123}
    failed = "1 failed\n\nCommand exited with code 1"
    ran = session.append(
        _result(
            "c1", "bash", failed, error=True, details={"truncation": truncation, "fullOutputPath": "/tmp/pi-out.log"}
        ),
        calls,
    )["id"]
    read = session.append(_result("c2", "read", "def main():\n    return 1\n"), ran)["id"]
    edit_call = _call("c3", "edit", path="src/app.py", edits=[{"oldText": "return 1\n", "newText": "return 0\n"}])
    write_call = _call("c4", "write", path="notes.md", content="# Notes\n")
    both = session.append(_assistant(edit_call, write_call), read)["id"]
    diff = "   1 def main():\n-  2     return 1\n+  2     return 0"
    edited = session.append(
        _result("c3", "edit", "Successfully replaced 1 block(s) in src/app.py.", details={"diff": diff}), both
    )["id"]
    wrote = session.append(_result("c4", "write", "Wrote notes.md"), edited)["id"]
    odd = session.append(_assistant(_call("c5", "deploy", target="prod", replicas=3)), wrote)["id"]
    session.append(_result("c5", "deploy", "deployed"), odd)
    shot = {"type": "image", "data": PIXEL, "mimeType": "image/png"}
    session.append(_assistant({"type": "text", "text": "Here:"}, shot, stop="stop"))

    page = client.get(f"/s/{session.session_id}/").content.decode()

    turn = _article(page, calls)
    assert '<details class="fold thinking"><summary>Thinking</summary>' in turn  # folded
    titles = re.findall(r'<details class="fold tool-call"><summary>(.*?)</summary>', turn, re.S)
    assert [re.sub(r"<[^>]+>", "", title) for title in titles] == [
        "bash $ pytest -q tests/ …",
        "read src/app.py · lines 10–29",
    ]
    assert '<pre class="tool-command" tabindex="0">$ pytest -q tests/\necho done</pre>' in turn
    assert "&quot;timeout&quot;: 60" in turn  # what the summary leaves out

    ran_html = _article(page, ran)
    assert _summary(ran_html, "tool-result") == "bash $ pytest -q tests/ … — exit 1 (truncated)"
    assert '<pre class="tool-output" tabindex="0">1 failed</pre>' in ran_html  # the status said in the title
    assert "2000 of 5123 lines shown; the whole output was saved in /tmp/pi-out.log" in ran_html

    read_html = _article(page, read)
    assert _summary(read_html, "tool-result") == "read src/app.py · lines 10–29"
    assert '<pre class="tool-file" tabindex="0"><span class="tok-k">def</span>' in read_html  # Python, highlighted

    calls_html = _article(page, both)
    assert (
        '<span class="tool-diff__line tool-diff__old">- return 1</span><span class="tool-diff__line tool-diff__new">+ return 0</span>'
        in calls_html
    )
    assert re.search(r'<pre class="tool-file" tabindex="0"><span class="tok-gh"># Notes', calls_html)

    edited_html = _article(page, edited)
    assert '<span class="tool-diff__line tool-diff__new">+  2     return 0</span>' in edited_html  # pi's own diff

    odd_html = _article(page, odd)
    assert _summary(odd_html, "tool-call") == 'deploy {"target":"prod","replicas":3}'

    assert f'<img class="content-image" src="data:image/png;base64,{PIXEL}"' in page


def test_hostile_arguments_and_output_stay_text(client, sessions_dir) -> None:
    session = create_session(sessions_dir, "/w", fsync=False)
    hostile = "<script>alert(1)</script>"
    calls = session.append(
        _assistant(
            _call("c1", "bash", command=hostile),
            _call("c2", "write", path=f"{hostile}.html", content=hostile),
            _call("c3", "edit", path="a.txt", edits=[{"oldText": hostile, "newText": "<b>x</b>"}]),
        )
    )["id"]
    session.append(_result("c1", "bash", hostile, details={"diff": f"+ {hostile}"}), calls)
    page = client.get(f"/s/{session.session_id}/").content.decode()
    assert "<script>alert" not in page and "<b>x</b>" not in page
    assert page.count("&lt;script&gt;alert(1)&lt;/script&gt;") >= 4


def test_a_large_call_folds_with_its_summary_and_loads_whole(client, sessions_dir) -> None:
    session = create_session(sessions_dir, "/w", fsync=False)
    big = "x = 1\n" * 2000
    calls = session.append(_assistant(_call("c1", "write", path="big.py", content=big)))["id"]
    page = client.get(f"/s/{session.session_id}/").content.decode()
    article = _article(page, calls)
    assert "write</code> big.py · 2000 lines" in article and "(large, loads when opened)" in article
    assert big not in article
    block = client.get(f"/s/{session.session_id}/e/{calls}/block/0/").content.decode()
    assert block.strip().startswith('<pre class="tool-file"') and block.count('<span class="tok-n">x</span>') == 2000


def test_a_result_whose_call_is_not_on_its_branch_shows_its_tool_and_output(client, sessions_dir) -> None:
    session = create_session(sessions_dir, "/w", fsync=False)
    result = session.append(_result("gone", "bash", "out\n\nCommand exited with code 3", error=True))["id"]
    article = _article(client.get(f"/s/{session.session_id}/").content.decode(), result)
    assert _summary(article, "tool-result") == "bash — exit 3"
    assert '<pre class="tool-output" tabindex="0">out</pre>' in article


def test_pis_system_prompt_of_a_turn_is_a_fold(client, sessions_dir) -> None:
    session = create_session(sessions_dir, "/w", fsync=False)
    sections = {"preamble": "You are a coding assistant.", "cwd": "<cwd>\n/w\n</cwd>"}
    prompt = session.append(E.message({"role": "system", "content": "", "sections": sections, "timestamp": 1}))["id"]
    written = session.append(E.message({"role": "system", "content": "Be brief.", "timestamp": 2}))["id"]
    page = client.get(f"/s/{session.session_id}/").content.decode()
    folded = _article(page, prompt)
    assert "entry--marker" in folded and "<summary>System prompt</summary>" in folded
    assert "You are a coding assistant.\n\n&lt;cwd&gt;" in folded
    assert "Be brief." in _article(page, written) and "entry--system" in _article(page, written)
