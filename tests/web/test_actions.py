"""Writes without a chat turn: navigate (persisted leaf), label, rename, fork, compaction, new session."""

from __future__ import annotations

import json
import re

HTMX = {"HTTP_HX_REQUEST": "true"}
TREE = "02-tree-branches"


def test_switching_branch_resumes_where_it_was_left_and_persists_the_position(client, pi) -> None:
    url = f"/s/{pi.id(TREE)}/"
    # At the pydantic branch; "›" on 97690895 goes to its sibling branch_summary 07721729, whose newest
    # entry is de4f0d3a.
    response = client.post(url + "navigate/", {"to": "07721729", "mode": "branch", "at": "750a4556"}, **HTMX)
    assert response["HX-Push-Url"] == f"{url}e/de4f0d3a/"
    assert json.loads(response["HX-Trigger-After-Swap"]) == {"pitree:moved": {}}
    last = pi.lines(pi.path(TREE))[-1]
    assert last["type"] == "leaf" and last["targetId"] == "de4f0d3a" and last["parentId"] == "750a4556"
    # A reload of the session (not the permalink) comes back to that branch.
    assert 'data-position="de4f0d3a"' in client.get(url).content.decode()
    assert pi.reopen(pi.path(TREE)).leaf_id == "de4f0d3a"


def test_navigating_to_where_the_file_already_is_writes_nothing(client, pi) -> None:
    before = pi.path(TREE).read_bytes()
    client.post(f"/s/{pi.id(TREE)}/navigate/", {"to": "750a4556", "mode": "exact"}, **HTMX)
    assert pi.path(TREE).read_bytes() == before


def test_switching_back_returns_to_a_position_reached_by_navigation(client, pi) -> None:
    url = f"/s/{pi.id(TREE)}/navigate/"
    client.post(url, {"to": "37bad775", "mode": "exact"}, **HTMX)  # into the regex branch, mid-way
    client.post(url, {"to": "97690895", "mode": "branch"}, **HTMX)  # back to the pydantic branch
    response = client.post(url, {"to": "07721729", "mode": "branch"}, **HTMX)  # and over again
    assert response["HX-Push-Url"].endswith("/e/37bad775/")


def test_navigate_to_the_start_and_unknown_targets(client, pi) -> None:
    url = f"/s/{pi.id(TREE)}/navigate/"
    response = client.post(url, {"to": "", "mode": "exact"}, **HTMX)
    assert response["HX-Push-Url"] == f"/s/{pi.id(TREE)}/"
    assert pi.lines(pi.path(TREE))[-1] == {**pi.lines(pi.path(TREE))[-1], "type": "leaf", "targetId": None}
    before = pi.path(TREE).read_bytes()
    refused = client.post(url, {"to": "nothere", "mode": "branch"}, **HTMX)
    assert refused.status_code == 409 and pi.path(TREE).read_bytes() == before


def test_label_set_and_clear(client, pi) -> None:
    url = f"/s/{pi.id(TREE)}/label/"
    response = client.post(url, {"entry": "e65e9e73", "label": "docstring <b>done</b>", "at": "750a4556"}, **HTMX)
    label = pi.lines(pi.path(TREE))[-1]
    assert label == {
        **label,
        "type": "label",
        "targetId": "e65e9e73",
        "label": "docstring <b>done</b>",
        "parentId": "750a4556",
    }
    html = response.content.decode()
    assert "docstring &lt;b&gt;done&lt;/b&gt;" in html and "<b>done</b>" not in html
    client.post(url, {"entry": "e65e9e73", "label": "", "at": label["id"]}, **HTMX)
    cleared = pi.lines(pi.path(TREE))[-1]
    assert cleared["type"] == "label" and "label" not in cleared
    assert "e65e9e73" not in pi.reopen(pi.path(TREE)).index.labels


def test_label_on_a_missing_entry_is_refused(client, pi) -> None:
    before = pi.path(TREE).read_bytes()
    response = client.post(f"/s/{pi.id(TREE)}/label/", {"entry": "nothere", "label": "x"}, **HTMX)
    assert response.status_code == 409 and pi.path(TREE).read_bytes() == before


def test_rename_cleans_the_name_like_pi(client, pi) -> None:
    response = client.post(f"/s/{pi.id(TREE)}/rename/", {"name": "  New\r\nname ", "at": "750a4556"}, **HTMX)
    info = pi.lines(pi.path(TREE))[-1]
    assert info["type"] == "session_info" and info["name"] == "New name"
    # Answered in place: the transcript at the new entry, the header's title out of band (no reload).
    assert response.status_code == 200 and "HX-Redirect" not in response
    assert response["HX-Push-Url"].endswith(f"/e/{info['id']}/")
    body = response.content.decode()
    assert f'data-position="{info["id"]}"' in body
    assert re.search(r'<h1 id="session-title" [^>]*hx-swap-oob="true">New name</h1>', body)
    assert "<title>New name · pitree</title>" in body
    assert re.search(r'<h1 id="session-title"[^>]*>New name</h1>', client.get(f"/s/{pi.id(TREE)}/").content.decode())


