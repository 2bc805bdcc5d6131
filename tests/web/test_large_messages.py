"""A message too large for its page (a pasted file of megabytes): the page carries its head and a fold
that loads the rest, the fold's fragment is plain escaped text, and Copy names the URL of its text."""

from __future__ import annotations

import html
import re

import pytest

from sessions_app.display.entries import (
    BLOCKS_SHOWN,
    LAZY_TEXT_CHARS,
    TEXT_HEAD_CHARS,
    Block,
    EntryView,
    content_blocks,
)
from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles.description import parts_of
from sessions_app.sessionfiles.fork import create_session

HTMX = {"HTTP_HX_REQUEST": "true"}


def _pasted(size: int) -> str:
    """About ``size`` characters of a pasted log, with markup that must stay text."""
    line = "line of a <b>pasted</b> log & **not bold**, wide enough to wrap somewhere on a phone\n"
    return "Please read this:\n" + line * (size // len(line))


def _session_with(sessions_dir, role: str, content):
    session = create_session(sessions_dir, "/w", fsync=False)
    body = {"role": role, "content": content, "timestamp": 1}
    if role == "assistant":
        body.update(provider="pi", model="m", api="x", usage={}, stopReason="stop")
    return session, session.append(E.message(body))


def _article(page: str, entry_id: str) -> str:
    found = re.search(rf'<article[^>]*id="entry-{entry_id}".*?</article>', page, re.S)
    assert found
    return found.group(0)


@pytest.mark.parametrize("size", [2_000_000, 20_000_000])
def test_a_huge_message_makes_a_small_page_and_its_fold_loads_the_whole_text(client, sessions_dir, size) -> None:
    text = _pasted(size)
    session, entry = _session_with(sessions_dir, "user", text)
    page = client.get(f"/s/{session.session_id}/").content.decode()
    assert len(page) < 200_000
    article = _article(page, entry["id"])
    assert html.escape(text[:1000], quote=False) in article  # its head, a real preview
    assert re.search(r"The whole message <span class=\"muted\">\(\d+\.\d\xa0MB, loads when opened\)", article)
    assert "entry__source" not in article  # no second copy for Copy: it fetches the text
    assert f'data-copy-url="/s/{session.session_id}/e/{entry["id"]}/text/"' in article

    (block,) = re.findall(r'hx-get="([^"]*/block/0/)"', article)
    body = client.get(block).content.decode()
    assert body.startswith('<div class="plain">') and html.escape(text, quote=False) in body
    assert "<b>" not in body


def test_copy_fetches_every_text_block_as_written_and_nothing_else(client, sessions_dir) -> None:
    # More blocks than the page shows (one "omitted" block stands for the rest): Copy still gets them all.
    texts = [f"part {n} **as written** <b>" for n in range(BLOCKS_SHOWN + 5)]
    content = [{"type": "thinking", "thinking": "not copied"}]
    content += [block for text in texts for block in ({"type": "text", "text": text}, {"type": "text", "text": ""})]
    session, entry = _session_with(sessions_dir, "assistant", content)
    page = client.get(f"/s/{session.session_id}/").content.decode()
    assert f'data-copy-url="/s/{session.session_id}/e/{entry["id"]}/text/"' in _article(page, entry["id"])
    answer = client.get(f"/s/{session.session_id}/e/{entry['id']}/text/")
    assert answer["Content-Type"] == "text/plain; charset=utf-8"
    assert answer.content.decode() == "\n\n".join(texts)
    pasted = _pasted(LAZY_TEXT_CHARS + 10)  # a string content: the whole of it
    session, entry = _session_with(sessions_dir, "user", pasted)
    assert client.get(f"/s/{session.session_id}/e/{entry['id']}/text/").content.decode() == pasted
    assert client.get(f"/s/{session.session_id}/e/ffffffff/text/").status_code == 404


def test_an_answer_too_large_for_its_page_loads_as_plain_text_not_markdown(client, sessions_dir) -> None:
    text = _pasted(LAZY_TEXT_CHARS + 1000)
    session, entry = _session_with(sessions_dir, "assistant", [{"type": "text", "text": text}])
    body = client.get(f"/s/{session.session_id}/e/{entry['id']}/block/0/").content.decode()
    assert "**not bold**" in body and "<strong>" not in body and "&lt;b&gt;pasted&lt;/b&gt;" in body


def test_tool_output_loads_as_plain_text_as_the_transcript_shows_it(client, sessions_dir) -> None:
    session = create_session(sessions_dir, "/w", fsync=False)
    output = "# not a heading\n" + "x" * 9000
    body = {"role": "toolResult", "toolCallId": "t", "toolName": "read", "isError": False, "timestamp": 1}
    entry = session.append(E.message({**body, "content": [{"type": "text", "text": output}]}))
    fragment = client.get(f"/s/{session.session_id}/e/{entry['id']}/block/0/").content.decode()
    assert "<h1>" not in fragment and "# not a heading" in fragment
    assert fragment.strip().startswith('<pre class="tool-output"')  # monospace, as the transcript shows it


def test_edit_starts_from_the_whole_message_the_page_left_out(client, sessions_dir) -> None:
    text = _pasted(LAZY_TEXT_CHARS * 2)
    session, entry = _session_with(sessions_dir, "user", text)
    panel = client.get(f"/s/{session.session_id}/e/{entry['id']}/actions/", {"do": "edit"}, **HTMX).content.decode()
    assert html.escape(text, quote=False) in panel


def test_a_message_under_the_limit_is_in_the_page_whole_with_its_copy() -> None:
    (block,) = content_blocks(parts_of("a" * LAZY_TEXT_CHARS))
    view = EntryView("x", "message", "user", "", None, blocks=[block])
    assert not block.lazy and view.source == "a" * LAZY_TEXT_CHARS and not view.text_elsewhere


def test_the_head_ends_after_a_line_and_counts_as_what_the_page_shows() -> None:
    text = "".join(f"{n}\n" for n in range(100_000))
    (block,) = content_blocks(parts_of([{"type": "text", "text": text}]))
    assert block.lazy and block.head.endswith("\n") and TEXT_HEAD_CHARS // 2 < len(block.head) <= TEXT_HEAD_CHARS
    assert text.startswith(block.head)
    view = EntryView("x", "message", "user", "", None, blocks=[block])
    assert view.is_long  # its head alone is many short lines: it folds to a screenful too
    assert view.written == text and view.source == "" and view.text_elsewhere


def test_a_fold_names_the_size_in_bytes() -> None:
    assert Block("text", text="é" * 10).size == 20
    assert Block("text", text="e" * 10).size == 10
