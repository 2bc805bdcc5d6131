"""The comparison: columns from the deepest shared entry, turns aligned row by row, summaries, word
diffs of two columns, and the page's parameters, refusals and escaping."""

from __future__ import annotations

import html as html_lib
import json
import re
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from sessions_app.display import compare as compare_module
from sessions_app.display.compare import Pick, compare
from sessions_app.display.transcript import PAGE_SIZE as TRUNK_PAGE
from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles.cursor import cursor_of
from sessions_app.sessionfiles.instants import iso_to_ms
from sessions_app.sessionfiles.store import SessionFile

TREE = "02-tree-branches"
FORK = "03-fork-of-02"
SAMPLES = Path(__file__).resolve().parents[2] / "sessions_app" / "samples" / "pi"
EXPECTED_NAMES = {
    key: value["originalFileName"]
    for key, value in json.loads((SAMPLES / "expected.json").read_text()).items()
    if not key.startswith("__")
}


@pytest.fixture
def branches(write_session, make):
    """u1 → a1 → three sibling branches: A (three turns), B (one turn), C (one turn); and a1b, a
    regenerated sibling of a1."""
    m = make
    entries = [
        m.user("u1", None, "Write a haiku", 1),
        m.assistant("a1", "u1", "Old pond, a frog", 2, usage=m.usage(100, 0.01), model="m1"),
        m.user("u2a", "a1", "Make it about rain", 3),
        m.assistant("a2a", "u2a", "Rain on the roof", 4, usage=m.usage(200, 0.02), model="m1"),
        m.user("u3a", "a2a", "Shorter", 5),
        m.assistant("a3a", "u3a", "Rain", 6, usage=m.usage(300, 0.03), model="m2"),
        m.user("u4a", "a3a", "Longer again", 7),
        m.assistant("a4a", "u4a", "Rain on the roof all night", 8, usage=m.usage(400, 0.04), model="m2"),
        m.user("u2b", "a1", "Make it about snow", 9),
        m.assistant("a2b", "u2b", "Snow on the pines", 10, usage=m.usage(50, 0.005), model="m3"),
        m.label("l2b", "a2b", "u2b", "snowy", 11),
        m.user("u2c", "a1", "Make it about sun", 12),
        m.assistant("a2c", "u2c", "Sun on the sea", 13),
        m.assistant("a1b", "u1", "An old silent pond", 14),
    ]
    return write_session(entries)


def picks(path, *refs):
    session = SessionFile.open(path)
    return [Pick(session, session.row_of(ref), ref) for ref in refs]


def entry_ids(turn):
    return [view.id for view in turn.entries] if turn else None


# ---------------------------------------------------------------------- columns and rows


def test_sibling_branches_start_at_the_fork_point_and_align_turn_by_turn(branches) -> None:
    _, path = branches
    result = compare(picks(path, "u2a", "u2b"))
    assert result.trunk_end_id == "a1" and result.trunk_length == 2
    assert [view.id for view in result.trunk_tail] == ["u1", "a1"]  # the trunk's last turn
    assert [row.number for row in result.rows] == [1, 2, 3]
    assert [entry_ids(cell) for cell in result.rows[0].cells] == [["u2a", "a2a"], ["u2b", "a2b"]]
    # The shorter branch leaves its cells empty.
    assert [entry_ids(cell) for cell in result.rows[1].cells] == [["u3a", "a3a"], None]
    assert [entry_ids(cell) for cell in result.rows[2].cells] == [["u4a", "a4a"], None]
    first, second = result.columns
    assert (first.head_id, first.end_id, second.head_id, second.end_id) == ("u2a", "a4a", "u2b", "l2b")


def test_answers_to_one_prompt_share_the_continuation_row(branches) -> None:
    _, path = branches
    result = compare(picks(path, "a1", "a1b"), latest=False)
    assert result.trunk_end_id == "u1"
    assert [row.number for row in result.rows] == [0]
    assert [entry_ids(cell) for cell in result.rows[0].cells] == [["a1"], ["a1b"]]
    # Each answers the shared turn: a turn each, not none.
    assert [column.summary.turns for column in result.columns] == [1, 1]


