"""Forking from a share: into the forker's own workspace, with lineage both ways (the fork names its
source; the owner sees that it was forked, and by whom, without seeing the fork)."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.utils import timezone
from support.teams import BRANCH_A, CREW_FOLDER, LEAF, World

from sessions_app.access.shares import BRANCH, SNAPSHOT
from sessions_app.models import Authorship, Share, Workspace
from sessions_app.sessionfiles.fork import encode_cwd
from sessions_app.sessionfiles.store import SessionFile

HX = {"HTTP_HX_REQUEST": "true"}


def _fork(world: World, role: str, entry: str) -> tuple[str, Path]:
    response = world.client(role).post(world.url("fork/"), {"entry": entry}, **HX)
    assert response.status_code == 200, response.content.decode()[:300]
    fork_url = response["HX-Redirect"]
    fork_id = fork_url.strip("/").split("/")[1]
    (path,) = [p for p in world.root.rglob("*.jsonl") if fork_id in p.name]
    return fork_id, path


def test_a_viewer_forks_into_their_own_workspace(world: World, settings: Any) -> None:
    before = world.bytes()
    fork_id, path = _fork(world, "viewer", "c2ecb522")
    personal = Workspace.objects.get(owner=world.users["viewer"], personal=True)
    assert path.parent.name == personal.folder == encode_cwd(personal.cwd) != CREW_FOLDER
    header = json.loads(path.read_bytes().splitlines()[0])
    assert header["parentSession"] == str(world.path.absolute()) and header["cwd"] == personal.cwd
    *copied, name = [json.loads(line) for line in path.read_bytes().splitlines()[1:]]
    assert [line["id"] for line in copied] == ["f87f9c1c", "2f760a8d", "97690895", "c2ecb522"]
    assert name["type"] == "session_info" and name["name"].startswith("Branch · ")
    assert world.bytes() == before  # the source is untouched
    assert Authorship.objects.get(session_id=fork_id, entry_id="").user == world.users["viewer"]


def test_the_fork_shows_where_it_came_from_and_the_owner_sees_who_forked(world: World) -> None:
    fork_id, _ = _fork(world, "viewer", "c2ecb522")
    dave = world.client("viewer")
    fork_page = dave.get(f"/s/{fork_id}/").content.decode()
    assert "Forked from" in fork_page and f'href="/s/{world.session_id}/"' in fork_page
    owner = world.client("owner")
    source_page = owner.get(world.url()).content.decode()
    assert "Forked by dave" in source_page and "(in a workspace of theirs)" in source_page
    assert fork_id not in source_page  # not a link the owner may not follow
    assert owner.get(f"/s/{fork_id}/").status_code == 404
    # dave continues in his fork; the owner's session stays as it was.
    before = world.bytes()
    assert dave.post(f"/s/{fork_id}/send/", {"text": "mine now", "parent": "c2ecb522"}, **HX).status_code == 200
    assert world.bytes() == before


def test_a_member_s_fork_stays_in_the_workspace(world: World) -> None:
    fork_id, path = _fork(world, "member", LEAF)
    assert path.parent.name == CREW_FOLDER
    assert world.client("owner").get(f"/s/{fork_id}/").status_code == 200  # the whole crew sees it
    assert f'href="/s/{fork_id}/"' in world.client("owner").get(world.url()).content.decode()


def test_a_link_holder_signs_in_to_fork(world: World) -> None:
    before = sorted(world.root.rglob("*.jsonl"))
    response = world.client("link").post(world.url("fork/"), {"entry": LEAF}, **HX)
    assert response.status_code == 403 and "Sign in to fork" in response.content.decode()
    assert sorted(world.root.rglob("*.jsonl")) == before


def test_a_fork_of_a_snapshot_copies_nothing_written_after_it(world: World) -> None:
    made = world.share(Share.VIEWER, mode=SNAPSHOT, entry="c2ecb522", user=world.users["stranger"])
    assert made.share.is_snapshot
    writer = SessionFile(world.path, fsync=False)
    writer.set_label("97690895", "labelled after the snapshot")
    _, path = _fork(world, "stranger", "c2ecb522")
    assert b"labelled after the snapshot" not in path.read_bytes()


def test_a_fork_of_a_share_names_its_source_as_the_share_shows_it(world: World) -> None:
    """The source's name set on a branch the forker does not see, or after their snapshot, is not
    the fork's "Forked from"."""
    writer = SessionFile(world.path, fsync=False)
    writer.rename("SECRET-B-TITLE", "de4f0d3a")  # on branch B
    world.share(Share.VIEWER, mode=BRANCH, entry=BRANCH_A[0], user=world.users["stranger"])
    erin_fork, _ = _fork(world, "stranger", LEAF)
    page = world.client("stranger").get(f"/s/{erin_fork}/").content.decode()
    assert "Forked from" in page and f'href="/s/{world.session_id}/"' in page
    assert "SECRET-B-TITLE" not in page
    world.share(Share.VIEWER, mode=SNAPSHOT, entry=LEAF, user=world.users["viewer"])
    dave_fork, dave_path = _fork(world, "viewer", LEAF)  # dave's team share is whole: his best grant
    Share.objects.filter(team__name="readers").delete()
    writer.rename("LATE-NAME", LEAF)  # after the snapshot
    page = world.client("viewer").get(f"/s/{dave_fork}/").content.decode()
    lineage = re.search(r'<p class="lineage">Forked from .*?</p>', page, re.S)
    assert lineage and "LATE-NAME" not in lineage.group(0) and "SECRET-B-TITLE" not in lineage.group(0)
    # The fork's own name is a copy of what dave saw as he forked, with his whole grant then (as the
    # entries it copied are): it is his file's, and nothing after the fork reaches it.
    assert SessionFile(dave_path).index.name == "Branch · SECRET-B-TITLE"
    assert "LATE-NAME" not in page
    assert "LATE-NAME" in world.client("owner").get(world.url()).content.decode()


def test_who_forked_is_told_to_the_workspace_s_members_only(world: World) -> None:
    fork_id, _ = _fork(world, "viewer", "c2ecb522")
    Authorship.objects.filter(session_id=fork_id).update(at=timezone.now() - timedelta(minutes=5))
    for role in ("owner", "member"):
        assert "Forked by dave" in world.client(role).get(world.url()).content.decode(), role
    for role in ("collaborator", "link"):
        page = world.client(role).get(world.url()).content.decode()
        assert "Forked by" not in page and "dave" not in page and fork_id not in page, role
    # dave sees his own fork, which he may open, as a link.
    assert f'href="/s/{fork_id}/"' in world.client("viewer").get(world.url()).content.decode()
