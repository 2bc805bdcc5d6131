"""Taking a session elsewhere: downloads (as pi reads them, and Markdown), and uploads that are checked
by the core, limited in size, and never replace a file."""

from __future__ import annotations

import json
import os
import re
import stat
import threading
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from support.described import Controls
from support.hostile import build_hostile_folder
from support.teams import CREW_CWD, CREW_FOLDER, LEAF, SAMPLES, World

from sessions_app.access.workspaces import personal_workspace
from sessions_app.models import Authorship
from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles.errors import NotASession
from sessions_app.sessionfiles.fork import encode_cwd
from sessions_app.sessionfiles.store import SessionFile, read_header
from sessions_app.transfer.markdown import TITLE_WIDTH
from sessions_app.views import transfer as transfer_views

HX = {"HTTP_HX_REQUEST": "true"}


def _files(root: Path) -> dict[Path, bytes]:
    return {path: path.read_bytes() for path in root.rglob("*.jsonl") if path.is_file()}


# ------------------------------------------------------------------------------------------ downloads


def test_the_owner_downloads_the_file_as_it_is(world: World) -> None:
    response = world.client("owner").get(world.url("download.jsonl"))
    assert response.status_code == 200 and b"".join(response) == world.bytes()
    assert response["Content-Disposition"] == f'attachment; filename="{world.path.name}"'


def test_a_branch_downloads_as_a_session_pi_resumes(world: World, tmp_path: Path) -> None:
    response = world.client("viewer").get(world.url("download.jsonl"), {"entry": "c2ecb522"})
    data = b"".join(response)  # made as it is sent: read once
    lines = [json.loads(line) for line in data.splitlines()]
    assert lines[0] == world.lines()[0]  # the header, the same session id
    assert [line["id"] for line in lines[1:]] == ["f87f9c1c", "2f760a8d", "97690895", "c2ecb522"]
    copy = tmp_path / "branch.jsonl"
    copy.write_bytes(data)
    assert SessionFile(copy, fsync=False).leaf_id == "c2ecb522"
    assert ".branch-c2ecb522.jsonl" in response["Content-Disposition"]


def test_the_page_shows_the_pi_command_that_resumes_a_download(world: World) -> None:
    html = world.client("viewer").get(world.url()).content.decode()
    assert f"pi --session ~/Downloads/{world.path.name}" in html


def test_markdown_holds_the_branch_s_conversation(world: World) -> None:
    text = b"".join(world.client("collaborator").get(world.url("download.md"), {"entry": "0f649aff"})).decode()
    assert "## You\n\nWrite a function that validates todo titles" in text
    assert "Switched to a pydantic model" in text and "empty titles" not in text


def test_markdown_clips_its_title_to_one_short_line(world: World) -> None:
    """The title line is the session's title as pages clip it, whatever size its name (or first
    message) has: not a 20 MB heading."""
    name = "A very long name " * 20_000 + "\n\n## not a heading of its own"
    SessionFile(world.path, fsync=False).append(E.session_info(name), LEAF)
    text = b"".join(world.client("owner").get(world.url("download.md"))).decode()
    title, rest = text.split("\n", 1)
    assert title.startswith("# A very long name A very") and title.endswith("…") and len(title) <= 2 + TITLE_WIDTH
    assert "not a heading of its own" not in rest


def test_markdown_says_which_replies_were_stopped_or_failed(world: World) -> None:
    writer = SessionFile(world.path, fsync=False)
    stopped = E.assistant_message("Half an ans", provider="p", model="m", api="x", stop_reason="aborted")
    writer.append(stopped, LEAF)
    failed = E.assistant_message("", provider="p", model="m", api="x", stop_reason="error", error_message="HTTP 503")
    writer.append(failed)
    text = b"".join(world.client("owner").get(world.url("download.md"))).decode()
    assert "Half an ans\n\n*Stopped before the reply was complete.*\n" in text
    assert "*The reply failed: HTTP 503.*" in text
    assert text.count("*Stopped") == 1  # the other replies ended as they should


def test_a_download_whose_file_became_a_fifo_is_refused_at_once(world: World, monkeypatch: Any) -> None:
    """A FIFO put in the file's place once the session is open, as the download reads the file: read,
    it would wait for a writer forever; refused, it is the core's refusal of a file that is no
    regular file (409), as on any other page."""
    opened = transfer_views.open_session

    def open_then_swap(request: Any, session_id: str) -> Any:
        view = opened(request, session_id)
        world.path.unlink()
        os.mkfifo(world.path)
        return view

    monkeypatch.setattr(transfer_views, "open_session", open_then_swap)
    answers: list[Any] = []
    download = threading.Thread(
        target=lambda: answers.append(world.client("owner").get(world.url("download.jsonl"))), daemon=True
    )
    download.start()
    download.join(timeout=10)
    waited = download.is_alive()
    if waited:  # a writer opening the FIFO ends the blocked read: no thread is left hanging
        os.close(os.open(world.path, os.O_WRONLY | os.O_NONBLOCK))
        download.join(timeout=10)
    assert not waited, "the download waited for a writer of the FIFO"
    assert answers[0].status_code == 409
    assert "a FIFO, not a session file" in answers[0].content.decode()