def test_a_branch_that_is_a_prefix_of_another_is_an_empty_column(branches) -> None:
    _, path = branches
    result = compare(picks(path, "u3a", "a4a"), latest=False)
    assert result.trunk_end_id == "u3a"
    short, _ = result.columns
    assert short.head_id is None and short.turns == [] and short.continuation is None and short.end_id == "u3a"
    assert [row.number for row in result.rows] == [0, 1]
    assert [entry_ids(cell) for cell in result.rows[0].cells] == [None, ["a3a"]]
    assert [entry_ids(cell) for cell in result.rows[1].cells] == [None, ["u4a", "a4a"]]
    assert [column.summary.turns for column in result.columns] == [0, 2]


def test_a_column_is_titled_by_what_its_first_entry_says(client, branches) -> None:
    sid, path = branches
    first, second = compare(picks(path, "u2a", "u2b")).columns
    assert (first.title, second.title) == ("Make it about rain", "Make it about snow")
    html = client.get(f"/s/{sid}/compare/", {"e": ["u2a", "u2b"]}).content.decode()
    assert re.search(
        r'<h2 class="compare__title">1 · <a [^>]*title="Open this branch \(at u2a\)">Make it about rain</a>', html
    )


def test_the_breadcrumb_says_this_is_the_comparison_and_links_the_map(client, branches) -> None:
    sid, _ = branches
    html = client.get(f"/s/{sid}/compare/", {"e": ["u2a", "u2b"]}).content.decode()
    crumbs = re.search(r'<p class="crumbs">(.*?)</p>', html, re.S)
    assert crumbs and re.search(rf'/ comparison · <a href="/s/{sid}/map/">map of the tree</a>$', crumbs.group(1))


def test_latest_runs_each_column_on_to_where_its_branch_was_left_and_exact_stops(branches) -> None:
    _, path = branches
    latest = compare(picks(path, "u2a", "u2b"))
    exact = compare(picks(path, "u2a", "u2b"), latest=False)
    assert [c.end_id for c in latest.columns] == ["a4a", "l2b"]
    assert [c.end_id for c in exact.columns] == ["u2a", "u2b"]
    assert [row.number for row in exact.rows] == [1]


def test_summaries_count_turns_tokens_cost_models_activity_and_labels(branches, make) -> None:
    _, path = branches
    first, second = compare(picks(path, "u2a", "u2b")).columns
    assert (first.summary.turns, first.summary.tokens, first.summary.models) == (3, 900, ["p/m1", "p/m2"])
    assert first.summary.cost == pytest.approx(0.09)
    assert first.summary.labels == []
    assert (second.summary.turns, second.summary.tokens, second.summary.labels) == (1, 50, ["snowy"])
    # The newest entry of each branch: the last answer of the first, the label line of the second.
    assert first.summary.last_activity_ms == iso_to_ms(make.stamp(8))
    assert second.summary.last_activity_ms == iso_to_ms(make.stamp(11))


def test_last_activity_is_a_messages_own_time_when_it_has_one(client, write_session, make) -> None:
    m = make
    late = m.assistant("b", "u", "b", 3)
    late["message"]["timestamp"] = iso_to_ms(make.stamp(30))  # written later than the line says
    sid, _ = write_session([m.user("u", None, "q", 1), m.assistant("a", "u", "a", 2), late])
    response = client.get(f"/s/{sid}/compare/", {"e": ["a", "b"], "end": "exact"})
    first, second = response.context["comparison"].columns
    assert (first.summary.last_activity_ms, second.summary.last_activity_ms) == (
        iso_to_ms(make.stamp(2)),
        iso_to_ms(make.stamp(30)),
    )
    html = response.content.decode()
    assert len(re.findall(r'<dd data-summary="activity">[^<—]+ago</dd>', html)) == 2


def test_a_rewritten_file_is_summed_again(client, write_session, make) -> None:
    m = make
    entries = [m.user("u", None, "q", 1), m.assistant("a", "u", "a", 2, usage=m.usage(5, 0.5))]
    entries.append(m.assistant("b", "u", "b", 3, usage=m.usage(7, 0.7)))
    sid, _ = write_session(entries)
    assert [
        c.summary.tokens for c in client.get(f"/s/{sid}/compare/", {"e": ["a", "b"]}).context["comparison"].columns
    ] == [5, 7]
    entries[1] = m.assistant("a", "u", "a", 2, usage=m.usage(500, 0.5))
    write_session(entries, session_id=sid)  # the same path, written anew
    columns = client.get(f"/s/{sid}/compare/", {"e": ["a", "b"]}).context["comparison"].columns
    assert [c.summary.tokens for c in columns] == [500, 7]


