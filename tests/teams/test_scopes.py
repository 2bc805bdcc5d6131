"""Scoped shares: a snapshot never shows what was written after its point, a branch never shows another
branch — on the page, its fragments, the tree, raw lines, search, downloads and the websocket."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from support.pushes import Push, parse
from support.teams import BRANCH_A, BRANCH_B, FIRST_ANSWER, LEAF, ROOT, World

from pitree_web.asgi import application
from sessions_app.access.shares import BRANCH, SNAPSHOT
from sessions_app.assistants import OfflineAssistant
from sessions_app.channel_layer.groups import session_group
from sessions_app.display import treepanel
from sessions_app.models import Share
from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles.store import SessionFile

HX = {"HTTP_HX_REQUEST": "true"}
ORIGIN = (b"origin", b"http://testserver")
HOST = (b"host", b"testserver")
SNAP_AT = "c2ecb522"  # branch A's first answer: the snapshot holds f87f9c1c → 2f760a8d → 97690895 → c2ecb522
SNAP_PATH = (ROOT, FIRST_ANSWER, "97690895", SNAP_AT)
LATER = ("042efc28", "8aabce23", "0f649aff", "ab506f7f", "e65e9e73", LEAF)  # on the file before the share


def _append(world: World, text: str, parent: str) -> str:
    """The owner's process writes (another writer than the web app, as pi would)."""
    return SessionFile(world.path, fsync=False).append(E.user_message(text), parent)["id"]


def _texts(world: World, client: Any, role_urls: list[str]) -> str:
    return "\n".join(client.get(world.url(rest), **HX).content.decode() for rest in role_urls)


# ------------------------------------------------------------------------------------------ snapshot


@pytest.fixture
def snapshot(world: World) -> Any:
    """Alice shares a snapshot at SNAP_AT by link, then goes on: a reply under it, a label on it, a new
    name, an answer on another branch."""
    made = world.share(Share.VIEWER, mode=SNAPSHOT, entry=SNAP_AT, link=True)
    holder = world.holder(made.token)
    after = _append(world, "written after the snapshot", SNAP_AT)
    writer = SessionFile(world.path, fsync=False)
    writer.set_label(SNAP_AT, "label-after-the-snapshot")
    writer.rename("Name after the snapshot")
    elsewhere = _append(world, "elsewhere after the snapshot", "de4f0d3a")
    return holder, made.share, (after, elsewhere)


def test_a_snapshot_page_shows_the_path_as_it_was(world: World, snapshot: Any) -> None:
    holder, _, later = snapshot
    html = _texts(world, holder, ["", f"e/{SNAP_AT}/", "tree/?filter=all", "tree/?filter=labeled"])
    for entry_id in SNAP_PATH:
        assert f'data-entry="{entry_id}"' in html or f"e/{entry_id}/" in html
    for entry_id in (*LATER, *BRANCH_B, *later):
        assert entry_id not in html
    assert "after the snapshot" not in html
    assert "label-after-the-snapshot" not in html and "Name after the snapshot" not in html
    assert "regex-approach" not in html  # a label of the other branch
    assert "You can read this snapshot" in html and 'id="composer"' not in html


def test_nothing_after_a_snapshot_opens(world: World, snapshot: Any) -> None:
    holder, _, later = snapshot
    for entry_id in (*LATER, *BRANCH_B, *later):
        for rest in (f"e/{entry_id}/", f"e/{entry_id}/raw/", f"e/{entry_id}/actions/", f"e/{entry_id}/block/0/"):
            assert holder.get(world.url(rest)).status_code == 404, rest
    assert holder.get(world.url(f"older/?before={LEAF}")).status_code == 404
    assert holder.get(world.url(f"tree/run/?first=8aabce23&last={LEAF}")).status_code == 404
    assert holder.get(world.url(f"download.jsonl?entry={LEAF}")).status_code == 404


def test_a_snapshot_s_map_and_comparison_hold_the_path_only(world: World, snapshot: Any) -> None:
    holder, _, later = snapshot
    data = holder.get(world.url("map/data/")).content.decode()
    assert '"entries": 4' in data and SNAP_AT in data  # the map folds straight runs: the path's 4 entries
    assert not any(entry_id in data for entry_id in (*LATER, *BRANCH_B, *later))
    assert "after the snapshot" not in data
    assert holder.get(world.url(f"compare/?e={SNAP_AT}&e=8aabce23")).status_code == 404


