"""pitree reads pi's own sample files exactly as pi 1.6.0 did (``expected.json``, docs/format.md §13)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from support.pi_expected import SAMPLE_KEYS, preview, summary

from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles import tree
from sessions_app.sessionfiles.catalog import Catalog, info_fields
from sessions_app.sessionfiles.errors import ReadOnlySession
from sessions_app.sessionfiles.fork import fork_session
from sessions_app.sessionfiles.instants import iso_to_ms
from sessions_app.sessionfiles.store import SessionFile, clear_cache

V3_SAMPLES = SAMPLE_KEYS
LIST_FOLDER = "--home-alice-projects-todo-api--"


def ids(session: SessionFile, rows: list[int]) -> list[str]:
    return [session.index.ids[row] for row in rows]


def tree_leaves(session: SessionFile) -> list[str]:
    index = session.index
    return [index.ids[row] for row in range(len(index)) if index.is_node(row) and not index.children(row)]


def test_preview_rule_reproduces_a_recorded_cut() -> None:
    message = {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "I should read app.py first."},
            {"type": "text", "text": "Let me look at the file."},
            {"type": "toolCall", "id": "t", "name": "read", "arguments": {}},
        ],
    }
    assert preview(message) == "I should read app.py first. | Let me look at the file. | [toolCall rea\u2026"
    assert preview({"role": "user", "content": "x" * 70}) == "x" * 70


@pytest.mark.parametrize("key", V3_SAMPLES)
def test_sample_reads_as_pi_read_it(key: str, samples_dir: Path, expected: dict[str, Any]) -> None:
    path = samples_dir / f"{key}.jsonl"
    before = path.read_bytes()
    session = SessionFile(path, fsync=False)
    want = expected[key]
    index = session.index

    assert session.session_id == want["sessionId"]
    assert session.header == want["header"]
    assert list(session.header) == list(want["header"])
    assert session.leaf_id == want["leafIdAfterLoad"]
    assert ids(session, session.path_rows()) == want["branchIdsRootToLeaf"]
    assert index.node_count == want["entryCount"]
    assert {target: text for target, (text, _) in index.labels.items()} == want["labels"]
    assert index.name == want["sessionName"]
    assert tree.tree(index) == want["tree"]

    context = session.context()
    assert context.entry_ids == want["contextEntryIds"]
    assert context.thinking_level == want["context"]["thinkingLevel"]
    assert context.model == want["context"]["model"]
    assert [summary(m) for m in context.messages] == want["context"]["messages"]

    # Every branch: the context built at each tree leaf, not only at the file's leaf.
    leaves = tree_leaves(session)
    assert sorted(leaves) == sorted(want["leafContexts"])
    for leaf_id in leaves:
        at_leaf = session.context(leaf_id)
        want_leaf = want["leafContexts"][leaf_id]
        assert at_leaf.thinking_level == want_leaf["thinkingLevel"], leaf_id
        assert at_leaf.model == want_leaf["model"], leaf_id
        assert [f"{m['role']}: {preview(m)}" for m in at_leaf.messages] == want_leaf["messages"], leaf_id

    assert path.read_bytes() == before


@pytest.mark.parametrize("key", [k for k in V3_SAMPLES if not k.startswith("06")])
def test_clean_samples_report_nothing(key: str, samples_dir: Path) -> None:
    session = SessionFile(samples_dir / f"{key}.jsonl", fsync=False)
    assert session.index.skipped() == []
    assert not session.index.read_only


def test_corrupt_sample_reports_its_bad_lines(samples_dir: Path) -> None:
    session = SessionFile(samples_dir / "06-corrupt-tail.after-append.jsonl", fsync=False)
    assert [(line, reason) for line, reason in session.index.skipped()] == [
        (2, "skipped: blank line"),
        (4, "skipped: not valid JSON"),
        (6, "skipped: not valid JSON"),
    ]


def test_context_messages_are_the_stored_messages(samples_dir: Path) -> None:
    """Beyond previews: a stored message reaches the context unchanged, custom_message as pi shapes it."""
    session = SessionFile(samples_dir / "02-tree-branches.jsonl", fsync=False)
    context = session.context("de4f0d3a")
    stored = session.entry("37bad775")["message"]
    assert stored in context.messages
    custom = next(m for m in context.messages if m["role"] == "custom")
    assert custom == {
        "role": "custom",
        "customType": "todo-ext/reminder",
        "content": "Reminder: run the tests before committing.",
        "display": True,
        "details": {"source": "todo-ext"},
        "timestamp": iso_to_ms("2026-03-02T09:16:01.500Z"),
    }
    branch = next(m for m in context.messages if m["role"] == "branchSummary")
    assert branch["fromId"] == "0f649aff"
    assert branch["timestamp"] == iso_to_ms("2026-03-02T09:15:52.500Z")


# ---------------------------------------------------------------------------------------------- listing


def _lay_out_list_folder(root: Path, samples_dir: Path, expected: dict[str, Any], legacy: str) -> dict[str, str]:
    """The folder pi listed for ``__list``: every sample under its original file name."""
    folder = root / LIST_FOLDER
    folder.mkdir(parents=True)
    sources = {key: key for key in V3_SAMPLES}
    sources["05-legacy-v1.migrated"] = f"05-legacy-v1.{legacy}"
    names = {}
    for key, source in sources.items():
        name = expected[key]["originalFileName"]
        shutil.copyfile(samples_dir / f"{source}.jsonl", folder / name)
        names[key] = name
    return names


@pytest.mark.parametrize("legacy", ["input", "migrated"])
def test_catalog_lists_like_pi(tmp_path: Path, samples_dir: Path, expected: dict[str, Any], legacy: str) -> None:
    names = _lay_out_list_folder(tmp_path / "sessions", samples_dir, expected, legacy)
    catalog = Catalog(tmp_path / "sessions")

    infos = catalog.sessions()

    assert catalog.problems == {}
    got = []
    for info in infos:
        fields = info_fields(info)
        parent = catalog.parent_of(info, infos)
        parent_path = fields["parentSessionPath"]
        got.append(
            {
                "file": Path(fields["path"]).name,
                "id": fields["id"],
                "name": fields["name"],
                "firstMessage": fields["firstMessage"],
                "messageCount": fields["messageCount"],
                "parentSessionFile": Path(parent_path).name if parent_path else None,
                "created": fields["created"],
                "modified": fields["modified"],
            }
        )
        # The parent path names another machine's folder (/tmp/pi-gen/...): lineage matches by file name.
        assert (parent.path.name if parent else None) == got[-1]["parentSessionFile"]
        assert fields["cwd"] == "/home/alice/projects/todo-api"
    assert got == expected["__list"]  # same fields, same order (newest activity first)

    by_name = {info.path.name: info for info in infos}
    source = by_name[names["02-tree-branches"]]
    fork = by_name[names["03-fork-of-02"]]
    assert [f.path for f in catalog.forks_of(source, infos)] == [fork.path]
    assert catalog.parent_of(fork, infos) == source
    forest = catalog.forest(infos)
    depth = {info.path.name: d for info, d in forest}
    assert depth[names["03-fork-of-02"]] == 1
    assert [info.path.name for info, _ in forest].index(names["03-fork-of-02"]) == [
        info.path.name for info, _ in forest
    ].index(names["02-tree-branches"]) + 1
    assert sum(1 for _, d in forest if d == 0) == len(infos) - 1


# ---------------------------------------------------------------------------------------------- v1 file


@pytest.fixture
def legacy(tmp_path: Path, samples_dir: Path) -> Path:
    path = tmp_path / "legacy" / "2025-11-20T08-00-00-000Z_5f0c2a9e-1b7d-4c1e-9a43-2d8f6e1b0c77.jsonl"
    path.parent.mkdir()
    shutil.copyfile(samples_dir / "05-legacy-v1.input.jsonl", path)
    return path


def test_v1_file_reads_like_pis_rewrite(legacy: Path, samples_dir: Path, expected: dict[str, Any]) -> None:
    before = legacy.read_bytes()
    session = SessionFile(legacy, fsync=False)
    pi_file = SessionFile(samples_dir / "05-legacy-v1.migrated.jsonl", fsync=False)
    want = expected["05-legacy-v1.migrated"]

    assert session.index.version == 1 and session.index.read_only
    assert session.index.skipped() == []
    assert session.header == pi_file.header and list(session.header) == list(pi_file.header)

    ours = session.path_entries()
    theirs = pi_file.path_entries()
    assert len(ours) == len(theirs) == len(want["branchIdsRootToLeaf"])
    assert all(re.fullmatch(r"[0-9a-f]{8}", e["id"]) for e in ours)
    assert len({e["id"] for e in ours}) == len(ours)
    # Same entries as pi's rewrite once ids are mapped (same keys, same order, same values).
    to_pi = {mine["id"]: pis["id"] for mine, pis in zip(ours, theirs)}
    to_pi[None] = None
    for mine, pis in zip(ours, theirs):
        mapped = {**mine, "id": to_pi[mine["id"]], "parentId": to_pi[mine["parentId"]]}
        if "firstKeptEntryId" in mine:
            mapped["firstKeptEntryId"] = to_pi[mine["firstKeptEntryId"]]
        assert list(mapped) == list(pis)
        assert mapped == pis

    compaction = next(e for e in ours if e["type"] == "compaction")
    kept = session.entry(compaction["firstKeptEntryId"])
    assert kept["message"]["content"] == [{"type": "text", "text": "Update the migrations"}]

    context = session.context()
    assert [to_pi[i] for i in context.entry_ids] == want["contextEntryIds"]
    assert [summary(m) for m in context.messages] == want["context"]["messages"]
    assert (context.thinking_level, context.model) == (want["context"]["thinkingLevel"], want["context"]["model"])

    # pitree's ids are derived from the file, so they are the same on every load and in every process.
    first_ids = [e["id"] for e in ours]
    clear_cache()
    assert [e["id"] for e in SessionFile.open(legacy).path_entries()] == first_ids
    assert [e["id"] for e in SessionFile(legacy).path_entries()] == first_ids
    assert legacy.read_bytes() == before


def test_v1_file_is_read_only_and_forks_into_v3(legacy: Path) -> None:
    before = legacy.read_bytes()
    session = SessionFile(legacy, fsync=False)
    leaf = session.leaf_id
    assert leaf is not None

    with pytest.raises(ReadOnlySession, match="fork it"):
        session.append(E.user_message("more"))
    with pytest.raises(ReadOnlySession):
        session.set_label(leaf, "x")
    with pytest.raises(ReadOnlySession):
        session.rename("x")
    with pytest.raises(ReadOnlySession):
        session.navigate(None)
    assert legacy.read_bytes() == before

    fork = fork_session(session, fsync=False)
    assert fork.path.parent == legacy.parent and fork.path != legacy
    assert fork.index.version == 3 and not fork.index.read_only
    assert fork.header["version"] == 3
    assert fork.parent_session == str(legacy.absolute())
    assert fork.index.skipped() == []
    # The copy keeps pitree's ids, so the branch and context are the same as the source's.
    assert [e["id"] for e in fork.path_entries()] == [e["id"] for e in session.path_entries()]
    assert fork.context().as_json() == session.context().as_json()

    added = fork.append(E.user_message("continue in v3"))
    reopened = SessionFile(fork.path)
    assert reopened.leaf_id == added["id"]
    assert reopened.context().messages[-1]["content"] == "continue in v3"
    assert legacy.read_bytes() == before


# ---------------------------------------------------------------------------------------------- sample 06


def test_torn_sample_takes_two_appends_like_pi(sample_copy: Any, samples_dir: Path) -> None:
    path = sample_copy("06-corrupt-tail.input")
    original = path.read_bytes()
    assert not original.endswith(b"\n")
    session = SessionFile(path, fsync=False)
    assert session.leaf_id == "b2b2b2b2"
    assert session.index.skipped() == [
        (2, "skipped: blank line"),
        (4, "skipped: not valid JSON"),
        (6, "unterminated last line (torn write): not read"),
    ]
    assert path.read_bytes() == original  # reading repairs nothing

    user = session.append(E.user_message("still there?"))
    reply = session.append(
        E.assistant_message("Yes.", provider="anthropic", model="claude-sonnet-4-5", api="anthropic-messages")
    )

    data = path.read_bytes()
    assert data.startswith(original + b"\n")  # one "\n" first: the partial line stays a line of its own
    pi_after = SessionFile(samples_dir / "06-corrupt-tail.after-append.jsonl", fsync=False)
    reopened = SessionFile(path)
    assert user["parentId"] == "b2b2b2b2"  # the last valid entry, as in pi's file
    for session_view in (session, reopened):
        assert session_view.index.skipped() == pi_after.index.skipped()
        path_ids = [session_view.index.ids[r] for r in session_view.path_rows()]
        assert path_ids == ["a1a1a1a1", "b2b2b2b2", user["id"], reply["id"]]
        assert [summary(m) for m in session_view.context().messages] == [
            summary(m) for m in pi_after.context().messages
        ]
        assert session_view.index.node_count == pi_after.index.node_count == 4
    # Line for line the same shape as pi's file: the same dead lines, then the two new entries.
    ours, theirs = data.split(b"\n"), (samples_dir / "06-corrupt-tail.after-append.jsonl").read_bytes().split(b"\n")
    assert ours[:6] == theirs[:6] and len(ours) == len(theirs)
