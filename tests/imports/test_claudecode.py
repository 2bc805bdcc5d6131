"""Claude Code's sessions imported: tool calls and results, sidechains (inline and in subagent files),
summaries as titles, a compaction, records that are no messages kept on their branch."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import exports as X

from sessions_app.imports.errors import ExportError
from sessions_app.imports.plan import HEAD
from sessions_app.sessionfiles.tree import siblings


@pytest.fixture
def session(tmp_path: Path):
    report = X.import_into(tmp_path / "sessions", X.cc_project(tmp_path))
    assert report.kind == "Claude Code" and len(report.outcomes) == 1
    return X.opened(report.outcomes[0])


def test_the_main_conversation_after_its_compaction(session) -> None:
    assert session.leaf_id == "t1"  # the last record of the main conversation
    assert X.said(session) == [
        (
            "compactionSummary",
            "This session is being continued from a previous conversation. Summary: login fixed, tests added.",
        ),
        ("user", "Thanks! Here is a screenshot"),
        ("assistant", "Looks right."),
    ]
    compaction = session.entry("c7")
    assert (compaction["type"], compaction["firstKeptEntryId"], compaction["tokensBefore"]) == (
        "compaction",
        "c7",
        15000,
    )
    boundary = session.entry("cb")
    assert (boundary["customType"], boundary["parentId"]) == ("claude-code/system", "c6")  # logicalParentUuid
    assert session.entry("c8")["message"]["content"][1]["type"] == "image"


def test_tool_calls_and_results_before_it(session) -> None:
    assert X.said(session, "c6") == [
        ("user", "The login fails, fix it"),
        ("assistant", "→Read"),
        ("toolResult", "def login(): return False"),
        ("assistant", "It always returns False. Fixed."),
        ("user", "Now add two tests"),
        ("assistant", "Added two tests."),
    ]
    answer = session.entry("c2")["message"]
    assert answer["content"][0] == {
        "type": "thinking",
        "thinking": "Read the view first.",
        "thinkingSignature": "sig-1",
    }
    assert (answer["api"], answer["provider"], answer["model"], answer["stopReason"]) == (
        "anthropic-messages",
        "anthropic",
        "claude-opus-4-5-20251101",
        "toolUse",
    )
    assert answer["usage"]["cacheRead"] == 100 and answer["usage"]["totalTokens"] == 135
    result = session.entry("c3")
    assert result["message"]["toolName"] == "Read"  # named after the call it answers
    assert result["imported"]["record"]["toolUseResult"]["file"]["numLines"] == 1


def test_branches_sidechains_and_records(session) -> None:
    index = session.index
    assert [index.ids[row] for row in siblings(index, index.by_id["c5"])] == ["c5", "c5b"]
    # Sidechains (inline, and a subagent's file) are roots of their own: branches beside the main one.
    assert sorted(index.ids[row] for row in siblings(index, index.by_id["c1"])) == ["c1", "g1", "s1"]
    assert session.entry("s1")["parentId"] == HEAD
    assert X.said(session, "g2") == [("user", "Search for login tests"), ("assistant", "None found.")]
    # The summary before the first record names the session; the snapshot is kept on c1's branch.
    assert session.index.name == "Fix the login bug"
    assert [session.entry(f"c1.{n}")["type"] for n in (1, 2)] == ["session_info", "custom"]
    assert session.entry("c2")["parentId"] == "c1.2"
    assert session.entry("p1")["data"]["data"]["hookEvent"] == "PreToolUse"


def test_one_session_file_alone_and_its_oddities(tmp_path: Path) -> None:
    records = X.cc_session()[:4]
    text = "".join(__import__("json").dumps(record) + "\n" for record in [*records, records[2]])
    path = tmp_path / f"{X.SESSION}.jsonl"
    path.write_text(text + '{"type": "user", "uuid": "half', encoding="utf-8")
    report = X.import_into(tmp_path / "sessions", path)
    assert X.opened(report.outcomes[0]).leaf_id == "c2"
    assert any("record c1 again: the first one is kept" in note for note in report.notes)
    assert any("line 6: an unfinished last line, left out" in note for note in report.notes)


def test_a_line_that_is_not_json_refuses_the_export(tmp_path: Path) -> None:
    project = X.cc_project(tmp_path)
    main = project / f"{X.SESSION}.jsonl"
    lines = main.read_text().split("\n")
    lines[4] = "{not json"
    main.write_text("\n".join(lines))
    with pytest.raises(ExportError, match=rf"{X.SESSION}\.jsonl line 5: not valid JSON"):
        X.import_into(tmp_path / "sessions", project)
    assert not (tmp_path / "sessions").exists()
