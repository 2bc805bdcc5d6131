"""A message sent from a tab that missed how the conversation went on after the entry it answers (pi
or another tab answered it, or moved the session further down) is refused, with both ways on:
continue from the latest entry, or send as a new branch on purpose. Nothing is ever made a sibling
silently."""

from __future__ import annotations

import re

import pytest

from sessions_app.sessionfiles.store import SessionFile

HTMX = {"HTTP_HX_REQUEST": "true"}
LINEAR = "01-linear"
LEAF = "db26dc72"  # the sample's position (its name entry), where a tab following the session stands


@pytest.fixture
def linear(sessions):
    path = sessions.copy(LINEAR)
    return path, f"/s/{sessions.id(LINEAR)}/send/"


def _choices(html: str) -> dict[str, dict[str, str]]:
    """The buttons the refusal offers, by their words, with their data attributes."""
    found = {}
    for attributes, words in re.findall(r"<button type=\"button\" data-resend([^>]*)>([^<]*)</button>", html):
        found[words.split(" (")[0]] = dict(re.findall(r'data-(\w+)="([^"]*)"', attributes))
    return found


def test_the_page_carries_its_cursor_in_the_composer(client, sessions, linear) -> None:
    path, _ = linear
    html = client.get(f"/s/{sessions.id(LINEAR)}/").content.decode()
    assert f'name="cursor" value="{path.stat().st_size}"' in html
    assert f'data-cursor="{path.stat().st_size}"' in html


def test_a_send_that_missed_an_answer_to_its_entry_is_refused_and_offers_both_ways(client, sessions, linear) -> None:
    path, send = linear
    cursor = sessions.size(path)
    by_pi = sessions.append(path, "pi went on", role="assistant")  # under the leaf, as pi appends
    before = path.read_bytes()
    response = client.post(send, {"text": "Stale?", "parent": LEAF, "cursor": cursor}, **HTMX)
    assert response.status_code == 409 and path.read_bytes() == before  # nothing written
    assert response["HX-Retarget"] == "#flash"  # next to the composer, whose draft stays
    html = response.content.decode()
    assert "the conversation went on after the message you are answering" in html
    assert _choices(html) == {
        "Continue from the latest": {"parent": by_pi["id"], "cursor": str(len(before))},
        "Send as a new branch here": {"parent": LEAF, "branch": "1"},
    }
    assert "“pi went on”" in html


def test_continuing_from_the_latest_answers_it(client, sessions, linear) -> None:
    path, send = linear
    cursor = sessions.size(path)
    by_pi = sessions.append(path, "pi went on", role="assistant")
    refused = client.post(send, {"text": "Then this", "parent": LEAF, "cursor": cursor}, **HTMX)
    choice = _choices(refused.content.decode())["Continue from the latest"]
    response = client.post(send, {"text": "Then this", **choice}, **HTMX)
    assert response.status_code == 200
    user = [e for e in SessionFile(path).path_entries() if e.get("message", {}).get("content") == "Then this"]
    assert [e["parentId"] for e in user] == [by_pi["id"]]


def test_sending_as_a_new_branch_here_makes_the_sibling_on_purpose(client, sessions, linear) -> None:
    path, send = linear
    cursor = sessions.size(path)
    by_pi = sessions.append(path, "pi went on", role="assistant")
    response = client.post(send, {"text": "Another way", "parent": LEAF, "cursor": cursor, "branch": "1"}, **HTMX)
    assert response.status_code == 200
    session = SessionFile(path)
    children = [session.index.ids[row] for row in session.index.children(session.row_of(LEAF))]
    assert children[0] == by_pi["id"] and len(children) == 2


def test_a_leaf_entry_that_moved_the_session_below_the_entry_refuses_too(client, sessions, linear) -> None:
    path, send = linear
    SessionFile(path, fsync=False).navigate("c256703f")  # "continue from here", an answer earlier
    cursor = sessions.size(path)
    SessionFile(path, fsync=False).navigate(LEAF)  # another tab went back down the branch
    response = client.post(send, {"text": "From here?", "parent": "c256703f", "cursor": cursor}, **HTMX)
    assert response.status_code == 409
    assert _choices(response.content.decode())["Continue from the latest"]["parent"] == LEAF


@pytest.mark.parametrize("where", ["elsewhere", "seen"])
def test_what_the_page_has_seen_or_what_happened_elsewhere_does_not_refuse(client, sessions, linear, where) -> None:
    path, send = linear
    cursor = sessions.size(path)
    sessions.append(path, "another branch", parent="052b9a9c")  # not under the tab's entry
    if where == "seen":
        sessions.append(path, "pi went on", role="assistant")
        cursor = sessions.size(path)
        parent = sessions.last(path)["id"]
    else:
        parent = LEAF
    response = client.post(send, {"text": "Fine", "parent": parent, "cursor": cursor}, **HTMX)
    assert response.status_code == 200


def test_edit_and_resend_makes_its_sibling_without_a_cursor(client, sessions, linear) -> None:
    path, send = linear
    sessions.append(path, "pi went on", role="assistant")
    response = client.post(send, {"text": "Edited", "parent": "052b9a9c"}, **HTMX)  # the edit form has no cursor
    assert response.status_code == 200


def test_without_javascript_the_refusal_is_a_page_with_both_forms(client, sessions, linear) -> None:
    path, send = linear
    cursor = sessions.size(path)
    by_pi = sessions.append(path, "pi went on", role="assistant")
    response = client.post(send, {"text": "No script", "parent": LEAF, "cursor": cursor})
    assert response.status_code == 409
    html = response.content.decode()
    assert "<h1>Nothing was sent</h1>" in html and "No script" in html
    forms = re.findall(r'<form method="post" action="([^"]*)"[^>]*>(.*?)</form>', html, re.S)
    hidden = [dict(re.findall(r'name="(\w+)" value="([^"]*)"', form)) for action, form in forms if action == send]
    assert {"text": "No script", "parent": by_pi["id"], "cursor": str(sessions.size(path))}.items() <= hidden[0].items()
    assert {"text": "No script", "parent": LEAF, "branch": "1"}.items() <= hidden[1].items()
