"""Entry ids holding URL syntax reach every view through the links the pages render, and query strings
that do not parse are a 400 that names the parameter, never a 500."""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path

import pytest
from django.urls import reverse
from django.utils.html import escape

from sessions_app.converters import MAX_ID_CHARS
from sessions_app.display.transcript import PAGE_SIZE
from sessions_app.partials.listing import LIST_PAGE_SIZE
from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles.fork import create_session
from sessions_app.sessionfiles.store import SessionFile

HTMX = {"HTTP_HX_REQUEST": "true"}
# Characters with a meaning in URLs, in paths, in query strings and in HTML.
HOSTILE = [
    "a&b=c",
    "h#sh",
    "q?x=1",
    "with/slash",
    "50%",
    "%2F",
    "%252F",
    "a+b",
    "sp ace",
    ".",
    "..",
    "./..",
    "ünï/cødé",
    "~tilde",
    "semi;colon",
    "back\\slash",
    "'quote\"",
    "<b>",
    "//",
]


def _write_chain(folder: Path, ids: list[str]) -> tuple[str, Path]:
    """A session whose path is ``ids`` in order, alternating user and assistant messages."""
    session = create_session(folder, "/w", fsync=False)
    lines = []
    for n, entry_id in enumerate(ids):
        role = "user" if n % 2 == 0 else "assistant"
        message: dict = {"role": role, "content": [{"type": "text", "text": f"message {n}"}], "timestamp": n}
        if role == "assistant":
            message.update(provider="p", model="m", api="a", stopReason="stop")
        lines.append(
            {
                "type": "message",
                "id": entry_id,
                "parentId": ids[n - 1] if n else None,
                "timestamp": f"2026-01-01T00:00:{n % 60:02d}.000Z",
                "message": message,
            }
        )
    with open(session.path, "ab") as handle:
        handle.write(b"".join(json.dumps(line).encode() + b"\n" for line in lines))
    return session.session_id, session.path


@pytest.fixture
def chain(sessions_dir: Path) -> tuple[str, Path, list[str]]:
    """A path longer than one page whose every id is hostile; the oldest entry of the newest page is one."""
    ids = [*HOSTILE, *(f"{h}{n}" for n, h in enumerate(HOSTILE * 3))][: PAGE_SIZE + 10]
    session_id, path = _write_chain(sessions_dir, ids)
    return session_id, path, ids


def _attr_urls(html: str, attribute: str, contains: str) -> list[str]:
    """Every ``attribute="…"`` value that holds ``contains``, as the browser would read it."""
    return [unescape(value) for value in re.findall(rf'{attribute}="([^"]*)"', html) if contains in unescape(value)]


def test_every_permalink_on_the_page_opens_its_entry(client, chain) -> None:
    session_id, _, ids = chain
    html = client.get(f"/s/{session_id}/").content.decode()
    shown = ids[-PAGE_SIZE:]
    permalinks = [unescape(link) for link in re.findall(r'class="entry__link muted" href="([^"]*)"', html)]
    assert len(permalinks) == len(shown)
    opened = set()
    for link in permalinks:
        response = client.get(link)
        assert response.status_code == 200, link
        opened.add(unescape(re.search(r'data-position="([^"]*)"', response.content.decode()).group(1)))
    assert set(shown) <= opened


@pytest.mark.parametrize("entry_id", HOSTILE)
def test_reverse_and_resolve_agree_for_any_id(client, chain, entry_id) -> None:
    session_id, _, _ = chain
    url = reverse("sessions:entry", args=[session_id, entry_id])
    assert url.count("/") == 5  # /s/<session>/e/<entry>/: the id stays one segment
    page = client.get(url)
    assert page.status_code == 200 and f'data-position="{escape(entry_id)}"' in page.content.decode()
    raw = client.get(reverse("sessions:raw", args=[session_id, entry_id]))
    assert json.loads(raw.content)["id"] == entry_id
    menu = client.get(reverse("sessions:actions", args=[session_id, entry_id]), {"at": entry_id}, **HTMX)
    assert menu.status_code == 200 and f'name="entry" value="{escape(entry_id)}"' in menu.content.decode()
    tree = client.get(reverse("sessions:tree", args=[session_id]), {"at": entry_id, "filter": "all"})
    assert tree.status_code == 200 and 'aria-current="step"' in tree.content.decode()


def test_older_entries_load_through_the_rendered_link(client, chain) -> None:
    session_id, _, ids = chain
    html = client.get(f"/s/{session_id}/").content.decode()
    (older,) = _attr_urls(html, "hx-get", "/older/")
    assert "before=" in older
    page = client.get(older)
    assert page.status_code == 200
    text = page.content.decode()
    assert all(f'data-entry="{escape(i)}"' in text for i in ids[:-PAGE_SIZE])
    assert f'data-entry="{escape(ids[-PAGE_SIZE])}"' not in text


def test_tree_folds_open_through_the_rendered_link(client, chain) -> None:
    session_id, _, ids = chain
    # At the first entry, the rest of the chain is below the tab's path: it folds between its ends.
    panel = client.get(reverse("sessions:tree", args=[session_id]), {"filter": "all", "at": ids[0]})
    (fold,) = _attr_urls(panel.content.decode(), "hx-get", "/tree/run/")
    rows = client.get(fold)
    assert rows.status_code == 200
    shown = [unescape(i) for i in re.findall(r'data-entry="([^"]*)"', rows.content.decode())]
    assert shown == ids[1:-1]