def test_a_snapshot_s_downloads_hold_the_path_only(world: World, snapshot: Any) -> None:
    holder, _, _ = snapshot
    lines = [json.loads(line) for line in b"".join(holder.get(world.url("download.jsonl"))).splitlines()]
    assert lines[0]["type"] == "session" and lines[0]["id"] == world.session_id
    assert [line["id"] for line in lines[1:]] == list(SNAP_PATH)
    markdown = b"".join(holder.get(world.url("download.md"))).decode()
    assert "after the snapshot" not in markdown and "Name after" not in markdown


def test_search_finds_nothing_after_a_snapshot(world: World, snapshot: Any) -> None:
    holder, _, _ = snapshot
    owner = world.client("owner")
    assert "after the snapshot" in owner.get("/search/?q=snapshot").content.decode()
    assert "written after" not in holder.get("/search/?q=snapshot").content.decode()
    # An entry of the path is found; those written before the share but after its point are not.
    assert SNAP_AT in holder.get("/search/?q=enforced").content.decode()
    assert "8aabce23" in owner.get("/search/?q=pydantic").content.decode()
    found = holder.get("/search/?q=pydantic").content.decode()
    assert not any(entry_id in found for entry_id in ("8aabce23", "0f649aff", "07721729"))


async def test_a_snapshot_s_socket_receives_nothing(world: World) -> None:
    made = await asyncio.to_thread(world.share, Share.VIEWER, SNAPSHOT, SNAP_AT, link=True)
    holder = await asyncio.to_thread(world.holder, made.token)
    cookie = (b"cookie", f"sessionid={holder.cookies['sessionid'].value}".encode())
    tabs = []
    for headers in ([ORIGIN, HOST, cookie], [ORIGIN, HOST, world.cookie("owner")]):
        tab = WebsocketCommunicator(application, world.url().replace("/s/", "/ws/s/"), headers=headers)
        assert (await tab.connect(timeout=10))[0]
        await tab.send_json_to(world.hello(SNAP_AT))
        while not parse(await tab.receive_from(timeout=10)).live:
            pass
        tabs.append(tab)
    snap_tab, owner_tab = tabs
    written = await asyncio.to_thread(_append, world, "after the snapshot", SNAP_AT)
    while written not in await owner_tab.receive_from(timeout=10):
        pass  # the owner's tab has it: the file was read and pushed
    assert await snap_tab.receive_nothing(timeout=0.5)
    for tab in tabs:
        await tab.disconnect()


def test_a_snapshot_shows_nothing_once_its_bytes_changed(world: World, snapshot: Any) -> None:
    holder, _, _ = snapshot
    data = world.bytes()
    world.path.write_bytes(data.replace(b"Write a function", b"WRITE a function", 1))  # rewritten in place
    html = holder.get(world.url()).content.decode()
    assert all(f'data-entry="{entry_id}"' not in html for entry_id in SNAP_PATH)


def test_a_snapshot_keeps_labels_as_they_were(world: World) -> None:
    writer = SessionFile(world.path, fsync=False)
    writer.set_label("97690895", "set before sharing")
    made = world.share(Share.VIEWER, mode=SNAPSHOT, entry=SNAP_AT, link=True)
    writer.set_label("97690895", None)  # cleared after: the snapshot still shows it
    writer.set_label(ROOT, "set after sharing")
    html = world.holder(made.token).get(world.url("tree/?filter=labeled")).content.decode()
    assert "set before sharing" in html and "set after sharing" not in html


def test_a_snapshot_holds_when_later_lines_relink_earlier_ones(world: World, snapshot: Any) -> None:
    """A later line reusing an id (pi would let it win) changes how the file's index links earlier rows:
    the snapshot then reads its bytes again on their own, and still shows what they held."""
    holder, _, _ = snapshot
    line = {"type": "message", "id": FIRST_ANSWER, "parentId": None, "timestamp": "2026-03-02T12:00:00.000Z"}
    line["message"] = {"role": "user", "content": "a reused id, written after the snapshot"}
    with world.path.open("ab") as file:
        file.write(json.dumps(line).encode() + b"\n")
    assert SessionFile(world.path, fsync=False).index.node_count < len(SessionFile(world.path, fsync=False).index)
    html = holder.get(world.url()).content.decode()
    for entry_id in SNAP_PATH:
        assert f'data-entry="{entry_id}"' in html
    assert "reused id" not in html


def test_a_snapshot_cannot_be_written_to(world: World, snapshot: Any) -> None:
    holder, _, _ = snapshot
    before = world.bytes()
    for rest, data in (("send/", {"text": "x", "parent": SNAP_AT}), ("label/", {"entry": SNAP_AT, "label": "x"})):
        assert holder.post(world.url(rest), data, **HX).status_code == 403
    assert world.bytes() == before


