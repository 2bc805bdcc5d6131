"""The pi harness must reproduce what pi computed for its own sample files.

Before the harness is trusted to judge the files pitree writes, it has to agree with
expected.json, which was recorded by running pi 1.6.0 itself over these samples
(see docs/format.md §13). If these tests fail, the harness is wrong, not pitree.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.pi_expected import SAMPLE_KEYS, preview, summary


def _sample_keys(expected: dict[str, Any]) -> list[str]:
    """Per-file entries of expected.json; keys starting with "__" are cross-file data."""
    return [key for key in expected if not key.startswith("__")]


@pytest.fixture(scope="module")
def pi_results(pi: Any, pi_samples_dir: Path, pi_expected: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Open every sample once (one node process) and index the results by sample key."""
    keys = _sample_keys(pi_expected)
    paths = [pi_samples_dir / f"{key}.jsonl" for key in keys]
    before = {path: path.read_bytes() for path in paths}
    results = pi(paths, leaf_contexts=True)
    # The harness opens copies: pi's repair/migration writes must never reach our files.
    assert {path: path.read_bytes() for path in paths} == before
    return dict(zip(keys, results))


def test_expected_json_lists_the_samples(pi_expected: dict[str, Any], pi_samples_dir: Path) -> None:
    keys = _sample_keys(pi_expected)
    assert len(keys) == 7
    for key in keys:
        assert (pi_samples_dir / f"{key}.jsonl").is_file(), key


@pytest.mark.processes
@pytest.mark.parametrize(
    "key",
    SAMPLE_KEYS,
)
def test_pi_agrees_with_expected(key: str, pi_results: dict[str, dict[str, Any]], pi_expected: dict[str, Any]) -> None:
    got = pi_results[key]
    want = pi_expected[key]
    assert got["error"] is None
    assert got["sessionId"] == want["sessionId"]
    assert got["header"] == want["header"]
    assert got["leafId"] == want["leafIdAfterLoad"]
    assert got["branchIds"] == want["branchIdsRootToLeaf"]
    assert got["entryCount"] == want["entryCount"]
    assert got["labels"] == want["labels"]
    assert got["name"] == want["sessionName"]
    assert got["contextEntryIds"] == want["contextEntryIds"]
    assert got["tree"] == want["tree"]

    context = got["context"]
    assert context["thinkingLevel"] == want["context"]["thinkingLevel"]
    assert context["model"] == want["context"]["model"]
    assert [m["role"] for m in context["messages"]] == [m["role"] for m in want["context"]["messages"]]
    assert [summary(m) for m in context["messages"]] == want["context"]["messages"]

    # Every branch, not only the one the file reopens on (e.g. both branches of 02).
    assert set(got["leafContexts"]) == set(want["leafContexts"])
    for leaf_id, want_leaf in want["leafContexts"].items():
        got_leaf = got["leafContexts"][leaf_id]
        assert got_leaf["thinkingLevel"] == want_leaf["thinkingLevel"], leaf_id
        assert got_leaf["model"] == want_leaf["model"], leaf_id
        lines = [f"{m['role']}: {preview(m)}" for m in got_leaf["messages"]]
        assert lines == want_leaf["messages"], leaf_id

    # pi's own well-formed v3 files need no repair or migration on open.
    assert got["fileChanged"] is False


@pytest.mark.processes
def test_pi_repairs_and_migrates_only_the_copy(pi: Any, pi_samples_dir: Path, pi_expected: dict[str, Any]) -> None:
    corrupt = pi_samples_dir / "06-corrupt-tail.input.jsonl"
    legacy = pi_samples_dir / "05-legacy-v1.input.jsonl"
    before = {corrupt: corrupt.read_bytes(), legacy: legacy.read_bytes()}
    got_corrupt, got_legacy = pi([corrupt, legacy])

    # Garbage and the truncated last line are skipped; pi appends the missing "\n".
    assert got_corrupt["error"] is None
    assert got_corrupt["leafId"] == "b2b2b2b2"
    # __corruptLoaderEntryCount counts what pi's loader returned, header included.
    assert got_corrupt["entryCount"] + 1 == pi_expected["__corruptLoaderEntryCount"]
    assert got_corrupt["fileChanged"] is True

    # v1 is migrated (fresh random ids) to the same shape as the recorded .migrated file.
    want = pi_expected["05-legacy-v1.migrated"]
    assert got_legacy["error"] is None
    assert got_legacy["fileChanged"] is True
    assert got_legacy["header"]["version"] == 3
    assert got_legacy["sessionId"] == want["sessionId"]
    assert got_legacy["entryCount"] == want["entryCount"]
    assert [summary(m) for m in got_legacy["context"]["messages"]] == want["context"]["messages"]

    assert {corrupt: corrupt.read_bytes(), legacy: legacy.read_bytes()} == before


