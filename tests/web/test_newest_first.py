"""The session list and the sidebar as a chat app's: newest first, in groups by day in the reader's time
zone, the workspace a filter (remembered for the sidebar) rather than the order, and "New chat" on every
page, asking no path."""

from __future__ import annotations

import re
import time
from datetime import UTC, date, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from sessions_app.display.dates import ZONE_COOKIE, reader_zone, when_group
from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles.fork import create_session

HTMX = {"HTTP_HX_REQUEST": "true"}
DAY_MS = 24 * 3600 * 1000


def _chat(root: Path, cwd: str, text: str, days_ago: float) -> str:
    created = create_session(root, cwd, fsync=False)
    created.append(E.user_message(text, int(time.time() * 1000 - days_ago * DAY_MS)))
    return created.session_id


def _groups(html: str, heading: str) -> list[tuple[str, list[str]]]:
    """(group heading, the chats' first messages in it) in page order."""
    found: list[tuple[str, list[str]]] = []
    for part in re.split(rf'<h[23] class="{heading}"[^>]*>', html)[1:]:
        title, rest = part.split("</h", 1)
        found.append((title, re.findall(r">(chat [^<]+)<", rest)))
    return found


@pytest.fixture
def chats(sessions_dir: Path) -> Path:
    _chat(sessions_dir, "/home/me/zeta", "chat old", 40)
    _chat(sessions_dir, "/home/me/alpha", "chat last week", 3)
    _chat(sessions_dir, "/home/me/zeta", "chat now", 0)
    _chat(sessions_dir, "/home/me/alpha", "chat yesterday", 1)
    return sessions_dir


def test_the_list_shows_the_newest_first_grouped_by_day(client, chats) -> None:
    # Sessions were grouped by working directory, alphabetically: a new chat landed below every pi folder.
    html = client.get("/").content.decode()
    groups = _groups(html, "workspace__name")
    assert [title for title, _ in groups[:3]] == ["Today", "Yesterday", "Previous 7 days"]
    assert [chats for _, chats in groups] == [["chat now"], ["chat yesterday"], ["chat last week"], ["chat old"]]
    assert re.match(r"[A-Z][a-z]+ \d{4}$", groups[3][0])  # older: by month


def test_the_sidebar_shows_the_newest_first_grouped_by_day(client, chats) -> None:
    html = client.get("/sidebar/", **HTMX).content.decode()
    assert [chats for _, chats in _groups(html, "sidebar__when")] == [
        ["chat now"],
        ["chat yesterday"],
        ["chat last week"],
        ["chat old"],
    ]


def test_days_are_the_reader_s_own(client, sessions_dir) -> None:
    # 23:30 UTC yesterday is already today in Tokyo (UTC+9), and still yesterday in UTC.
    now = datetime.now(UTC)
    late = datetime(now.year, now.month, now.day, 23, 30, tzinfo=UTC).timestamp() * 1000 - DAY_MS
    created = create_session(sessions_dir, "/w", fsync=False)
    created.append(E.user_message("chat late", int(late)))
    assert _groups(client.get("/").content.decode(), "workspace__name")[0][0] == "Yesterday"
    client.cookies[ZONE_COOKIE] = "Asia/Tokyo"
    tokyo_today = datetime.now(ZoneInfo("Asia/Tokyo")).date()
    late_in_tokyo = datetime.fromtimestamp(late / 1000, ZoneInfo("Asia/Tokyo")).date()
    expected = "Today" if late_in_tokyo == tokyo_today else "Yesterday"
    assert _groups(client.get("/").content.decode(), "workspace__name")[0][0] == expected


@pytest.mark.parametrize("cookie", ["", "Not/AZone", "../../etc/passwd", "x" * 500, "UTC\x00"])
def test_a_bad_zone_cookie_is_utc(client, chats, cookie) -> None:
    assert reader_zone(cookie) is UTC
    client.cookies[ZONE_COOKIE] = cookie
    assert client.get("/").status_code == 200


