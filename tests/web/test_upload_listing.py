"""An uploaded session is listed in the workspace it was uploaded to, whatever working directory its
header names: a listing's workspace is the folder (pi's layout), named as its owner's workspace."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from django.core.files.uploadedfile import SimpleUploadedFile

from sessions_app.access.workspaces import personal_workspace
from sessions_app.sessionfiles.fork import encode_cwd

HTMX = {"HTTP_HX_REQUEST": "true"}


def _row_workspace(html: str, session_id: str) -> str:
    """The workspace (its full path, the label's title) the list shows on the row of ``session_id``."""
    row = re.search(rf'<li class="session-item"[^>]*>(?:(?!</li>).)*?/s/{session_id}/(?:(?!</li>).)*</li>', html, re.S)
    assert row, f"no row for {session_id}"
    found = re.search(r'<span title="([^"]+)">', row.group(0))
    assert found
    return found.group(1)


def test_an_upload_is_listed_under_the_uploader_s_workspace(client: Any, pi: Any, owner: Any) -> None:
    data = pi.path("01-linear").read_bytes()
    assert b'"cwd":"/home/alice/projects/todo-api"' in data.split(b"\n", 1)[0]
    mine = personal_workspace(owner).cwd
    response = client.post("/upload/", {"file": SimpleUploadedFile("s.jsonl", data), "cwd": mine})
    assert response.status_code == 302 and response["Location"].startswith("/s/")
    uploaded = response["Location"].split("/")[2]
    (path,) = list(Path(pi.folder.parent).rglob(f"*{uploaded}*.jsonl"))
    assert path.parent.name == encode_cwd(mine)
    # The file keeps the header it came with (pi opens it as it was), and the list names its folder.
    assert json.loads(path.read_bytes().split(b"\n", 1)[0])["cwd"] == "/home/alice/projects/todo-api"
    html = client.get("/").content.decode()
    assert _row_workspace(html, uploaded) == mine
    assert _row_workspace(html, pi.id("02-tree-branches")) == "/home/alice/projects/todo-api"
    options = dict(re.findall(r'<option value="([^"]+)" title="([^"]+)"', html))
    assert options[encode_cwd(mine)] == mine
    # The workspace filter finds it there, and the sidebar names it the same way.
    filtered = client.get("/", {"workspace": encode_cwd(mine)}).content.decode()
    assert f"/s/{uploaded}/" in filtered and f"/s/{pi.id('02-tree-branches')}/" not in filtered
    sidebar = client.get("/sidebar/", {"workspace": ""}, **HTMX).content.decode()
    where = re.search(rf'/s/{uploaded}/.*?<span class="sidebar__where">([^<]+)<', sidebar, re.S)
    assert where and where.group(1) == "/".join(mine.strip("/").split("/")[-2:])
