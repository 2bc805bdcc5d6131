"""Files pitree writes open in pi 1.6.0 exactly as pitree reads them.

Each scenario builds a session file with pitree's store, then pi's own SessionManager (the ``pi``
fixture, one node process for all files) opens it. pi's leaf, branch, context (full messages), tree,
labels and name must equal pitree's, and pi must not have needed to repair the file.

The one documented difference (docs/format.md §11.3): pi does not know pitree's ``leaf`` entries. It treats
them as unknown entries, so they appear in pi's tree, and a file whose *last* line is a ``leaf`` entry
opens in pi on the branch the user left. Those cases are tested for exactly that.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles import tree
from sessions_app.sessionfiles.context import convert_to_llm
from sessions_app.sessionfiles.fork import create_session, fork_session, tail_fork
from sessions_app.sessionfiles.store import SessionFile, clear_cache

pytestmark = pytest.mark.processes  # pi's own code, run by node

CWD = "/home/alice/projects/todo-api"
USAGE = {
    "input": 1200,
    "output": 180,
    "cacheRead": 0,
    "cacheWrite": 300,
    "totalTokens": 1680,
    "cost": {"input": 0.0036, "output": 0.0027, "cacheRead": 0, "cacheWrite": 0.001125, "total": 0.007425},
}


def _reply(text: str, model: str = "claude-sonnet-4-5") -> E.Draft:
    return E.assistant_message(text, provider="anthropic", model=model, api="anthropic-messages", usage=USAGE)


def _tool_turn(session: SessionFile) -> None:
    session.append(
        E.message(
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "Read it first.", "thinkingSignature": "sig"},
                    {"type": "text", "text": "Let me look."},
                    {"type": "toolCall", "id": "toolu_01", "name": "read", "arguments": {"path": "app.py"}},
                ],
                "api": "anthropic-messages",
                "provider": "anthropic",
                "model": "claude-sonnet-4-5",
                "usage": USAGE,
                "stopReason": "toolUse",
                "timestamp": 1772442910500,
            }
        )
    )
    session.append(
        E.message(
            {
                "role": "toolResult",
                "toolCallId": "toolu_01",
                "toolName": "read",
                "content": [{"type": "text", "text": "from flask import Flask\n"}],
                "isError": False,
                "timestamp": 1772442913500,
            }
        )
    )


# Each scenario writes one file with pitree's store and returns its SessionFile. Files holding pitree
# ``leaf`` entries (navigate) show those in pi's tree as unknown entries; the comparison allows for that.


def linear_chat(root: Path) -> SessionFile:
    session = create_session(root, CWD, fsync=False)
    session.append(E.model_change("anthropic", "claude-sonnet-4-5"))
    session.append(E.thinking_level_change("medium"))
    session.append(E.user_message("List the endpoints in app.py"))
    _tool_turn(session)
    session.append(_reply("There are two endpoints."))
    session.append(
        E.message(
            {
                "role": "bashExecution",
                "command": "pytest -q",
                "output": "3 passed\n",
                "exitCode": 0,
                "cancelled": False,
                "truncated": False,
                "timestamp": 1772442919500,
            }
        )
    )
    session.append(E.user_message([{"type": "text", "text": "Add a DELETE endpoint"}]))
    session.append(_reply("Done.", model="claude-opus-4-5"))
    return session


def explicit_parent_branches(root: Path) -> SessionFile:
    """Two tabs answering on the same branch: siblings, by naming the parent explicitly."""
    session = create_session(root, CWD, fsync=False)
    u1 = session.append(E.user_message("Write a validator"))
    a1 = session.append(_reply("Here it is (regex)."), parent=u1["id"])
    u2 = session.append(E.user_message("Limit to 80 chars"), parent=a1["id"])
    session.append(_reply("Limited."), parent=u2["id"])
    u2b = session.append(E.user_message("Use pydantic instead"), parent=a1["id"])
    session.append(_reply("Switched to pydantic."), parent=u2b["id"])
    session.append(E.user_message("Another root"), parent=None)
    session.append(E.user_message("Back on the regex branch"), parent=u2["id"])
    # Written last but older: siblings are ordered by timestamp (docs/format.md §4.2), not by file order.
    session.append(
        E.Draft("custom", {"customType": "imported", "data": {}}, "2020-01-01T00:00:00.000Z"), parent=a1["id"]
    )
    session.navigate(None)
    session.append(E.user_message("Back on the regex branch, again"), parent=u2["id"])
    return session


def navigate_then_append(root: Path) -> SessionFile:
    session = create_session(root, CWD, fsync=False)
    u1 = session.append(E.user_message("one"))
    a1 = session.append(_reply("reply one"))
    session.append(E.user_message("two"))
    session.append(_reply("reply two"))
    session.navigate(a1["id"])
    session.append(E.user_message("two, again"))
    session.append(_reply("reply two, again"))
    session.navigate(u1["id"])
    session.navigate(None)
    session.append(E.user_message("a fresh start"))
    return session


def labels_and_names(root: Path) -> SessionFile:
    session = create_session(root, CWD, name="  first\nname ", fsync=False)
    u1 = session.append(E.user_message("label me"))
    a1 = session.append(_reply("ok"))
    session.set_label(u1["id"], "start")
    session.set_label(a1["id"], "answer")
    session.set_label(a1["id"], None)  # cleared: the label key is left out
    session.set_label(u1["id"], "start-renamed")
    session.append(E.user_message("more"), parent=u1["id"])
    session.set_label(a1["id"], "answer-again", parent=a1["id"])
    session.rename("  Todo API endpoints\n review ")
    session.rename("Line\r\nbreaks\rand\n\nmore\n")
    return session


def cleared_name(root: Path) -> SessionFile:
    session = create_session(root, CWD, name="named", fsync=False)
    session.append(E.user_message("hello"))
    session.rename("")
    return session


def compaction(root: Path) -> SessionFile:
    session = create_session(root, CWD, fsync=False)
    session.append(E.model_change("anthropic", "claude-sonnet-4-5"))
    ids = []
    for turn in range(4):
        ids.append(session.append(E.user_message(f"turn {turn}"))["id"])
        session.append(_reply(f"answer {turn}"))
    session.compact(
        "## Goal\nA todo API.", ids[2], 48213, details={"readFiles": ["app.py"], "modifiedFiles": []}, usage=USAGE
    )
    session.append(E.user_message("after the compaction"))
    session.append(E.thinking_level_change("high"))
    session.append(_reply("fine", model="claude-opus-4-5"))
    session.compact("second summary", ids[3], 9000)  # the latest one wins
    session.append(E.user_message("after both"))
    return session


def branch_summary(root: Path) -> SessionFile:
    session = create_session(root, CWD, fsync=False)
    session.append(E.user_message("validate titles"))
    a1 = session.append(_reply("regex"))
    session.append(E.user_message("80 chars"))
    session.append(_reply("done"))
    summary = session.branch_summary(
        a1["id"], "Tried an 80-char limit.", details={"readFiles": [], "modifiedFiles": ["v.py"]}
    )
    session.set_label(summary["id"], "regex-approach")
    session.append(E.user_message("empty titles only"))
    session.append(_reply("ok"))
    session.branch_summary(None, "Everything so far.")  # back to before the first entry
    session.append(E.user_message("new root after a summary"))
    return session


def fork_of_a_tree(root: Path) -> SessionFile:
    source = explicit_parent_branches(root)
    index = source.index
    path_ids = [index.ids[row] for row in source.path_rows()]
    other_branch = next(i for i in index.ids if i not in path_ids and index.row(i) is not None)
    source.set_label(path_ids[2], "on-path", parent=path_ids[-1])
    source.set_label(path_ids[0], "first", parent=path_ids[-1])
    source.set_label(path_ids[0], "first-relabelled")
    source.set_label(other_branch, "off-path")
    source.set_label(path_ids[1], "gone")
    source.set_label(path_ids[1], None)
    source.compact("summary before the fork", path_ids[1], 100)
    at = source.leaf_id
    forked = fork_session(source, at, fsync=False)
    forked.append(E.user_message("continue in the fork"))
    forked.append(_reply("continuing"))
    return forked


def tail_fork_of_a_long_chat(root: Path) -> SessionFile:
    """Only the last two turns, after a summary; the model and thinking level the dropped part chose."""
    source = linear_chat(root)
    source.append(E.thinking_level_change("medium"))
    for turn in range(3):
        source.append(E.user_message(f"question {turn}"))
        source.append(_reply(f"answer {turn}", model="claude-opus-4-5"))
    forked = tail_fork(source, source.leaf_id, 2, "The user asked about endpoints; all answered.", 1234, fsync=False)
    forked.append(E.user_message("and then?"))
    return forked


def titled_then_forked(root: Path) -> SessionFile:
    """A title chained below a first answer, in the reply's write (decided under the lock, as a reply
    stores one), then a fork of it named as a branch: the fork holds both names, its own last."""
    source = create_session(root, CWD, fsync=False)
    asked = source.append(E.user_message("How do I parse ISO dates?"))
    source.append(_reply("Use fromisoformat."), asked["id"], then=[lambda index: E.session_info("Parsing ISO dates")])
    return fork_session(source, source.leaf_id, fsync=False, name="Branch · Parsing ISO dates")


def custom_messages(root: Path) -> SessionFile:
    session = create_session(root, CWD, fsync=False)
    session.append(E.user_message("hi"))
    session.append(E.custom_message("todo-ext/reminder", "Run the tests.", True, {"source": "todo-ext"}))
    session.append(E.custom_message("todo-ext/hidden", [{"type": "text", "text": "hidden but sent"}], False))
    session.append(E.Draft("custom", {"customType": "todo-ext/state", "data": {"checked": 3}}))
    session.append(_reply("noted"))
    return session


def unusual_text(root: Path) -> SessionFile:
    session = create_session(root, CWD, name="Ünïcødé \u2028 name", fsync=False)
    session.append(E.user_message("line\u2028separator, next\u0085line, para\u2029graph, emoji \U0001f600, CJK 漢字"))
    session.append(_reply('quotes " and \\ backslash\ttab\x00nul\r\nCRLF \u00e9\u0301'))
    session.set_label(session.index.ids[0], "ラベル \u2028")
    session.append(E.user_message("\ufeffBOM-led and \u200b zero width"))
    return session


SCENARIOS: dict[str, Callable[[Path], SessionFile]] = {
    "linear_chat": linear_chat,
    "explicit_parent_branches": explicit_parent_branches,
    "navigate_then_append": navigate_then_append,
    "labels_and_names": labels_and_names,
    "cleared_name": cleared_name,
    "compaction": compaction,
    "branch_summary": branch_summary,
    "fork_of_a_tree": fork_of_a_tree,
    "tail_fork_of_a_long_chat": tail_fork_of_a_long_chat,
    "titled_then_forked": titled_then_forked,
    "custom_messages": custom_messages,
    "unusual_text": unusual_text,
}


@pytest.fixture(scope="module")
def opened(pi: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[SessionFile, dict[str, Any]]]:
    """Every scenario built by pitree, then opened by pi in one node run."""
    clear_cache()
    built = {}
    for name, build in SCENARIOS.items():
        built[name] = build(tmp_path_factory.mktemp(name))
    paths = [session.path for session in built.values()]
    before = {path: path.read_bytes() for path in paths}
    results = pi(paths, leaf_contexts=True)
    assert {path: path.read_bytes() for path in paths} == before
    clear_cache()
    # Read back through a fresh handle: what pitree gets from the file, not what the writer remembers.
    return {name: (SessionFile(session.path), result) for (name, session), result in zip(built.items(), results)}


def _without_leaf_markers(nodes: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """pi's tree minus the ``leaf`` entries (childless unknown entries to pi); returns the count removed."""
    removed = 0
    out = []
    for node in nodes:
        if node["type"] == "leaf":
            assert node["children"] == []
            removed += 1
            continue
        children, below = _without_leaf_markers(node["children"])
        removed += below
        out.append({**node, "children": children})
    return out, removed


