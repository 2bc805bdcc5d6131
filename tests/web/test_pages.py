"""Read-only views: list, session page, permalinks, older pages, folded history, tree panel, errors."""

from __future__ import annotations

import re
from pathlib import Path

from django.test import Client
from django.urls import reverse

from sessions_app.display.treepanel import GUIDE_LEVELS, PIPE
from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles.fork import create_session
from sessions_app.sessionfiles.store import SessionFile

TREE = "02-tree-branches"


def test_list_nests_forks(client, pi) -> None:
    html = client.get("/").content.decode()
    assert "Title validation experiments" in html  # a name wins over the first message
    assert "Set up the project layout" in html  # no name: the first message
    # The fork of 02 comes right after 02, one level deeper.
    parent = html.index(f'href="/s/{pi.id(TREE)}/"')
    fork = html.index(f'href="/s/{pi.id("03-fork-of-02")}/"')
    assert parent < fork
    assert 'style="--depth: 1"' in html[parent : fork + 200]
    assert "11 messages" in html and "regex-approach" in html  # counts and labels


def test_list_search_filters_names_and_first_messages(client, pi) -> None:
    html = client.get("/", {"q": "RATE"}).content.decode()  # nothing matches "rate"…
    assert "No session matches" in html
    html = client.get("/", {"q": "todos table"}).content.decode()
    assert "Rename the todos table" in html
    assert "Title validation experiments" not in html


def test_a_listing_shown_again_follows_every_change_of_the_folder(client, pi) -> None:
    """The list and the sidebar reuse what they rendered while nothing changed; any change shows at once."""
    for _ in range(2):
        assert "Title validation experiments" in client.get("/").content.decode()
        assert "Title validation experiments" in client.get("/sidebar/", HTTP_HX_REQUEST="true").content.decode()
    SessionFile.open(pi.path(TREE)).rename("Renamed while listed")
    assert "Renamed while listed" in client.get("/").content.decode()
    assert "Renamed while listed" in client.get("/sidebar/", HTTP_HX_REQUEST="true").content.decode()
    junk = pi.folder / "2026-01-01T00-00-00-000Z_notes.jsonl"
    junk.write_bytes(b'{"hello": "world"}\n')
    assert junk.name in client.get("/").content.decode()  # a report is part of what is shown
    searched = client.get("/", {"q": "todos table"}).content.decode()
    assert "Rename the todos table" in searched and "Renamed while listed" not in searched
    assert "Renamed while listed" in client.get("/").content.decode()


def test_list_reports_files_that_are_not_sessions_and_leaves_them(client, pi) -> None:
    junk = pi.folder / "2026-01-01T00-00-00-000Z_notes.jsonl"
    junk.write_bytes(b'{"hello": "world"}\n')
    html = client.get("/").content.decode()
    assert "not readable sessions" in html and junk.name in html
    assert junk.read_bytes() == b'{"hello": "world"}\n'


def test_session_page_shows_the_active_branch_with_a_navigator(client, pi) -> None:
    response = client.get(reverse("sessions:session", args=[pi.id(TREE)]))
    html = response.content.decode()
    assert response.status_code == 200
    assert "Add a docstring" in html  # the leaf's branch (pydantic)
    assert "Make it reject empty titles only" not in html  # the other branch
    assert re.search(r'navigator__count">1/2<', html)
    assert 'data-position="750a4556"' in html


def test_a_path_ending_in_a_label_below_a_fork_keeps_its_navigator(client, sessions_dir: Path) -> None:
    """Moved back to an answer, then labelled it: pi hangs the label under the answer, beside the
    branch that went on. The label is shown, as the path's last line, with the navigator back to it."""
    session = create_session(sessions_dir, "/w", fsync=False)
    first = session.append(E.user_message("one"), None)["id"]
    answer = session.append(E.assistant_message("reply one", provider="p", model="m", api="x"), first)["id"]
    second = session.append(E.user_message("two"), answer)["id"]
    session.append(E.assistant_message("reply two", provider="p", model="m", api="x"), second)
    session.navigate(answer)
    label = session.set_label(answer, "A", answer)["id"]
    html = client.get(reverse("sessions:session", args=[session.session_id])).content.decode()
    end = re.search(rf'<article class="entry entry--silent[^"]*"[^>]*data-entry="{label}".*?</article>', html, re.S)
    assert end and f'Label “A” set on <a href="#entry-{answer}">' in end.group(0)
    assert re.search(r'navigator__count">2/2<', end.group(0)) and "reply two" not in html
    assert f'class="nav-prev" name="to" value="{second}"' in end.group(0)  # the branch that went on