def test_usage_that_is_not_a_number_counts_as_nothing(write_session, make) -> None:
    m = make
    bad = [
        {"input": 5, "output": "7", "totalTokens": "lots", "cost": {"total": "free"}},
        {"totalTokens": -40, "cost": {"total": -1}},
        {"totalTokens": True, "cost": {"total": True}},
        "not a dict",
        {"input": 3, "output": 4, "cost": [1]},
    ]
    entries = [m.user("u", None, "q", 1)]
    for i, usage in enumerate(bad):
        entries.append(m.assistant(f"a{i}", "u", "x", 2 + i, usage=usage))
    _, path = write_session(entries)
    result = compare(picks(path, "a0", "a4"), latest=False)
    assert [c.summary.tokens for c in result.columns] == [5, 7]  # input only; the parts that are numbers
    assert [c.summary.cost for c in result.columns] == [0.0, 0.0]


def test_a_fork_and_its_source_share_the_entries_the_fork_copied(client, samples, make) -> None:
    fork, source = make.sample_id(FORK), make.sample_id(TREE)
    response = client.get(f"/s/{fork}/compare/", {"e": ["e8fea955", f"{source}:de4f0d3a"]})
    assert response.status_code == 200
    result = response.context["comparison"]
    assert result.trunk_end_id == "37bad775"  # the last entry the fork copied before its own
    assert [c.session_id for c in result.columns] == [fork, source]
    assert [entry_ids(cell) for cell in result.rows[0].cells] == [None, ["c191c95e", "de4f0d3a"]]
    assert [entry_ids(cell) for cell in result.rows[1].cells] == [["0211f71d", "e8fea955"], None]
    html = response.content.decode()
    assert "other session" in html
    # The page follows both files, each from the byte offset it was rendered from, with the id of the
    # line that ends there (by which the feed tells a file replaced meanwhile).
    follow = json.loads(html_lib.unescape(re.search(r'data-follow="([^"]*)"', html).group(1)))
    fork_index = SessionFile.open(samples / EXPECTED_NAMES[FORK]).index
    source_index = SessionFile.open(samples / EXPECTED_NAMES[TREE]).index
    assert follow == [
        {"session": fork, "cursor": cursor_of(fork_index), "id": fork_index.ids[-1]},
        {"session": source, "cursor": cursor_of(source_index), "id": source_index.ids[-1]},
    ]
    assert all(item["cursor"] > 0 for item in follow)
    # Each column's actions and links go to its own session.
    assert f'action="/s/{source}/navigate/"' in html and f'action="/s/{fork}/navigate/"' in html
    assert f'href="/s/{source}/e/de4f0d3a/"' in html


def test_entries_of_unrelated_sessions_share_no_trunk(client, branches, write_session, make) -> None:
    sid, _ = branches
    other, _ = write_session([make.user("x1", None, "Something else", 1)])
    response = client.get(f"/s/{sid}/compare/", {"e": ["a2b", f"{other}:x1"]})
    assert response.status_code == 200
    result = response.context["comparison"]
    assert result.trunk_end_id is None and result.trunk_length == 0
    assert entry_ids(result.rows[0].cells[0]) == ["u1", "a1"] and entry_ids(result.rows[0].cells[1]) == ["x1"]
    assert "share no history" in response.content.decode()


# ---------------------------------------------------------------------- the page


def _diffs(html: str) -> list[str]:
    """The diffs a page shows (the legend's marks aside)."""
    return re.findall(r'<div class="diff">(.*?)</div>', html, re.S)


def _cells(html: str, part: str) -> list[tuple[str, str, str]]:
    """(row, column, the cell's HTML) of the grid's prompt or answer cells, in page order."""
    found = re.finditer(
        rf'<div class="compare__cell compare__cell--{part}[^"]*" data-column="(\d+)" data-row="(\d+)"(.*?)(?=<div class="compare__cell|<h3 class="compare__turn|\Z)',
        html,
        re.S,
    )
    return [(m.group(2), m.group(1), m.group(3)) for m in found]


