"""The search page: results with titles, roles, times and permalinks, escaped snippets, pages, the
session filter, htmx fragments, the live region saying what was found, and a 400 for parameters the
form refuses."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from django.urls import reverse

from sessions_app.search import index as search_index
from sessions_app.services.lookup import _catalog_for
from sessions_app.views.search import _index_at

URL = reverse("sessions:search")


@pytest.fixture(autouse=True)
def _web(settings, root: Path, tmp_path: Path):
    """The app pointed at the test folder and a fresh index; no cached catalog or index from elsewhere."""
    settings.PITREE_SESSIONS_DIR = root
    settings.PITREE_SEARCH_DB = tmp_path / "web-index.sqlite3"
    _catalog_for.cache_clear()
    _index_at.cache_clear()
    yield
    _index_at.cache_clear()


def page(client, **params) -> tuple[int, str]:
    response = client.get(URL, params)
    return response.status_code, response.content.decode()


def test_results_show_title_role_time_snippet_and_link_to_the_entry(client, folder) -> None:
    folder.write(
        "0197aaaa-0000-7000-8000-000000000001",
        {"id": "a1b2c3d4", "timestamp": "2026-03-02T09:15:09.000Z", **folder.user("Where is the tokenizer?")},
        {"type": "session_info", "id": "n1", "name": "Tokenizer hunt"},
    )
    status, html = page(client, q="tokenizer")
    assert status == 200
    # The permalink names the words found and the entry, which the page marks and scrolls to.
    assert 'href="/s/0197aaaa-0000-7000-8000-000000000001/e/a1b2c3d4/?resume=1&amp;hl=tokenizer#entry-a1b2c3d4"' in html
    assert "Tokenizer hunt" in html
    assert "You" in html  # the role, named as the transcript names it
    assert '<time datetime="2026-03-02T09:15:09.000Z">2026-03-02 09:15</time>' in html
    assert "Where is the <mark>tokenizer</mark>?" in html
    assert 'value="tokenizer"' in html  # the query stays in the box


def test_hostile_text_and_queries_stay_text(client, folder) -> None:
    folder.write("evil", folder.user('<img src=x onerror="alert(1)"> <script>alert(2)</script> payload'))
    folder.write('"><script>alert(3)</script>', folder.user("payload in a session with a hostile id"))
    status, html = page(client, q='payload "><script>alert(4)</script>')
    assert status == 200
    assert "<script>alert" not in html and "<img src=x" not in html
    assert "&lt;script&gt;alert(4)&lt;/script&gt;" in html  # the query, echoed escaped
    status, html = page(client, q="payload")
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in html
    assert "&lt;script&gt;alert(2)&lt;/script&gt; <mark>payload</mark>" in html
    assert "<script>alert" not in html


def test_twenty_a_page_with_links_between_pages(client, folder) -> None:
    folder.write("many", *[folder.user(f"needle number {i}") for i in range(45)])
    status, html = page(client, q="needle")
    assert status == 200 and html.count('class="session-item search-hit"') == 20
    assert 'href="?q=needle&amp;page=2"' in html and 'rel="prev"' not in html
    status, html = page(client, q="needle", page=3)
    assert html.count('class="session-item search-hit"') == 5
    assert 'href="?q=needle&amp;page=2"' in html and 'rel="next"' not in html
    assert 'start="41"' in html
    status, html = page(client, q="needle", page=4)
    assert status == 200 and "No more entries match" in html


def test_the_session_filter_and_the_link_that_sets_it(client, folder) -> None:
    folder.write("first-session", folder.user("common word"))
    folder.write("second-session", folder.user("common word"), {"type": "session_info", "id": "n", "name": "Second"})
    status, html = page(client, q="common")
    assert status == 200 and html.count('class="session-item search-hit"') == 2
    assert 'href="?q=common&amp;session=second-session"' in html
    _, html = page(client, q="common", session="second-session")
    assert html.count('class="session-item search-hit"') == 1
    assert "In the session “Second”" in html and 'href="?q=common"' in html
    assert '<input type="hidden" name="session" value="second-session">' in html


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"q": "x", "page": "0"}, "page: Ensure this value is greater than or equal to 1."),
        ({"q": "x", "page": "two"}, "page: Enter a whole number."),
        ({"q": "x", "page": "501"}, "page: Ensure this value is less than or equal to 500."),
        ({"q": "x", "session": "../../etc/passwd"}, "session: Not a session id."),
        ({"q": "x" * 501}, "q: Ensure this value has at most 500 characters (it has 501)."),
    ],
)
def test_bad_parameters_are_a_400_that_says_why(client, folder, params, message) -> None:
    folder.write("s", folder.user("x"))
    status, html = page(client, **params)
    assert status == 400
    assert message in html
    assert '<form class="search"' in html  # the form is there to try again


def test_an_empty_query_shows_how_to_search_and_reads_nothing(client, folder, settings) -> None:
    folder.write("s", folder.user("words"))
    for query in ["", "   ", '"', "*"]:
        status, html = page(client, q=query)
        assert status == 200
        assert "quoted phrase" in html and "search-hit" not in html
    assert not Path(settings.PITREE_SEARCH_DB).exists()


def test_words_left_out_alone_say_a_word_to_find_is_missing_and_read_nothing(client, folder, settings) -> None:
    folder.write("s", folder.user("words"))
    status, html = page(client, q='-words -"a phrase"')
    assert status == 200
    assert "“-words -&quot;a phrase&quot;” only leaves entries out" in html and "search-hit" not in html
    assert not Path(settings.PITREE_SEARCH_DB).exists()


def test_a_word_left_out_removes_its_entries_from_the_page(client, folder) -> None:
    folder.write(
        "s", {"id": "kept", **folder.user("deploy to production")}, {"id": "gone", **folder.user("deploy to staging")}
    )
    status, html = page(client, q="deploy -staging")
    assert status == 200 and html.count('class="session-item search-hit"') == 1
    assert "#entry-kept" in html and "#entry-gone" not in html
    assert "&amp;hl=deploy#" in html  # the words marked on the entry: only those found


def _status(html: str) -> str:
    """The text of the page's live region (one, holding only text and paragraphs)."""
    assert html.count('id="search-status"') == 1
    region = re.search(r'<div id="search-status" class="search-status" role="status"[^>]*>(.*?)</div>', html, re.S)
    assert region is not None
    return " ".join(re.sub(r"<[^>]+>", " ", region.group(1)).split())