# -------------------------------------------------------------------------------------------- branch


@pytest.fixture
def branch_viewer(world: World) -> Any:
    """Erin (until now a stranger) is given branch A as a viewer."""
    world.share(Share.VIEWER, mode=BRANCH, entry=BRANCH_A[0], user=world.users["stranger"])
    return world.client("stranger")


def test_a_branch_share_shows_that_branch_only(world: World, branch_viewer: Any) -> None:
    html = _texts(world, branch_viewer, ["", f"e/{LEAF}/", "tree/?filter=all", "tree/?filter=labeled"])
    for entry_id in (ROOT, FIRST_ANSWER, *BRANCH_A):
        assert entry_id in html
    for entry_id in BRANCH_B:
        assert entry_id not in html
    assert "regex-approach" not in html and "pydantic-done" in html
    # The branch point has no "‹ 1/2 ›": the other branch does not exist for her.
    page = branch_viewer.get(world.url(f"e/{LEAF}/")).content.decode()
    article = page.split(f'id="entry-{BRANCH_A[0]}"', 1)[1].split("</article>", 1)[0]
    assert 'class="navigator"' not in article
    assert "navigator" in world.client("owner").get(world.url(f"e/{LEAF}/")).content.decode()


def test_the_map_and_comparisons_keep_to_the_branch(world: World, branch_viewer: Any) -> None:
    data = branch_viewer.get(world.url("map/data/")).content.decode()
    assert "de4f0d3a" in world.client("owner").get(world.url("map/data/")).content.decode()  # branch B's end
    assert '"branches"' not in data  # no branch point: branch A is all there is
    assert not any(entry_id in data for entry_id in BRANCH_B)
    both = "compare/?e=97690895&e=07721729"
    assert world.client("owner").get(world.url(both)).status_code == 200
    assert branch_viewer.get(world.url(both)).status_code == 404
    assert branch_viewer.get(world.url("compare/?branches=97690895")).status_code == 404  # no siblings for her
    # A comparison naming another session she may not see answers as if it did not exist.
    other = f"compare/?e={LEAF}&e=019cadd4-cb50-74dd-b0a5-3da75cdfe167:f87f9c1c"
    assert branch_viewer.get(world.url(other)).status_code == 404


def test_another_branch_does_not_open(world: World, branch_viewer: Any) -> None:
    for entry_id in BRANCH_B:
        for rest in (f"e/{entry_id}/", f"e/{entry_id}/raw/", f"e/{entry_id}/actions/", f"e/{entry_id}/author/"):
            assert branch_viewer.get(world.url(rest)).status_code == 404, rest
    assert branch_viewer.get(world.url("download.jsonl?entry=de4f0d3a")).status_code == 404
    response = branch_viewer.post(world.url("fork/"), {"entry": "de4f0d3a"}, **HX)
    assert response.status_code == 409 and "de4f0d3a" in response.content.decode()


def test_a_branch_grows_and_the_rest_stays_hidden(world: World, branch_viewer: Any) -> None:
    grown = _append(world, "grown on branch A", LEAF)
    beside = _append(world, "a third branch beside A", FIRST_ANSWER)
    hidden = _append(world, "grown on branch B", "de4f0d3a")
    html = _texts(world, branch_viewer, ["", "tree/?filter=all"])
    assert grown in html and "grown on branch A" in html
    assert beside not in html and hidden not in html and "branch B" not in html


def test_search_keeps_to_the_branch(world: World, branch_viewer: Any) -> None:
    # "empty" is said on branch B only (4b928ed4 and its answer).
    owner_hits = world.client("owner").get("/search/?q=empty").content.decode()
    viewer_hits = branch_viewer.get("/search/?q=empty").content.decode()
    assert any(entry_id in owner_hits for entry_id in BRANCH_B)
    assert not any(entry_id in viewer_hits for entry_id in BRANCH_B)
    listing = branch_viewer.get("/").content.decode()
    assert world.session_id in listing and "regex-approach" not in listing


def test_a_branch_s_download_is_a_session_of_that_branch(world: World, branch_viewer: Any) -> None:
    data = b"".join(branch_viewer.get(world.url("download.jsonl")))
    ids = [json.loads(line).get("id") for line in data.splitlines()[1:]]
    assert set(ids) >= {ROOT, FIRST_ANSWER, *BRANCH_A} and not set(ids) & set(BRANCH_B)
    copy = world.root / "copy.jsonl"
    copy.write_bytes(data)
    opened = SessionFile(copy, fsync=False)
    assert not opened.index.skipped() and opened.leaf_id == LEAF