def test_the_page_lays_turns_out_in_one_grid_with_actions(client, branches) -> None:
    sid, _ = branches
    response = client.get(f"/s/{sid}/compare/", {"e": ["u2a", "u2b"]})
    assert response.status_code == 200
    html = response.content.decode()
    assert html.count('class="compare__scroll"') == 1 and html.count('class="compare__grid"') == 1
    assert re.findall(r'<h3 class="compare__turn" data-row="(\d+)">', html) == ["1", "2", "3"]
    # Row by row: the prompts of a turn, a cell per column, then its answers.
    prompts, answers = _cells(html, "prompt"), _cells(html, "answer")
    assert [(row, column) for row, column, _ in prompts] == [(r, c) for r in "123" for c in "12"]
    assert [(row, column) for row, column, _ in answers] == [(r, c) for r in "123" for c in "12"]
    cell = {(row, column, "prompt"): text for row, column, text in prompts}
    cell.update({(row, column, "answer"): text for row, column, text in answers})
    assert "Make it about rain" in cell["1", "1", "prompt"] and "Rain on the roof" in cell["1", "1", "answer"]
    assert "Make it about snow" in cell["1", "2", "prompt"] and "Snow on the pines" in cell["1", "2", "answer"]
    # The shorter branch leaves its cells empty.
    assert 'class="muted compare__empty">—' in cell["2", "2", "prompt"] and "article" not in cell["2", "2", "answer"]
    assert "Rain on the roof all night" in cell["3", "1", "answer"]
    # Continue: exactly at the column's end; label: its first entry; fork: its end.
    assert re.search(r'name="to" value="a4a"><input type="hidden" name="mode" value="exact">', html)
    assert 'name="entry" value="u2a">' in html and 'name="entry" value="a4a">' in html
    assert 'src="/static/pitree/compare.js"' in html and "<script>" not in html


def test_more_than_two_branches_offer_a_choice(client, branches) -> None:
    sid, _ = branches
    html = client.get(f"/s/{sid}/compare/", {"e": ["u2a", "u2c"]}).content.decode()
    boxes = re.findall(r'<input type="checkbox" name="e" value="(\w+)"( checked)?>', html)
    assert boxes == [("u2a", " checked"), ("u2b", ""), ("u2c", " checked")]
    two = client.get(f"/s/{sid}/compare/", {"e": ["a1", "a1b"], "end": "exact"}).content.decode()
    assert 'type="checkbox"' not in two  # two branches: both are already shown


def test_the_word_diff_of_two_columns_marks_changes_turn_by_turn(client, branches) -> None:
    sid, _ = branches
    response = client.get(f"/s/{sid}/compare/", {"e": ["u2a", "u2b", "u2c"], "diff": ["1", "2"]})
    assert response.status_code == 200
    html = response.content.decode()
    assert "Make it about <del>rain</del><ins>snow</ins>" in html
    assert "<del>Rain</del><ins>Snow</ins> on the <del>roof</del><ins>pines</ins>" in html
    assert "<del>Shorter</del>" in html  # turn 2 exists on the left only
    assert response.context["pair"] == [1, 2]
    assert 'class="compare__cell' not in html  # the diff replaces the columns' cells
    assert "only its first lines are compared" not in html  # whole texts, compared whole


def test_word_diff_of_unicode_and_tool_call_arguments(client, write_session, make) -> None:
    m = make
    sid, _ = write_session(
        [
            m.user("u", None, "質問", 1),
            m.assistant("a", "u", "東京は晴れ 👨\u200d👩\u200d👧", 2, tools=[("read", {"path": "a.py"})]),
            m.assistant("b", "u", "東京は雨 👨\u200d👩\u200d👦", 3, tools=[("read", {"path": "b.py"})]),
        ]
    )
    html = client.get(f"/s/{sid}/compare/", {"e": ["a", "b"], "end": "exact", "diff": ["1", "2"]}).content.decode()
    # One character against two, and a whole ZWJ sequence (cleanup joins the short run between them).
    assert "東京は<del>晴れ 👨\u200d👩\u200d👧</del><ins>雨 👨\u200d👩\u200d👦</ins>" in html
    assert "&quot;path&quot;: &quot;<del>a</del><ins>b</ins>.py&quot;" in html
    assert "Tool calls" in html