def test_a_live_region_says_how_many_entries_match(client, folder) -> None:
    folder.write("one", folder.user("single word"), *[folder.user(f"needle number {i}") for i in range(45)])
    assert _status(page(client, q="single")[1]) == "1 entry matches “single”."
    folder.write("two", folder.user("needle and single"))
    assert _status(page(client, q="single")[1]) == "2 entries match “single”."
    assert _status(page(client, q="needle")[1]) == "More than 20 entries match “needle”."
    assert _status(page(client, q="needle", page=2)[1]) == "Matches 21–40 for “needle”, more on the next page."
    assert _status(page(client, q="needle", page=3)[1]) == "Matches 41–46 for “needle”."
    assert _status(page(client, q="needle", page=4)[1]) == "No more entries match."
    assert _status(page(client, q="absent")[1]) == "No entry matches “absent”."
    assert _status(page(client, q="")[1]).startswith("Type words to find")
    assert _status(page(client, q="x" * 501)[1]) == "q: Ensure this value has at most 500 characters (it has 501)."


def test_htmx_gets_the_live_regions_words_for_the_region_already_in_the_page(client, folder) -> None:
    """The region is not swapped with the results (a region arriving with its text is often not read
    out): the answer carries its new contents, which htmx puts inside the one in the page."""
    folder.write("s", folder.user("fragment words"))
    html = client.get(URL, {"q": "fragment"}).content.decode()
    region = html.index('id="search-status"')
    assert region < html.index('id="search-results"') and "hx-swap-oob" not in html
    html = client.get(URL, {"q": "fragment"}, headers={"HX-Request": "true"}).content.decode()
    assert 'id="search-status" class="search-status" role="status" hx-swap-oob="innerHTML"' in html
    assert _status(html) == "1 entry matches “fragment”."


