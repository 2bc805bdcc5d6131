"""Where a column ends: where its branch was last left, and on into the answer when that was at a
prompt that has one. After moving back up to a prompt, a label, a name or a model change is hung under
it beside its reply and becomes the branch's newest entry; a column stopped there said "No answer yet"
of a prompt that has an answer."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.properties import examples

from sessions_app.display.compare import MAX_COLUMNS, Pick, compare
from sessions_app.sessionfiles.index import SessionIndex
from sessions_app.sessionfiles.store import SessionFile


@pytest.fixture
def fork(make):
    """u1 → a1, then two branches at a1: "rain" (u2a → a2a) and "snow" (u2b → a2b)."""
    m = make
    return [
        m.user("u1", None, "Write a haiku", 1),
        m.assistant("a1", "u1", "Old pond, a frog", 2),
        m.user("u2a", "a1", "Make it about rain", 3),
        m.assistant("a2a", "u2a", "Rain on the roof", 4),
        m.user("u2b", "a1", "Make it about snow", 5),
        m.assistant("a2b", "u2b", "Snow on the pines", 6),
    ]


def answer_cell(html: str, column: int, row: int) -> str:
    """The HTML of one answer cell of the grid."""
    start = re.search(
        rf'<div class="compare__cell compare__cell--answer[^"]*" data-column="{column}" data-row="{row}"', html
    )
    assert start, (column, row)
    rest = html[start.end() :]
    return rest[
        : re.search(r'<div class="compare__cell|<h3 class="compare__turn|</div>\s*</div>\s*</div>', rest).start()
    ]


def column_answers(path, *refs, latest=True):
    """Per column: (its end, [(turn number, prompt id, answer ids)])."""
    session = SessionFile.open(path)
    result = compare([Pick(session, session.row_of(ref), ref) for ref in refs], latest=latest)
    return [
        (column.end_id, [(t.number, t.prompt.id if t.prompt else None, [v.id for v in t.answer]) for t in column.turns])
        for column in result.columns
    ]


def beside_the_reply(make, name):
    """Entries hung under the prompt u2b after its reply, as a tab standing on u2b writes them."""
    m = make
    return {
        "a label": [m.label("l", "u2b", "u2b", "snowy", 7)],
        "a rename, then labels under it": [
            m.meta("session_info", "s", "u2b", 7, name="Haikus"),
            m.label("l1", "s", "u2b", "snowy", 8),
            m.label("l2", "l1", "a1", "fork", 9),
        ],
        "a model change": [m.meta("model_change", "mc", "u2b", 7, provider="p", modelId="m9")],
        "a thinking level change": [m.meta("thinking_level_change", "tl", "u2b", 7, thinkingLevel="high")],
        "a move back to the prompt": [m.meta("leaf", "lf", "a2b", 7, targetId="u2b")],
    }[name]


@pytest.mark.parametrize(
    "name",
    [
        "a label",
        "a rename, then labels under it",
        "a model change",
        "a thinking level change",
        "a move back to the prompt",
    ],
)
def test_a_column_left_at_its_prompt_runs_on_into_the_answer(write_session, fork, make, name) -> None:
    _, path = write_session(fork + beside_the_reply(make, name))
    rain, snow = column_answers(path, "u2a", "u2b")
    assert rain == ("a2a", [(1, "u2a", ["a2a"])])
    assert snow == ("a2b", [(1, "u2b", ["a2b"])])


def test_the_page_shows_the_answer_after_a_rename_and_a_label_at_the_prompt(client, write_session, fork) -> None:
    """Through the views, as a tab standing on the prompt writes them, and the comparison opened from
    the branch point: the label line, newest, hung beside the reply, ended the column at the prompt."""
    sid, _ = write_session(fork)
    assert client.post(f"/s/{sid}/rename/", {"name": "Haikus", "at": "u2b"}).status_code == 302
    assert client.post(f"/s/{sid}/label/", {"entry": "u2b", "label": "snowy", "at": "u2b"}).status_code == 302
    response = client.get(client.get(f"/s/{sid}/compare/", {"branches": "u2a", "at": "u2b"})["Location"])
    html = response.content.decode()
    assert [column.ref for column in response.context["comparison"].columns] == ["u2a", "u2b"]
    snow = answer_cell(html, 2, 1)
    assert "Snow on the pines" in snow and "No answer yet" not in snow
    assert "No answer yet" not in html
    assert re.search(r'name="to" value="a2b"><input type="hidden" name="mode" value="exact">', html)  # continue there


def test_a_column_runs_on_through_each_turn_left_at_its_prompt(write_session, fork, make) -> None:
    m = make
    deeper = [
        m.user("u3b", "a2b", "Shorter", 7),
        m.assistant("a3b", "u3b", "Snow", 8),
        m.label("l3", "u3b", "u3b", "short", 9),  # beside the deeper reply
        m.label("l2", "u2b", "u2b", "snowy", 10),  # beside the first one, newest of all
    ]
    _, path = write_session(fork + deeper)
    _, snow = column_answers(path, "u2a", "u2b")
    assert snow == ("a3b", [(1, "u2b", ["a2b"]), (2, "u3b", ["a3b"])])


def test_entries_between_a_prompt_and_its_answer_stay_on_the_column(write_session, fork, make) -> None:
    """A label between the prompt and the reply (the reply hangs under it) is on the branch's path; a
    model change beside the reply, under that label, is not."""
    m = make
    entries = [
        *fork[:5],
        m.label("l", "u2b", "u2b", "snowy", 6),
        m.assistant("a2b", "l", "Snow on the pines", 7),
        m.meta("model_change", "mc", "l", 8, provider="p", modelId="m9"),
    ]
    _, path = write_session(entries)
    _, snow = column_answers(path, "u2a", "u2b")
    assert snow == ("a2b", [(1, "u2b", ["a2b"])])  # the label line is hidden, the reply shown


def test_what_is_below_the_answer_stays_the_columns_end(write_session, fork, make) -> None:
    _, path = write_session([*fork, make.label("l", "a2b", "u2b", "snowy", 7)])
    _, snow = column_answers(path, "u2a", "u2b")
    assert snow == ("l", [(1, "u2b", ["a2b"])])


def test_a_prompt_without_an_answer_still_says_so(client, write_session, fork, make) -> None:
    m = make
    entries = [*fork, m.user("u2c", "a1", "Make it about sun", 7), m.label("l", "u2c", "u2c", "sunny", 8)]
    sid, path = write_session(entries)
    assert column_answers(path, "u2a", "u2c")[1] == ("l", [(1, "u2c", [])])
    html = client.get(f"/s/{sid}/compare/", {"e": ["u2a", "u2c"]}).content.decode()
    assert "No answer yet" in answer_cell(html, 2, 1)


def test_exact_still_stops_at_the_named_prompt(write_session, fork, make) -> None:
    _, path = write_session([*fork, make.label("l", "u2b", "u2b", "snowy", 7)])
    assert column_answers(path, "u2a", "u2b", latest=False)[1] == ("u2b", [(1, "u2b", [])])


def test_a_column_runs_on_only_inside_its_own_branch(write_session, make) -> None:
    """A label line picked beside the answers of the prompt it hangs under (a pick on the map) is a
    column of its own, not one that runs into those answers."""
    m = make
    entries = [
        m.user("u", None, "q", 1),
        m.assistant("a", "u", "one", 2),
        m.assistant("b", "u", "two", 3),
        m.label("l", "u", "u", "asked", 4),
    ]
    _, path = write_session(entries)
    assert [end for end, _ in column_answers(path, "a", "l")] == ["a", "l"]


# ---------------------------------------------------------------------- any tree

# (what is written, which of the entries before it is its parent): prompts, replies, and what a tab
# hangs under its position (a label, a name, a model change) or where it moves (a leaf marker).
STEP = st.tuples(
    st.sampled_from(["user", "assistant", "label", "session_info", "model_change", "leaf"]),
    st.integers(min_value=0),
)


def _line(kind: str, entry_id: str, parent: str | None, second: int) -> dict[str, Any]:
    """One entry of a drawn tree, written the way pi and pitree write its kind."""
    stamp = f"2026-03-02T09:{second // 60:02d}:{second % 60:02d}.000Z"
    line: dict[str, Any] = {"type": kind, "id": entry_id, "parentId": parent, "timestamp": stamp}
    if kind in ("user", "assistant"):
        content = "q" if kind == "user" else [{"type": "text", "text": entry_id}]
        line.update(type="message", message={"role": kind, "content": content})
    elif kind == "label":
        line.update(targetId=parent, label=entry_id)
    elif kind == "session_info":
        line.update(name=entry_id)
    elif kind == "model_change":
        line.update(provider="p", modelId=entry_id)
    else:  # a leaf marker: the position moved back to ``parent``
        line.update(parentId=None, targetId=parent)
    return line


def _written(folder: Path, steps: list[tuple[str, int]]) -> Path:
    """A session file of the drawn steps (a leaf marker is no node: nothing hangs under it)."""
    nodes = ["n0"]
    lines: list[dict[str, Any]] = [
        {"type": "session", "version": 3, "id": "tree", "timestamp": "2026-03-02T09:00:00.000Z", "cwd": "/w"},
        _line("user", "n0", None, 0),
    ]
    for second, (kind, parent) in enumerate(steps, start=1):
        lines.append(_line(kind, f"n{second}", nodes[parent % len(nodes)], second))
        if kind != "leaf":
            nodes.append(f"n{second}")
    path = folder / "tree.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _has_reply(index: SessionIndex, prompt: int) -> bool:
    """Whether a reply is below ``prompt``: a message reached without passing another prompt."""
    stack = index.children(prompt)
    while stack:
        row = stack.pop()
        if index.types[row] == "message" and index.roles[row] == "user":
            continue
        if index.types[row] == "message":
            return True
        stack.extend(index.children(row))
    return False


@settings(max_examples=examples(200), deadline=None)
@given(steps=st.lists(STEP, min_size=6, max_size=20))
def test_no_column_ends_at_a_prompt_without_the_answer_below_it(tmp_path_factory, steps) -> None:
    """Whatever is hung where, the comparison of a branch point's branches shows no prompt as a
    column's last turn, its answer empty, while a reply to it is below it."""
    session = SessionFile.open(_written(tmp_path_factory.mktemp("ends"), steps))
    index = session.index
    points = [row for row in range(len(index)) if index.is_node(row) and len(index.children(row)) > 1]
    for point in points:
        picks = [Pick(session, row, index.ids[row]) for row in index.children(point)[:MAX_COLUMNS]]
        for column in compare(picks).columns:
            for turn in column.turns[-1:]:
                if turn.prompt is not None and not turn.answer:
                    assert not _has_reply(index, index.row(turn.prompt.id)), (column.ref, turn.prompt.id)