def test_writes_name_hostile_entries_and_move_to_their_urls(client, chain) -> None:
    session_id, path, ids = chain
    target = "with/slash"
    moved = client.post(f"/s/{session_id}/navigate/", {"to": target, "mode": "exact", "at": ids[-1]}, **HTMX)
    assert moved["HX-Push-Url"] == reverse("sessions:entry", args=[session_id, target])
    assert client.get(moved["HX-Push-Url"]).status_code == 200
    labelled = client.post(f"/s/{session_id}/label/", {"entry": "a&b=c", "label": "amp", "at": target}, **HTMX)
    assert labelled.status_code == 200
    last = json.loads(path.read_bytes().splitlines()[-1])
    assert last["type"] == "label" and last["targetId"] == "a&b=c" and last["parentId"] == target


def test_ids_no_url_can_carry_are_shown_without_links(client, sessions_dir) -> None:
    long_id = "x" * (MAX_ID_CHARS + 1)
    session_id, _ = _write_chain(sessions_dir, ["tab\there", long_id])
    response = client.get(f"/s/{session_id}/")
    html = response.content.decode()
    assert response.status_code == 200 and "message 0" in html and "message 1" in html
    assert long_id not in "".join(re.findall(r'href="([^"]*)"', html))
    assert client.get(f"/s/{session_id}/e/{long_id}/").status_code == 404


@pytest.mark.parametrize(
    ("url", "parameter"),
    [
        ("tree/run/?first=a%00&last=b", "first"),
        ("tree/run/?first=a&last=b&filter=some", "filter"),
        ("tree/run/?first=a", "last"),
        ("tree/?filter=everything", "filter"),
        ("tree/?at=%00", "at"),
        (f"tree/?at={'x' * 10240}", "at"),
        ("older/", "before"),
        ("older/?before=", "before"),
        ("older/?before=a%00b", "before"),
        ("older/?before=a&unfold=1&fold_id=%01", "fold_id"),
        ("e/abc/actions/?at=%00", "at"),
        ("map/?at=%00", "at"),
        ("share/?at=%00", "at"),
    ],
)
def test_malformed_query_strings_are_400s_that_name_the_parameter(client, chain, url, parameter) -> None:
    session_id, path, _ = chain
    before = path.read_bytes()
    response = client.get(f"/s/{session_id}/{url}")
    assert response.status_code == 400
    assert f"{parameter}: " in response.content.decode()
    fragment = client.get(f"/s/{session_id}/{url}", **HTMX)
    assert fragment.status_code == 400 and fragment["HX-Retarget"] == "#flash"
    assert path.read_bytes() == before


def test_malformed_map_data_queries_are_400s_in_json(client, chain) -> None:
    session_id, _, _ = chain
    response = client.get(f"/s/{session_id}/map/data/?at=%00")
    assert response.status_code == 400 and "at" in response.json()["errors"]


@pytest.mark.parametrize("query", ["page=abc", "page=0", f"page={10**30}", "q=%00", f"q={'x' * 600}"])
def test_malformed_list_queries_are_400s(client, sessions_dir, query) -> None:
    response = client.get(f"/?{query}")
    assert response.status_code == 400
    assert query.split("=")[0] + ": " in response.content.decode()


def test_the_session_list_is_paged(client, sessions_dir) -> None:
    for n in range(LIST_PAGE_SIZE + 5):
        create_session(sessions_dir, f"/w{n % 3}", fsync=False).append(E.user_message(f"session number {n}"))
    first = client.get("/").content.decode()
    assert first.count('class="session-item"') == LIST_PAGE_SIZE
    assert f"1–{LIST_PAGE_SIZE} of {LIST_PAGE_SIZE + 5} sessions" in first
    (older,) = _attr_urls(first, "href", "page=2")
    second = client.get(older).content.decode()
    assert second.count('class="session-item"') == 5
    titles = re.findall(r">session number (\d+)<", first + second)
    assert sorted(map(int, titles)) == list(range(LIST_PAGE_SIZE + 5))
    searched = client.get("/", {"q": "number 7", "page": "1"}).content.decode()
    assert re.findall(r">session number (\d+)<", searched) == ["7"]
    assert client.get("/", {"page": "99"}).status_code == 200  # past the end: the last page
    create_session(sessions_dir, "/w-new", fsync=False).append(E.user_message("a newer session"))
    assert f"1–{LIST_PAGE_SIZE} of {LIST_PAGE_SIZE + 6} sessions" in client.get("/").content.decode()


def test_large_blocks_and_forks_of_hostile_entries(client, sessions_dir) -> None:
    session_id, path = _write_chain(sessions_dir, ["a/b?c", "d#e&f"])
    big = "y" * 9000
    with open(path, "ab") as handle:
        line = {
            "type": "message",
            "id": "%2F/..",
            "parentId": "d#e&f",
            "timestamp": "2026-01-01T00:01:00.000Z",
            "message": {"role": "assistant", "content": [{"type": "thinking", "thinking": big}], "timestamp": 3},
        }
        handle.write(json.dumps(line).encode() + b"\n")
    html = client.get(f"/s/{session_id}/").content.decode()
    (block,) = _attr_urls(html, "hx-get", "/block/")
    assert big in client.get(block).content.decode()
    forked = client.post(f"/s/{session_id}/fork/", {"entry": "%2F/.."}, **HTMX)
    new_page = client.get(forked["HX-Redirect"]).content.decode()
    # The fork opens at its name, the line below the entry forked (format.md §7.2).
    (fork_path,) = [p for p in sessions_dir.rglob("*.jsonl") if forked["HX-Redirect"].split("/")[2] in p.name]
    fork = SessionFile(fork_path)
    assert fork.entry(fork.leaf_id)["type"] == "session_info" and fork.entry(fork.leaf_id)["parentId"] == "%2F/.."
    assert f'data-position="{fork.leaf_id}"' in new_page and big not in new_page
