""" "Compact history…" opens its form where the reader sees it, with the focus in it: below the entries,
the sticky composer would cover it and the click would seem to do nothing."""

from __future__ import annotations

from playwright.sync_api import expect


def test_compact_history_opens_its_form_in_view_and_focused(page, ui, sessions, record):
    seeded = sessions.seed("01-linear")
    page.set_viewport_size({"width": 1000, "height": 600})
    ui.open(page, seeded.url)
    # Once the socket is in: what it first pushes can take a reader at the bottom down to it (live.js),
    # which, coming after the click on a loaded machine, took the form behind the dock (seen once, under load).
    page.locator("#live[data-live=live]").wait_for(state="attached")
    page.locator(".compact-all > summary").click()
    form = page.locator(".compact-all .compact-form")
    expect(form).to_be_visible()
    expect(form.locator("select[name=keep_from]")).to_be_focused()
    dock = page.locator(".dock").bounding_box()
    box = form.bounding_box()
    assert dock is not None and box is not None
    # Whole within the window and above the composer: nothing of it hidden behind the dock.
    assert box["y"] >= 0 and box["y"] + box["height"] <= dock["y"] + 1, (box, dock)
    expect(form.locator("button[type=submit]")).to_be_in_viewport()
    assert not record.errors
