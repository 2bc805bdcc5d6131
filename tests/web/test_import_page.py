"""The Import page: the export sent in pieces (as import.js sends it) or posted whole (without
JavaScript), imported in a thread of its own while the page follows its progress, into the user's
workspace; a malformed export refused with its reason, nothing written; another user's import not
there for anyone else."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from support import exports as X

from sessions_app.access import imports
from sessions_app.access.authorship import FILE
from sessions_app.access.workspaces import personal_workspace
from sessions_app.models import Authorship
from sessions_app.sessionfiles.fork import encode_cwd

HX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture(autouse=True)
def _workspaces(settings: Any, sessions_dir: Path) -> None:
    settings.PITREE_DEFAULT_CWD = "/srv/pitree"


def _finished(client: Any, status_url: str) -> str:
    """The status fragment once the import has ended (the page polls it every second)."""
    for _ in range(400):
        html = client.get(status_url, **HX).content.decode()
        if "hx-trigger" not in html:
            return html
        time.sleep(0.05)
    raise AssertionError("the import did not end")


def _send(client: Any, data: bytes, name: str, cwd: str, piece: int = 1000) -> str:
    """What import.js does: start, the pieces in order, run; returns the status page's URL."""
    urls = client.post("/import/start/", {"name": name, "size": len(data), "cwd": cwd}).json()
    offset = 0
    while offset < len(data):
        answer = client.post(
            f"{urls['piece']}?offset={offset}", data[offset : offset + piece], content_type="application/octet-stream"
        )
        assert answer.status_code == 200, answer.content
        offset = answer.json()["arrived"]
    started = client.post(urls["run"])
    assert started.status_code == 302
    return started["Location"]


def test_an_export_sent_in_pieces_is_imported_into_the_users_workspace(
    client: Any, owner: Any, sessions_dir: Path, tmp_path: Path
) -> None:
    page = client.get("/import/").content.decode()
    assert 'id="import-form"' in page and 'data-start="/import/start/"' in page and "pitree/import.js" in page
    data = X.gpt_export(tmp_path, [X.gpt_branching()]).read_bytes()
    status = _send(client, data, "chatgpt-export.zip", personal_workspace(owner).cwd)
    html = _finished(client, status)
    assert "Imported from ChatGPT: 1 conversation." in html
    assert "Pixels and sums" in html and "new, 17 entries" in html
    files = list((sessions_dir / encode_cwd(personal_workspace(owner).cwd)).glob("*.jsonl"))
    assert len(files) == 1
    session_id = files[0].stem.split("_", 1)[1]
    assert f'href="/s/{session_id}/"' in html
    assert Authorship.objects.get(session_id=session_id, entry_id=FILE).user == owner
    assert "picture sediment://file_000missing is not in the export" in html  # what was read as best it could be
    assert str(sessions_dir) not in html and not list(
        (tmp_path / "imports").rglob("export")
    )  # the scratch copy is gone
    again = _finished(client, _send(client, data, "chatgpt-export.zip", personal_workspace(owner).cwd))
    assert "unchanged" in again


def test_the_status_page_shows_the_progress_and_polls_it(client: Any, owner: Any) -> None:
    urls = client.post("/import/start/", {"name": "chat.json", "size": 10, "cwd": personal_workspace(owner).cwd}).json()
    status = urls["piece"].removesuffix("piece/")
    html = client.get(status).content.decode()
    assert "Waiting for the export (0\xa0bytes of 10\xa0bytes arrived)" in html
    assert f'hx-get="{status}" hx-trigger="every 1s"' in html and '<progress value="0" max="10"' in html


