"""A Claude Code projects folder followed as pi sessions: each session (its subagents' files too)
mirrored, and brought up to date as Claude Code writes more, appending only what is new."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from support import exports as X

from sessions_app.imports.mirror import Mirror
from sessions_app.services.claude import one_follower
from sessions_app.sessionfiles.store import SessionFile, clear_cache


def test_a_projects_folder_followed_as_it_grows(tmp_path: Path) -> None:
    projects = tmp_path / "projects"
    session_file = projects / "-home-alice-app" / f"{X.SESSION}.jsonl"
    records = X.cc_session()
    X.write_jsonl(session_file, records[:6])
    mirror = Mirror(projects, tmp_path / "mirror", fsync=False)
    (made,) = mirror.look()
    assert made.status == "created" and made.path.parent == tmp_path / "mirror"
    assert mirror.look() == []  # nothing changed: not even read
    with session_file.open("a") as out:
        out.writelines(json.dumps(record) + "\n" for record in records[6:9])
    (grown,) = mirror.look()
    assert (grown.status, grown.path) == ("appended", made.path)
    clear_cache()
    session = SessionFile(made.path)
    assert session.leaf_id == "c5b" and session.header["cwd"] == "/home/alice/app"
    assert len(list((tmp_path / "mirror").glob("*.jsonl"))) == 1


def test_a_malformed_line_leaves_that_session_as_it_was_and_says_why(tmp_path: Path) -> None:
    projects = tmp_path / "projects"
    session_file = projects / "-home-alice-app" / f"{X.SESSION}.jsonl"
    X.write_jsonl(session_file, X.cc_session()[:4])
    mirror = Mirror(projects, tmp_path / "mirror", fsync=False)
    (made,) = mirror.look()
    before = made.path.read_bytes()
    with session_file.open("a") as out:
        out.write("{broken\n")
    assert mirror.look() == []
    assert made.path.read_bytes() == before
    assert "line 5: not valid JSON" in next(iter(mirror.problems.values()))


def test_one_process_follows_and_another_takes_over_when_it_ends(tmp_path: Path) -> None:
    # Every server process starts a follower; two writing the same mirror would each read every changed
    # Claude Code file again.
    following = threading.Event()

    def second() -> None:
        with one_follower(tmp_path):
            following.set()

    with one_follower(tmp_path):
        waiting = threading.Thread(target=second, daemon=True)
        waiting.start()
        assert not following.wait(0.5)
    assert following.wait(10)
    waiting.join(10)
