"""A link in a team's folder to a session of a folder nobody shares (a copy would do the same): the
session's id is then held by two files, which makes it found nowhere (docs/format.md §1.3). Its page
said so, but the list and the search showed it to the team, text and all, under the link's folder."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.teams import CREW_FOLDER, EXPECTED, LINEAR, World, copy_sample

SECRET_FOLDER = "--home-root-secret--"  # assigned to nobody: superusers only
WORD = "endpoints"  # in sample 01's answers only


@pytest.fixture
def secret(world: World) -> Path:
    return copy_sample(world.root, LINEAR, SECRET_FOLDER)


def _finds(world: World, role: str) -> bool:
    return "No entry matches" not in world.client(role).get("/search/", {"q": WORD}).content.decode()


def _lists(world: World, role: str) -> bool:
    return f"/s/{EXPECTED[LINEAR]['sessionId']}/" in world.client(role).get("/").content.decode()


def test_a_link_to_a_session_the_team_may_not_read_shows_it_nowhere(world: World, secret: Path) -> None:
    assert not _finds(world, "member") and not _lists(world, "member")
    (world.root / CREW_FOLDER / "linked.jsonl").symlink_to(secret)
    assert not _finds(world, "member") and not _lists(world, "member")
    assert world.client("member").get(f"/s/{EXPECTED[LINEAR]['sessionId']}/").status_code == 404


def test_a_superuser_is_told_which_files_hold_one_id(world: World, secret: Path, admin_client) -> None:
    (world.root / CREW_FOLDER / "linked.jsonl").symlink_to(secret)
    page = admin_client.get("/").content.decode()
    assert "linked.jsonl" in page and secret.name in page and "neither is listed or opened" in page
    assert f"/s/{EXPECTED[LINEAR]['sessionId']}/" not in page
    (world.root / CREW_FOLDER / "linked.jsonl").unlink()  # one file again: listed again
    assert f"/s/{EXPECTED[LINEAR]['sessionId']}/" in admin_client.get("/").content.decode()
