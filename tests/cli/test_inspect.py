"""``inspect --json``: exactly docs/format.md §12, checked against what pi computed for its samples."""

from __future__ import annotations

import json
import sys
import threading
from typing import Any

import orjson
import pytest
from django.core.management.base import CommandError
from support.pi_expected import SAMPLE_KEYS, preview, summary

KEYS = ["sessionId", "version", "cwd", "parentSession", "leaf", "name", "labels", "path", "context", "tree", "skipped"]


def _inspect(pitree, *args: str) -> dict[str, Any]:
    text = pitree("inspect", *args, "--json")
    assert text.endswith("\n") and text.count("\n") == 1
    return json.loads(text)


def test_the_samples_are_the_seven_expected_keys(expected) -> None:
    assert [key for key in expected if not key.startswith("__")] == SAMPLE_KEYS


@pytest.mark.parametrize("key", SAMPLE_KEYS)
def test_inspect_matches_what_pi_computed(pitree, sample, expected, key: str) -> None:
    want = expected[key]
    got = _inspect(pitree, str(sample(key)))
    assert list(got) == KEYS
    header = want["header"]
    assert got["sessionId"] == want["sessionId"] == header["id"]
    assert got["version"] == header.get("version", 1)
    assert got["cwd"] == header["cwd"]
    assert got["parentSession"] == header.get("parentSession")
    assert got["leaf"] == want["leafIdAfterLoad"]
    assert got["name"] == want["sessionName"]
    assert got["labels"] == want["labels"]
    assert got["path"] == want["branchIdsRootToLeaf"]
    assert got["tree"] == want["tree"]
    context = got["context"]
    assert list(context) == ["thinkingLevel", "model", "messages"]
    assert context["thinkingLevel"] == want["context"]["thinkingLevel"]
    assert context["model"] == want["context"]["model"]
    assert [summary(m) for m in context["messages"]] == want["context"]["messages"]
    for item in got["skipped"]:
        assert list(item) == ["line", "reason"]


def test_inspect_reports_skipped_lines_with_line_numbers(pitree, sample) -> None:
    got = _inspect(pitree, str(sample("06-corrupt-tail.after-append")))
    assert [item["line"] for item in got["skipped"]] == [2, 4, 6]
    assert all(isinstance(item["reason"], str) and item["reason"] for item in got["skipped"])


def test_inspect_reports_a_torn_last_line(pitree, sample) -> None:
    got = _inspect(pitree, str(sample("06-corrupt-tail.input")))
    assert got["skipped"][-1]["line"] == 6
    assert "torn" in got["skipped"][-1]["reason"]
    assert got["leaf"] == "b2b2b2b2"


@pytest.mark.parametrize("key", ["02-tree-branches", "03-fork-of-02", "04-compaction"])
def test_inspect_leaf_gives_every_leaf_context_pi_computed(pitree, sample, expected, key: str) -> None:
    path = str(sample(key))
    for leaf, want in expected[key]["leafContexts"].items():
        got = _inspect(pitree, path, "--leaf", leaf)
        assert got["leaf"] == leaf
        assert got["path"][-1] == leaf
        context = got["context"]
        assert context["thinkingLevel"] == want["thinkingLevel"]
        assert context["model"] == want["model"]
        assert [f"{m['role']}: {preview(m)}" for m in context["messages"]] == want["messages"]
        # The file's own leaf does not change what the rest of the document says.
        assert got["tree"] == expected[key]["tree"]


def test_inspect_of_a_v1_file_says_version_1_and_migrates_in_memory(pitree, sample, expected) -> None:
    path = sample("05-legacy-v1.input")
    before = path.read_bytes()
    got = _inspect(pitree, str(path))
    migrated = expected["05-legacy-v1.migrated"]
    assert got["version"] == 1
    assert got["sessionId"] == migrated["sessionId"]
    assert len(got["path"]) == len(migrated["branchIdsRootToLeaf"])
    assert got["leaf"] == got["path"][-1]
    want_messages = migrated["context"]["messages"]
    assert [summary(m) for m in got["context"]["messages"]] == want_messages
    assert got["context"]["thinkingLevel"] == migrated["context"]["thinkingLevel"]
    assert path.read_bytes() == before


def test_inspect_by_session_id_prefix(pitree, sample, expected) -> None:
    sample("01-linear")
    sample("02-tree-branches")
    got = _inspect(pitree, "019cadd4-cb")
    assert got["sessionId"] == expected["02-tree-branches"]["sessionId"]


