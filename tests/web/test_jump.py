"""Jump to a place in a long session: its start, a compaction, a label, a date, each one page away,
the tab's position unchanged; newer entries load below; bad input is refused clearly."""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from support.lines import long_chat

SESSION_ID = "0a1b2c3d-0000-4000-8000-0000000000aa"


@pytest.fixture
def long_session(sessions_dir: Path) -> Path:
    folder = sessions_dir / "--work--"
    folder.mkdir()
    header = {"type": "session", "version": 3, "id": SESSION_ID, "timestamp": "2026-03-01T00:00:00.000Z", "cwd": "/w"}
    lines = [header, *long_chat(1000, compaction_at=600, label_at=300)]
    path = folder / f"2026-03-01T00-00-00-000Z_{SESSION_ID}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def shown(html: str) -> list[str]:
    """The message ids the transcript shows, in order."""
    return re.findall(r'<article class="entry[^"]*" id="entry-(m\d{4})"', html)


def test_the_menu_offers_the_start_the_compaction_the_label_and_a_date(client, long_session) -> None:
    page = client.get(f"/s/{SESSION_ID}/").content.decode()
    # The page only links the menu (listing its places walks the whole branch): loaded when opened.
    assert f'hx-get="/s/{SESSION_ID}/jumps/"' in page and "Label: milestone" not in page
    assert f'href="/s/{SESSION_ID}/jumps/?at=label1"' in page  # without JS, a page of its own
    for headers in ({"HTTP_HX_REQUEST": "true"}, {}):
        menu = client.get(f"/s/{SESSION_ID}/jumps/", {"at": ""}, **headers).content.decode()
        assert f'href="/s/{SESSION_ID}/?show=m0000#entry-m0000">Start<' in menu
        assert f'href="/s/{SESSION_ID}/?show=compact#entry-compact">Compaction' in menu
        assert f'href="/s/{SESSION_ID}/?show=m0300#entry-m0300">Label: milestone<' in menu
        assert f'action="/s/{SESSION_ID}/jump/"' in menu and 'type="date" name="date"' in menu
        assert ("<html" in menu) == (not headers)


def test_the_menu_of_a_tab_elsewhere_keeps_it_there(client, long_session) -> None:
    menu = client.get(f"/s/{SESSION_ID}/jumps/", {"at": "m0500"}, HTTP_HX_REQUEST="true").content.decode()
    assert f'href="/s/{SESSION_ID}/e/m0500/?show=m0000#entry-m0000">Start<' in menu
    assert "compact" not in menu and "milestone" in menu  # only what is on that branch
    page = client.get(f"/s/{SESSION_ID}/e/m0500/", {"show": "m0000"}).content.decode()
    assert 'data-position="m0500"' in page and shown(page)[0] == "m0000"


def test_an_entry_off_the_branch_opens_its_own_branch(client, long_session) -> None:
    page = client.get(f"/s/{SESSION_ID}/e/m0500/", {"show": "m0700"}).content.decode()
    assert 'data-position="label1"' in page and shown(page)[0] == "m0700"


def test_the_start_is_one_load_away_and_the_position_stays(client, long_session) -> None:
    page = client.get(f"/s/{SESSION_ID}/", {"show": "m0000"}).content.decode()
    ids = shown(page)
    assert ids[0] == "m0000" and len(ids) == 40  # the first page of the branch, not its last
    assert 'data-position="label1"' in page  # the tab still stands at the leaf
    newer = re.search(r'hx-get="(/s/[^"]+/newer/\?[^"]+)"', page)
    assert newer is not None and "after=m0039" in newer.group(1)
    assert f'href="/s/{SESSION_ID}/e/label1/?show=m0039#entry-m0039">Newer entries' in page  # without JS
    older = client.get(newer.group(1).replace("&amp;", "&")).content.decode()
    assert shown(older)[:2] == ["m0040", "m0041"] and "/older/" not in older


def test_newer_pages_end_at_the_position(client, long_session) -> None:
    response = client.get(f"/s/{SESSION_ID}/newer/", {"after": "m0980", "until": "m0999"})
    assert shown(response.content.decode()) == [f"m{n:04d}" for n in range(981, 1000)]
    assert "/newer/" not in response.content.decode()


def test_a_compaction_and_a_label_open_where_they_are(client, long_session) -> None:
    page = client.get(f"/s/{SESSION_ID}/", {"show": "compact"}).content.decode()
    assert 'id="entry-compact"' in page and shown(page)[0] == "m0601"
    page = client.get(f"/s/{SESSION_ID}/", {"show": "m0300"}).content.decode()
    assert shown(page)[0] == "m0300"


@pytest.mark.parametrize(
    ("day", "expected"),
    [
        ("2026-03-05", "m0096"),  # the first message of that day
        ("2026-01-01", "m0000"),  # before the session: its start
        ("2027-01-01", "m0999"),  # after it: its end
    ],
)
def test_a_date_jumps_to_the_nearest_entry_on_the_branch(client, long_session, day, expected) -> None:
    response = client.get(f"/s/{SESSION_ID}/jump/", {"date": day})
    assert response.status_code == 302
    assert response["Location"] == f"/s/{SESSION_ID}/?show={expected}#entry-{expected}"


def test_a_date_is_the_day_of_the_reader_s_calendar(client, long_session) -> None:
    """5 March begins at 15:00 UTC the day before in Tokyo (the zone the browser names in its cookie)."""
    client.cookies["pitree_tz"] = "Asia/Tokyo"
    response = client.get(f"/s/{SESSION_ID}/jump/", {"date": "2026-03-05"})
    assert response["Location"] == f"/s/{SESSION_ID}/?show=m0087#entry-m0087"


def test_a_compaction_is_named_by_the_reader_s_clock(client, long_session) -> None:
    """The menu names a compaction by when it was written, as the reader's zone tells the time."""
    written = next(json.loads(line) for line in long_session.open() if '"id": "compact"' in line)["timestamp"]
    utc = datetime.fromisoformat(written.replace("Z", "+00:00"))
    for zone in ("UTC", "Asia/Tokyo", "America/New_York"):
        client.cookies["pitree_tz"] = zone
        menu = client.get(f"/s/{SESSION_ID}/jumps/", HTTP_HX_REQUEST="true").content.decode()
        assert f'Compaction <span class="muted">{utc.astimezone(ZoneInfo(zone)):%Y-%m-%d %H:%M}</span>' in menu, zone


@pytest.mark.parametrize(
    ("url", "status"),
    [
        (f"/s/{SESSION_ID}/jump/?date=not-a-date", 400),
        (f"/s/{SESSION_ID}/jump/", 400),
        (f"/s/{SESSION_ID}/?show=nosuch", 404),
        (f"/s/{SESSION_ID}/newer/?after=m0999&until=m0999", 404),
        (f"/s/{SESSION_ID}/newer/?after=m0010", 400),
        (f"/s/{SESSION_ID}/jumps/?at=nosuch", 404),
    ],
)
def test_bad_jumps_are_refused_and_say_why(client, long_session, url, status) -> None:
    assert client.get(url).status_code == status