def _path_ids(session: SessionFile, leaf: Any = None) -> list[str]:
    rows = session.path_rows() if leaf is None else session.path_rows(leaf)
    return [session.index.ids[row] for row in rows]


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_pi_reads_pitree_files_as_pitree_does(name: str, opened: dict[str, tuple[SessionFile, dict[str, Any]]]) -> None:
    session, got = opened[name]
    index = session.index
    assert got["error"] is None
    assert got["fileChanged"] is False  # pi needed no repair and no migration
    assert index.skipped() == []

    assert got["sessionId"] == session.session_id
    assert got["header"] == session.header
    assert got["leafId"] == session.leaf_id
    assert got["branchIds"] == _path_ids(session)
    context = session.context()
    assert got["context"] == context.as_json()  # full messages, settings included
    assert got["contextEntryIds"] == context.entry_ids
    assert got["labels"] == {target: text for target, (text, _) in index.labels.items()}
    assert got["name"] == index.name

    pi_tree, markers = _without_leaf_markers(got["tree"])
    assert markers == len(index.leaf_rows)
    assert got["entryCount"] == index.node_count + len(index.leaf_rows)
    assert pi_tree == tree.tree(index)

    # Every branch: pi's context at each tree leaf equals pitree's (leaf markers are pitree-only).
    real_leaves = {leaf: ctx for leaf, ctx in got["leafContexts"].items() if index.row(leaf) is not None}
    assert len(real_leaves) == len(got["leafContexts"]) - len(index.leaf_rows)
    assert real_leaves
    for leaf, pi_context in real_leaves.items():
        assert pi_context == session.context(leaf).as_json(), leaf


