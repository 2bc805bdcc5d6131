"""What of each kind of entry is searchable, and in what form text is indexed."""

from __future__ import annotations

from sessions_app.search.extract import MAX_TEXT_CHARS, searchable_text
from sessions_app.search.text import SEPARATOR, display_form, index_form


def message(role: str, **fields: object) -> dict[str, object]:
    return {"type": "message", "id": "a", "message": {"role": role, **fields}}


def test_user_text_as_a_string_or_blocks_without_images() -> None:
    assert searchable_text(message("user", content="hello there")) == ("user", "hello there")
    blocks = [{"type": "text", "text": "one"}, {"type": "image", "data": "AAAA", "mimeType": "image/png"}]
    assert searchable_text(message("user", content=[*blocks, {"type": "text", "text": "two"}])) == ("user", "one\ntwo")


def test_text_blocks_whose_text_is_no_string_are_found_as_the_core_reads_them() -> None:
    """A ``text`` that is no string is indexed as the core reads it (``entries.block_text``: JS's
    ``String()``, as pi's list writes it), not left out: the number a reader sees is found."""
    blocks = [{"type": "text", "text": 1969}, {"type": "text", "text": [7, "up"]}, {"type": "text", "text": None}]
    assert searchable_text(message("user", content=blocks)) == ("user", "1969\n7,up")
    assert searchable_text(message("assistant", content=[{"type": "text", "text": True}])) == ("assistant", "true")


def test_assistant_text_thinking_and_tool_calls_with_their_arguments() -> None:
    content = [
        {"type": "thinking", "thinking": "let me look", "thinkingSignature": "sig"},
        {"type": "text", "text": "Reading it."},
        {
            "type": "toolCall",
            "id": "t1",
            "name": "edit",
            "arguments": {"path": "app.py", "edits": [{"old": "a\nb", "new": "c"}], "force": True, "n": 3},
        },
    ]
    kind, found = searchable_text(message("assistant", content=content))  # type: ignore[misc]
    assert kind == "assistant"
    assert found.split("\n") == [
        "let me look",
        "Reading it.",
        "edit",
        "path: app.py",
        "old: a",  # the argument's own newline, not a JSON escape
        "b",
        "new: c",
        "force: true",
        "n: 3",
    ]


def test_deeply_nested_arguments_do_not_recurse() -> None:
    nested: object = "bottom"
    for _ in range(5000):
        nested = {"k": nested}
    content = [{"type": "toolCall", "name": "deep", "arguments": nested}]
    assert searchable_text(message("assistant", content=content)) == ("assistant", "deep\nk: bottom")


def test_tool_results_shell_runs_and_other_roles() -> None:
    result = message("toolResult", toolName="read", content=[{"type": "text", "text": "file body"}], isError=False)
    assert searchable_text(result) == ("toolResult", "file body")
    shell = message("bashExecution", command="pytest -q", output="3 passed", exitCode=0)
    assert searchable_text(shell) == ("bashExecution", "pytest -q\n3 passed")
    assert searchable_text(message("custom", customType="x", content="from an extension")) == (
        "custom",
        "from an extension",
    )
    assert searchable_text(message("system", content="prompt")) == ("system", "prompt")


def test_summaries_and_custom_messages() -> None:
    assert searchable_text({"type": "compaction", "summary": "## Goal"}) == ("compaction", "## Goal")
    assert searchable_text({"type": "branch_summary", "summary": "tried x"}) == ("branch_summary", "tried x")
    assert searchable_text({"type": "custom_message", "content": [{"type": "text", "text": "remind"}]}) == (
        "custom_message",
        "remind",
    )


def test_entries_with_nothing_to_find() -> None:
    for entry in [
        {"type": "label", "targetId": "a", "label": "important"},
        {"type": "session_info", "name": "My session"},
        {"type": "custom", "customType": "x", "data": {"secret": "state"}},
        {"type": "model_change", "provider": "p", "modelId": "m"},
        {"type": "leaf", "targetId": "a"},
        {"type": "something-new", "text": "unknown"},
        message("user", content="   "),
        message("assistant", content=[{"type": "image", "data": "AAAA"}]),
        {"type": "message", "message": "not an object"},
        {"type": "message", "message": {"role": "user", "content": 42}},
    ]:
        assert searchable_text(entry) is None, entry


def test_very_long_text_is_cut() -> None:
    found = searchable_text(message("toolResult", content=[{"type": "text", "text": "x" * (MAX_TEXT_CHARS + 10)}]))
    assert found is not None and len(found[1]) == MAX_TEXT_CHARS


def test_index_form_sets_apart_unspaced_scripts_and_symbols_and_drops_controls() -> None:
    assert index_form("plain ascii\tkept\n") == "plain ascii\tkept\n"
    assert index_form("a\x00b\x1fc\x02d\x1b[31m") == "a b c d [31m"
    assert index_form("编程") == f"{SEPARATOR}编{SEPARATOR}{SEPARATOR}程{SEPARATOR}"
    assert index_form("party🎉time") == f"party{SEPARATOR}🎉{SEPARATOR}time"
    assert index_form("ｐｙｔｈｏｎ") == "python"  # full-width letters are the ordinary ones
    for text in ["我喜欢编程 and café", "東京都に住んでいます", "학교에서", "กินข้าว", "25°C 🎉"]:
        assert display_form(index_form(text)) == text
