"""Every kind of entry a file may hold too large for a page (a hostile or broken file, an extension that
stores megabytes): the page stays small, and what it leaves out can still be read whole, in the entry's
raw line or in a fold that loads it. Messages' own text: ``test_large_messages``."""

from __future__ import annotations

import base64
import re

import pytest

from sessions_app.display import markdown
from sessions_app.display.budget import PAGE_TEXT_CHARS
from sessions_app.display.entries import BLOCKS_SHOWN, FIELD_CHARS
from sessions_app.display.markdown import MARKDOWN_CHARS
from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles.entries import Draft
from sessions_app.sessionfiles.fork import create_session

BIG = 3_000_000  # characters: about 3 MB, far past anything the page carries whole
PAGE_LIMIT = 200_000  # what a page with one such entry may weigh


def _user(session) -> dict:
    return session.append(E.user_message("Hello"))


def _page(client, session) -> str:
    return _page_of(client, session)


def _page_of(client, session, limit: int = PAGE_LIMIT) -> str:
    response = client.get(f"/s/{session.session_id}/")
    assert response.status_code == 200
    page = response.content.decode()
    assert len(page) < limit
    return page


def _article(page: str, entry_id: str) -> str:
    found = re.search(rf'<article[^>]*id="entry-{entry_id}".*?</article>', page, re.S)
    assert found, entry_id
    return found.group(0)


def _raw(client, session, entry_id: str) -> bytes:
    response = client.get(f"/s/{session.session_id}/e/{entry_id}/raw/")
    assert response.status_code == 200
    return response.content


@pytest.mark.parametrize(
    "draft",
    [
        Draft("weather_report", {"payload": "x" * BIG}),  # a type pitree does not know
        Draft("custom", {"customType": "ext", "data": {"blob": "x" * BIG}}),  # an extension's state
    ],
    ids=["unknown type", "extension state"],
)
def test_a_huge_raw_entry_is_left_out_of_the_page_and_read_in_its_raw_line(client, sessions_dir, draft) -> None:
    session = create_session(sessions_dir, "/w", fsync=False)
    entry = session.append(draft, _user(session)["id"])
    article = _article(_page(client, session), entry["id"])
    assert "This entry is too large to show here (2.9\xa0MB)" in article
    assert f'href="/s/{session.session_id}/e/{entry["id"]}/raw/"' in article
    assert b"x" * BIG in _raw(client, session, entry["id"])


def test_a_small_raw_entry_is_shown_whole_as_indented_json(client, sessions_dir) -> None:
    session = create_session(sessions_dir, "/w", fsync=False)
    entry = session.append(Draft("weather_report", {"payload": {"sky": "clear"}}), _user(session)["id"])
    article = _article(_page(client, session), entry["id"])
    assert '"payload": {\n    "sky": "clear"' in article.replace("&quot;", '"')
    assert "too large" not in article


def _message_with(session, block: dict) -> dict:
    parent = _user(session)
    body = {"role": "assistant", "content": [{"type": "text", "text": "Here:"}, block], "timestamp": 2}
    body.update(provider="p", model="m", api="x", usage={}, stopReason="stop")
    return session.append(E.message(body), parent["id"])


def test_a_huge_block_of_an_unknown_kind_folds_and_loads_when_opened(client, sessions_dir) -> None:
    session = create_session(sessions_dir, "/w", fsync=False)
    entry = _message_with(session, {"type": "audio", "samples": "x" * BIG})
    article = _article(_page(client, session), entry["id"])
    assert "Content of type <code>audio</code>" in article
    (block,) = re.findall(r'hx-get="([^"]*/block/1/)"', article)
    assert "x" * BIG in client.get(block).content.decode()


