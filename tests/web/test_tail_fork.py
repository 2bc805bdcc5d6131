"""Forking only the last turns from the page: the assistant writes the summary of what came before,
the new session opens, and the source's page names it among its forks."""

from __future__ import annotations

from typing import Any

from sessions_app.sessionfiles.store import SessionFile

HX = {"HTTP_HX_REQUEST": "true"}


def test_the_fork_panel_offers_it_and_it_makes_a_session_from_a_summary(client: Any, pi: Any) -> None:
    source_id = pi.id("04-compaction")
    leaf = SessionFile(pi.path("04-compaction")).leaf_id
    panel = client.get(f"/s/{source_id}/e/{leaf}/actions/", {"do": "fork"}, **HX).content.decode()
    assert f'action="/s/{source_id}/tail-fork/"' in panel and 'name="turns" value="2"' in panel
    answer = client.post(f"/s/{source_id}/tail-fork/", {"entry": leaf, "turns": 1}, **HX)
    assert answer.status_code == 200 and answer["HX-Redirect"].startswith("/s/")
    fork_id = answer["HX-Redirect"].split("/")[2]
    (path,) = [p for p in pi.folder.glob("*.jsonl") if fork_id in p.name]
    fork = SessionFile(path)
    roles = [m.get("role") for m in fork.context().messages]
    assert roles[0] == "compactionSummary" and roles.count("user") == 1
    assert fork.context().messages[0]["summary"].strip()  # written by the (offline) assistant
    assert fork.parent_session == str(pi.path("04-compaction").absolute())
    assert fork_id in client.get(f"/s/{source_id}/").content.decode()  # the source lists its fork
    assert fork_id in client.get(f"/s/{fork_id}/").content.decode()


def test_too_few_turns_is_refused_and_nothing_written(client: Any, pi: Any) -> None:
    source_id = pi.id("01-linear")
    before = sorted(pi.folder.glob("*.jsonl"))
    answer = client.post(
        f"/s/{source_id}/tail-fork/", {"entry": SessionFile(pi.path("01-linear")).leaf_id, "turns": 2}, **HX
    )
    assert answer.status_code == 409 and "nothing before the last 2 to summarise" in answer.content.decode()
    assert sorted(pi.folder.glob("*.jsonl")) == before
