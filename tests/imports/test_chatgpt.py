"""ChatGPT's export imported: every branch kept as siblings, the position the user was on, hidden
system and context nodes, tool calls and their output, pictures from the zip, thinking."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from support import exports as X

from sessions_app.imports.chatgpt import call_id
from sessions_app.imports.errors import ExportError
from sessions_app.imports.plan import HEAD, MODEL, TITLE
from sessions_app.sessionfiles.tree import siblings


@pytest.fixture
def session(tmp_path: Path):
    report = X.import_into(tmp_path / "sessions", X.gpt_export(tmp_path, [X.gpt_branching()]))
    assert [outcome.status for outcome in report.outcomes] == ["created"]
    return X.opened(report.outcomes[0])


def test_every_branch_is_kept_as_siblings(session) -> None:
    index = session.index

    def names(rows: list[int]) -> list[str]:
        return sorted(index.ids[row] for row in rows)

    assert names(siblings(index, index.by_id["a1"])) == ["a1", "a1b"]  # regenerated
    assert names(siblings(index, index.by_id["u2"])) == ["u2", "u2e"]  # edited
    assert names(siblings(index, index.by_id["a2"])) == ["a2", "a2b"]
    assert session.entry("dalle")["parentId"] == "u2"  # the abandoned branch goes on too


def test_the_leaf_is_where_the_user_was(session) -> None:
    assert session.leaf_id == "a2"  # current_node, though a2b was written after it
    assert X.said(session) == [
        ("user", "What is this?"),
        ("assistant", "One pixel (regenerated)."),
        ("user", "Compute 3+3 instead"),
        ("assistant", ""),  # o3's thinking: blocks of thinking only
        ("assistant", "→python"),
        ("toolResult", "6"),
        ("assistant", "It is 6."),
    ]


def test_title_model_and_times(session) -> None:
    assert session.index.name == "Pixels and sums"
    assert session.entry(MODEL)["modelId"] == "gpt-4o"
    assert session.header["timestamp"] == "2025-10-09T08:53:20.000Z"
    assert session.entry("u1")["timestamp"] == "2025-10-09T08:53:21.000Z"
    assert session.entry("a1b")["message"]["model"] == "gpt-4o-mini"
    assert session.context().model == {"provider": "openai", "modelId": "o3"}  # the branch's last answer's
    # Nodes without a time (the hidden system node) take their parent's, else the conversation's.
    assert session.entry("sys")["timestamp"] == session.header["timestamp"]
    head = session.entry(HEAD)
    assert head["data"]["conversation"] == "conv-branching"
    assert head["data"]["fields"]["default_model_slug"] == "gpt-4o"  # what else the conversation said
    assert session.entry(TITLE)["parentId"] == HEAD


def test_hidden_and_system_nodes_are_kept_out_of_the_context(session) -> None:
    assert session.entry("sys")["customType"] == "chatgpt/system"
    context = session.entry("ctx")
    assert context["customType"] == "chatgpt/user_editable_context"
    assert context["data"]["message"]["content"]["user_profile"] == "I like tea"
    assert session.entry("rr")["customType"] == "chatgpt/reasoning_recap"
    assert X.said(session)[0] == ("user", "What is this?")  # nothing of them reaches the model


def test_tool_calls_and_their_output(session) -> None:
    call = session.entry("call")["message"]
    assert call["content"] == [
        {"type": "toolCall", "id": call_id("call"), "name": "python", "arguments": {"input": "print(3+3)"}}
    ]
    assert call["stopReason"] == "toolUse"
    result = session.entry("out")["message"]
    assert (result["role"], result["toolCallId"], result["toolName"]) == ("toolResult", call_id("call"), "python")
    assert session.entry("out")["imported"]["message"]["content"] == {"content_type": "execution_output"}
    # A tool's output no call asked for (DALL·E's picture) is what the model saw, as an extension's message.
    shown = session.entry("dalle")
    assert shown["type"] == "custom_message" and shown["customType"] == "chatgpt/dalle.text2im"
    assert [block["type"] for block in shown["content"]] == ["image", "text"]


def test_pictures_come_from_the_export_and_missing_ones_stay_pointers(tmp_path: Path) -> None:
    report = X.import_into(tmp_path / "sessions", X.gpt_export(tmp_path, [X.gpt_branching()]))
    user = X.opened(report.outcomes[0]).entry("u1")
    content = user["message"]["content"]
    assert content[0] == {"type": "text", "text": "What is this?"}
    assert content[1] == {"type": "image", "data": base64.b64encode(X.PNG).decode(), "mimeType": "image/png"}
    assert len(content) == 2
    kept = user["imported"]["message"]["content"]["parts"]
    assert [part["asset_pointer"] for part in kept] == ["file-service://file-Pic123", "sediment://file_000missing"]
    assert any("file_000missing is not in the export" in note for note in report.notes)


def test_an_unzipped_export_and_conversations_json_alone(tmp_path: Path) -> None:
    folder = X.gpt_export(tmp_path, [X.gpt_branching()], zipped=False)
    report = X.import_into(tmp_path / "a", folder)
    assert X.opened(report.outcomes[0]).entry("u1")["message"]["content"][1]["type"] == "image"
    alone = X.import_into(tmp_path / "b", folder / "conversations.json")
    assert X.said(X.opened(alone.outcomes[0]))[0] == ("user", "What is this?")


def test_odd_ids_and_parents(tmp_path: Path) -> None:
    nodes = [
        ("a/b c", None, X.gpt_message("a/b c", "user", "Slash in the id", at=1)),
        ("orphan", "gone", X.gpt_message("orphan", "assistant", "Parent not exported", at=2)),
        ("loop1", "loop2", X.gpt_message("loop1", "user", "one", at=3)),
        ("loop2", "loop1", X.gpt_message("loop2", "assistant", "two", at=4)),
    ]
    export = X.write_json(tmp_path / "conversations.json", [X.gpt_conversation("odd", "Odd", nodes, current="a/b c")])
    report = X.import_into(tmp_path / "sessions", export)
    session = X.opened(report.outcomes[0])
    assert session.index.skipped() == []
    hashed = [session.index.ids[row] for row in range(len(session.index)) if session.index.ids[row].startswith("x")]
    assert len(hashed) == 1 and len(hashed[0]) == 33  # an id no URL can carry: a digest of it
    assert session.entry(hashed[0])["imported"]["message"]["id"] == "a/b c"
    # The cut loop is written after the position: one more entry under the position moves the leaf back.
    mover = session.entry(session.leaf_id)
    assert (mover["customType"], mover["parentId"], mover["data"]["position"]) == ("pitree/import", hashed[0], "a/b c")
    assert session.entry("orphan")["parentId"] == MODEL  # a root of the conversation
    assert any("orphan: its parent gone is not in the export" in note for note in report.notes)
    assert any("its parents come back to it" in note for note in report.notes)
    assert {session.entry("loop1")["parentId"], session.entry("loop2")["parentId"]} == {MODEL, "loop1"}


def test_a_conversation_without_mapping_refuses_the_export(tmp_path: Path) -> None:
    good = X.gpt_branching()
    export = X.write_json(tmp_path / "conversations.json", [good, {"title": "broken", "id": "b"}])
    with pytest.raises(ExportError, match=r"conversations\.json, conversation 2 \(b\): no 'mapping' object"):
        X.import_into(tmp_path / "sessions", export)
    assert not (tmp_path / "sessions").exists()  # the good one before it was not written either
