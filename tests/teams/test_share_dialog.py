"""The share dialog points at an entry: it opens from an entry's actions with that entry picked, or lists
the branch shown (role and a one-line preview per row) to pick from; each kind says in one line what its
reader sees; a branch share opens at the branch's latest entry; a reader is offered nothing they cannot
do, and a tab whose access ended offers nothing at all."""

from __future__ import annotations

import html
import json
import re

from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from support.described import Controls
from support.pushes import parse
from support.teams import BRANCH_A, BRANCH_B, FIRST_ANSWER, LEAF, ROOT, World

from pitree_web.asgi import application
from sessions_app.access.shares import BRANCH
from sessions_app.models import Share
from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles.store import SessionFile

HX = {"HTTP_HX_REQUEST": "true"}
ORIGIN = (b"origin", b"http://testserver")
HOST = (b"host", b"testserver")
QUESTION = BRANCH_A[0]  # "Make it reject titles longer than 80 chars": its answers are below it


def _picks(page: str) -> list[tuple[str, bool, str]]:
    """The entry radios of a share form: (entry id, checked, the row's words)."""
    rows = re.findall(r'<label for="id_entry_\d+">(.*?)</label>', page, re.S)
    found = []
    for row in rows:
        value = re.search(r'value="([^"]*)"', row)
        assert value
        words = html.unescape(" ".join(re.sub(r"<[^>]+>", " ", row).split()))
        found.append((value.group(1), " checked" in row, words))
    return found


def _position(html: str) -> str:
    found = re.search(r'id="tab-state" hidden data-position="([^"]*)"', html)
    assert found
    return found.group(1)


def test_an_entry_s_actions_open_the_dialog_with_that_entry_picked(world: World) -> None:
    owner = world.client("owner")
    page = owner.get(world.url(f"e/{LEAF}/")).content.decode()
    article = page.split(f'id="entry-{QUESTION}"', 1)[1].split("</article>", 1)[0]
    link = re.search(r'<a class="tool" href="([^"]+)" hx-get="([^"]+)" hx-target="#share-dialog-body"', article)
    assert link and link.group(1) == link.group(2) == f"/s/{world.session_id}/share/?at={QUESTION}"
    assert 'id="share-dialog"' in page and "Share…" in article

    panel = owner.get(link.group(1), **HX).content.decode()
    assert "<html" not in panel and 'id="share-panel"' in panel  # the form alone, for the dialog
    picks = _picks(panel)
    assert [entry for entry, checked, _ in picks if checked] == [QUESTION]
    listed = [entry for entry, _, _ in picks]
    # The branch through it, root to its latest entry (the answers below it too), messages only: no
    # label or custom record a row could show only by its type; nothing of the other branch.
    assert listed == [ROOT, FIRST_ANSWER, QUESTION, "c2ecb522", "8aabce23", "0f649aff", "ab506f7f", "e65e9e73"]
    words = {entry: said for entry, _, said in picks}
    assert words[QUESTION] == "User Make it reject titles longer than 80 chars"
    assert words["c2ecb522"].startswith("Assistant Updated: len(title) <= 80 is now enforced.")
    assert not set(BRANCH_B) & set(listed)
    # Its kind is a branch (it came from an entry), and each kind and role says what its reader gets.
    form = Controls(panel)
    assert form.controls["mode"]["value"] in ("live", "branch", "snapshot")
    assert re.search(r'value="branch"[^>]*checked', panel)
    for said in (
        "The whole session: every branch, followed live as it grows.",
        "One branch: the path to the entry and what grows below it, live; the other branches stay hidden.",
        "A snapshot: the path to the entry as it is now; nothing written later shows.",
        "Viewer: reads it and, signed in, may fork it into a workspace of theirs.",
        "Collaborator: also writes in it (sends, edits, labels).",
    ):
        assert said in panel, said


def test_the_header_s_share_lists_the_branch_shown(world: World) -> None:
    """Without an entry: the path to the file's position, nothing picked, the whole session offered."""
    owner = world.client("owner")
    page = owner.get(world.url()).content.decode()
    assert 'hx-target="#share-dialog-body"' in page.split('class="share-bar__actions"', 1)[1].split("</p>", 1)[0]
    picks = _picks(owner.get(world.url("share/")).content.decode())
    assert [entry for entry, _, _ in picks][-1] == "e65e9e73" and not any(checked for _, checked, _ in picks)
    on_b = _picks(owner.get(world.url("share/?at=4b928ed4")).content.decode())
    assert [entry for entry, _, _ in on_b] == [
        ROOT,
        FIRST_ANSWER,
        "07721729",
        "4b928ed4",
        "37bad775",
        "c191c95e",
        "de4f0d3a",
    ]
    assert [entry for entry, checked, _ in on_b if checked] == ["4b928ed4"]


def test_only_those_who_share_are_offered_share(world: World) -> None:
    for role in ("collaborator", "viewer", "link"):
        page = world.client(role).get(world.url(f"e/{LEAF}/")).content.decode()
        assert "/share/" not in page and 'id="share-dialog"' not in page, role
    assert world.client("viewer").get(world.url(f"share/?at={QUESTION}")).status_code == 403
    assert world.client("stranger").get(world.url(f"share/?at={QUESTION}")).status_code == 404  # not theirs
    response = world.client("stranger").post(
        world.url("share/"), {"audience": "link", "role": "viewer", "mode": "live"}
    )
    assert response.status_code == 404 and not Share.objects.filter(created_by=world.users["stranger"]).exists()


