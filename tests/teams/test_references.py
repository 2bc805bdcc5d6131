"""Lines a scoped share holds that name entries it does not: a label set from branch A on an entry of
branch B, a branch summary's ``fromId`` naming the branch left behind. The share holds the line (what
follows it hangs under it) but not what it names: no page, fragment, raw line, tree, map, comparison,
download (pi included) or command shows the hidden entry's id or the label's text."""

from __future__ import annotations

import json
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from support.teams import BRANCH_A, BRANCH_B, FIRST_ANSWER, LEAF, World

from sessions_app.access.shares import BRANCH, SNAPSHOT
from sessions_app.models import Share
from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles.store import SessionFile

HX = {"HTTP_HX_REQUEST": "true"}
HIDDEN_TARGET = "de4f0d3a"  # branch B's last entry
SECRET = "LABEL-B-SECRET"


def _pitree(*args: str) -> str:
    out = StringIO()
    call_command("pitree", *args, stdout=out, stderr=StringIO())
    return out.getvalue()


@pytest.fixture
def labelled(world: World) -> tuple[str, str]:
    """Alice, standing on branch A's leaf, labels an entry of branch B, then writes on: the label line
    sits on branch A (the next entry hangs under it) and names branch B."""
    writer = SessionFile(world.path, fsync=False)
    label = writer.set_label(HIDDEN_TARGET, SECRET, LEAF)["id"]
    after = writer.append(E.user_message("written after the label"), label)["id"]
    return label, after


def _everything(world: World, client: Any, label: str, after: str) -> str:
    """Every answer a reader gets about the session, the label line and what follows it."""
    rests = [
        "",
        f"e/{after}/",
        f"e/{label}/raw/",
        f"e/{label}/actions/",
        "tree/?filter=all",
        "tree/?filter=labeled",
        "map/data/",
        f"compare/?e={after}&e={label}",
        "download.jsonl",
        f"download.jsonl?entry={after}",
        "download.md",
    ]
    return "\n".join(b"".join(client.get(world.url(rest), **HX)).decode() for rest in rests)


def _holds_nothing_hidden(text: str) -> None:
    assert SECRET not in text
    for entry_id in BRANCH_B:
        assert entry_id not in text


@pytest.fixture(params=["read first", "after the owner"])
def owner_read(request: pytest.FixtureRequest, world: World, labelled: tuple[str, str]) -> None:
    """Whether the owner read everything before the scoped reader: what was drawn for the whole file
    (cached by stored line) must not be handed to a reader whose view cleans that line."""
    if request.param == "after the owner":
        assert SECRET in _everything(world, world.client("owner"), *labelled)


def test_a_branch_share_hides_a_label_naming_another_branch(
    world: World, labelled: tuple[str, str], owner_read: None
) -> None:
    label, after = labelled
    world.share(Share.VIEWER, mode=BRANCH, entry=BRANCH_A[0], user=world.users["stranger"])
    erin = world.client("stranger")
    text = _everything(world, erin, label, after)
    _holds_nothing_hidden(text)
    # The line is there, and what follows it still hangs under it: the branch is whole.
    assert json.loads(erin.get(world.url(f"e/{label}/raw/")).content)["parentId"] == LEAF
    assert "written after the label" in erin.get(world.url()).content.decode()
    assert "label of no entry shown here" in erin.get(world.url("tree/?filter=all"), **HX).content.decode()
    download = b"".join(erin.get(world.url("download.jsonl")))
    copy = world.root / "branch-copy.jsonl"
    copy.write_bytes(download)
    opened = SessionFile(copy, fsync=False)
    assert opened.leaf_id == after and not opened.index.skipped() and not opened.index.labels.get(HIDDEN_TARGET)
    # The owner still sees it all.
    assert SECRET in world.client("owner").get(world.url(f"e/{label}/raw/")).content.decode()


def test_a_snapshot_hides_a_label_naming_an_entry_off_its_path(
    world: World, labelled: tuple[str, str], owner_read: None
) -> None:
    label, after = labelled
    made = world.share(Share.VIEWER, mode=SNAPSHOT, entry=after, link=True)
    holder = world.holder(made.token)
    _holds_nothing_hidden(_everything(world, holder, label, after))
    assert "written after the label" in holder.get(world.url()).content.decode()


def test_the_command_line_as_a_user_hides_it_too(world: World, labelled: tuple[str, str]) -> None:
    world.share(Share.VIEWER, mode=BRANCH, entry=BRANCH_A[0], user=world.users["stranger"])
    for command in (["tree"], ["show"], ["inspect", "--json"]):
        printed = _pitree("--as", "erin", *command, world.session_id)
        _holds_nothing_hidden(printed)
    assert SECRET in _pitree("tree", world.session_id)  # the local owner sees the file as it is


def test_a_branch_summary_does_not_name_the_branch_it_left(world: World) -> None:
    """Branch B starts with a summary of branch A whose ``fromId`` is branch A's 0f649aff: a share of
    branch B keeps the summary (it is part of the branch's context) but not the id."""
    world.share(Share.VIEWER, mode=BRANCH, entry=BRANCH_B[0], user=world.users["stranger"])
    erin = world.client("stranger")
    rests = ["", f"e/{BRANCH_B[0]}/raw/", "tree/?filter=all", "map/data/", "download.jsonl"]
    text = "\n".join(b"".join(erin.get(world.url(rest), **HX)).decode() for rest in rests)
    assert "switched to pydantic" in text  # the summary itself
    for entry_id in BRANCH_A:
        assert entry_id not in text
    assert FIRST_ANSWER in text