def test_nothing_found_says_so(client, folder) -> None:
    folder.write("s", folder.user("words"))
    status, html = page(client, q="absent")
    assert status == 200 and "No entry matches “absent”." in html


def test_htmx_gets_the_results_alone(client, folder) -> None:
    folder.write("s", folder.user("fragment words"))
    response = client.get(URL, {"q": "fragment"}, headers={"HX-Request": "true"})
    html = response.content.decode()
    assert response.status_code == 200
    assert "<html" not in html and "<mark>fragment</mark>" in html
    assert "HX-Request" in response["Vary"]
    restore = client.get(URL, {"q": "fragment"}, headers={"HX-Request": "true", "HX-History-Restore-Request": "true"})
    assert "<html" in restore.content.decode()  # history restore needs the whole page


def test_an_unusable_index_is_a_503_that_says_why(client, folder, settings, tmp_path) -> None:
    folder.write("s", folder.user("words"))
    bogus = tmp_path / "bogus.sqlite3"
    bogus.write_bytes(b"not sqlite" * 200)
    settings.PITREE_SEARCH_DB = bogus
    status, html = page(client, q="words")
    assert status == 503
    assert "delete it and it is rebuilt" in html


def test_a_new_entry_is_found_on_the_next_search(client, folder) -> None:
    path = folder.write("live", folder.user("before"))
    assert page(client, q="later")[1].count('search-hit"') == 0
    folder.append(path, {"id": "fresh", **folder.user("later words")})
    assert 'href="/s/live/e/fresh/?resume=1&amp;hl=later#entry-fresh"' in page(client, q="later")[1]


def test_an_entry_id_holding_a_slash_links_to_its_entry(client, folder) -> None:
    folder.write("s", {"id": "has/slash", **folder.user("slashed entry")})
    status, html = page(client, q="slashed")
    assert status == 200
    link = reverse("sessions:entry", args=["s", "has/slash"])
    assert f'href="{link}?resume=1&amp;hl=slashed#entry-has%2Fslash"' in html  # the fragment names the element's id
    opened = client.get(link)
    assert opened.status_code == 200 and 'data-entry="has/slash"' in opened.content.decode()


def test_the_session_list_has_a_box_that_searches_inside_sessions(client, folder) -> None:
    html = client.get(reverse("sessions:list")).content.decode()
    assert f'action="{URL}"' in html and 'aria-label="Search inside every session"' in html


def test_a_file_name_that_is_not_utf8_takes_nothing_down(client, folder) -> None:
    folder.write("plain", folder.user("hello plain"))
    odd = Path(os.fsdecode(os.fsencode(folder.path("plain").parent) + b"/2026_badutf\xff.jsonl"))
    odd.write_bytes(folder.path("plain").read_bytes().replace(b'"plain"', b'"odd"', 1))
    status, html = page(client, q="hello")
    assert status == 200
    assert reverse("sessions:session", args=["odd"]) in html and reverse("sessions:session", args=["plain"]) in html


def test_a_file_that_cannot_be_indexed_is_named_to_the_owner_and_the_rest_found(client, folder, monkeypatch) -> None:
    folder.write("good", folder.user("needle here"))
    folder.write("bad", folder.user("needle breaks"))
    real = search_index.searchable_text
    monkeypatch.setattr(search_index, "searchable_text", lambda entry: 1 / 0 if "breaks" in str(entry) else real(entry))
    status, html = page(client, q="needle")
    assert status == 200
    assert reverse("sessions:session", args=["good"]) in html
    assert "Not searched" in html and "<code>bad.jsonl</code>: could not be indexed (ZeroDivisionError" in html
