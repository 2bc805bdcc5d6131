"""What the LLM sees (docs/format.md §6): a pure function of a root→leaf path, checked case by case the way
pi's own build-context tests do, plus the conversion to provider messages."""

from __future__ import annotations

from typing import Any

import pytest

from sessions_app.sessionfiles.context import (
    BRANCH_PREFIX,
    BRANCH_SUFFIX,
    COMPACTION_PREFIX,
    COMPACTION_SUFFIX,
    build_session_context,
    convert_to_llm,
)


def msg(entry_id: str, role: str, content: Any = None, **extra: Any) -> dict[str, Any]:
    body = {"role": role, "content": content if content is not None else entry_id, "timestamp": 1, **extra}
    return {
        "type": "message",
        "id": entry_id,
        "parentId": None,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "message": body,
    }


def e(entry_id: str, entry_type: str, /, **fields: Any) -> dict[str, Any]:
    return {"type": entry_type, "id": entry_id, "parentId": None, "timestamp": "2026-01-01T00:00:01.000Z", **fields}


def contents(path: list[dict[str, Any]]) -> list[Any]:
    return [m.get("content", m.get("summary")) for m in build_session_context(path).messages]


def test_empty_path() -> None:
    context = build_session_context([])
    assert (context.messages, context.thinking_level, context.model, context.entry_ids) == ([], "off", None, [])


def test_messages_in_order_and_settings_from_the_path() -> None:
    path = [
        e("m", "model_change", provider="p1", modelId="first"),
        e("t", "thinking_level_change", thinkingLevel="high"),
        msg("u", "user"),
        msg("a", "assistant", [{"type": "text", "text": "hi"}], provider="p2", model="from-assistant"),
        e("t2", "thinking_level_change", thinkingLevel="low"),
    ]
    context = build_session_context(path)
    assert [m["role"] for m in context.messages] == ["user", "assistant"]
    assert context.thinking_level == "low"
    assert context.model == {"provider": "p2", "modelId": "from-assistant"}  # an assistant overrides model_change
    path.append(e("m2", "model_change", provider="p3", modelId="later"))
    assert build_session_context(path).model == {"provider": "p3", "modelId": "later"}


def test_metadata_entries_add_no_messages() -> None:
    path = [
        msg("u", "user"),
        e("c", "custom", customType="x", data={}),
        e("l", "label", targetId="u", label="x"),
        e("s", "session_info", name="n"),
        e("g", "usage", kind="cache_warm"),
        e("z", "some_future_type"),
        e("b", "branch_summary", fromId="q", summary=""),  # an empty summary says nothing
    ]
    context = build_session_context(path)
    assert contents(path) == ["u"]
    assert context.entry_ids == ["u", "c", "l", "s", "g", "z", "b"]


def test_compaction_keeps_from_first_kept_and_everything_after() -> None:
    path = [
        e("tl", "thinking_level_change", thinkingLevel="high"),
        msg("u1", "user"),
        msg("a1", "assistant", []),
        msg("u2", "user"),
        msg("s", "system", "a system prompt change"),
        msg("a2", "assistant", []),
        e("c", "compaction", summary="S", firstKeptEntryId="u2", tokensBefore=99),
        msg("u3", "user"),
    ]
    context = build_session_context(path)
    assert context.entry_ids == ["c", "u2", "a2", "u3"]  # system messages are dropped from the kept range
    assert context.messages[0] == {
        "role": "compactionSummary",
        "summary": "S",
        "tokensBefore": 99,
        "timestamp": 1767225601000,
    }
    assert context.thinking_level == "high"  # settings come from the whole path, before the cut too


def test_latest_compaction_wins_and_older_ones_say_nothing() -> None:
    path = [
        msg("u1", "user"),
        e("c1", "compaction", summary="first", firstKeptEntryId="u1", tokensBefore=1),
        msg("u2", "user"),
        e("c2", "compaction", summary="second", firstKeptEntryId="u1", tokensBefore=2),
        msg("u3", "user"),
    ]
    context = build_session_context(path)
    assert context.entry_ids == ["c2", "u1", "c1", "u2", "u3"]
    assert contents(path) == ["second", "u1", "u2", "u3"]


