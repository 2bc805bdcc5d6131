"""The one description of each entry type (sessionfiles/description.py): what each type and block
kind reads as, tool calls and their results linked by the call id, and nothing of an unexpected
shape dropped."""

from __future__ import annotations

from typing import Any

import pytest

from sessions_app.sessionfiles.description import (
    ENTRY_KINDS,
    MESSAGE_ROLES,
    Part,
    ToolCall,
    describe,
    parts_of,
    text_of,
)

T = "2026-03-02T09:15:00.000Z"


def _entry(entry_type: Any, **fields: Any) -> dict[str, Any]:
    return {"type": entry_type, "id": "e1", "parentId": None, "timestamp": T, **fields}


def _message(**message: Any) -> dict[str, Any]:
    return _entry("message", message=message)


def test_a_tool_call_and_its_result_are_linked_by_the_call_id() -> None:
    call = describe(
        _message(
            role="assistant",
            content=[
                {"type": "thinking", "thinking": "list it", "thinkingSignature": "sig"},
                {"type": "text", "text": "Looking."},
                {"type": "toolCall", "id": "toolu_1", "name": "bash", "arguments": {"command": "ls -la"}},
                {"type": "toolCall", "id": "toolu_2", "name": "read", "arguments": {"path": "app.py"}},
            ],
            provider="anthropic",
            model="claude-sonnet-4-5",
            stopReason="toolUse",
        )
    )
    result = describe(
        _message(
            role="toolResult",
            toolCallId="toolu_1",
            toolName="bash",
            content=[{"type": "text", "text": "a\nb\n\nCommand exited with code 2"}],
            details={"truncation": {"truncated": True, "outputLines": 2}, "fullOutputPath": "/tmp/out.txt"},
            isError=True,
        )
    )
    assert call.kind == "assistant" and (call.provider, call.model, call.stop_reason) == (
        "anthropic",
        "claude-sonnet-4-5",
        "toolUse",
    )
    assert call.tool_calls == (
        ToolCall("toolu_1", "bash", {"command": "ls -la"}),
        ToolCall("toolu_2", "read", {"path": "app.py"}),
    )
    assert [part.kind for part in call.parts] == ["thinking", "text", "toolCall", "toolCall"]
    assert call.parts[0].text == "list it" and text_of(call.parts) == "Looking."
    assert not call.is_error

    assert result.kind == "toolResult" and result.result is not None
    assert (result.result.call_id, result.result.tool) == ("toolu_1", "bash")
    assert {c.id: c for c in call.tool_calls}[result.result.call_id].arguments == {"command": "ls -la"}
    assert result.is_error and result.result.truncated and result.result.full_output_path == "/tmp/out.txt"
    assert text_of(result.parts) == "a\nb\n\nCommand exited with code 2"


def test_a_result_records_no_truncation_unless_pi_says_so() -> None:
    for details in (
        None,
        {},
        {"truncation": None},
        {"truncation": {"truncated": "yes"}},
        "text",
        {"fullOutputPath": 5},
    ):
        result = describe(_message(role="toolResult", toolCallId="c", toolName="read", details=details)).result
        assert result is not None and not result.truncated and result.full_output_path is None
        assert result.details == details  # kept as stored for whoever shows more of it


def test_a_command_the_user_ran() -> None:
    described = describe(
        _message(
            role="bashExecution",
            command="pytest -q",
            output="1 failed",
            exitCode=1,
            cancelled=False,
            truncated=True,
            fullOutputPath="/tmp/full",
            excludeFromContext=True,
        )
    )
    shell = described.shell
    assert described.kind == "bashExecution" and shell is not None and described.parts == ()
    assert (shell.command, shell.output, shell.exit_code) == ("pytest -q", "1 failed", 1)
    assert shell.truncated and shell.full_output_path == "/tmp/full" and shell.excluded and not shell.cancelled
    assert described.is_error
    ran = describe(_message(role="bashExecution", command="ls", output="", exitCode=0))
    assert not ran.is_error
    cancelled = describe(_message(role="bashExecution", command="sleep 9", cancelled=True, exitCode=None))
    assert cancelled.is_error


