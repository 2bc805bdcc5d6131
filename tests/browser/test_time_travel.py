"""The "As it was…" box in a browser: the slider says the line it stands on as it moves, and a moment
typed in the date box is the reader's own local time, whatever their time zone."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from playwright.sync_api import expect


def test_the_slider_says_its_line_and_the_date_box_reads_local_time(page, ui, sessions) -> None:
    seeded = sessions.seed("02-tree-branches")
    # Tokyo is nine hours ahead of UTC: read as UTC, the moment below would be after every line.
    page.context.new_cdp_session(page).send("Emulation.setTimezoneOverride", {"timezoneId": "Asia/Tokyo"})
    ui.open(page, seeded.url)
    box = page.locator("details.travel")
    box.locator("summary").click()
    lines = len(seeded.lines())
    slider = box.locator("input[type=range][name=line]")
    expect(box.locator("output[data-line]")).to_have_text(f"line {lines}")
    slider.focus()
    page.keyboard.press("Home")
    expect(box.locator("output[data-line]")).to_have_text("line 1")
    page.keyboard.press("ArrowRight")
    expect(box.locator("output[data-line]")).to_have_text("line 2")
    expect(box.locator("[data-zone]")).to_have_text("Asia/Tokyo")

    moment = datetime(2026, 3, 2, 9, 15, 46, tzinfo=UTC)
    then = sum(1 for line in seeded.lines() if datetime.fromisoformat(line["timestamp"]) <= moment)
    assert 1 < then < lines
    local = (moment + timedelta(hours=9)).strftime("%Y-%m-%dT%H:%M:%S")
    box.locator("input[type=datetime-local]").fill(local)
    box.get_by_role("button", name="Show it").click()
    expect(page).to_have_url(re.compile(rf"/s/{seeded.id}@{then}/$"))
    expect(page.locator(".past-note")).to_contain_text(f"As it was after line {then} of {lines}")