def test_permalink_shows_the_branch_through_that_entry(client, pi) -> None:
    response = client.get(reverse("sessions:entry", args=[pi.id(TREE), "de4f0d3a"]))
    html = response.content.decode()
    assert "Make it reject empty titles only" in html and "I will run the tests next." in html
    assert "Add a docstring" not in html
    assert re.search(r'navigator__count">2/2<', html)  # the branch_summary sibling is the second branch
    assert 'data-position="de4f0d3a"' in html
    assert pi.reopen(pi.path(TREE)).leaf_id == "750a4556"  # looking never writes


def test_unknown_session_entry_and_hostile_ids_are_404(client, pi) -> None:
    assert client.get("/s/0000-nope/").status_code == 404
    assert client.get(f"/s/{pi.id(TREE)}/e/ffffffff/").status_code == 404
    assert client.get("/s/..%2F..%2Fetc%2Fpasswd/").status_code == 404
    assert client.get("/s/-leading-dash/").status_code == 404
    # A label entry's id is an entry, but a `leaf` marker is not a position one can open.
    assert client.get(f"/s/{pi.id(TREE)}/older/", {"before": "zzz"}).status_code == 404


def test_a_file_named_as_a_session_that_is_not_one_gets_a_readable_page(client, pi) -> None:
    broken = pi.folder / "2026-02-02T00-00-00-000Z_019aaaaa-0000-7000-8000-000000000bad.jsonl"
    content = b'{"kind":"header","version":4,"id":"x","createdAt":1}\n'
    broken.write_bytes(content)
    response = client.get("/s/019aaaaa-0000-7000-8000-000000000bad/")
    html = response.content.decode()
    assert response.status_code == 422
    assert "v4" in html and "left exactly as it is" in html
    assert broken.read_bytes() == content


def test_v1_session_is_shown_read_only_with_a_way_to_continue(client, pi) -> None:
    v1_input = Path(__file__).resolve().parents[2] / "sessions_app/samples/pi/05-legacy-v1.input.jsonl"
    v1 = pi.folder / "2025-11-20T08-00-00-000Z_11111111-1b7d-4c1e-9a43-2d8f6e1b0c77.jsonl"
    v1.write_bytes(v1_input.read_bytes().replace(b"5f0c2a9e-1b7d", b"11111111-1b7d"))
    before = v1.read_bytes()
    html = client.get("/s/11111111-1b7d-4c1e-9a43-2d8f6e1b0c77/").content.decode()
    assert "read-only" in html and "Continue as a new v3 session" in html
    assert 'id="composer"' not in html
    assert "Thanks" in html and "Update the migrations" in html  # kept after the v1 compaction
    assert v1.read_bytes() == before


def test_long_paths_are_paged_and_older_entries_load_on_request(client, sessions_dir) -> None:
    session = create_session(sessions_dir, "/w", fsync=False)
    for i in range(100):
        session.append(E.user_message(f"message number {i}"))
    html = client.get(f"/s/{session.session_id}/").content.decode()
    assert "message number 99" in html and "message number 60" in html
    assert "message number 59" not in html  # one page only
    older = re.search(r'hx-get="(/s/[^"]+/older/\?before=[^"]+)"', html).group(1)
    page2 = client.get(older.replace("&amp;", "&")).content.decode()
    assert "message number 59" in page2 and "message number 20" in page2
    assert "message number 60" not in page2 and "message number 19" not in page2
    page3 = client.get(re.search(r'hx-get="(/s/[^"]+/older/\?[^"]+)"', page2).group(1).replace("&amp;", "&"))
    text = page3.content.decode()
    assert "message number 0<" in text and "older/?" not in text  # the root: nothing older


def test_compaction_folds_older_history_behind_a_card_that_opens(client, pi) -> None:
    page = client.get(f"/s/{pi.id('04-compaction')}/").content.decode()
    html = page[page.index('<section id="transcript"') :]
    assert "History compacted" in html
    assert "Add pagination to GET /todos" in html  # first kept entry is shown
    assert "Set up the project layout" not in html  # folded
    unfold = re.search(r'hx-get="([^"]+unfold=1)"', html).group(1).replace("&amp;", "&")
    folded = client.get(unfold).content.decode()
    assert "Set up the project layout" in folded and "Add SQLite storage" in folded
    assert "Add pagination to GET /todos" not in folded