# -------------------------------------------------------------------------------------------- uploads


def _upload(client: Any, data: bytes, cwd: str = CREW_CWD, name: str = "from-pi.jsonl") -> Any:
    """The answer to an upload; a saved one takes the uploader to the new session (its page, then)."""
    response = client.post("/upload/", {"file": SimpleUploadedFile(name, data), "cwd": cwd})
    if response.status_code != 302 or not response["Location"].startswith("/s/"):
        return response
    return client.get(response["Location"])


def test_an_upload_becomes_a_new_file_under_an_id_of_its_own(world: World) -> None:
    data = (SAMPLES / "01-linear.jsonl").read_bytes()
    response = _upload(world.client("member"), data)
    # The upload takes the uploader to the new session, which says it was saved (it stayed on the upload page).
    assert response.status_code == 200 and "Uploaded: saved as a new session." in response.content.decode()
    assert 'id="composer-text"' in response.content.decode()
    (path,) = [p for p in (world.root / CREW_FOLDER).glob("*.jsonl") if p != world.path]
    sent, stored = json.loads(data.splitlines()[0]), json.loads(path.read_bytes().splitlines()[0])
    assert stored["id"] != sent["id"] and stored == {**sent, "id": stored["id"]}
    assert path.read_bytes().splitlines()[1:] == data.splitlines()[1:]  # every entry byte for byte
    assert Authorship.objects.get(session_id=stored["id"], entry_id="").user == world.users["member"]


def test_the_upload_form_ties_its_help_and_each_error_to_the_field(world: World) -> None:
    member = world.client("member")
    page = Controls(member.get("/upload/").content.decode())
    assert {"file", "cwd"} <= set(page.controls) and page.missing() == {} and page.invalid() == set()
    response = _upload(member, b"not json\n")
    assert response.status_code == 422
    page = Controls(response.content.decode())
    assert page.missing() == {} and page.invalid() == {"file"}
    assert "not a session pitree can read" in page.description("file")
    assert page.controls["file"].get("accept") and page.controls["cwd"].get("list") == "workspace-choices"


def test_an_instance_owner_s_upload_is_kept_byte_for_byte(world: World, django_user_model: Any) -> None:
    """Who sees every session learns nothing from an upload: their file keeps its id when none has it."""
    root = Client()
    root.force_login(django_user_model.objects.create_superuser("root", password=None))
    data = (SAMPLES / "01-linear.jsonl").read_bytes()
    assert _upload(root, data).status_code == 200
    (path,) = [p for p in (world.root / CREW_FOLDER).glob("*.jsonl") if p != world.path]
    assert path.read_bytes() == data


def _stranger_uploads(world: World, data: bytes) -> tuple[Any, dict[str, Any]]:
    """Erin uploads into her own workspace: the answer, and the header stored."""
    erin = world.users["stranger"]
    cwd = personal_workspace(erin).cwd
    folder = world.root / encode_cwd(cwd)
    before = set(folder.glob("*.jsonl"))
    response = _upload(world.client("stranger"), data, cwd=cwd)
    (path,) = set(folder.glob("*.jsonl")) - before
    return response, json.loads(path.read_bytes().splitlines()[0])


def test_an_upload_does_not_tell_whether_a_session_it_may_not_see_exists(world: World) -> None:
    """The id of a session Erin may not see, and an id nobody has, give the same answer: a new
    session with an id of its own, no fork of anything."""
    answers = []
    for session_id in (world.session_id, "00000000-0000-7000-8000-000000000000"):
        header = {**world.lines()[0], "id": session_id}
        data = json.dumps(header).encode() + b"\n" + world.bytes().split(b"\n", 1)[1]
        response, stored = _stranger_uploads(world, data)
        assert response.status_code == 200 and stored["id"] != session_id and "parentSession" not in stored
        answers.append(re.findall(r'<div class="notices card" role="status">(.*?)</div>', response.content.decode()))
    assert answers[0] == answers[1] == ["<p>Uploaded: saved as a new session.</p>"]


def test_an_upload_cannot_claim_to_fork_a_session_the_uploader_may_not_see(world: World) -> None:
    header = {**world.lines()[0], "id": "00000000-0000-7000-8000-000000000001"}
    header["parentSession"] = str(world.path.absolute())
    data = json.dumps(header).encode() + b"\n" + world.bytes().split(b"\n", 1)[1]
    _, stored = _stranger_uploads(world, data)
    assert "parentSession" not in stored
    page = world.client("owner").get(world.url()).content.decode()
    assert "erin" not in page and "Forked by" not in page
    # Someone who may see it keeps the lineage their file claims.
    dave = world.client("viewer")
    cwd = personal_workspace(world.users["viewer"]).cwd
    response = _upload(dave, data, cwd=cwd)
    assert response.status_code == 200 and "a fork of" in response.content.decode()
    assert "Forked by dave" in world.client("owner").get(world.url()).content.decode()


