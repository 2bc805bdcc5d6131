"""Open WebUI's chat export imported: answers by several models at once as sibling branches, tool
calls and reasoning written inside the answer's text, pasted pictures, failed answers."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from support import exports as X

from sessions_app.imports.errors import ExportError
from sessions_app.imports.plan import MODEL
from sessions_app.sessionfiles.tree import siblings


@pytest.fixture
def session(tmp_path: Path):
    export = X.write_json(tmp_path / "chat-export-1760000000.json", [X.webui_multimodel()])
    report = X.import_into(tmp_path / "sessions", export)
    assert report.kind == "Open WebUI"
    return X.opened(report.outcomes[0])


def test_answers_of_several_models_are_siblings_with_their_models(session) -> None:
    index = session.index
    answers = siblings(index, index.by_id["m2a"])
    assert [index.ids[row] for row in answers] == ["m2a", "m2b"]
    assert [session.entry(index.ids[row])["message"]["model"] for row in answers] == ["gpt-4o", "llama3"]
    assert session.entry("m2a")["message"]["usage"]["input"] == 12
    assert session.entry("m2b")["imported"]["message"]["modelIdx"] == 1
    assert session.entry(MODEL)["modelId"] == "gpt-4o"  # the chat's first model


def test_a_tool_call_inside_the_text_becomes_pi_turns(session) -> None:
    assert session.leaf_id == "m4.2"  # currentId m4: its last entry
    assert X.said(session)[2:] == [
        ("user", "Look it up then."),
        ("assistant", "→get_weather"),
        ("toolResult", '{"c":21}'),
        ("assistant", "It is 21 degrees."),
    ]
    call = session.entry("m4")["message"]
    assert call["content"][0] == {"type": "thinking", "thinking": "Look it up.\nThen answer."}
    assert call["content"][1] == {
        "type": "toolCall",
        "id": "call_1",
        "name": "get_weather",
        "arguments": {"city": "Lisbon"},
    }
    assert call["stopReason"] == "toolUse"
    assert session.entry("m4.1")["message"]["toolCallId"] == "call_1"
    kept = session.entry("m4")["imported"]["message"]
    assert kept["annotation"] == {"rating": 1} and "content" not in kept and "childrenIds" not in kept
    assert "imported" not in session.entry("m4.2")  # said once, on the answer's first entry


def test_pictures_and_failures(session) -> None:
    user = session.entry("m1")["message"]
    assert user["content"] == [
        {"type": "text", "text": "Weather in Lisbon?"},
        {"type": "image", "data": base64.b64encode(X.PNG).decode(), "mimeType": "image/png"},
    ]
    assert session.entry("m1")["imported"]["message"]["files"][0]["url"].startswith("(the picture")
    failed = session.entry("m4e")["message"]
    assert (failed["stopReason"], failed["errorMessage"], failed["content"]) == ("error", "Model timed out", [])


def test_all_chats_in_one_export_and_no_current_message(tmp_path: Path) -> None:
    second = X.webui_chat(
        "chat-2",
        "Second",
        [
            X.webui_message("n1", None, "user", "Hi", at=1),
            X.webui_message("n2", "n1", "assistant", "Hello", at=2, model="llama3"),
        ],
        current=None,
        models=["llama3"],
    )
    export = X.write_json(tmp_path / "all.json", [X.webui_multimodel(), second])
    report = X.import_into(tmp_path / "sessions", export)
    assert [outcome.title for outcome in report.outcomes] == ["Lisbon weather", "Second"]
    assert X.opened(report.outcomes[1]).leaf_id == "n2"  # the newest message without replies
    assert any("no current message" in note for note in report.notes)


def test_an_older_chat_without_history(tmp_path: Path) -> None:
    record = {
        "id": "old",
        "title": "Old",
        "chat": {
            "title": "Old",
            "models": ["m"],
            "history": None,
            "messages": [
                {"id": "a", "role": "user", "content": "one"},
                {"id": "b", "role": "assistant", "content": "two"},
            ],
        },
        "created_at": X.T0,
        "user_id": "u",
    }
    report = X.import_into(tmp_path / "sessions", X.write_json(tmp_path / "old.json", [record]))
    assert X.said(X.opened(report.outcomes[0])) == [("user", "one"), ("assistant", "two")]


def test_a_chat_without_messages_refuses_the_export(tmp_path: Path) -> None:
    export = X.write_json(
        tmp_path / "bad.json", [X.webui_multimodel(), {"id": "x", "user_id": "u", "chat": {"title": "t"}}]
    )
    with pytest.raises(ExportError, match=r"bad\.json, chat 2 \(x\): no 'history\.messages'"):
        X.import_into(tmp_path / "sessions", export)
    assert not (tmp_path / "sessions").exists()