def test_scenarios_cover_what_they_claim(opened: dict[str, tuple[SessionFile, dict[str, Any]]]) -> None:
    """Guard against a scenario silently losing its point (e.g. a branch that never branched)."""
    branches, _ = opened["explicit_parent_branches"]
    assert len(branches.index.roots) == 2
    siblings = tree.tree(branches.index)[0]["children"][0]["children"]
    assert [node["type"] for node in siblings] == ["custom", "message", "message"]  # oldest first
    assert branches.index.leaf_rows  # the navigate(None) marker: pi sees an unknown entry
    assert len(opened["navigate_then_append"][0].index.leaf_rows) == 3
    labelled, got = opened["labels_and_names"]
    assert got["name"] == "Line breaks and more" and len(labelled.index.labels) == 2
    assert opened["cleared_name"][1]["name"] is None
    titled, got = opened["titled_then_forked"]
    assert got["name"] == "Branch · Parsing ISO dates"
    assert [titled.entry(i)["type"] for i in titled.index.ids[-2:]] == ["session_info", "session_info"]
    assert [m["role"] for m in opened["compaction"][1]["context"]["messages"]][:1] == ["compactionSummary"]
    assert opened["compaction"][1]["context"]["messages"][0]["summary"] == "second summary"
    summary_file, got = opened["branch_summary"]
    assert [m["role"] for m in got["context"]["messages"]] == ["branchSummary", "user"]
    regex_branch = got["leafContexts"][summary_file.index.ids[-3]]  # "ok", after the first summary and label
    assert [m["role"] for m in regex_branch["messages"]] == ["user", "assistant", "branchSummary", "user", "assistant"]
    fork, got = opened["fork_of_a_tree"]
    assert fork.parent_session is not None and got["header"]["parentSession"] == fork.parent_session
    relabels = [node for node in _flatten(got["tree"]) if node["type"] == "label"]
    assert len(relabels) == 2  # the live labels on the path, re-emitted; "off-path" and "gone" are not
    assert sorted(got["labels"].values()) == ["first-relabelled", "on-path"]
    custom_roles = [m["role"] for m in opened["custom_messages"][1]["context"]["messages"]]
    assert custom_roles == ["user", "custom", "custom", "assistant"]
    texts = [m["content"] for m in opened["unusual_text"][1]["context"]["messages"] if m["role"] == "user"]
    assert "\u2028" in texts[0] and "\u0085" in texts[0]