def test_an_upload_of_a_session_here_already_becomes_its_fork(world: World) -> None:
    before = world.bytes()
    response = _upload(world.client("owner"), before)
    assert response.status_code == 200 and "a fork of" in response.content.decode()
    (path,) = [p for p in (world.root / CREW_FOLDER).glob("*.jsonl") if p != world.path]
    header = json.loads(path.read_bytes().splitlines()[0])
    assert header["id"] != world.session_id and header["parentSession"] == str(world.path.absolute())
    assert path.read_bytes().splitlines()[1:] == before.splitlines()[1:]
    assert world.bytes() == before


def test_an_upload_to_a_workspace_that_is_not_theirs_is_refused(world: World) -> None:
    before = _files(world.root)
    response = _upload(world.client("viewer"), (SAMPLES / "01-linear.jsonl").read_bytes())
    assert response.status_code == 403
    # Nor into a folder nobody owns, where pi may be writing.
    response = _upload(world.client("member"), (SAMPLES / "01-linear.jsonl").read_bytes(), cwd="/home/someone/app")
    assert response.status_code == 403
    assert _files(world.root) == before


def test_an_upload_over_the_limit_is_refused(world: World, settings: Any) -> None:
    settings.PITREE_MAX_UPLOAD_BYTES = 100
    before = _files(world.root)
    response = _upload(world.client("owner"), (SAMPLES / "01-linear.jsonl").read_bytes())
    assert response.status_code == 413 and "the limit is 100" in response.content.decode()
    assert _files(world.root) == before


@pytest.mark.sweep  # every file of the hostile folder: the quick tier keeps the refusals this module tests one by one
def test_uploading_hostile_files_changes_nothing_here(world: World, tmp_path: Path, settings: Any) -> None:
    corpus = build_hostile_folder(tmp_path / "hostile")
    settings.PITREE_MAX_LINE_BYTES = corpus.line_limit
    owner = world.client("owner")
    regular = [path for path in (*corpus.good, *corpus.bad) if stat.S_ISREG(os.lstat(path).st_mode)]
    assert len(regular) > 30
    for path in regular:
        before = _files(world.root)
        response = _upload(owner, path.read_bytes(), name="hostile.jsonl")
        after = _files(world.root)
        assert {p: b for p, b in after.items() if p in before} == before, path  # nothing replaced or changed
        added = [p for p in after if p not in before]
        if path in corpus.bad:
            assert response.status_code == 422 and not added, path
            assert "not a session pitree can read" in response.content.decode() or "empty" in response.content.decode()
        else:
            assert response.status_code == 200 and len(added) == 1, (path, response.content.decode()[-500:])
            assert SessionFile(added[0], fsync=False, max_line_bytes=corpus.line_limit).header


@pytest.mark.parametrize("role", ["link", "anonymous"])
def test_uploads_need_an_account(world: World, role: str) -> None:
    response = _upload(world.client(role), (SAMPLES / "01-linear.jsonl").read_bytes())
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")


def test_the_upload_page_names_the_users_workspaces(world: World) -> None:
    html = world.client("member").get("/upload/").content.decode()
    assert f'<option value="{CREW_CWD}">' in html and 'list="workspace-choices"' in html


def test_the_owner_leaf_is_what_a_plain_download_resumes_at(world: World, tmp_path: Path) -> None:
    copy = tmp_path / "whole.jsonl"
    copy.write_bytes(b"".join(world.client("owner").get(world.url("download.jsonl"))))
    assert SessionFile(copy, fsync=False).leaf_id == LEAF


def test_an_upload_whose_first_line_is_not_json_is_told_so(world: World) -> None:
    # pi passes over lines before the header that are not JSON; the error named only the next line
    # ("line 2 is not a session header") for a file whose first line was already wrong.
    data = b"garbage first\n" + (SAMPLES / "01-linear.jsonl").read_bytes().splitlines()[1] + b"\n"
    response = _upload(world.client("member"), data)
    assert response.status_code == 422
    html = response.content.decode()
    assert "line 1 is not JSON" in html and "line 2 is not a session header either" in html
    path = world.root / "first-line.jsonl"
    path.write_bytes(data)
    with pytest.raises(NotASession, match=r"line 1 is not JSON: .*; line 2 is not a session header"):
        read_header(path)
    with pytest.raises(NotASession, match=r"line 1 is not JSON: .*; line 2 is not a session header"):
        SessionFile.open(path)