def test_the_status_is_read_once_while_the_import_writes_it(client: Any, owner: Any, monkeypatch: Any) -> None:
    """The import writes its status while the page reads it: read twice, a status read as it wrote
    its last piece and again once it had ended showed the report of nothing ("Imported from : 0
    conversations.") and stopped following."""
    urls = client.post("/import/start/", {"name": "chat.json", "size": 10, "cwd": personal_workspace(owner).cwd}).json()
    told = iter(
        [
            {"state": "writing", "done": 1, "total": 1},
            {"state": "done", "kind": "Open WebUI", "outcomes": [], "notes": [], "more_notes": 0},
        ]
    )
    monkeypatch.setattr(imports.Job, "status", lambda job: next(told))
    html = client.get(urls["piece"].removesuffix("piece/"), **HX).content.decode()
    assert "Writing sessions: 1 of 1" in html and 'hx-trigger="every 1s"' in html


def test_pieces_out_of_order_or_too_many(client: Any, owner: Any) -> None:
    urls = client.post("/import/start/", {"name": "chat.json", "size": 10, "cwd": personal_workspace(owner).cwd}).json()
    late = client.post(f"{urls['piece']}?offset=5", b"abcde", content_type="application/octet-stream")
    assert late.status_code == 409 and late.json() == {"error": "expected the bytes from 0", "arrived": 0}
    assert client.post(f"{urls['piece']}?offset=0", b"0123456789", content_type="application/octet-stream").json() == {
        "arrived": 10
    }
    more = client.post(f"{urls['piece']}?offset=10", b"x", content_type="application/octet-stream")
    assert more.status_code == 409 and "More bytes" in more.json()["error"]
    assert client.post(f"{urls['piece']}?offset=-1", b"x", content_type="application/octet-stream").status_code == 400


def test_run_waits_for_the_whole_export(client: Any, owner: Any) -> None:
    urls = client.post("/import/start/", {"name": "chat.json", "size": 10, "cwd": personal_workspace(owner).cwd}).json()
    answer = client.post(urls["run"])
    assert answer.status_code == 409 and answer.json()["error"] == "The export has not arrived whole."


def test_posted_whole_without_javascript(client: Any, owner: Any, sessions_dir: Path, tmp_path: Path) -> None:
    export = X.write_json(tmp_path / "chat.json", [X.webui_multimodel()])
    upload = SimpleUploadedFile("chat.json", export.read_bytes(), content_type="application/json")
    answer = client.post("/import/", {"file": upload, "cwd": personal_workspace(owner).cwd})
    assert answer.status_code == 302 and answer["Location"].startswith("/import/")
    page = client.get(answer["Location"]).content.decode()
    assert "<h1>Importing chat.json</h1>" in page
    assert "Imported from Open WebUI: 1 conversation." in _finished(client, answer["Location"])


def test_a_malformed_export_is_refused_with_its_reason(client: Any, owner: Any, sessions_dir: Path) -> None:
    data = b'[{"title": "a", "mapping": {}}, {"title": '
    html = _finished(client, _send(client, data, "conversations.json", personal_workspace(owner).cwd))
    assert "Not imported: conversations.json: not valid JSON near byte" in html and "(after item 1)" in html
    assert "Nothing was written." in html
    assert not list(sessions_dir.rglob("*.jsonl"))


def test_an_export_over_the_limit(client: Any, owner: Any, settings: Any) -> None:
    settings.PITREE_MAX_IMPORT_BYTES = 100
    big = client.post("/import/start/", {"name": "x.zip", "size": 101, "cwd": personal_workspace(owner).cwd})
    assert big.status_code == 422 and big.json()["error"] == "The export has 101 bytes; the limit is 100."


@pytest.mark.django_db
def test_someone_elses_import_is_not_there(client: Any, owner: Any, django_user_model: Any) -> None:
    urls = client.post("/import/start/", {"name": "chat.json", "size": 10, "cwd": personal_workspace(owner).cwd}).json()
    other = django_user_model.objects.create_user("mallory")
    client.force_login(other)
    status = urls["piece"].removesuffix("piece/")
    assert client.get(status).status_code == 404
    assert client.post(f"{urls['piece']}?offset=0", b"x", content_type="application/octet-stream").status_code == 404
    assert client.post(urls["run"]).status_code == 404
    denied = client.post("/import/start/", {"name": "c.json", "size": 5, "cwd": personal_workspace(owner).cwd})
    assert denied.status_code == 403