def test_inspect_header_without_version_or_parent(pitree, write_session) -> None:
    header = {"type": "session", "id": "abc", "timestamp": "2026-03-02T09:00:00.000Z", "cwd": "/x"}
    path = write_session(
        "v1.jsonl", [{"type": "message", "message": {"role": "user", "content": "hi"}, "id": "ignored"}], header=header
    )
    got = _inspect(pitree, str(path))
    assert got["version"] == 1
    assert got["parentSession"] is None
    assert got["name"] is None
    assert got["labels"] == {}


def test_inspect_unknown_leaf_is_an_error(pitree, sample) -> None:
    with pytest.raises(CommandError, match="nope"):
        pitree("inspect", str(sample("01-linear")), "--json", "--leaf", "nope")


def test_inspect_without_json_prints_asummary(pitree, sample) -> None:
    text = pitree("inspect", str(sample("02-tree-branches")))
    assert "leaf     750a4556" in text
    assert "Title validation experiments" in text


def _deep_json(text: str) -> Any:
    """json.loads of a very deep document: more recursion and a bigger C stack, in a thread."""
    result: list[Any] = []
    old_limit = sys.getrecursionlimit()
    old_stack = threading.stack_size(512 * 1024 * 1024)
    sys.setrecursionlimit(100_000)
    try:
        thread = threading.Thread(target=lambda: result.append(json.loads(text)))
        thread.start()
        thread.join()
    finally:
        sys.setrecursionlimit(old_limit)
        threading.stack_size(old_stack)
    return result[0]


def test_inspect_a_3000_deep_chain(pitree, chain) -> None:
    path = chain(3000)
    text = pitree("inspect", str(path), "--json")
    with pytest.raises(orjson.JSONDecodeError):
        orjson.loads(text)  # the reason the tree needs its own writer
    got = _deep_json(text)
    assert list(got) == KEYS
    assert len(got["path"]) == 3000
    assert got["leaf"] == "e0002999"
    node, depth = got["tree"], 0
    while node:
        assert len(node) == 1
        assert node[0]["id"] == f"e{depth:07d}"
        node, depth = node[0]["children"], depth + 1
    assert depth == 3000
    assert len(got["context"]["messages"]) == 3000


def test_inspect_of_a_v2_file(pitree, write_session) -> None:
    header = {"type": "session", "version": 2, "id": "v2-session", "timestamp": "2026-03-02T09:00:00.000Z", "cwd": "/x"}
    path = write_session(
        "v2.jsonl",
        [
            {"type": "message", "id": "u1", "message": {"role": "user", "content": "hi", "timestamp": 1}},
            {
                "type": "message",
                "id": "h1",
                "message": {
                    "role": "hookMessage",
                    "customType": "ext",
                    "content": "note",
                    "display": True,
                    "timestamp": 2,
                },
            },
        ],
        header=header,
    )
    got = _inspect(pitree, str(path))
    assert got["version"] == 2
    assert got["path"] == ["u1", "h1"]
    assert [m["role"] for m in got["context"]["messages"]] == ["user", "custom"]
    before = path.read_bytes()
    with pytest.raises(CommandError, match="version 2 session is read-only"):
        pitree("label", str(path), "u1", "x")
    assert path.read_bytes() == before


def test_json_keeps_del_and_c1_controls_as_escapes(pitree, tmp_path) -> None:
    """A terminal acts on DEL and the C1 controls, so the text commands replace them; JSON output
    escapes them instead, and decodes to the ids and texts the file holds."""
    path = tmp_path / "controls.jsonl"
    header = {"type": "session", "version": 3, "id": "c1test", "timestamp": "2026-03-02T09:15:00.000Z", "cwd": "/x"}
    message = {"role": "user", "content": "del\x7f c1\x9b nel\x85", "timestamp": 1}
    entry = {"type": "message", "id": "u\x85", "parentId": None, "timestamp": "2026-03-02T09:15:01.000Z"}
    path.write_bytes(orjson.dumps(header) + b"\n" + orjson.dumps(entry | {"message": message}) + b"\n")
    text = pitree("inspect", str(path), "--json")
    assert not any("\x7f" <= char <= "\x9f" for char in text)
    got = json.loads(text)
    assert got["leaf"] == "u\x85" and got["path"] == ["u\x85"]
    assert got["context"]["messages"][0]["content"] == "del\x7f c1\x9b nel\x85"
    assert _inspect(pitree, str(path), "--leaf", got["leaf"])["leaf"] == "u\x85"
