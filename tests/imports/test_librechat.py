"""LibreChat's JSON export imported, flat (``messages``) or as a tree (``messagesTree``): branches
kept, the branch LibreChat shows (the newest at each point) as the position, content parts."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import exports as X

from sessions_app.imports.errors import ExportError
from sessions_app.sessionfiles.tree import siblings


@pytest.mark.parametrize("recursive", [False, True])
def test_branches_position_and_content_parts(tmp_path: Path, recursive: bool) -> None:
    export = X.write_json(tmp_path / "lc.json", X.libre_export(X.libre_messages(), recursive=recursive))
    report = X.import_into(tmp_path / "sessions", export)
    assert report.kind == "LibreChat"
    session = X.opened(report.outcomes[0])
    index = session.index
    assert [index.ids[row] for row in siblings(index, index.by_id["q2"])] == ["q2", "q2e"]
    assert [index.ids[row] for row in siblings(index, index.by_id["r2"])] == ["r2", "r2b"]
    assert session.leaf_id == "r3"  # the newest question's answer
    assert X.said(session) == [
        ("user", "Hi"),
        ("assistant", "Hello!"),
        ("user", "What is 6 times 7?"),
        ("assistant", "Forty-two."),
    ]
    assert X.said(session, "r2.2")[2:] == [
        ("user", "What is 6*7?"),
        ("assistant", "→calculator"),
        ("toolResult", "42"),
        ("assistant", "The answer is 42."),
    ]
    call = session.entry("r2")["message"]
    assert call["content"][0] == {"type": "thinking", "thinking": "Use the calculator."}
    assert call["content"][1]["arguments"] == {"expr": "6*7"}
    assert (call["provider"], call["model"]) == ("openAI", "gpt-4o")
    assert session.index.name == "Multiplication"
    assert session.entry("q1")["timestamp"] == X.iso(1)


def test_a_message_without_id_refuses_the_export(tmp_path: Path) -> None:
    messages = X.libre_messages()
    del messages[3]["messageId"]
    export = X.write_json(tmp_path / "lc.json", X.libre_export(messages))
    with pytest.raises(ExportError, match=r"lc\.json \(lc-1\): message 4 is not an object with a 'messageId'"):
        X.import_into(tmp_path / "sessions", export)
