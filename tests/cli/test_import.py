"""``manage.py pitree [--as USER] import FILE…``: a line per session written, the counts, notes on
stderr; into the actor's own workspace (or one they name and may write); a refused export is one line
and a non-zero exit, nothing written. And ``fork --tail N``, the other way a history is carried over."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management.base import CommandError
from support import exports as X

from sessions_app.access.authorship import FILE
from sessions_app.models import Authorship
from sessions_app.sessionfiles.fork import encode_cwd
from sessions_app.sessionfiles.store import SessionFile


def test_import_prints_what_it_wrote_and_again_nothing(
    pitree: Any, sessions_dir: Path, tmp_path: Path, settings: Any
) -> None:
    settings.PITREE_DEFAULT_CWD = "/srv/pitree"
    export = X.gpt_export(tmp_path, [X.gpt_branching()])
    lines = pitree("import", str(export)).splitlines()
    assert lines[0].startswith(f"created {sessions_dir / encode_cwd('/srv/pitree')}/2025-10-09T08-53-20-000Z_")
    assert lines[0].endswith("  Pixels and sums")
    assert lines[1] == "chatgpt-export.zip (ChatGPT): 1 created, 0 appended to, 0 unchanged"
    assert pitree("import", str(export)).splitlines() == [
        "chatgpt-export.zip (ChatGPT): 0 created, 0 appended to, 1 unchanged"
    ]
    assert "Pixels and sums" in pitree("ls")


def test_several_files_and_a_workspace_named(pitree: Any, sessions_dir: Path, tmp_path: Path) -> None:
    chat = X.write_json(tmp_path / "chat.json", [X.webui_multimodel()])
    out = pitree("import", "--cwd", "/home/alice/chats", str(chat), str(X.cc_project(tmp_path)))
    assert "chat.json (Open WebUI): 1 created" in out and "-home-alice-app (Claude Code): 1 created" in out
    assert len(list((sessions_dir / encode_cwd("/home/alice/chats")).glob("*.jsonl"))) == 2


@pytest.mark.processes
def test_a_refused_export_is_one_line_and_writes_nothing(pitree_cli: Any, sessions_dir: Path, tmp_path: Path) -> None:
    bad = tmp_path / "conversations.json"
    bad.write_text('[{"title": "x", "mapping": {}}, {"title": ')
    done = pitree_cli("import", str(bad))
    assert done.returncode != 0 and done.stdout == ""
    (line,) = done.stderr.strip().splitlines()
    assert "conversations.json: not valid JSON near byte " in line and "(after item 1)" in line
    assert not list(sessions_dir.rglob("*.jsonl"))


@pytest.mark.django_db
def test_as_a_user_into_their_workspace_only(pitree: Any, sessions_dir: Path, tmp_path: Path, settings: Any) -> None:
    settings.PITREE_DEFAULT_CWD = "/srv/pitree"
    get_user_model().objects.create_user("bob")
    export = X.write_json(tmp_path / "lc.json", X.libre_export(X.libre_messages()))
    out = pitree("--as", "bob", "import", str(export))
    assert f"created {sessions_dir / encode_cwd('/srv/pitree/bob')}/" in out
    session_id = Path(out.split()[1]).stem.split("_", 1)[1]
    assert Authorship.objects.get(session_id=session_id, entry_id=FILE).user.username == "bob"
    with pytest.raises(CommandError, match="only into your own or your teams' workspaces"):
        pitree("--as", "bob", "import", "--cwd", "/srv/pitree", str(export))


def test_fork_tail_keeps_the_last_turns_after_a_summary(pitree: Any, sample: Any) -> None:
    """``fork FILE --tail N [--summary TEXT]``: here with the summary given (without it the assistant
    writes one)."""
    source = sample("04-compaction")
    path = Path(pitree("fork", str(source), "--tail", "1", "--summary", "All before, in short.").strip())
    fork = SessionFile(path)
    assert [m.get("role") for m in fork.context().messages][:2] == ["compactionSummary", "user"]
    assert fork.context().messages[0]["summary"] == "All before, in short."
    offline = SessionFile(Path(pitree("fork", str(source), "--tail", "2").strip()))
    assert offline.context().messages[0]["summary"].strip()
    with pytest.raises(CommandError, match="--summary goes with --tail"):
        pitree("fork", str(source), "--summary", "x")
    with pytest.raises(CommandError, match="nothing before the last 9 to summarise"):
        pitree("fork", str(source), "--tail", "9")