def test_a_wrong_entry_is_named_on_the_entry_list(world: World) -> None:
    owner = world.client("owner")
    sent = {"audience": "link", "role": "viewer", "mode": BRANCH, "days": ""}
    before = Share.objects.count()
    for entry, said in (
        ("nosuch12", "This session has no entry 'nosuch12': pick one from the list."),
        ("", "Pick the entry the branch or snapshot goes to."),
        ("bad\x01id", "Not an entry id"),
    ):
        response = owner.post(world.url("share/"), {**sent, "entry": entry}, **HX)
        page = Controls(response.content.decode())
        assert response.status_code == 422 and page.invalid() == {"entry"}, entry
        # Said in the list's fieldset, which names it (aria-describedby) with the list's help.
        assert said in page.texts["id_entry_error"], entry
        assert 'fieldset aria-describedby="id_entry_helptext id_entry_error"' in response.content.decode()
        assert _picks(response.content.decode()), entry  # the list is there to pick from
    assert Share.objects.count() == before


def test_a_branch_link_opens_at_the_branch_s_latest_entry(world: World) -> None:
    made = world.share(Share.VIEWER, mode=BRANCH, entry=QUESTION, link=True)
    # The owner went on elsewhere meanwhile: the file's position is on the other branch.
    SessionFile(world.path, fsync=False).navigate("de4f0d3a")
    holder = world.client("anonymous")
    opened = holder.get(f"/l/{made.token}/", follow=True)
    assert opened.status_code == 200
    assert _position(opened.content.decode()) == LEAF  # branch A's latest, not the question
    # The branch grows: the link opens at what grew.
    grown = SessionFile(world.path, fsync=False).append(E.user_message("grown on branch A"), LEAF)["id"]
    assert _position(holder.get(f"/l/{made.token}/", follow=True).content.decode()) == grown


def test_a_reader_is_not_told_what_a_send_would_do(world: World) -> None:
    """At an earlier point: a reader who cannot send is told where the tab is, not where a send goes."""
    said = "what you send continues from here"
    assert said in world.client("owner").get(world.url(f"e/{QUESTION}/")).content.decode()
    assert said in world.client("collaborator").get(world.url(f"e/{QUESTION}/")).content.decode()
    for role in ("viewer", "link"):
        page = world.client(role).get(world.url(f"e/{QUESTION}/")).content.decode()
        assert "This tab shows an earlier point or another branch." in page and said not in page, role
        assert 'id="composer"' not in page, role


async def test_a_revoked_reader_s_page_no_longer_offers_to_follow_live(world: World) -> None:
    share = world.link_share
    assert share is not None
    tab = WebsocketCommunicator(
        application, world.url().replace("/s/", "/ws/s/"), headers=[ORIGIN, HOST, world.cookie("link")]
    )
    connected, _ = await tab.connect(timeout=10)
    assert connected
    await tab.send_to(text_data='{"v": 1, "cursor": 0, "at": null, "notes": "none"}')
    # On the thread of sync views, as under ASGI: the revoke's event reaches the in-memory layer from the
    # event loop's side, not from a thread of its own (which need not wake the loop).
    await sync_to_async(world.client("owner").post)(world.url(f"share/{share.pk}/revoke/"))
    said: list[str] = []
    while True:
        output = await tab.receive_output(timeout=10)
        if output["type"] == "websocket.close":
            assert output["code"] == 4404
            break
        said.append(output.get("text", ""))
    ended = [parse(text).by_id("dock-composer") for text in said]
    swap = next((found for found in ended if found is not None), None)
    assert swap is not None and swap.style == "outerHTML", said
    last = said[-1]  # the reader's note and its Fork button go, in the message before the close
    assert "not available to you any more" in last and "follow it live" not in last and "Fork" not in last


def test_a_long_branch_lists_the_messages_around_the_entry(world: World) -> None:
    """A branch of 300 messages: the 120 around the entry picked are listed, and the page says how many
    are not (a list of every message cost seconds and megabytes to render)."""
    session_id = "0a1b2c3d-0000-4000-8000-00000000long"
    lines = [{"type": "session", "version": 3, "id": session_id, "timestamp": "2026-03-02T09:00:00Z", "cwd": "/x"}]
    for number in range(300):
        role = "user" if number % 2 == 0 else "assistant"
        parent = f"m{number - 1:07d}" if number else None
        message = {"role": role, "content": f"message number {number}", "timestamp": 0}
        lines.append(
            {
                "type": "message",
                "id": f"m{number:07d}",
                "parentId": parent,
                "timestamp": "2026-03-02T09:00:00Z",
                "message": message,
            }
        )
    (world.path.parent / f"2026-03-02T09-00-00-000Z_{session_id}.jsonl").write_text(
        "".join(json.dumps(line) + "\n" for line in lines)
    )
    page = world.client("owner").get(f"/s/{session_id}/share/?at=m0000150").content.decode()
    picks = _picks(page)
    assert [entry for entry, _, _ in picks] == [f"m{number:07d}" for number in range(90, 210)]
    assert [entry for entry, checked, _ in picks if checked] == ["m0000150"]
    assert "90 earlier and 90 later messages of this branch are not listed" in page
    newest = _picks(world.client("owner").get(f"/s/{session_id}/share/").content.decode())
    assert [entry for entry, _, _ in newest][-1] == "m0000299" and len(newest) == 120