def test_rename_from_a_plain_form_redirects_to_the_new_entry(client, pi) -> None:
    response = client.post(f"/s/{pi.id(TREE)}/rename/", {"name": "Plain", "at": "750a4556"})
    info = pi.lines(pi.path(TREE))[-1]
    assert response.status_code == 302 and response["Location"].endswith(f"/e/{info['id']}/")


def test_fork_opens_a_new_file_that_points_back(client, pi) -> None:
    response = client.post(f"/s/{pi.id(TREE)}/fork/", {"entry": "37bad775"}, **HTMX)
    new_url = response["HX-Redirect"]
    new_id = re.match(r"/s/([^/]+)/$", new_url).group(1)
    forked = next(p for p in pi.folder.iterdir() if new_id in p.name)
    header = pi.lines(forked)[0]
    assert header["parentSession"] == str(pi.path(TREE).absolute())
    assert [e["id"] for e in pi.lines(forked)[1:6]] == ["f87f9c1c", "2f760a8d", "07721729", "4b928ed4", "37bad775"]
    page = client.get(new_url).content.decode()
    assert "Forked from" in page and f'href="/s/{pi.id(TREE)}/e/37bad775/"' in page
    assert f'href="/s/{new_id}/"' in client.get(f"/s/{pi.id(TREE)}/").content.decode()  # the parent lists it


def test_compaction_writes_a_summary_and_folds_the_history(client, pi) -> None:
    url = f"/s/{pi.id(TREE)}/compact/"
    response = client.post(url, {"keep_from": "ab506f7f", "at": "750a4556"}, **HTMX)
    compaction = pi.lines(pi.path(TREE))[-1]
    assert compaction["type"] == "compaction" and compaction["firstKeptEntryId"] == "ab506f7f"
    assert compaction["parentId"] == "750a4556" and compaction["summary"].strip()
    assert compaction["tokensBefore"] > 0
    context = pi.reopen(pi.path(TREE)).context()
    assert [m["role"] for m in context.messages][:3] == ["compactionSummary", "user", "assistant"]
    assert "History compacted" in response.content.decode()


def test_compaction_from_an_entry_off_the_branch_is_refused(client, pi) -> None:
    before = pi.path(TREE).read_bytes()
    response = client.post(f"/s/{pi.id(TREE)}/compact/", {"keep_from": "4b928ed4", "at": "750a4556"}, **HTMX)
    assert response.status_code == 409 and "not on this branch" in response.content.decode()
    assert pi.path(TREE).read_bytes() == before


def test_leaving_a_branch_with_a_summary_writes_a_branch_summary(client, pi) -> None:
    response = client.post(
        f"/s/{pi.id(TREE)}/navigate/", {"to": "2f760a8d", "mode": "exact", "at": "750a4556", "summarize": "1"}, **HTMX
    )
    summary = pi.lines(pi.path(TREE))[-1]
    assert summary["type"] == "branch_summary" and summary["parentId"] == "2f760a8d"
    assert summary["fromId"] == "750a4556" and summary["summary"].strip()
    assert response["HX-Push-Url"].endswith(f"/e/{summary['id']}/")


def test_new_session_in_a_workspace(client, sessions_dir) -> None:
    response = client.post("/new/", {"cwd": "/home/me/proj", "name": "Try <things>"})
    folder = sessions_dir / "--home-me-proj--"
    (created,) = folder.iterdir()
    assert response.status_code == 302 and created.stem.split("_", 1)[1] in response["Location"]
    page = client.get(response["Location"]).content.decode()
    assert re.search(r'<h1 id="session-title"[^>]*>Try &lt;things&gt;</h1>', page) and 'id="composer"' in page
    refused = client.post("/new/", {"cwd": "relative/path"}, **HTMX)
    assert refused.status_code == 422 and len(list(sessions_dir.rglob("*.jsonl"))) == 1


def test_the_compact_form_offers_recent_turns_and_keeps_the_last_two_by_default(client, pi) -> None:
    html = client.get(f"/s/{pi.id('04-compaction')}/").content.decode()
    (choices,) = re.findall(r'<select name="keep_from">(.*?)</select>', html)
    options = re.findall(r'<option value="([^"]+)"( selected)?>', choices)
    assert [value for value, _ in options] == ["6b8c1404", "cc88852e", "136049a4", "97f6f0ca"]
    assert [value for value, selected in options if selected] == ["cc88852e"]


def test_a_workspace_too_long_for_a_folder_name_is_a_form_error(client, sessions_dir) -> None:
    response = client.post("/new/", {"cwd": "/" + "deep/" * 60}, HTTP_HX_REQUEST="true")
    assert response.status_code == 422 and "too long" in response.content.decode()
    assert not any(sessions_dir.iterdir())