def _flatten(nodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out, stack = [], list(nodes)
    while stack:
        node = stack.pop()
        out.append(node)
        stack.extend(node["children"])
    return out


# ------------------------------------------------------------------------------------------------
# The documented difference: a file whose last line is a pitree ``leaf`` entry.


def _last_line_leaf_files(root: Path) -> dict[str, tuple[SessionFile, dict[str, str]]]:
    session = create_session(root / "older", CWD, fsync=False)
    u1 = session.append(E.user_message("one"))
    a1 = session.append(_reply("reply one"))
    u2 = session.append(E.user_message("two"))
    a2 = session.append(_reply("reply two"))
    marker = session.navigate(a1["id"])
    assert marker is not None
    ids = {"u1": u1["id"], "a1": a1["id"], "u2": u2["id"], "a2": a2["id"], "marker": marker["id"]}

    before_first = create_session(root / "none", CWD, fsync=False)
    b1 = before_first.append(E.user_message("only"))
    b2 = before_first.append(_reply("only reply"))
    none_marker = before_first.navigate(None)
    assert none_marker is not None
    return {
        "older": (session, ids),
        "none": (before_first, {"b1": b1["id"], "b2": b2["id"], "marker": none_marker["id"]}),
    }


def test_last_line_leaf_entry_opens_differently_in_pi(pi: Any, tmp_path: Path) -> None:
    files = _last_line_leaf_files(tmp_path)
    (session, ids), (empty, eids) = files["older"], files["none"]
    got, got_none = pi([session.path, empty.path])

    # pitree: back where the user navigated to.
    assert session.leaf_id == ids["a1"]
    assert _path_ids(session) == [ids["u1"], ids["a1"]]
    assert [m["role"] for m in session.context().messages] == ["user", "assistant"]
    # pi: the marker is an unknown entry and the leaf; its path follows parentId (the branch left behind).
    assert got["error"] is None and got["fileChanged"] is False
    assert got["leafId"] == ids["marker"]
    assert got["branchIds"] == [ids["u1"], ids["a1"], ids["u2"], ids["a2"], ids["marker"]]
    assert got["context"]["messages"] == session.context(ids["a2"]).messages
    marker_node = next(node for node in _flatten(got["tree"]) if node["id"] == ids["marker"])
    assert marker_node == {"id": ids["marker"], "type": "leaf", "children": []}

    # targetId null: pitree shows an empty context; pi still shows the old branch.
    assert empty.leaf_id is None and empty.context().messages == [] and _path_ids(empty) == []
    assert got_none["leafId"] == eids["marker"]
    assert got_none["branchIds"] == [eids["b1"], eids["b2"], eids["marker"]]
    assert len(got_none["context"]["messages"]) == 2

    # As soon as anything else is appended, both agree again.
    u3 = session.append(E.user_message("three, from reply one"))
    root2 = empty.append(E.user_message("a second root"))
    again, again_none = pi([session.path, empty.path])
    for pitree_file, result, new_leaf in ((session, again, u3), (empty, again_none, root2)):
        reread = SessionFile(pitree_file.path)
        assert result["leafId"] == reread.leaf_id == new_leaf["id"]
        assert result["branchIds"] == _path_ids(reread)
        assert result["context"] == reread.context().as_json()
    assert again["branchIds"] == [ids["u1"], ids["a1"], u3["id"]]
    assert again_none["branchIds"] == [root2["id"]]


# ------------------------------------------------------------------------------------------------
# What the model is sent: pitree's convert_to_llm against pi's own convertToLlm.

_CONVERT_JS = """
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
const [modPath] = process.argv.slice(1);
const { convertToLlm } = await import(pathToFileURL(modPath).href);
const batches = JSON.parse(readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(batches.map((messages) => convertToLlm(messages))));
"""


def pi_convert_to_llm(pi: Any, batches: list[list[dict[str, Any]]]) -> list[list[dict[str, Any]]]:
    """Run pi's ``convertToLlm`` (dist/core/messages.js, no imports of its own) over message lists."""
    pi_node = sys.modules["pitree_pi_compat_pi_node"]
    module = pi.dir / "node_modules" / pi_node.PI_PACKAGE / "dist" / "core" / "messages.js"
    completed = subprocess.run(
        ["node", "--input-type=module", "-e", _CONVERT_JS, str(module)],
        input=json.dumps(batches),
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=True,
        timeout=60,
    )
    return json.loads(completed.stdout)


def _bash(**fields: Any) -> dict[str, Any]:
    return {
        "role": "bashExecution",
        "command": "pytest -q",
        "output": "",
        "exitCode": 0,
        "cancelled": False,
        "truncated": False,
        "timestamp": 9,
        **fields,
    }


EXTRA_MESSAGES = [
    _bash(output="3 passed\n"),
    _bash(),
    _bash(output="boom", exitCode=2),
    _bash(output="x", cancelled=True, exitCode=None),
    _bash(output="x", truncated=True, fullOutputPath="/tmp/full.txt"),
    _bash(output="x", truncated=True),
    _bash(output="hidden", excludeFromContext=True),
    {"role": "custom", "customType": "x", "content": "plain", "display": False, "timestamp": 1},
    {
        "role": "custom",
        "customType": "x",
        "content": [{"type": "text", "text": "b"}],
        "display": True,
        "details": {"k": 1},
        "timestamp": 2,
    },
    {"role": "branchSummary", "summary": "B", "fromId": "f", "timestamp": 3},
    {"role": "compactionSummary", "summary": "C", "tokensBefore": 7, "timestamp": 4},
    {"role": "system", "content": "S", "timestamp": 5},
]


def test_pitree_sends_the_model_what_pi_sends(pi: Any, opened: dict[str, tuple[SessionFile, dict[str, Any]]]) -> None:
    names = list(opened)
    batches = [opened[name][1]["context"]["messages"] for name in names] + [EXTRA_MESSAGES]
    ours = [convert_to_llm(opened[name][0].context().messages) for name in names] + [convert_to_llm(EXTRA_MESSAGES)]
    theirs = pi_convert_to_llm(pi, batches)
    for name, mine, pis in zip([*names, "extra"], ours, theirs):
        assert mine == pis, name
    assert len(theirs[-1]) == len(EXTRA_MESSAGES) - 1  # the excluded bash run is dropped by both