def test_the_word_diff_of_texts_too_large_for_the_page_compares_their_heads_and_says_so(
    client, write_session, make
) -> None:
    pasted = "a line of a pasted log, the same on both sides\n" * 10_000  # 470 kB
    m = make
    sid, _ = write_session(
        [
            m.user("u", None, "Summarise", 1),
            m.assistant("a", "u", "Here it is:\n" + pasted + "the end", 2),
            m.assistant("b", "u", "Here it was:\n" + pasted + "another end", 3),
        ]
    )
    response = client.get(f"/s/{sid}/compare/", {"e": ["a", "b"], "end": "exact", "diff": ["1", "2"]})
    html = response.content.decode()
    assert len(html) < 100_000  # not two copies of half a megabyte, marked up
    assert "Here it <del>is</del><ins>was</ins>:" in html
    assert "only its first lines are compared here" in html
    assert "another end" not in html


def test_empty_texts_compare_without_error(client, write_session, make) -> None:
    m = make
    sid, _ = write_session(
        [
            m.user("u", None, "", 1),
            m.assistant("a", "u", "", 2),
            m.assistant("b", "u", "", 3),
            m.assistant("c", "u", "Some text here", 4),
            m.user("q", "a", "", 5),
        ]
    )
    # Side by side: the empty answers are entries with nothing in them, not missing cells.
    side = client.get(f"/s/{sid}/compare/", {"e": ["a", "b"], "end": "exact"}).content.decode()
    answers = _cells(side, "answer")
    assert [(row, column) for row, column, _ in answers] == [("0", "1"), ("0", "2")]
    for _, _, cell in answers:
        assert re.search(r'<article class="entry entry--assistant"[^>]*>\s*<header', cell)
        assert "compare__empty" not in cell and '<div class="md">' not in cell
    # Both sides empty: said so, no diff.
    html = client.get(f"/s/{sid}/compare/", {"e": ["a", "b"], "end": "exact", "diff": ["2", "1"]}).content.decode()
    assert "No text in this turn on either side" in html and _diffs(html) == []
    # An empty side against text: all of it inserted (or deleted), nothing else.
    one = client.get(f"/s/{sid}/compare/", {"e": ["b", "c"], "end": "exact", "diff": ["1", "2"]}).content.decode()
    assert '<div class="diff"><ins>Some text here</ins></div>' in one and "−0 +3 words" in one
    other = client.get(f"/s/{sid}/compare/", {"e": ["b", "c"], "end": "exact", "diff": ["2", "1"]}).content.decode()
    assert '<div class="diff"><del>Some text here</del></div>' in other and "−3 +0 words" in other
    # An empty prompt is a turn all the same: its row is there, with nothing to compare.
    turn = client.get(f"/s/{sid}/compare/", {"e": ["q", "c"], "end": "exact", "diff": ["1", "2"]})
    assert [row.number for row in turn.context["diffs"]] == [0, 1]
    assert turn.context["diffs"][1].parts == []


def test_the_word_diff_of_a_branch_and_one_it_is_a_prefix_of(client, branches) -> None:
    sid, _ = branches
    response = client.get(f"/s/{sid}/compare/", {"e": ["u3a", "a4a"], "end": "exact", "diff": ["1", "2"]})
    html = response.content.decode()
    assert [row.number for row in response.context["diffs"]] == [0, 1]
    # The continuation and the turn only the longer one has: all inserted.
    assert _diffs(html) == ["<ins>Rain</ins>", "<ins>Longer again</ins>", "<ins>Rain on the roof all night</ins>"]


def test_the_word_diff_of_a_fork_and_the_session_it_came_from(client, samples, make) -> None:
    fork, source = make.sample_id(FORK), make.sample_id(TREE)
    response = client.get(f"/s/{fork}/compare/", {"e": ["e8fea955", f"{source}:de4f0d3a"], "diff": ["1", "2"]})
    assert response.status_code == 200
    html = response.content.decode()
    # Row 0: only the source continues the shared turn; row 1: only the fork has a turn of its own.
    assert [row.number for row in response.context["diffs"]] == [0, 1]
    assert _diffs(html) == [
        "<ins>I will run the tests next.</ins>",
        "<del>Write tests for validate_title</del>",
        "<del>Added tests/test_validate.py with 4 cases.</del>",
    ]