def test_a_branch_collaborator_writes_inside_the_branch_only(world: World) -> None:
    world.share(Share.COLLABORATOR, mode=BRANCH, entry=BRANCH_A[0], user=world.users["stranger"])
    erin = world.client("stranger")
    before = world.bytes()
    refused = erin.post(world.url("send/"), {"text": "on B?", "parent": "de4f0d3a"}, **HX)
    assert refused.status_code == 409 and world.bytes() == before
    assert erin.post(world.url("send/"), {"text": "on A", "parent": LEAF}, **HX).status_code == 200
    user, reply = world.lines()[-2:]
    assert user["parentId"] == LEAF and reply["parentId"] == user["id"]


def _tools_by_entry(html: str) -> dict[str, str]:
    """Each entry's article on a page, by id."""
    return {
        part.split('data-entry="', 1)[1].split('"', 1)[0]: part
        for part in html.split("<article ")[1:]
        if 'data-entry="' in part
    }


def test_a_branch_collaborator_is_offered_edit_and_regenerate_only_inside_the_branch(world: World) -> None:
    """Editing an entry or answering it again writes its sibling: at the shared entry and above it,
    that is outside the branch (and refused), so those tools are not offered there; below, they are."""
    world.share(Share.COLLABORATOR, mode=BRANCH, entry=BRANCH_A[0], user=world.users["stranger"])
    shown = _tools_by_entry(world.client("stranger").get(world.url("")).content.decode())
    for trunk in (ROOT, FIRST_ANSWER, BRANCH_A[0]):
        assert "do=edit" not in shown[trunk] and "/regenerate/" not in shown[trunk], trunk
        assert "do=label" in shown[trunk]  # a label is written at the tab's position, inside the branch
    below = [shown[entry_id] for entry_id in BRANCH_A[1:] if entry_id in shown]
    assert any("/regenerate/" in part for part in below) and any("do=edit" in part for part in below)
    owner = _tools_by_entry(world.client("owner").get(world.url("")).content.decode())
    assert "do=edit" in owner[ROOT] and "/regenerate/" in owner[FIRST_ANSWER]


