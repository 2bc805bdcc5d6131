"""Every session an import writes opens in pi 1.6.0 as pitree reads it: same leaf, same context at the
leaf and at every branch's end, same tree and name, and pi needs no repair. Imported again from a
longer export (a moved position, a new title) too."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support import exports as X

from sessions_app.sessionfiles import tree
from sessions_app.sessionfiles.store import SessionFile, clear_cache

pytestmark = pytest.mark.processes  # pi opens the files, under node (tests/support/tiers.py)


def _exports(folder: Path) -> list[Path]:
    chats = [X.webui_multimodel()]
    return [
        X.gpt_export(folder, [X.gpt_branching()]),
        X.write_json(folder / "chat-export.json", chats),
        X.write_json(folder / "librechat.json", X.libre_export(X.libre_messages())),
        X.cc_project(folder),
    ]


def _grown(folder: Path, root: Path) -> None:
    """ChatGPT again, longer, renamed, its position on an older branch: the entries a later import adds."""
    conversation = X.gpt_branching()
    conversation["title"] = "Pixels, sums and more"
    conversation["mapping"]["u3"] = {
        "id": "u3",
        "parent": "a2b",
        "children": [],
        "message": X.gpt_message("u3", "user", "And 4+4?", at=20),
    }
    conversation["current_node"] = "a1"
    X.import_into(root, X.write_json(folder / "conversations.json", [conversation]))
    moved = X.gpt_branching()
    moved["mapping"]["u4"] = {
        "id": "u4",
        "parent": "u2",
        "children": [],
        "message": X.gpt_message("u4", "user", "Hm", at=30),
    }
    moved["title"] = "Pixels, sums and more"
    moved["current_node"] = "a1"
    X.import_into(root, X.write_json(folder / "moved.json", [moved]))


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory, pi: Any) -> list[tuple[SessionFile, dict[str, Any]]]:
    folder = tmp_path_factory.mktemp("exports")
    root = folder / "sessions"
    for export in _exports(folder):
        X.import_into(root, export)
    _grown(folder, root)
    paths = sorted(root.rglob("*.jsonl"))
    results = pi(paths, leaf_contexts=True)
    clear_cache()
    return [(SessionFile(path), result) for path, result in zip(paths, results)]


def test_every_import_opens_in_pi_as_in_pitree(imported: list[tuple[SessionFile, dict[str, Any]]]) -> None:
    assert len(imported) == 4
    for session, got in imported:
        index = session.index
        assert got["error"] is None, session.path
        assert got["fileChanged"] is False
        assert index.skipped() == []
        assert got["leafId"] == session.leaf_id
        assert got["context"] == session.context().as_json()
        assert got["name"] == index.name
        assert got["tree"] == tree.tree(index)
        assert got["leafContexts"]
        for leaf, pi_context in got["leafContexts"].items():
            assert pi_context == session.context(leaf).as_json(), (session.path.name, leaf)


def test_the_later_imports_wrote_what_they_claim(imported: list[tuple[SessionFile, dict[str, Any]]]) -> None:
    (chatgpt,) = [session for session, _ in imported if session.index.name == "Pixels, sums and more"]
    mover = chatgpt.entry(chatgpt.leaf_id)
    assert (mover["customType"], mover["parentId"]) == ("pitree/import", "a1")
    assert chatgpt.entry("u3")["parentId"] == "a2b" and chatgpt.entry("u4")["parentId"] == "u2"
