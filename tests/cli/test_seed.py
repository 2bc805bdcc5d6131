"""``seed``: pi's sample sessions, under the names pi gave them, into an empty sessions folder only."""

from __future__ import annotations

import json
from pathlib import Path

from sessions_app.cli.seed import SAMPLES_DIR, sample_files

FOLDER = "--home-alice-projects-todo-api--"


def test_seed_copies_exactly_the_files_pi_listed(pitree, sessions_dir, expected) -> None:
    out = pitree("seed")
    folder = sessions_dir / FOLDER
    names = sorted(p.name for p in folder.iterdir())
    assert names == sorted(item["file"] for item in expected["__list"])
    assert [p for p in sessions_dir.rglob("*.jsonl") if p.parent != folder] == []
    for key, sample in expected.items():
        if not key.startswith("__"):
            assert (folder / sample["originalFileName"]).read_bytes() == (SAMPLES_DIR / f"{key}.jsonl").read_bytes()
    assert out.count("seeded ") == 7
    assert out.splitlines()[-1] == f"7 sample sessions copied into {folder}"


def test_seed_then_does_nothing(pitree, sessions_dir) -> None:
    pitree("seed")
    snapshot = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in sessions_dir.rglob("*") if p.is_file()}
    out = pitree("seed")
    assert out == f"{sessions_dir} already has sessions: nothing seeded\n"
    assert {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in sessions_dir.rglob("*") if p.is_file()} == snapshot


def test_seed_leaves_a_folder_with_any_session_alone(pitree, sessions_dir) -> None:
    mine = sessions_dir / "deep" / "down" / "mine.jsonl"
    mine.parent.mkdir(parents=True)
    mine.write_text("anything\n")
    assert "nothing seeded" in pitree("seed")
    assert not (sessions_dir / FOLDER).exists()


def test_seed_creates_a_missing_sessions_folder(pitree, sessions_dir, settings) -> None:
    settings.PITREE_SESSIONS_DIR = sessions_dir / "not" / "yet"
    pitree("seed")
    assert len(list((sessions_dir / "not" / "yet" / FOLDER).glob("*.jsonl"))) == 7


def test_seeded_sessions_list_like_pi_listed_them(pitree, expected) -> None:
    pitree("seed")
    items = json.loads(pitree("ls", "--json"))
    assert {Path(item["path"]).name for item in items} == {item["file"] for item in expected["__list"]}
    by_file = {Path(item["path"]).name: item for item in items}
    for want in expected["__list"]:
        got = by_file[want["file"]]
        assert (got["id"], got["name"], got["messageCount"]) == (want["id"], want["name"], want["messageCount"])
        assert got["firstMessage"] == want["firstMessage"]
        assert got["depth"] == (1 if want["parentSessionFile"] else 0)


def test_sample_files_skip_the_input_twins() -> None:
    folder, files = sample_files()
    assert folder == FOLDER
    stems = [source.stem for source, _ in files]
    assert "05-legacy-v1.migrated" in stems and "05-legacy-v1.input" not in stems
    assert "06-corrupt-tail.after-append" in stems and "06-corrupt-tail.input" not in stems