@pytest.fixture
def asked(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What the assistant was asked to write ("reply", "summary"), as it is asked."""
    calls: list[str] = []
    reply, summarize = OfflineAssistant.reply, OfflineAssistant.summarize

    def replying(self: OfflineAssistant, *args: Any, **kwargs: Any) -> Any:
        calls.append("reply")
        return reply(self, *args, **kwargs)

    def summarizing(self: OfflineAssistant, *args: Any, **kwargs: Any) -> Any:
        calls.append("summary")
        return summarize(self, *args, **kwargs)

    monkeypatch.setattr(OfflineAssistant, "reply", replying)
    monkeypatch.setattr(OfflineAssistant, "summarize", summarizing)
    return calls


@pytest.mark.parametrize(
    ("rest", "data"),
    [
        ("navigate/", {"to": "", "mode": "exact", "at": LEAF}),  # "before the first entry": a leaf line of null
        ("send/", {"text": "a new root", "parent": ""}),  # "Edit" of the first message
        ("send/", {"text": "beside the branch", "parent": FIRST_ANSWER}),  # above the shared entry
        ("regenerate/", {"entry": BRANCH_A[0]}),  # a sibling of the shared entry
        ("regenerate/", {"entry": FIRST_ANSWER}),  # an answer above it
        ("navigate/", {"to": FIRST_ANSWER, "mode": "exact", "at": LEAF, "summarize": "1"}),  # its summary there
        ("label/", {"entry": LEAF, "label": "x", "at": FIRST_ANSWER}),
        ("rename/", {"name": "x", "at": ROOT}),
        ("thinking/", {"level": "high", "at": FIRST_ANSWER}),
        ("compact/", {"keep_from": FIRST_ANSWER, "at": FIRST_ANSWER}),
    ],
)
def test_a_branch_collaborator_writes_and_moves_inside_the_branch_only(
    world: World, asked: list[str], rest: str, data: dict[str, str]
) -> None:
    """Refused with nothing written, and before the assistant is asked for a reply or a summary that
    could not be stored (from a stale tab or a hand-made post: pages do not offer these)."""
    world.share(Share.COLLABORATOR, mode=BRANCH, entry=BRANCH_A[0], user=world.users["stranger"])
    before = world.bytes()
    response = world.client("stranger").post(world.url(rest), data, **HX)
    assert response.status_code == 403 and "branch shared with you" in response.content.decode()
    assert world.bytes() == before and asked == []


@pytest.mark.parametrize(
    ("rest", "data", "wanted"),
    [
        ("regenerate/", {"entry": LEAF}, ["reply"]),
        ("navigate/", {"to": BRANCH_A[2], "mode": "exact", "at": LEAF, "summarize": "1"}, ["summary"]),
        ("navigate/", {"to": FIRST_ANSWER, "mode": "exact", "at": ROOT, "summarize": "1"}, []),  # nothing left
    ],
)
def test_a_branch_collaborator_s_replies_and_summaries_inside_the_branch_are_written(
    world: World, asked: list[str], rest: str, data: dict[str, str], wanted: list[str]
) -> None:
    world.share(Share.COLLABORATOR, mode=BRANCH, entry=BRANCH_A[0], user=world.users["stranger"])
    before = world.bytes()
    assert world.client("stranger").post(world.url(rest), data, **HX).status_code == 200
    assert asked == wanted and len(world.bytes()) > len(before)


def test_a_branch_collaborator_moves_the_position_within_the_branch(world: World) -> None:
    world.share(Share.COLLABORATOR, mode=BRANCH, entry=BRANCH_A[0], user=world.users["stranger"])
    erin = world.client("stranger")
    for target in (FIRST_ANSWER, BRANCH_A[2]):  # on the path to the shared entry, and below it
        assert erin.post(world.url("navigate/"), {"to": target, "mode": "exact", "at": LEAF}, **HX).status_code == 200
        assert world.lines()[-1] == {**world.lines()[-1], "type": "leaf", "targetId": target}


async def test_a_branch_s_socket_gets_that_branch_only(world: World) -> None:
    await asyncio.to_thread(world.share, Share.VIEWER, BRANCH, BRANCH_A[0], user=world.users["stranger"])
    tab = WebsocketCommunicator(
        application, world.url().replace("/s/", "/ws/s/"), headers=[ORIGIN, HOST, world.cookie("stranger")]
    )
    assert (await tab.connect(timeout=10))[0]
    await tab.send_json_to(world.hello())
    while not parse(await tab.receive_from(timeout=10)).live:
        pass
    layer = get_channel_layer()
    group = session_group(world.session_id)
    await layer.group_send(
        group, {"type": "reply.progress", "reply": "reply-on-B", "parent": "de4f0d3a", "text": "secret"}
    )
    await layer.group_send(group, {"type": "reply.progress", "reply": "reply-on-A", "parent": LEAF, "text": "shown"})
    received: list[Push] = []
    # The feed relays the replies' pieces in the order sent (B's before A's), but beside its reading of
    # the file: a line appended under the reply's parent before the piece comes moves the tab off it.
    while not any(m.placeholders == ["reply-on-A"] for m in received):
        received.append(parse(await tab.receive_from(timeout=10)))
    hidden = await asyncio.to_thread(_append, world, "grown on branch B", "de4f0d3a")
    grown = await asyncio.to_thread(_append, world, "grown on branch A", LEAF)
    while not any(grown in m.entries for m in received):
        received.append(parse(await tab.receive_from(timeout=10)))
    everything = "\n".join(m.raw for m in received)
    # (names no random id can hold: "r-b" was in "navigator-b…" of an entry whose id began with b)
    assert "shown" in everything and "secret" not in everything and "reply-on-B" not in everything
    assert hidden not in everything and "branch B" not in everything
    for entry_id in BRANCH_B:
        assert entry_id not in everything
    # A write elsewhere is not even announced: the tab's only batch is the one that holds its entry.
    assert [m.state["cursor-id"] for m in received if m.state] == [grown]
    await tab.disconnect()


def test_whole_file_and_branch_readers_keep_a_tree_each(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    """The tree panel's skeleton is cached per view of the file: readers of the whole file and of a
    branch taking turns each reuse their own, not build one afresh at every turn."""
    built: list[str] = []

    class Counted(treepanel.Skeleton):
        def __init__(self, mode: str, *rest: Any) -> None:
            built.append(mode)
            super().__init__(mode, *rest)

    monkeypatch.setattr(treepanel, "Skeleton", Counted)
    world.share(Share.VIEWER, mode=BRANCH, entry=BRANCH_A[0], user=world.users["stranger"])
    for _ in range(3):
        for who in ("owner", "stranger"):
            assert world.client(who).get(world.url("tree/?filter=all"), **HX).status_code == 200
    assert built == ["all", "all"]