def test_a_huge_image_folds_and_loads_when_opened(client, sessions_dir) -> None:
    session = create_session(sessions_dir, "/w", fsync=False)
    data = base64.b64encode(b"\x89PNG" + b"\0" * (BIG * 3 // 4)).decode()
    entry = _message_with(session, {"type": "image", "mimeType": "image/png", "data": data})
    article = _article(_page(client, session), entry["id"])
    assert "<summary>Image <span" in article and "data:image" not in article
    (block,) = re.findall(r'hx-get="([^"]*/block/1/)"', article)
    assert f'src="data:image/png;base64,{data}"' in client.get(block).content.decode()


def test_a_small_image_is_in_the_page(client, sessions_dir) -> None:
    session = create_session(sessions_dir, "/w", fsync=False)
    data = base64.b64encode(b"\x89PNG" + b"\0" * 100).decode()
    entry = _message_with(session, {"type": "image", "mimeType": "image/png", "data": data})
    assert f'src="data:image/png;base64,{data}"' in _article(_page(client, session), entry["id"])


def test_a_huge_branch_summary_shows_its_head_and_where_to_read_the_rest(client, sessions_dir) -> None:
    session = create_session(sessions_dir, "/w", fsync=False)
    summary = "The branch tried many things.\n" * (BIG // 30)
    entry = session.append(E.branch_summary(_user(session)["id"], summary))
    article = _article(_page(client, session), entry["id"])
    assert "The branch tried many things." in article
    assert "The rest of the summary is too large to show here" in article
    assert summary.encode() in _raw(client, session, entry["id"]).replace(b"\\n", b"\n")


def test_a_huge_compaction_summary_shows_its_head_and_where_to_read_the_rest(client, sessions_dir) -> None:
    session = create_session(sessions_dir, "/w", fsync=False)
    _user(session)
    kept = session.append(E.user_message("And then?"))
    session.append(E.compaction("Long ago, " + "much was said. " * (BIG // 15), kept["id"], 1000))
    page = _page(client, session)
    assert "Long ago, much was said." in page
    assert "The rest of the summary is too large to show here" in page


@pytest.mark.parametrize(
    "draft",
    [
        E.model_change("p", "m" * BIG),
        E.thinking_level_change("l" * BIG),
        Draft("session_info", {"name": "n" * BIG}),
        E.assistant_message("", provider="p", model="m", api="x", stop_reason="error", error_message="e" * BIG),
        E.message({"role": "toolResult", "toolCallId": "t", "toolName": "t" * BIG, "content": [], "timestamp": 1}),
        E.message({"role": "bashExecution", "command": "c" * BIG, "output": "", "exitCode": 0, "timestamp": 1}),
    ],
    ids=["model", "thinking level", "name", "error", "tool name", "command"],
)
def test_a_huge_name_model_or_error_is_clipped_in_the_page(client, sessions_dir, draft) -> None:
    session = create_session(sessions_dir, "/w", fsync=False)
    entry = session.append(draft, _user(session)["id"])
    article = _article(_page(client, session), entry["id"])
    assert re.search(rf"(\w)\1{{{FIELD_CHARS - 10},{FIELD_CHARS}}}…", article)  # shown up to the clip, marked


# ---------------------------------------------------------------------- many large entries, one page


def _conversation(session, count: int, text_of, role: str = "user") -> list[dict]:
    written, parent = [], None
    for number in range(count):
        body = {"role": role, "content": [{"type": "text", "text": text_of(number)}], "timestamp": number + 1}
        if role == "assistant":
            body.update(provider="p", model="m", api="x", usage={}, stopReason="stop")
        entry = session.append(E.message(body), parent)
        written.append(entry)
        parent = entry["id"]
    return written


def _folded(article: str) -> bool:
    return "The whole message" in article


def test_a_page_carries_its_newest_texts_whole_up_to_its_budget_and_folds_the_older(client, sessions_dir) -> None:
    session = create_session(sessions_dir, "/w", fsync=False)
    written = _conversation(session, 40, lambda n: f"message {n:02d} " + "<" * 30_000)
    page = _page_of(client, session, limit=4_000_000)  # 64 MB for forty such messages before
    folded = [_folded(_article(page, entry["id"])) for entry in written]
    whole = PAGE_TEXT_CHARS // 30_011
    assert folded == [True] * (40 - whole) + [False] * whole  # the newest whole, as far as the budget goes
    older = _article(page, written[0]["id"])
    assert "message 00 " + "&lt;" * 100 in older  # its head
    assert f'data-copy-url="/s/{session.session_id}/e/{written[0]["id"]}/text/"' in older  # Copy: its text
    (block,) = re.findall(r'hx-get="([^"]*/block/0/)"', older)
    assert "&lt;" * 30_000 in client.get(block).content.decode()


def test_markdown_a_page_renders_is_bounded_in_time(client, sessions_dir, monkeypatch) -> None:
    """Texts made to be slow for Markdown ("[" repeated costs about 20 µs a character): the newest is
    rendered, the page stops rendering when its time is spent, and the others load when opened."""
    rendered: list[int] = []
    render = markdown._md.render
    monkeypatch.setattr(markdown._md, "render", lambda text: rendered.append(len(text)) or render(text))
    session = create_session(sessions_dir, "/w", fsync=False)
    written = _conversation(session, 40, lambda n: "[" * 39_000 + f" answer {n}", role="assistant")
    page = _page_of(client, session, limit=1_000_000)
    assert 1 <= len(rendered) <= 3  # about 0.8 s each: the page's 0.3 s is spent after the first
    assert not _folded(_article(page, written[-1]["id"]))
    assert sum(_folded(_article(page, entry["id"])) for entry in written) >= 37


def test_an_answer_too_long_for_markdown_is_plain_text_in_the_page_and_in_its_fold(client, sessions_dir) -> None:
    session = create_session(sessions_dir, "/w", fsync=False)
    text = "**not bold** " * (MARKDOWN_CHARS // 13 + 1)
    (entry,) = _conversation(session, 1, lambda n: text, role="assistant")
    article = _article(_page_of(client, session), entry["id"])
    assert "**not bold**" in article and "<strong>" not in article
    body = client.get(f"/s/{session.session_id}/e/{entry['id']}/block/0/").content.decode()
    assert "**not bold**" in body and "<strong>" not in body


def test_a_message_of_many_large_blocks_carries_its_limit_once_not_once_a_block(client, sessions_dir) -> None:
    session = create_session(sessions_dir, "/w", fsync=False)
    blocks = [{"type": "text", "text": f"part {n} " + "x" * 150_000} for n in range(10)]
    data = base64.b64encode(b"\x89PNG" + b"\0" * 600_000).decode()  # 800 kB as base64: fits once only
    images = [{"type": "image", "mimeType": "image/png", "data": data} for _ in range(3)]
    entry = session.append(E.message({"role": "user", "content": blocks + images, "timestamp": 1}))
    article = _article(_page_of(client, session, limit=2_000_000), entry["id"])
    assert article.count("x" * 150_000) == 1  # the first part (Copy fetches its text: no second copy)
    assert article.count("The whole message") == 9 and article.count("<summary>Image <span") == 2
    assert article.count(f"base64,{data}") == 1


def test_a_message_of_thousands_of_blocks_shows_the_first_and_says_where_the_rest_is(client, sessions_dir) -> None:
    session = create_session(sessions_dir, "/w", fsync=False)
    blocks = [{"type": "text", "text": f"block {n}"} for n in range(5000)]
    entry = session.append(E.message({"role": "user", "content": blocks, "timestamp": 1}))
    article = _article(_page_of(client, session), entry["id"])
    assert f"block {BLOCKS_SHOWN - 1}<" in article and f"block {BLOCKS_SHOWN}<" not in article
    assert "The rest of this message is too large to show here" in article
    assert f'data-copy-url="/s/{session.session_id}/e/{entry["id"]}/text/"' in article