def test_hostile_text_and_ids_stay_text(client, write_session, make) -> None:
    m = make
    evil = '<script>alert(1)</script><img src=x onerror="alert(2)">'
    sid, _ = write_session(
        [
            m.user("u", None, evil, 1),
            m.assistant('"><svg onload=alert(3)>', "u", evil + " one", 2),
            m.assistant("b", "u", evil + " two", 3),
        ]
    )
    hostile_id = '"><svg onload=alert(3)>'
    for query in (
        {"e": [hostile_id, "b"], "end": "exact"},
        {"e": [hostile_id, "b"], "end": "exact", "diff": ["1", "2"]},
    ):
        response = client.get(f"/s/{sid}/compare/", query)
        html = response.content.decode()
        assert response.status_code == 200
        assert "<script>alert" not in html and "<img src=x" not in html and "<svg onload" not in html
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    missing = client.get(f"/s/{sid}/compare/", {"e": ["<script>x</script>", "b"]})
    assert missing.status_code == 404
    assert "<script>x" not in missing.content.decode() and "&lt;script&gt;x" in missing.content.decode()


@pytest.mark.parametrize(
    "query",
    [
        {"e": ["u2a"]},
        {"e": ["u2a", "u2b", "u2c", "a1", "u1"]},
        {"e": ["u2a", "u2a"]},
        {"e": ["u2a", "bad\x01id"]},
        {"e": ["u2a", "x" * 2000]},
        {"e": ["u2a", "u2b"], "diff": ["1"]},
        {"e": ["u2a", "u2b"], "diff": ["1", "1"]},
        {"e": ["u2a", "u2b"], "diff": ["1", "3"]},
        {"e": ["u2a", "u2b"], "diff": ["one", "2"]},
        {"e": ["u2a", "u2b"], "end": "sideways"},
        {},
    ],
)
def test_malformed_parameters_are_a_400_that_says_why(client, branches, query) -> None:
    sid, _ = branches
    response = client.get(f"/s/{sid}/compare/", query)
    assert response.status_code == 400
    assert "This comparison cannot be shown" in response.content.decode()


def test_unknown_entries_and_sessions_are_a_404_that_names_them(client, branches) -> None:
    sid, _ = branches
    cases = {
        "ffffffff": "Entry ffffffff not found in this session",
        "0000-nope:u1": "no session with id",
        f"{sid}:zzz": f"Entry zzz not found in session {sid}",
        "../../etc:passwd": "Entry ../../etc:passwd not found in this session",
    }
    for ref, message in cases.items():
        response = client.get(f"/s/{sid}/compare/", {"e": ["u2a", ref]})
        assert response.status_code == 404, ref
        assert message in response.content.decode().replace("&#x27;", "'"), ref
    assert client.get("/s/0000-nope/compare/", {"e": ["a", "b"]}).status_code == 404


def test_an_entry_of_this_session_wins_over_the_session_prefix_reading(client, write_session, make) -> None:
    m = make
    sid, _ = write_session(
        [m.user("u", None, "q", 1), m.assistant("x:1", "u", "colon", 2), m.assistant("b", "u", "b", 3)]
    )
    response = client.get(f"/s/{sid}/compare/", {"e": ["x:1", "b"], "end": "exact"})
    assert response.status_code == 200
    assert entry_ids(response.context["comparison"].rows[0].cells[0]) == ["x:1"]


# ---------------------------------------------------------------------- from a branch point


def test_branches_redirects_to_the_siblings_with_the_tabs_branch_first(client, branches) -> None:
    sid, _ = branches
    response = client.get(f"/s/{sid}/compare/", {"branches": "u2a", "at": "a2b"})
    assert response.status_code == 302
    target = urlsplit(response["Location"])
    assert target.path == f"/s/{sid}/compare/"
    assert parse_qs(target.query) == {"e": ["u2a", "u2b", "u2c"]}
    assert client.get(response["Location"]).status_code == 200


def test_branches_chooses_four_at_most_keeping_the_tabs_one(client, write_session, make) -> None:
    m = make
    entries = [m.user("u", None, "q", 1)]
    entries += [m.assistant(f"a{i}", "u", f"answer {i}", 2 + i) for i in range(6)]
    sid, _ = write_session(entries)
    response = client.get(f"/s/{sid}/compare/", {"branches": "a0", "at": "a5"})
    assert parse_qs(urlsplit(response["Location"]).query) == {"e": ["a0", "a1", "a2", "a5"]}


def test_branches_of_an_entry_without_siblings_is_a_404(client, branches) -> None:
    sid, _ = branches
    response = client.get(f"/s/{sid}/compare/", {"branches": "u1"})
    assert response.status_code == 404
    assert "has no sibling branches" in response.content.decode()


