"""Every reader shows an entry as the one description reads it (sessionfiles/description.py): the
page, the command line's transcript, the Markdown download and search agree, and what is of an
unexpected shape is shown, not dropped."""

from __future__ import annotations

import html
import re
from typing import Any

from sessions_app.cli.transcript import render_entry
from sessions_app.search.extract import searchable_text
from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles.fork import create_session


def _write(sessions_dir, *messages: dict[str, Any]):
    session = create_session(sessions_dir, "/w", fsync=False)
    written = [session.append(E.message({"timestamp": 1, **message})) for message in messages]
    return session, written


def _article(page: str, entry_id: str) -> str:
    found = re.search(rf'<article[^>]*id="entry-{entry_id}".*?</article>', page, re.S)
    assert found
    return html.unescape(found.group(0))


def test_a_content_that_is_no_list_is_shown_raw_everywhere(client, sessions_dir) -> None:
    session, (entry,) = _write(
        sessions_dir,
        {"role": "assistant", "content": {"note": "an object where blocks were expected"}, "stopReason": "stop"},
    )
    page = client.get(f"/s/{session.session_id}/").content.decode()
    assert "an object where blocks were expected" in _article(page, entry["id"])
    assert '  {"note":"an object where blocks were expected"}' in render_entry(entry)
    markdown = b"".join(client.get(f"/s/{session.session_id}/download.md")).decode()
    assert '{"note":"an object where blocks were expected"}' in markdown


def test_a_text_that_is_a_number_reads_as_its_digits_everywhere(client, sessions_dir) -> None:
    session, (entry,) = _write(sessions_dir, {"role": "user", "content": [{"type": "text", "text": 0}]})
    page = client.get(f"/s/{session.session_id}/").content.decode()
    assert '<div class="plain">0</div>' in _article(page, entry["id"])
    assert render_entry(entry)[1:] == ["  0"]
    assert "## You\n\n0\n" in b"".join(client.get(f"/s/{session.session_id}/download.md")).decode()
    assert searchable_text(entry) == ("user", "0")


def test_a_tool_call_reads_as_a_tool_call_whichever_message_holds_it(client, sessions_dir) -> None:
    call = {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "app.py"}}
    session, (user, answer) = _write(
        sessions_dir,
        {"role": "user", "content": [call]},
        {"role": "assistant", "content": [call], "stopReason": "toolUse"},
    )
    assert render_entry(user)[1:] == render_entry(answer)[1:] == ['  → read(path="app.py")']
    markdown = b"".join(client.get(f"/s/{session.session_id}/download.md")).decode()
    assert '## You\n\n→ read(path="app.py")\n' in markdown
    assert searchable_text(user) == ("user", "read\npath: app.py")