def test_first_kept_not_on_the_path_keeps_nothing_before() -> None:
    path = [
        msg("u1", "user"),
        e("c", "compaction", summary="S", firstKeptEntryId="elsewhere", tokensBefore=1),
        msg("u2", "user"),
    ]
    assert contents(path) == ["S", "u2"]


def test_retain_nothing_compaction_points_at_itself() -> None:
    path = [
        msg("u1", "user"),
        e("c", "compaction", summary="S", firstKeptEntryId="c", tokensBefore=1),
        msg("u2", "user"),
    ]
    assert build_session_context(path).entry_ids == ["c", "u2"]


def test_compaction_system_message_comes_first() -> None:
    system = {"role": "system", "content": "prompt", "timestamp": 5}
    path = [e("c", "compaction", summary="S", firstKeptEntryId="c", tokensBefore=1, systemMessage=system)]
    assert [m["role"] for m in build_session_context(path).messages] == ["system", "compactionSummary"]


def test_context_edits_last_one_per_target_wins() -> None:
    path = [
        msg("u", "user", "secret"),
        msg("a", "assistant", [{"type": "text", "text": "long"}], provider="p", model="m"),
        msg("u2", "user", "keep"),
        e("e1", "context_edit", targetId="u", replacement={"content": "first edit"}),
        e("e2", "context_edit", targetId="a", replacement=None),
        e("e3", "context_edit", targetId="u", replacement={"content": "[redacted]"}),
        e("e4", "context_edit", targetId="u2", replacement={"content": "string for a user stays a string"}),
    ]
    context = build_session_context(path)
    assert [m["content"] for m in context.messages] == ["[redacted]", "string for a user stays a string"]
    assert context.messages[0]["timestamp"] == 1  # only content is replaced
    # An assistant's string replacement becomes a text block.
    path.append(e("e5", "context_edit", targetId="a", replacement={"content": "short"}))
    assert build_session_context(path).messages[1]["content"] == [{"type": "text", "text": "short"}]


def test_context_edit_outside_the_kept_range_has_no_effect() -> None:
    path = [
        msg("u1", "user", "old"),
        e("e", "context_edit", targetId="u2", replacement=None),
        msg("u2", "user", "kept"),
        e("c", "compaction", summary="S", firstKeptEntryId="u2", tokensBefore=1),
    ]
    assert contents(path) == ["S", "kept"]


def test_custom_message_and_branch_summary_shapes() -> None:
    path = [
        e("cm", "custom_message", customType="ext", content="note", display=False),
        e("cd", "custom_message", customType="ext", content=None, display=True, details={"k": 1}),
        e("b", "branch_summary", fromId="old-leaf", summary="what happened"),
    ]
    messages = build_session_context(path).messages
    assert messages == [
        {"role": "custom", "customType": "ext", "content": "note", "display": False, "timestamp": 1767225601000},
        {
            "role": "custom",
            "customType": "ext",
            "content": [],
            "display": True,
            "details": {"k": 1},
            "timestamp": 1767225601000,
        },
        {"role": "branchSummary", "summary": "what happened", "fromId": "old-leaf", "timestamp": 1767225601000},
    ]


def test_missing_content_becomes_empty() -> None:
    path = [
        {"type": "message", "id": "u", "parentId": None, "timestamp": "t", "message": {"role": "user"}},
        {"type": "message", "id": "s", "parentId": None, "timestamp": "t", "message": {"role": "system"}},
    ]
    assert contents(path) == [[], ""]