def _row(html: str, entry_id: str) -> str:
    """The ``class`` of the tree row holding ``entry_id``'s button (after the row's guide glyphs)."""
    match = re.search(
        r'<li class="([^"]*)"[^>]*>(?:<span[^>]*>[^<]*</span>)*<button[^>]*value="' + entry_id + '"', html
    )
    return match.group(1) if match else ""


def test_tree_panel_filters_and_marks_the_path(client, pi) -> None:
    url = reverse("sessions:tree", args=[pi.id(TREE)])
    default = client.get(url).content.decode()
    assert "on-path" in _row(default, "e65e9e73") and "on-path" not in _row(default, "de4f0d3a")
    assert _row(default, "750a4556") == ""  # session_info: hidden by the default filter
    assert "tree__node--label" not in default
    user_only = client.get(url, {"filter": "user"}).content.decode()
    assert "tree__node--assistant" not in user_only and "tree__node--user" in user_only
    labeled = client.get(url, {"filter": "labeled"}).content.decode()
    assert set(re.findall(r'data-entry="([^"]+)"', labeled)) == {"0f649aff", "07721729"}
    everything = client.get(url, {"filter": "all"}).content.decode()
    assert "is-position" in _row(everything, "750a4556")
    path = ["f87f9c1c", "2f760a8d", "97690895", "c2ecb522", "042efc28", "8aabce23", "0f649aff", "b6d611de"]
    path += ["ab506f7f", "e65e9e73", "5d8d797d", "a2c65d53", "750a4556"]
    assert re.findall(r'data-entry="([^"]+)"', everything)[: len(path)] == path  # the path is never folded
    assert all("on-path" in _row(everything, entry) for entry in path)
    at_other = client.get(url, {"filter": "all", "at": "de4f0d3a"}).content.decode()
    assert "is-position" in _row(at_other, "de4f0d3a") and "on-path" not in _row(at_other, "e65e9e73")
    # Other branches' straight runs fold into "+N"; opening a fold shows its entries, labels included.
    fold = re.search(r'hx-get="([^"]*/tree/run/[^"]*first=b6d611de[^"]*)"', at_other)
    assert fold and 'value="b6d611de"' not in at_other  # a label entry inside the fold is not drawn
    run = client.get(fold.group(1).replace("&amp;", "&")).content.decode()
    assert re.findall(r'data-entry="([^"]+)"', run)[0] == "b6d611de" and "tree__node--label" in run


def test_the_tree_panel_fetched_again_draws_the_folds_its_reader_opened(client, pi) -> None:
    url = reverse("sessions:tree", args=[pi.id(TREE)])
    entries = re.compile(r'data-entry="([^"]+)"')
    shown = client.get(url, {"filter": "all", "at": "de4f0d3a"}).content.decode()
    fold = re.search(r'data-first="(b6d611de)" data-last="([^"]+)" hx-get="([^"]+)"', shown)
    assert fold
    first, last, run_url = fold.groups()
    opened = entries.findall(client.get(run_url.replace("&amp;", "&")).content.decode())
    before = len(entries.findall(shown[: fold.start()]))
    asked = {"filter": "all", "at": "de4f0d3a", "open_first": [first], "open_last": [last]}
    again = client.get(url, asked).content.decode()
    # The panel as its reader left it, the fold open where it was, in one answer.
    assert entries.findall(again) == entries.findall(shown)[:before] + opened + entries.findall(shown)[before:]
    assert 'data-first="b6d611de"' not in again
    # What the file does not hold is passed over; ends given unpaired are refused, saying why.
    gone = client.get(url, {**asked, "open_first": ["nosuch"], "open_last": ["nosuch2"], "loaded": "nosuch3"})
    assert gone.status_code == 200 and 'data-first="b6d611de"' in gone.content.decode()
    unpaired = client.get(url, {"open_first": [first, first], "open_last": [last]})
    assert unpaired.status_code == 400 and b"open_first and open_last" in unpaired.content


