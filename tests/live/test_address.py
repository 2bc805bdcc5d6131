"""Which address a tab keeps after it acts: a tab at the session's own URL keeps following the session
(a reload shows what others added since); a permalink stays a permalink, to where the tab now is."""

from __future__ import annotations

LINEAR = "01-linear"
TREE = "02-tree-branches"
LEGACY = "05-legacy-v1.migrated"


def _htmx(current: str) -> dict[str, str]:
    return {"HX-Request": "true", "HX-Current-URL": f"http://testserver{current}"}


def test_a_tab_following_the_session_keeps_its_address_after_sending(client, sessions) -> None:
    sessions.copy(LINEAR)
    url = f"/s/{sessions.id(LINEAR)}/"
    response = client.post(url + "send/", {"text": "hi", "parent": "db26dc72"}, headers=_htmx(url))
    assert response.status_code == 200 and response["HX-Push-Url"] == "false"


def test_a_tab_on_a_permalink_moves_to_the_permalink_of_its_new_position(client, sessions) -> None:
    path = sessions.copy(LINEAR)
    url = f"/s/{sessions.id(LINEAR)}/"
    response = client.post(url + "send/", {"text": "hi", "parent": "358d8704"}, headers=_htmx(url + "e/358d8704/"))
    reply = sessions.last(path)
    assert response["HX-Push-Url"] == f"{url}e/{reply['id']}/"


def test_a_following_tab_that_switches_branch_keeps_its_address(client, sessions) -> None:
    sessions.copy(TREE)
    url = f"/s/{sessions.id(TREE)}/"
    response = client.post(url + "navigate/", {"to": "07721729", "mode": "branch"}, headers=_htmx(url))
    assert response["HX-Push-Url"] == "false"  # the file's position moved there too: a reload shows it
    assert 'data-position="de4f0d3a"' in client.get(url).content.decode()


def test_a_move_the_file_does_not_record_gets_a_permalink(client, sessions) -> None:
    # A read-only (v1) session: moving writes nothing, so only a permalink can show where the tab is.
    sessions.copy(LEGACY, source="05-legacy-v1.input")
    sid = sessions.id(LEGACY)
    session = client.get(f"/s/{sid}/")
    assert session.status_code == 200
    first = session.content.decode().split('data-entry="', 1)[1].split('"', 1)[0]
    response = client.post(f"/s/{sid}/navigate/", {"to": first, "mode": "exact"}, headers=_htmx(f"/s/{sid}/"))
    assert response["HX-Push-Url"] == f"/s/{sid}/e/{first}/"