@pytest.mark.processes
def test_pi_errors_are_reported_per_file(pi: Any, tmp_path: Path, pi_samples_dir: Path) -> None:
    not_a_session = tmp_path / "not-a-session.jsonl"
    not_a_session.write_text('{"type":"message","id":"a","parentId":null}\n', encoding="utf-8")
    missing = tmp_path / "missing.jsonl"
    ok = pi_samples_dir / "01-linear.jsonl"

    got = pi([not_a_session, missing, ok])

    assert [r["file"] for r in got] == [str(not_a_session), str(missing), str(ok)]
    assert "not a valid pi session" in got[0]["error"]
    assert "no such file" in got[1]["error"]
    assert got[2]["error"] is None
    assert not missing.exists()


@pytest.mark.processes
def test_parent_cycle_is_an_error_not_a_hang(pi: Any, tmp_path: Path) -> None:
    path = tmp_path / "cycle.jsonl"
    lines = [
        {"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/"},
        {"type": "custom", "customType": "x", "id": "a", "parentId": "b", "timestamp": "2026-01-01T00:00:01.000Z"},
        {"type": "custom", "customType": "x", "id": "b", "parentId": "a", "timestamp": "2026-01-01T00:00:02.000Z"},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")

    (got,) = pi([path])

    assert "cycle" in got["error"]


@pytest.mark.processes
def test_deep_linear_session_tree(pi: Any, tmp_path: Path) -> None:
    """A long chat nests one tree level per entry; the harness must cope (flat transport)."""
    count = 3000
    lines = [{"type": "session", "version": 3, "id": "deep", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/"}]
    parent = None
    for index in range(count):
        entry_id = f"{index:08x}"
        lines.append(
            {
                "type": "message",
                "id": entry_id,
                "parentId": parent,
                "timestamp": "2026-01-01T00:00:01.000Z",
                "message": {"role": "user", "content": f"m{index}", "timestamp": 1767225601000},
            }
        )
        parent = entry_id
    path = tmp_path / "deep.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")

    (got,) = pi([path])

    assert got["error"] is None
    assert len(got["branchIds"]) == count
    assert got["treeRoots"] == ["00000000"]
    assert [node["id"] for node in got["treeNodes"]] == got["branchIds"]
    depth, node = 1, got["tree"][0]
    while node["children"]:
        (node,) = node["children"]
        depth += 1
    assert depth == count


@pytest.mark.processes
def test_pi_treats_a_harness_leaf_line_as_an_unknown_entry(pi: Any, tmp_path: Path, pi_samples_dir: Path) -> None:
    """Pin the known difference of docs/format.md §11.3: pi's coding-agent ignores a `leaf` line's
    targetId (it reads it as an entry of unknown type), so a file whose last line is a `leaf` entry
    opens in pi at the marker, on the branch the user left."""
    source = pi_samples_dir / "02-tree-branches.jsonl"
    path = tmp_path / "with-leaf-line.jsonl"
    leaf_line = {
        "type": "leaf",
        "id": "1eaf0001",
        "parentId": "750a4556",
        "timestamp": "2026-03-02T09:20:00.000Z",
        "targetId": "de4f0d3a",
    }
    path.write_bytes(source.read_bytes() + (json.dumps(leaf_line) + "\n").encode())

    (got,) = pi([path])

    assert got["error"] is None
    assert got["leafId"] == "1eaf0001"  # the line's own id, not its targetId
    assert got["branchIds"][-2:] == ["750a4556", "1eaf0001"]  # follows parentId
    assert "de4f0d3a" not in got["branchIds"]
    assert [m["role"] for m in got["context"]["messages"]] == ["user", "assistant"] * 4
