"""Reading commands: ``ls``, ``show``, ``tree``."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from sessions_app.cli.listing import age, short_id_length
from sessions_app.sessionfiles.store import SessionFile

# ------------------------------------------------------------------------------------------- ls


def test_ls_groups_by_cwd_and_nests_forks(pitree, sample, expected) -> None:
    for key in ("01-linear", "02-tree-branches", "03-fork-of-02"):
        sample(key)
    lines = pitree("ls").splitlines()
    assert lines[0] == "/home/alice/projects/todo-api"
    rows = lines[1:]
    assert len(rows) == 3
    fork_id = expected["03-fork-of-02"]["sessionId"]
    parent_id = expected["02-tree-branches"]["sessionId"]
    parent_row = next(i for i, row in enumerate(rows) if parent_id[:10] in row)
    fork_row = next(i for i, row in enumerate(rows) if fork_id[:10] in row)
    assert fork_row == parent_row + 1
    assert "↳ Write a function that validates todo titles" in rows[fork_row]
    assert "Title validation experiments" in rows[parent_row]
    assert "11 msgs" in rows[parent_row]
    assert "ago" in rows[parent_row]


def test_ls_short_ids_tell_sessions_apart(pitree, sample) -> None:
    sample("01-linear")
    sample("02-tree-branches")  # both ids start with 019cadd4-
    rows = pitree("ls").splitlines()[1:]
    shown = [row.split()[0] for row in rows]
    assert len(set(shown)) == 2
    assert all(len(short) >= 8 for short in shown)
    # A short id is accepted wherever FILE is.
    assert "Todo API endpoints" in pitree("show", next(s for s in shown if s.startswith("019cadd4-5")))


def test_ls_groups_sessions_of_different_workspaces(pitree, write_session) -> None:
    write_session("a.jsonl", [{"type": "message", "id": "a1", "message": {"role": "user", "content": "in a"}}])
    header = {
        "type": "session",
        "version": 3,
        "id": "0197cccc-0000-7000-8000-000000000003",
        "timestamp": "2026-03-02T09:00:00.000Z",
        "cwd": "/work/other",
    }
    write_session(
        "b.jsonl", [{"type": "message", "id": "b1", "message": {"role": "user", "content": "in b"}}], header=header
    )
    text = pitree("ls")
    assert "/work/demo\n" in text and "/work/other\n" in text
    assert "1 msg " in text


def test_ls_prints_every_field_on_its_line(pitree, write_session) -> None:
    header = {"type": "session", "version": 3, "id": "0197cccc-0000-7000-8000-000000000003"}
    header |= {"timestamp": "2026-03-02T09:00:00.000Z", "cwd": "/work/a\nfake group\x1b[31m"}
    write_session(
        "b.jsonl", [{"type": "message", "id": "b1", "message": {"role": "user", "content": "hi"}}], header=header
    )
    lines = pitree("ls").splitlines()
    assert len(lines) == 2 and lines[0] == "/work/a fake group\ufffd[31m" and "hi" in lines[1]


def test_ls_json(pitree, sample, expected) -> None:
    for key in ("02-tree-branches", "03-fork-of-02"):
        sample(key)
    items = json.loads(pitree("ls", "--json"))
    by_id = {item["id"]: item for item in items}
    fork = by_id[expected["03-fork-of-02"]["sessionId"]]
    parent = by_id[expected["02-tree-branches"]["sessionId"]]
    assert (parent["depth"], fork["depth"]) == (0, 1)
    assert parent["name"] == "Title validation experiments"
    assert parent["messageCount"] == 11
    assert fork["shortId"] != parent["shortId"]


def test_ls_empty_folder(pitree, sessions_dir) -> None:
    assert pitree("ls") == f"no sessions in {sessions_dir}\n"
    assert json.loads(pitree("ls", "--json")) == []


def test_ls_reports_files_that_are_not_sessions_on_stderr(pitree, sessions_dir, sample) -> None:
    sample("01-linear")
    (sessions_dir / "junk.jsonl").write_text('{"hello": 1}\n')
    out, err = io.StringIO(), io.StringIO()
    call_command("pitree", "ls", stdout=out, stderr=err)
    assert "junk.jsonl" in err.getvalue() and err.getvalue().count("\n") == 1
    assert "Todo API endpoints" in out.getvalue()


def test_age_words() -> None:
    now = 10**12
    assert age(now, now) == "just now"
    assert age(now - 3 * 60_000, now) == "3 min ago"
    assert age(now - 3_600_000, now) == "1 hour ago"
    assert age(now - 5 * 3_600_000, now) == "5 hours ago"
    assert age(now - 2 * 86_400_000, now) == "2 days ago"
    assert age(now - 14 * 86_400_000, now) == "2 weeks ago"
    assert age(now - 400 * 86_400_000, now) == "1 year ago"
    assert age(now + 5000, now) == "just now"


def test_short_id_length() -> None:
    assert short_id_length([]) == 8
    assert short_id_length(["abcdefgh-1", "zzzzzzzz-2"]) == 8
    assert short_id_length(["019cadd4-5bfc", "019cadd4-cb50"]) == 10


# ------------------------------------------------------------------------------------------- show

RICH = [
    {"type": "model_change", "id": "m1", "provider": "anthropic", "modelId": "claude-sonnet-4-5"},
    {"type": "thinking_level_change", "id": "t1", "thinkingLevel": "high"},
    {"type": "message", "id": "u1", "message": {"role": "user", "content": "Fix the bug\nplease", "timestamp": 1}},
    {
        "type": "message",
        "id": "a1",
        "message": {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "Look at main.py"},
                {"type": "text", "text": "Reading it."},
                {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "main.py", "limit": 5}},
            ],
            "provider": "anthropic",
            "model": "claude-sonnet-4-5",
            "stopReason": "toolUse",
            "timestamp": 2,
        },
    },
    {
        "type": "message",
        "id": "r1",
        "message": {
            "role": "toolResult",
            "toolCallId": "c1",
            "toolName": "read",
            "content": [{"type": "text", "text": "ENOENT"}],
            "isError": True,
            "timestamp": 3,
        },
    },
    {
        "type": "message",
        "id": "b1",
        "message": {
            "role": "bashExecution",
            "command": "make test",
            "output": "1 failed\n",
            "exitCode": 2,
            "cancelled": False,
            "truncated": False,
            "timestamp": 4,
        },
    },
    {
        "type": "custom_message",
        "customType": "ext/reminder",
        "content": "Run the linter.",
        "display": True,
        "id": "cm1",
    },
    {
        "type": "compaction",
        "id": "k1",
        "summary": "## Goal\nFix the bug.",
        "firstKeptEntryId": "b1",
        "tokensBefore": 1234,
    },
    {"type": "branch_summary", "id": "s1", "fromId": "zz", "summary": "Tried a rewrite first."},
    {"type": "label", "id": "l1", "targetId": "u1", "label": "start"},
    {"type": "custom", "customType": "ext/state", "data": {"n": 1}, "id": "c2"},
    {"type": "mystery", "id": "x1", "payload": {"k": [1, 2]}},
    {"type": "message", "id": "w1", "message": {"role": "wizard", "content": "?"}},
    {"type": "session_info", "id": "n1", "name": "Bug hunt"},
]


def test_show_renders_every_entry_kind(pitree, write_session) -> None:
    text = pitree("show", str(write_session("rich.jsonl", RICH)))
    assert "· m1  2026-03-02 09:00:00  model → anthropic/claude-sonnet-4-5" in text
    assert "thinking level → high" in text
    assert "[user] u1  2026-03-02 09:00:02  (label: start)\n  Fix the bug\n  please\n" in text
    assert "[assistant] a1" in text and "anthropic/claude-sonnet-4-5" in text
    assert '  (thinking) Look at main.py\n  Reading it.\n  → read(path="main.py", limit=5)\n' in text
    assert "[tool result] r1  2026-03-02 09:00:04  read · ERROR\n  ENOENT\n" in text
    assert "[bash] b1  2026-03-02 09:00:05  exit code 2\n  $ make test\n  1 failed\n" in text
    assert "[custom message] cm1  2026-03-02 09:00:06  ext/reminder\n  Run the linter.\n" in text
    assert (
        "[compaction] k1  2026-03-02 09:00:07  keeps from b1 · 1234 tokens before\n  ## Goal\n  Fix the bug.\n" in text
    )
    assert "[branch summary] s1  2026-03-02 09:00:08  from zz\n  Tried a rewrite first.\n" in text
    assert "· l1  2026-03-02 09:00:09  label 'start' on u1" in text
    assert 'custom ext/state {"n":1}' in text
    assert '{"type":"mystery","id":"x1","payload":{"k":[1,2]}' in text
    assert '"role":"wizard"' in text
    assert "session name → 'Bug hunt'" in text
    # One block per entry, in path order.
    order = [text.index(f" {entry['id']}  ") for entry in RICH]
    assert order == sorted(order)


def test_show_follows_the_active_path_or_leaf(pitree, sample, expected) -> None:
    path = str(sample("02-tree-branches"))
    active = pitree("show", path)
    assert "Add a docstring" in active
    assert "Make it reject empty titles only" not in active
    other = pitree("show", path, "--leaf", "de4f0d3a")
    assert "Make it reject empty titles only" in other
    assert "Add a docstring" not in other
    assert "(label: regex-approach)" in other


def test_show_tail_prints_only_the_last_entries(pitree, sample) -> None:
    text = pitree("show", str(sample("01-linear")), "--tail", "2")
    assert text.startswith("[assistant] 358d8704")
    assert "db26dc72" in text
    assert "c256703f" not in text
    whole = pitree("show", str(sample("01-linear")))
    assert pitree("show", str(sample("01-linear")), "--tail", "500") == whole


def test_show_tail_decodes_only_n_entries(pitree, chain, monkeypatch) -> None:
    path = chain(20_000)
    SessionFile.open(path)  # the index is built before counting (opening decodes no entry body)
    decoded: list[int] = []
    original = SessionFile.entries

    def counting(self, rows):
        rows = list(rows)
        decoded.extend(rows)
        return original(self, rows)

    monkeypatch.setattr(SessionFile, "entries", counting)
    text = pitree("show", str(path), "--tail", "3")
    assert len(decoded) == 3
    assert "[user] e0019998" in text and "[assistant] e0019999" in text and "e0019997" in text
    assert "e0019996" not in text


def test_show_tail_reads_only_the_entries_it_prints(pitree, chain, monkeypatch) -> None:
    """``--tail`` steps up from the leaf: on a long path it parses N entries, never the whole path
    (its speed on huge files is measured in bench/open_cold.py, not here)."""
    path = chain(10_000)
    parsed: list[int] = []
    real_entries = SessionFile.entries

    def counting(self: SessionFile, rows: list[int]) -> list[dict]:
        parsed.extend(rows)
        return real_entries(self, rows)

    monkeypatch.setattr(SessionFile, "entries", counting)
    text = pitree("show", str(path), "--tail", "5")
    assert text.count("\n[") == 4
    assert len(parsed) == 5


def test_show_tail_must_be_positive(pitree, sample) -> None:
    with pytest.raises(CommandError, match="at least 1"):
        pitree("show", str(sample("01-linear")), "--tail", "0")
    with pytest.raises(CommandError, match="whole number"):
        pitree("show", str(sample("01-linear")), "--tail", "x")


def test_show_unknown_leaf(pitree, sample) -> None:
    with pytest.raises(CommandError, match="Entry nope not found"):
        pitree("show", str(sample("01-linear")), "--leaf", "nope")


def test_show_position_before_the_first_entry(pitree, write_session) -> None:
    path = write_session(
        "rooted.jsonl",
        [
            {"type": "message", "id": "u1", "message": {"role": "user", "content": "hi"}},
            {"type": "leaf", "id": "lf", "targetId": None},
        ],
    )
    assert "before the first entry" in pitree("show", str(path))


def test_show_of_a_v1_file(pitree, sample) -> None:
    text = pitree("show", str(sample("05-legacy-v1.input")))
    assert "Rename the todos table" in text
    assert "[compaction]" in text


# ------------------------------------------------------------------------------------------- tree


def test_tree_marks_the_active_path_and_the_leaf(pitree, sample, expected) -> None:
    lines = pitree("tree", str(sample("02-tree-branches"))).splitlines()
    want = expected["02-tree-branches"]
    on_path = set(want["branchIdsRootToLeaf"])
    ids = []
    for line in lines:
        entry_id = line[2:].lstrip("├└│─ ").split()[0]
        ids.append(entry_id)
        assert line.startswith("* ") == (entry_id in on_path), line
        assert line.endswith("← leaf") == (entry_id == want["leafIdAfterLoad"]), line
    assert len(ids) == want["entryCount"] == len(set(ids))
    assert "(label: regex-approach)" in next(line for line in lines if "07721729" in line)


def test_tree_indents_only_at_branches(pitree, sample) -> None:
    lines = pitree("tree", str(sample("02-tree-branches"))).splitlines()
    by_id = {line[2:].lstrip("├└│─ ").split()[0]: line for line in lines}
    assert by_id["f87f9c1c"].startswith("* f87f9c1c")
    assert by_id["2f760a8d"].startswith("* 2f760a8d")  # a straight run keeps its indent
    assert by_id["97690895"].startswith("* ├─ 97690895")
    assert by_id["c2ecb522"].startswith("* │  c2ecb522")
    assert by_id["07721729"].startswith("  └─ 07721729")
    assert by_id["de4f0d3a"].startswith("     de4f0d3a")
    assert "user: Make it reject titles longer than 80 chars" in by_id["97690895"]


def test_tree_with_several_roots_and_a_moved_leaf(pitree, write_session) -> None:
    path = write_session(
        "roots.jsonl",
        [
            {"type": "message", "id": "r1", "message": {"role": "user", "content": "first root"}},
            {"type": "message", "id": "r2", "parentId": None, "message": {"role": "user", "content": "second root"}},
            {"type": "leaf", "id": "lf", "targetId": "r1"},
        ],
    )
    lines = pitree("tree", str(path)).splitlines()
    assert lines == ["* ├─ r1  user: first root  ← leaf", "  └─ r2  user: second root"]


def test_tree_of_a_3000_deep_chain(pitree, chain) -> None:
    lines = pitree("tree", str(chain(3000))).splitlines()
    assert len(lines) == 3000
    assert lines[0] == "* e0000000  user: message 0"
    assert lines[-1] == "* e0002999  assistant: reply 2999  ← leaf"
    assert all(line.startswith("* e") for line in lines)


def test_tree_of_a_deep_branching_tree(pitree, write_session) -> None:
    # Every entry has a side branch: the indentation grows, the walk stays iterative.
    entries = []
    previous = None
    for number in range(1500):
        main, side = f"m{number}", f"s{number}"
        entries.append(
            {"type": "message", "id": main, "parentId": previous, "message": {"role": "user", "content": "main"}}
        )
        entries.append(
            {"type": "message", "id": side, "parentId": previous, "message": {"role": "user", "content": "side"}}
        )
        previous = main
    lines = pitree("tree", str(write_session("wide.jsonl", entries))).splitlines()
    assert len(lines) == 3000
