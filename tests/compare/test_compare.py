"""The comparison: columns from the deepest shared entry, turns aligned row by row, summaries, word
diffs of two columns, and the page's parameters, refusals and escaping."""

from __future__ import annotations

import html as html_lib
import json
import re
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from sessions_app.display.compare import Pick, compare
from sessions_app.live.fragments import cursor_of
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


def test_a_branch_that_is_a_prefix_of_another_is_an_empty_column(branches) -> None:
    _, path = branches
    result = compare(picks(path, "u3a", "a4a"), latest=False)
    assert result.trunk_end_id == "u3a"
    short, _ = result.columns
    assert short.head_id is None and short.turns == [] and short.continuation is None and short.end_id == "u3a"
    assert [row.number for row in result.rows] == [0, 1]
    assert [entry_ids(cell) for cell in result.rows[0].cells] == [None, ["a3a"]]
    assert [entry_ids(cell) for cell in result.rows[1].cells] == [None, ["u4a", "a4a"]]


def test_latest_runs_each_column_on_to_where_its_branch_was_left_and_exact_stops(branches) -> None:
    _, path = branches
    latest = compare(picks(path, "u2a", "u2b"))
    exact = compare(picks(path, "u2a", "u2b"), latest=False)
    assert [c.end_id for c in latest.columns] == ["a4a", "l2b"]
    assert [c.end_id for c in exact.columns] == ["u2a", "u2b"]
    assert [row.number for row in exact.rows] == [1]


def test_summaries_count_turns_tokens_cost_models_activity_and_labels(branches) -> None:
    _, path = branches
    first, second = compare(picks(path, "u2a", "u2b")).columns
    assert (first.summary.turns, first.summary.tokens, first.summary.models) == (3, 900, ["p/m1", "p/m2"])
    assert first.summary.cost == pytest.approx(0.09)
    assert first.summary.labels == []
    assert (second.summary.turns, second.summary.tokens, second.summary.labels) == (1, 50, ["snowy"])
    assert second.summary.last_activity_ms is not None
    assert (
        first.summary.last_activity_ms is not None and first.summary.last_activity_ms < second.summary.last_activity_ms
    )


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
    # The page follows both files, each from the byte offset it was rendered from.
    follow = json.loads(html_lib.unescape(re.search(r'data-follow="([^"]*)"', html).group(1)))
    assert follow == [
        {"session": fork, "cursor": cursor_of(SessionFile.open(samples / EXPECTED_NAMES[FORK]).index)},
        {"session": source, "cursor": cursor_of(SessionFile.open(samples / EXPECTED_NAMES[TREE]).index)},
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


def test_the_page_shows_columns_with_aligned_rows_and_actions(client, branches) -> None:
    sid, _ = branches
    response = client.get(f"/s/{sid}/compare/", {"e": ["u2a", "u2b"]})
    assert response.status_code == 200
    html = response.content.decode()
    panes = re.split(r'<div class="compare__pane"', html)[1:]
    assert len(panes) == 2
    for pane in panes:
        assert re.findall(r'data-row="(\d+)"', pane) == ["1", "2", "3"]
    assert panes[1].count('class="muted compare__empty"') == 2  # turns 2 and 3: nothing on branch B
    assert "Rain on the roof all night" in panes[0] and "Snow on the pines" in panes[1]
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
    assert 'class="compare__pane"' not in html  # the diff replaces the columns


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


def test_empty_texts_compare_without_error(client, write_session, make) -> None:
    m = make
    sid, _ = write_session([m.user("u", None, "", 1), m.assistant("a", "u", "", 2), m.assistant("b", "u", "", 3)])
    response = client.get(f"/s/{sid}/compare/", {"e": ["a", "b"], "end": "exact", "diff": ["2", "1"]})
    assert response.status_code == 200
    assert "No text in this turn on either side" in response.content.decode()


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


def test_a_long_branch_is_cut_near_the_fork_and_says_so(client, write_session, make, monkeypatch) -> None:
    from sessions_app.display import compare as compare_module

    monkeypatch.setattr(compare_module, "MAX_COLUMN_ENTRIES", 4)
    m = make
    entries = [m.user("u", None, "q", 1), m.assistant("s", "u", "short", 2)]
    parent = "u"
    for i in range(5):
        entries.append(m.assistant(f"a{i}", parent, f"answer {i}", 3 + 2 * i, usage=m.usage(10, 0.001)))
        entries.append(m.user(f"q{i}", f"a{i}", f"question {i}", 4 + 2 * i))
        parent = f"q{i}"
    sid, _ = write_session(entries)
    response = client.get(f"/s/{sid}/compare/", {"e": ["s", "a0"]})
    long = response.context["comparison"].columns[1]
    assert long.not_shown == 6 and long.end_id == "q4"
    assert [view.id for view in long.continuation.entries] == ["a0"]
    assert [[view.id for view in turn.entries] for turn in long.turns] == [["q0", "a1"], ["q1"]]
    assert long.summary.tokens == 20  # the entries shown
    assert "goes on for 6 more entries than shown here" in response.content.decode()