def test_the_session_page_links_branch_points_to_a_comparison_and_to_the_map(client, samples, make) -> None:
    sid = make.sample_id(TREE)
    html = client.get(f"/s/{sid}/").content.decode()
    assert f'href="/s/{sid}/compare/?branches=07721729&amp;at=750a4556"' in html  # from the ‹ 1/2 › navigator
    assert f'href="/s/{sid}/map/"' in html
    tree = client.get(f"/s/{sid}/tree/", {"at": "de4f0d3a"}).content.decode()
    assert f'href="/s/{sid}/map/?at=de4f0d3a"' in tree
    fork = client.get(f"/s/{make.sample_id(FORK)}/").content.decode()
    assert "compare with it" in fork


@pytest.fixture
def long_branch(write_session, make, monkeypatch):
    """A short branch ("s") beside a long one: twelve turns of a prompt and an answer, each answer with
    10 tokens, and nine labels on them (their lines are siblings under the last answer, the newest one
    ends the branch); the windows shrunk to four entries at each end."""
    monkeypatch.setattr(compare_module, "HEAD_ENTRIES", 4)
    monkeypatch.setattr(compare_module, "TAIL_ENTRIES", 4)
    m = make
    entries = [m.user("u", None, "q", 1), m.assistant("s", "u", "short", 2), m.user("p0", "u", "prompt 0", 3)]
    for i in range(12):
        entries.append(m.assistant(f"a{i}", f"p{i}", f"answer {i}", 4 + 2 * i, usage=m.usage(10, 0.001)))
        if i < 11:
            entries.append(m.user(f"p{i + 1}", f"a{i}", f"prompt {i + 1}", 5 + 2 * i))
    entries += [m.label(f"l{i}", "a11", f"a{i}", f"tag {i}", 40 + i) for i in range(9)]
    return write_session(entries)


def test_a_long_branch_shows_its_first_and_newest_turns_and_counts_them_all(client, long_branch, make) -> None:
    sid, _ = long_branch
    response = client.get(f"/s/{sid}/compare/", {"e": ["s", "p0"]})
    long = response.context["comparison"].columns[1]
    # 25 entries: 24 messages and the newest label line; shown: turns 1 and 2, and turn 12 (with it).
    assert (long.entries, long.shown, long.not_shown) == (25, 7, 18)
    assert [turn.number for turn in long.turns] == [1, 2, 12]
    assert [[view.id for view in turn.entries] for turn in long.turns] == [["p0", "a0"], ["p1", "a1"], ["p11", "a11"]]
    assert long.gap is not None and (long.gap.first, long.gap.last, long.gap.entries) == (3, 11, 18)
    # The summary is of the whole branch.
    summary = long.summary
    assert (summary.turns, summary.tokens, summary.cost) == (12, 120, pytest.approx(0.012))
    assert summary.last_activity_ms == iso_to_ms(make.stamp(48))  # the newest entry: the last label
    assert summary.labels == [f"tag {i}" for i in range(9)]
    html = response.content.decode()
    assert "Shows 7 of this branch's 25 entries" in html and "the summary counts them all" in html
    assert "Turns 3–11 of this branch (18 entries) are not shown here" in html
    # The gap row sits after the last turn shown before it.
    order = re.findall(r'<h3 class="compare__turn" data-row="(\d+)">|(compare__fold-note">Turns)', html)
    assert [row or "gap" for row, gap in order] == ["0", "1", "2", "gap", "12"]
    # Six label tags, the rest behind "+3 more".
    labels = re.search(
        r'<dd data-summary="labels">(.*?)</dd>',
        html.split('<section class="compare__head" data-column="2"', 1)[1],
        re.S,
    ).group(1)
    assert labels.split("<details")[0].count('class="tag"') == 6
    assert "<summary>+3 more</summary>" in labels and labels.count('class="tag"') == 9


def test_what_is_appended_to_a_long_branch_shows_at_its_end(client, long_branch, make) -> None:
    sid, path = long_branch
    client.get(f"/s/{sid}/compare/", {"e": ["s", "p0"]})
    appended = SessionFile.open(path).append(E.user_message("appended from the command line"), "a11")["id"]
    response = client.get(f"/s/{sid}/compare/", {"e": ["s", "p0"]})
    long = response.context["comparison"].columns[1]
    assert [turn.number for turn in long.turns] == [1, 2, 12, 13]  # the newest turns, the appended one too
    assert long.turns[-1].prompt.id == appended == long.end_id
    assert long.summary.turns == 13
    assert "appended from the command line" in response.content.decode()