def test_when_group_names_chat_apps_groups() -> None:
    today = date(2026, 3, 15)
    ms = lambda day: int(datetime(2026, day.month, day.day, 12, tzinfo=UTC).timestamp() * 1000)  # noqa: E731
    assert when_group(ms(date(2026, 3, 16)), today, UTC) == "Today"  # a clock ahead counts as now
    assert when_group(ms(date(2026, 3, 14)), today, UTC) == "Yesterday"
    assert when_group(ms(date(2026, 3, 8)), today, UTC) == "Previous 7 days"
    assert when_group(ms(date(2026, 2, 20)), today, UTC) == "Previous 30 days"
    assert when_group(ms(date(2026, 1, 20)), today, UTC) == "January 2026"


def test_the_workspace_filters_the_list(client, chats) -> None:
    html = client.get("/").content.decode()
    options = dict(re.findall(r'<option value="(--[^"]+--)" title="([^"]+)"', html))
    assert sorted(options.values()) == ["/home/me/alpha", "/home/me/zeta"]
    alpha = next(folder for folder, cwd in options.items() if cwd == "/home/me/alpha")
    filtered = client.get("/", {"workspace": alpha}).content.decode()
    assert re.findall(r">(chat [^<]+)<", filtered) == ["chat yesterday", "chat last week"]
    assert "in one workspace" in filtered
    assert client.get("/", {"workspace": "../etc"}).status_code == 400


def test_the_sidebar_remembers_the_workspace_chosen(client, chats) -> None:
    html = client.get("/sidebar/", **HTMX).content.decode()
    zeta = re.search(r'<option value="(--[^"]+--)" title="/home/me/zeta"', html)
    assert zeta and 'id="sidebar-workspace"' in html
    chosen = client.get("/sidebar/", {"workspace": zeta.group(1)}, **HTMX)
    assert re.findall(r">(chat [^<]+)<", chosen.content.decode()) == ["chat now", "chat old"]
    # The next page's sidebar (no workspace asked) keeps it, and shows it chosen.
    again = client.get("/sidebar/", **HTMX).content.decode()
    assert re.findall(r">(chat [^<]+)<", again) == ["chat now", "chat old"]
    assert f'<option value="{zeta.group(1)}" title="/home/me/zeta" selected>' in again
    everything = client.get("/sidebar/", {"workspace": ""}, **HTMX).content.decode()
    assert len(re.findall(r">(chat [^<]+)<", everything)) == 4
    assert len(re.findall(r">(chat [^<]+)<", client.get("/sidebar/", **HTMX).content.decode())) == 4


def test_a_bad_workspace_cookie_is_every_workspace(client, chats) -> None:
    client.cookies["pitree_workspace"] = "../../etc"
    assert len(re.findall(r">(chat [^<]+)<", client.get("/sidebar/", **HTMX).content.decode())) == 4


def test_new_chat_is_on_every_page_and_asks_no_path(client, chats, owner) -> None:
    for url in ("/", "/search/"):
        page = client.get(url).content.decode()
        form = re.search(r'<form class="new-chat" method="post" action="([^"]+)">(.*?)</form>', page, re.S)
        assert form and 'name="cwd"' not in form.group(2) and "New chat" in form.group(2)
    made = client.post(form.group(1), {}, **HTMX)
    assert made.status_code == 200 and made["HX-Redirect"].startswith("/s/")
    # It lands at the top of the list.
    newest = _groups(client.get("/").content.decode(), "workspace__name")[0]
    assert newest[0] == "Today"


def test_the_new_session_form_still_takes_a_path(client, sessions_dir) -> None:
    made = client.post("/new/", {"cwd": "/home/me/project", "name": "chat named"}, **HTMX)
    assert made.status_code == 200
    assert "/home/me/project" in client.get(made["HX-Redirect"]).content.decode()
    assert client.post("/new/", {"cwd": "relative/path"}, **HTMX).status_code == 422