def test_malformed_shapes_do_not_break_the_context() -> None:
    """pi does not validate parsed lines; one odd line must not make a whole session unreadable."""
    path = [
        {"type": "message", "id": "x", "parentId": None, "timestamp": "t", "message": ["not", "an", "object"]},
        {"type": "message", "id": "y", "parentId": None, "timestamp": "t", "message": "a string"},
        e("e", "context_edit", targetId=["a", "list"], replacement=None),
        msg("u", "user", "fine"),
        e("c", "compaction", summary="S", firstKeptEntryId="x", tokensBefore=1),
    ]
    context = build_session_context(path)
    assert contents(path) == ["S", "fine"]
    assert context.model is None


# ---------------------------------------------------------------------------------------------- convert_to_llm


def test_convert_passes_llm_roles_through() -> None:
    messages = [
        {"role": "user", "content": "u", "timestamp": 1},
        {"role": "assistant", "content": [], "timestamp": 2},
        {"role": "toolResult", "content": [], "toolCallId": "t", "timestamp": 3},
        {"role": "system", "content": "s", "timestamp": 4},
    ]
    assert convert_to_llm(messages) == messages


def test_convert_summaries_with_pis_exact_wording() -> None:
    converted = convert_to_llm(
        [
            {"role": "branchSummary", "summary": "B", "fromId": "x", "timestamp": 7},
            {"role": "compactionSummary", "summary": "C", "tokensBefore": 1, "timestamp": 8},
        ]
    )
    assert converted == [
        {
            "role": "user",
            "content": [
                {
                    "type": "text",
                    "text": "The following is a summary of a branch that this conversation came back from:\n\n<summary>\nB</summary>",
                }
            ],
            "timestamp": 7,
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "text",
                    "text": "The conversation history before this point was compacted into the following summary:\n\n<summary>\nC\n</summary>",
                }
            ],
            "timestamp": 8,
        },
    ]
    assert (BRANCH_PREFIX, BRANCH_SUFFIX, COMPACTION_SUFFIX) == (
        "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n",
        "</summary>",
        "\n</summary>",
    )
    assert COMPACTION_PREFIX.endswith("<summary>\n")


def test_convert_custom_messages_to_user_messages() -> None:
    converted = convert_to_llm(
        [
            {"role": "custom", "customType": "x", "content": "plain", "display": False, "timestamp": 1},
            {
                "role": "custom",
                "customType": "x",
                "content": [{"type": "text", "text": "blocks"}],
                "display": True,
                "timestamp": 2,
            },
        ]
    )
    assert converted == [
        {"role": "user", "content": [{"type": "text", "text": "plain"}], "timestamp": 1},  # hidden, still sent
        {"role": "user", "content": [{"type": "text", "text": "blocks"}], "timestamp": 2},
    ]


@pytest.mark.parametrize(
    ("fields", "text"),
    [
        ({"output": "3 passed\n", "exitCode": 0}, "Ran `pytest -q`\n```\n3 passed\n\n```"),
        ({"output": "", "exitCode": 0}, "Ran `pytest -q`\n(no output)"),
        ({"output": "boom", "exitCode": 2}, "Ran `pytest -q`\n```\nboom\n```\n\nCommand exited with code 2"),
        ({"output": "x", "cancelled": True, "exitCode": None}, "Ran `pytest -q`\n```\nx\n```\n\n(command cancelled)"),
        (
            {"output": "x", "exitCode": 0, "truncated": True, "fullOutputPath": "/tmp/out.txt"},
            "Ran `pytest -q`\n```\nx\n```\n\n[Output truncated. Full output: /tmp/out.txt]",
        ),
    ],
)
def test_convert_bash_executions(fields: dict[str, Any], text: str) -> None:
    message = {
        "role": "bashExecution",
        "command": "pytest -q",
        "cancelled": False,
        "truncated": False,
        "timestamp": 3,
        **fields,
    }
    assert convert_to_llm([message]) == [{"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 3}]


def test_convert_drops_excluded_bash_and_in_memory_only_roles() -> None:
    bash = {
        "role": "bashExecution",
        "command": "ls",
        "output": "",
        "exitCode": 0,
        "excludeFromContext": True,
        "timestamp": 1,
    }
    assert convert_to_llm([bash, {"role": "somethingElse", "timestamp": 2}]) == []