def test_summaries_read_each_line_once_and_then_only_new_ones(client, long_branch, monkeypatch) -> None:
    read: list[int] = []
    note = compare_module._RowFacts._note
    monkeypatch.setattr(
        compare_module._RowFacts, "_note", lambda self, row, line: read.append(row) or note(self, row, line)
    )
    sid, path = long_branch
    client.get(f"/s/{sid}/compare/", {"e": ["s", "p0"]})
    assert len(read) == 1 + 24  # the messages of both branches (the short one and the long one)
    read.clear()
    client.get(f"/s/{sid}/compare/", {"e": ["s", "p0"]})
    assert read == []
    SessionFile.open(path).append(E.assistant_message("one more", model="m9", provider="p", api="x"), "a11")
    response = client.get(f"/s/{sid}/compare/", {"e": ["s", "p0"]})
    assert len(read) == 1
    assert response.context["comparison"].columns[1].summary.models == ["p/m1", "p/m9"]


def test_long_prompts_and_answers_fold_in_their_cells(client, write_session, make) -> None:
    m = make
    long_prompt = "lorem ipsum dolor sit amet " * 400  # about 10 KB
    long_answer = "\n\n".join(f"Paragraph {i}: the quick brown fox jumps over the lazy dog." for i in range(400))
    sid, _ = write_session(
        [
            m.user("u", None, "q", 1),
            m.assistant("a", "u", "a", 2),
            m.user("p1", "a", long_prompt, 3),
            m.assistant("r1", "p1", long_answer, 4),
            m.assistant("b", "u", "b", 5),
            m.user("p2", "b", "short", 6),
            m.assistant("r2", "p2", "short answer", 7),
        ]
    )
    html = client.get(f"/s/{sid}/compare/", {"e": ["a", "b"], "end": "latest"}).content.decode()
    entries = dict(re.findall(r'<article class="entry[^"]*" data-entry="(\w+)">(.*?)</article>', html, re.S))
    for folded in ("p1", "r1"):
        assert '<div class="compare__clip" tabindex="0" role="region"' in entries[folded]
        assert 'data-show-all aria-expanded="false" hidden>Show all</button>' in entries[folded]
    assert long_prompt.strip() in html  # folded, not cut: the whole text is there to show
    for short in ("a", "b", "p2", "r2"):
        assert "compare__clip" not in entries[short] and "data-show-all" not in entries[short]


def test_the_whole_trunk_can_be_read_a_page_at_a_time(client, write_session, make) -> None:
    m = make
    entries, parent = [], None
    for i in range(50):  # 100 trunk entries: 50 turns
        entries += [
            m.user(f"u{i}", parent, f"question {i}", 2 * i),
            m.assistant(f"a{i}", f"u{i}", f"answer {i}", 2 * i + 1),
        ]
        parent = f"a{i}"
    entries += [m.user("x", parent, "one way", 200), m.user("y", parent, "another way", 201)]
    sid, _ = write_session(entries)
    response = client.get(f"/s/{sid}/compare/", {"e": ["x", "y"]})
    comparison = response.context["comparison"]
    assert [view.id for view in comparison.trunk_tail] == ["u49", "a49"] and comparison.trunk_earlier == "u49"
    html = response.content.decode()
    assert f'hx-get="/s/{sid}/compare/?older=u49"' in html and f'href="/s/{sid}/e/u49/"' in html
    seen = []
    older = "u49"
    while older:
        page = client.get(f"/s/{sid}/compare/", {"older": older})
        assert page.status_code == 200
        fragment = page.content.decode()
        ids = re.findall(r'<article class="entry[^"]*" data-entry="(\w+)">', fragment)
        assert len(ids) == min(TRUNK_PAGE, 98 - len(seen))
        seen = ids + seen
        found = re.search(r'hx-get="/s/[^"]+/compare/\?older=(\w+)"', fragment)
        older = found.group(1) if found else ""
        assert not found or found.group(1) == ids[0]
    assert seen == [f"{kind}{i}" for i in range(49) for kind in "ua"]  # the rest of the trunk, in order
    assert client.get(f"/s/{sid}/compare/", {"older": "nope"}).status_code == 404