@pytest.mark.parametrize(
    ("entry", "kind", "fields"),
    [
        (_message(role="user", content="hi"), "user", {"role": "user"}),
        (_message(role="system", content="", sections=[]), "system", {"role": "system"}),
        (
            _message(role="custom", customType="ext/note", content="n", display=False),
            "custom",
            {"custom_type": "ext/note", "hidden": True},
        ),
        (
            _entry("custom_message", customType="ext/reminder", content="r", display=True),
            "custom_message",
            {"custom_type": "ext/reminder", "hidden": False},
        ),
        (
            _entry("model_change", provider="openai", modelId="gpt-4o"),
            "model_change",
            {"provider": "openai", "model": "gpt-4o"},
        ),
        (_entry("thinking_level_change", thinkingLevel="high"), "thinking_level_change", {"text": "high"}),
        (
            _entry("compaction", summary="## Goal", firstKeptEntryId="k1", tokensBefore=4821),
            "compaction",
            {"text": "## Goal", "target": "k1", "number": 4821},
        ),
        (
            _entry("branch_summary", fromId="f1", summary="tried x"),
            "branch_summary",
            {"text": "tried x", "target": "f1"},
        ),
        (_entry("session_info", name="Todo API"), "session_info", {"text": "Todo API"}),
        (_entry("label", targetId="t1", label="good"), "label", {"text": "good", "target": "t1"}),
        (_entry("label", targetId="t1"), "label", {"text": None, "target": "t1"}),
        (
            _entry("context_edit", targetId="t1", replacement=None),
            "context_edit",
            {"target": "t1", "data": None, "parts": ()},
        ),
        (
            _entry("usage", kind="cache_warm", provider="anthropic", model="m", usage={"totalTokens": 3}, note="warm"),
            "usage",
            {"text": "cache_warm", "provider": "anthropic", "model": "m", "data": {"totalTokens": 3}, "note": "warm"},
        ),
        (_entry("leaf", targetId="t1"), "leaf", {"target": "t1"}),
        (
            _entry("custom", customType="ext/state", data={"checked": 3}),
            "custom_state",
            {"custom_type": "ext/state", "data": {"checked": 3}},
        ),
    ],
)
def test_each_type_pi_writes(entry: dict[str, Any], kind: str, fields: dict[str, Any]) -> None:
    described = describe(entry)
    assert described.kind == kind and described.entry is entry and described.type == entry["type"]
    for name, value in fields.items():
        assert getattr(described, name) == value, name


def test_every_kind_is_named_once() -> None:
    assert not MESSAGE_ROLES & ENTRY_KINDS and "custom_state" not in MESSAGE_ROLES | ENTRY_KINDS


def test_a_context_edit_s_replacement_reads_as_content() -> None:
    replaced = describe(_entry("context_edit", targetId="t", replacement={"content": "[redacted]"}))
    assert replaced.parts == (Part("text", 0, "[redacted]"),) and replaced.data == {"content": "[redacted]"}
    assert describe(_entry("context_edit", targetId="t", replacement={})).parts == ()


@pytest.mark.parametrize(
    "entry",
    [
        _entry("future_type", payload={"x": 1}),
        _entry(None),
        _message(role="critic", content="a role from a newer pi"),
        _entry("message", message="not an object"),
        _entry("message"),
    ],
)
def test_unknown_types_and_roles_are_kept_whole(entry: dict[str, Any]) -> None:
    described = describe(entry)
    assert described.kind == "unknown" and described.entry is entry


def test_an_unknown_role_keeps_its_message_and_content() -> None:
    described = describe(_message(role="critic", content="seen"))
    assert described.role == "critic" and described.message is not None and text_of(described.parts) == "seen"


def test_unknown_blocks_and_odd_content_are_kept_as_other_parts() -> None:
    blocks: list[Any] = [{"type": "audio", "data": "…"}, "a bare string", 5, {"no": "type"}]
    assert [(part.kind, part.position, part.value) for part in parts_of(blocks)] == [
        ("other", 0, blocks[0]),
        ("other", 1, "a bare string"),
        ("other", 2, 5),
        ("other", 3, {"no": "type"}),
    ]
    assert parts_of({"text": "an object, not a list"}) == (Part("other", 0, value={"text": "an object, not a list"}),)
    assert parts_of(None) == () and parts_of([]) == ()


def test_values_of_another_shape_read_as_text() -> None:
    described = describe(
        _message(role="toolResult", toolCallId=7, toolName=["x"], content=[{"type": "text", "text": 5}])
    )
    assert described.result is not None and (described.result.call_id, described.result.tool) == ("7", '["x"]')
    # A text block's text as pi reads it (JavaScript's String(), docs/format.md §10).
    assert text_of(parts_of([{"type": "text", "text": True}, {"type": "text"}, {"type": "text", "text": [1, 2]}])) == (
        "true  1,2"
    )


def test_images_keep_their_type_and_data_only_as_strings() -> None:
    good, odd = parts_of(
        [{"type": "image", "mimeType": "image/png", "data": "iVBO"}, {"type": "image", "mimeType": 5, "data": None}]
    )
    assert (good.kind, good.mime_type, good.data) == ("image", "image/png", "iVBO")
    assert (odd.kind, odd.mime_type, odd.data) == ("image", None, None)


def test_text_of_joins_the_text_parts_only() -> None:
    blocks = [{"type": "text", "text": "a"}, {"type": "image", "data": "..."}, {"type": "text", "text": "b"}, "junk"]
    assert text_of(parts_of(blocks)) == "a b"
    assert text_of(parts_of(blocks), " | ") == "a | b"
    assert text_of(parts_of("plain")) == "plain"
    assert text_of(parts_of(None)) == ""