def test_a_conversation_asked_differently_at_many_points_stays_inside_the_tree_panel(client, sessions_dir) -> None:
    # Each branch point on the path nests what follows one level deeper, as pi's /tree does: guides drawn
    # whole would take the panel's width and push the rows' entries out of sight.
    session = create_session(sessions_dir, "/w", fsync=False)
    parent = session.append(E.user_message("the start"), None)["id"]
    for n in range(12):
        asked = session.append(E.user_message(f"question {n}"), parent)["id"]
        session.append(E.user_message(f"asked differently {n}"), parent)
        parent = session.append(E.assistant_message(f"answer {n}", provider="p", model="m", api="a"), asked)["id"]
    html = client.get(reverse("sessions:tree", args=[session.session_id]), {"filter": "all"}).content.decode()
    rows = re.findall(
        r'<li class="tree__row([^"]*)"[^>]*aria-level="(\d+)"[^>]*>(<span class="tree__deep"[^>]*>⋯</span>)?'
        r'<span class="tree__guide" aria-hidden="true">([^<]*)</span>',
        html,
    )
    assert len(rows) == 1 + 12 * 3
    assert all(len(guide) <= GUIDE_LEVELS * len(PIPE) for _, _, _, guide in rows)
    position = [(int(level), deep) for classes, level, deep, _ in rows if "is-position" in classes]
    assert position == [(13, position[0][1])] and "⋯" in position[0][1]  # its depth is still told
    assert not any(deep for _, level, deep, _ in rows if int(level) <= GUIDE_LEVELS + 1)  # drawn whole


def test_large_blocks_load_lazily_and_raw_lines_are_served_as_stored(client, sessions_dir) -> None:
    session = create_session(sessions_dir, "/w", fsync=False)
    big = "x" * 9000
    entry = session.append(
        E.message(
            {
                "role": "toolResult",
                "toolCallId": "t1",
                "toolName": "read",
                "content": [{"type": "text", "text": big}],
                "isError": False,
                "timestamp": 1,
            }
        )
    )
    html = client.get(f"/s/{session.session_id}/").content.decode()
    assert big not in html and f"/e/{entry['id']}/block/0/" in html
    block = client.get(f"/s/{session.session_id}/e/{entry['id']}/block/0/").content.decode()
    assert big in block
    raw = client.get(f"/s/{session.session_id}/e/{entry['id']}/raw/")
    assert raw.content == session.raw_line(session.row_of(entry["id"]))
    assert client.get(f"/s/{session.session_id}/e/{entry['id']}/block/7/").status_code == 404


def test_unknown_entry_types_are_shown_raw_and_content_html_is_escaped(client, sessions_dir) -> None:
    session = create_session(sessions_dir, "/w", fsync=False)
    session.append(E.Draft("telemetry<script>", {"payload": "<img src=x onerror=alert(1)>"}))
    session.append(
        E.assistant_message(
            "**bold** <script>alert(2)</script> [x](javascript:alert(3))", provider="p", model="m", api="a"
        )
    )
    html = client.get(f"/s/{session.session_id}/").content.decode()
    assert "telemetry&lt;script&gt;" in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "<strong>bold</strong>" in html
    assert "<script>alert(2)" not in html and 'href="javascript:' not in html


