"""``manage.py pitree search QUERY [--json] [--session ID] [--page N]``."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def pitree(settings, root: Path, tmp_path: Path):
    settings.PITREE_SESSIONS_DIR = root
    settings.PITREE_SEARCH_DB = tmp_path / "cli-index.sqlite3"

    def run(*args: str) -> str:
        out = io.StringIO()
        call_command("pitree", "search", *args, stdout=out, stderr=io.StringIO())
        return out.getvalue()

    return run


def test_text_lists_each_hit_and_its_snippet(pitree, folder) -> None:
    folder.write(
        "0197aaaa-0000-7000-8000-000000000001",
        {"id": "a1b2c3d4", "timestamp": "2026-03-02T09:15:09.000Z", **folder.user("run the\ntokenizer now")},
    )
    assert pitree("tokenizer").splitlines() == [
        "0197aaaa  a1b2c3d4  user  2026-03-02 09:15  run the tokenizer now",
        "    run the **tokenizer** now",
    ]


def test_json_gives_the_page_with_plain_snippets_and_match_ranges(pitree, folder) -> None:
    path = folder.write("s1", {"id": "e1", **folder.user("find the needle here")})
    document = json.loads(pitree("needle", "--json"))
    assert document == {
        "query": "needle",
        "session": None,
        "page": 1,
        "hasNext": False,
        "hits": [
            {
                "sessionId": "s1",
                "sessionTitle": "find the needle here",
                "path": str(path),
                "entryId": "e1",
                "kind": "user",
                "timestamp": document["hits"][0]["timestamp"],
                "snippet": "find the needle here",
                "highlights": [[9, 15]],
            }
        ],
    }


def test_pages_and_the_session_filter(pitree, folder) -> None:
    folder.write("one", *[folder.user(f"word {i}") for i in range(25)])
    folder.write("two", folder.user("word alone"))
    first = json.loads(pitree("word", "--json"))
    assert len(first["hits"]) == 20 and first["hasNext"]
    second = json.loads(pitree("word", "--json", "--page", "2"))
    assert len(second["hits"]) == 6 and not second["hasNext"]
    only = json.loads(pitree("word", "--json", "--session", "two"))
    assert [hit["sessionId"] for hit in only["hits"]] == ["two"]
    assert pitree("word").splitlines()[-1] == "(more: --page 2)"


def test_nothing_found_is_said_and_is_no_error(pitree, folder) -> None:
    folder.write("s", folder.user("words"))
    assert pitree("absent") == "no entry matches 'absent'\n"
    assert json.loads(pitree("absent", "--json"))["hits"] == []


def test_control_characters_never_reach_the_terminal(pitree, folder) -> None:
    folder.write(
        "s",
        folder.user("\x1b]0;pwned\x07 bell \x1b[2J clear \x9b31m"),
        {"type": "session_info", "id": "n", "name": "\x1b[31mred"},
    )
    output = pitree("bell")
    assert "\x1b" not in output and "\x07" not in output and "\x9b" not in output
    assert "**bell**" in output


def test_a_query_with_nothing_to_search_is_an_error(pitree, folder) -> None:
    with pytest.raises(CommandError, match="nothing to search for"):
        pitree('" * "')


def test_a_word_left_out_removes_its_entries(pitree, folder) -> None:
    folder.write(
        "s", {"id": "kept", **folder.user("deploy to production")}, {"id": "gone", **folder.user("deploy to staging")}
    )
    assert [hit["entryId"] for hit in json.loads(pitree("deploy -staging", "--json"))["hits"]] == ["kept"]
    assert [hit["entryId"] for hit in json.loads(pitree("--json", "--", "-staging deploy"))["hits"]] == ["kept"]


def test_words_left_out_alone_say_a_word_to_find_is_missing(pitree, folder) -> None:
    with pytest.raises(CommandError, match="nothing to search for in '-staging': a -word only leaves entries out"):
        pitree("--", "-staging")


@pytest.mark.processes
def test_errors_are_one_line_and_a_nonzero_exit(root: Path, tmp_path: Path, folder) -> None:
    folder.write("s", folder.user("words"))
    bogus = tmp_path / "bogus.sqlite3"
    bogus.write_bytes(b"not sqlite" * 200)
    env = {**os.environ, "PITREE_SESSIONS_DIR": str(root), "PITREE_SEARCH_DB": str(bogus)}
    for args, expected in [
        (["words"], "delete it and it is rebuilt"),
        (["*"], "nothing to search for"),
        (["words", "--page", "0"], "must be at least 1"),
    ]:
        done = subprocess.run(
            [sys.executable, str(REPO / "manage.py"), "pitree", "search", *args],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode != 0 and done.stdout == ""
        assert len(done.stderr.strip().splitlines()) == 1 and expected in done.stderr
    assert bogus.read_bytes() == b"not sqlite" * 200


def test_a_file_name_that_is_not_utf8_takes_nothing_down(pitree, folder) -> None:
    folder.write("plain", folder.user("hello plain"))
    odd = Path(os.fsdecode(os.fsencode(folder.path("plain").parent) + b"/2026_badutf\xff.jsonl"))
    odd.write_bytes(folder.path("plain").read_bytes().replace(b'"plain"', b'"odd"', 1))
    assert sorted(line.split()[0] for line in pitree("hello").splitlines() if not line.startswith(" ")) == [
        "odd",
        "plain",
    ]
    paths = sorted(hit["path"] for hit in json.loads(pitree("hello", "--json"))["hits"])
    assert paths == sorted([str(folder.path("plain")), str(odd.parent / "2026_badutf\ufffd.jsonl")])


def test_the_line_limit_setting_is_the_searchs_too(pitree, folder, settings) -> None:
    settings.PITREE_MAX_LINE_BYTES = 4096
    folder.write("s", folder.user("short needle"), folder.user("long needle " + "x" * 5000))
    assert json.loads(pitree("needle", "--json"))["hits"][0]["snippet"] == "short needle"
    assert len(json.loads(pitree("needle", "--json"))["hits"]) == 1  # the long line is skipped, as `show` skips it


def test_every_field_of_a_hit_stays_on_its_line(pitree, folder) -> None:
    folder.write(
        "s\nx",
        {"id": "e\n1", "timestamp": "2026\nfake", "message": {"role": "a\nrole", "content": "words here"}},
    )
    first, snippet = pitree("words").splitlines()
    assert first.startswith("s x  e 1  a role  2026 fake") and snippet == "    **words** here"


def test_short_ids_are_those_ls_prints_and_session_takes_a_prefix(pitree, folder) -> None:
    """Two sessions whose ids share their first 8 characters: one with a hit, one without. The hit's
    short id tells it from the other, as ``ls`` would, so ``--session`` (and every FILE) takes it."""
    folder.write("0197aaaa-0000-7000-8000-000000000001", {"id": "e1", **folder.user("the needle")})
    folder.write("0197aaaa-1111-7000-8000-000000000002", {"id": "e2", **folder.user("nothing here")})
    short = pitree("needle").split()[0]
    assert short == "0197aaaa-0"
    assert pitree("needle", "--session", short).split()[:2] == [short, "e1"]
    with pytest.raises(CommandError, match="no session id starting with it"):
        pitree("needle", "--session", "nope")