def test_entries_with_unusual_ids_render_and_open(client, sessions_dir) -> None:
    session = create_session(sessions_dir, "/w", fsync=False)
    with open(session.path, "ab") as handle:  # ids another tool might write: any string is an id
        handle.write(
            b'{"type":"message","id":"a b?#<x>","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"odd id","timestamp":1}}\n'
        )
        handle.write(
            b'{"type":"message","id":"with/slash","parentId":"a b?#<x>","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"slash id","timestamp":2}}\n'
        )
    html = client.get(f"/s/{session.session_id}/").content.decode()
    assert "odd id" in html and "slash id" in html
    assert f'href="/s/{session.session_id}/e/a%20b%3F%23%3Cx%3E/"' in html
    assert client.get(f"/s/{session.session_id}/e/a%20b%3F%23%3Cx%3E/").status_code == 200
    # A "/" in an id is escaped before the URL is percent-encoded, so it stays inside its segment.
    assert f'href="/s/{session.session_id}/e/with%252Fslash/"' in html
    response = client.post(
        f"/s/{session.session_id}/navigate/", {"to": "a b?#<x>", "mode": "exact"}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 200 and response["HX-Push-Url"] == f"/s/{session.session_id}/e/a%20b%3F%23%3Cx%3E/"
    page = client.get(f"/s/{session.session_id}/e/with%252Fslash/")
    assert page.status_code == 200 and 'data-position="with/slash"' in page.content.decode()


def test_pages_carry_a_content_security_policy_that_allows_no_foreign_loads(client, pi) -> None:
    policy = client.get("/")["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "img-src 'self' data:" in policy and "unsafe-eval" not in policy


def test_pages_are_kept_by_no_cache_and_asked_for_again(client, pi) -> None:
    for url in ("/", f"/s/{pi.id(TREE)}/", reverse("sessions:tree", args=[pi.id(TREE)])):
        assert set(client.get(url)["Cache-Control"].split(", ")) == {"private", "no-store"}, url
    # A view that says how its answer is cached keeps that (the sign-in page: never cached).
    client.logout()
    assert "no-store" in client.get(reverse("accounts:login"))["Cache-Control"]


def test_remote_markdown_images_become_links_and_inline_ones_show(client, sessions_dir) -> None:
    session = create_session(sessions_dir, "/w", fsync=False)
    text = "![leak](https://tracker.invalid/p.png?key=sk-secret) ![dot](data:image/png;base64,iVBORw0KGgo=)"
    session.append(E.assistant_message(text, provider="p", model="m", api="a"))
    html = client.get(f"/s/{session.session_id}/").content.decode()
    assert '<img src="https://' not in html and "[image: leak]</a>" in html
    assert '<img src="data:image/png;base64,iVBORw0KGgo=" alt="dot"' in html


def test_the_404_page_says_what_was_not_found_even_with_debug_on(client, pi, settings) -> None:
    settings.DEBUG = True
    response = client.get(f"/s/{pi.id(TREE)}/e/ffffffff/")
    assert response.status_code == 404
    html = response.content.decode()
    assert "Entry ffffffff not found in this session" in html and "All sessions" in html


def test_cached_entry_fragments_carry_each_requests_csrf_token(pi, sign_in) -> None:
    url = f"/s/{pi.id(TREE)}/"
    tokens = []
    for client in (sign_in(Client()), sign_in(Client())):
        html = client.get(url).content.decode()
        found = set(re.findall(r'name="csrfmiddlewaretoken" value="([^"]+)"', html))
        assert len(re.findall(r'class="navigator"', html)) >= 1
        assert len(found) == 1  # the navigator's (cached) form and the composer's carry the same token
        tokens.append(found.pop())
    assert tokens[0] != tokens[1]


def test_entry_fragments_follow_labels_and_position(client, pi) -> None:
    url = f"/s/{pi.id(TREE)}/"
    assert 'class="tag" title="label" id="label-e65e9e73">docs</span>' not in client.get(url).content.decode()
    client.post(url + "label/", {"entry": "e65e9e73", "label": "docs", "at": "750a4556"})
    html = client.get(url).content.decode()
    assert 'class="tag" title="label" id="label-e65e9e73">docs</span>' in html
    moved = client.get(url + "e/e65e9e73/").content.decode()
    assert re.search(r'class="entry entry--assistant[^"]* is-position" id="entry-e65e9e73"', moved)
    assert not re.search(r'is-position" id="entry-e65e9e73"', html)


def test_entry_menus_load_when_opened_and_are_a_page_without_javascript(client, pi) -> None:
    url = f"/s/{pi.id(TREE)}/"
    page = client.get(url).content.decode()
    assert 'name="label"' not in page  # the menus' forms are not in the page …
    menu_url = f"{url}e/e65e9e73/actions/"
    assert f'hx-get="{menu_url}"' in page and f'href="{menu_url}?do=label&amp;at=750a4556"' in page
    fragment = client.get(menu_url, {"at": "97690895", "do": "label"}, HTTP_HX_REQUEST="true").content.decode()
    assert not fragment.lstrip().startswith("<!DOCTYPE")  # … they come as a fragment for htmx, one at a time,
    assert 'name="label"' in fragment and 'name="at" value="97690895"' in fragment
    assert "fork-form" not in fragment and "data-close-panel" in fragment
    full = client.get(menu_url, {"at": "97690895"}).content.decode()
    assert full.startswith("<!DOCTYPE") and "hx-disable" in full and 'name="label"' in full  # … or a page
    response = client.post(f"{url}label/", {"entry": "e65e9e73", "label": "plain", "at": "97690895"})
    assert response.status_code == 302
    assert pi.lines(pi.path(TREE))[-1]["parentId"] == "97690895"
