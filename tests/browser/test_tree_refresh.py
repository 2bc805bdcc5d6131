"""The tree panel is fetched again at every append (an agent writing): what its reader opened in it, "+N"
folds and earlier entries of their branch, stays open meanwhile, until they move elsewhere."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import expect
from support.lines import message

TRUNK = [f"e{n:07d}" for n in range(160)]  # longer than the 150 rows the panel first draws of a path
SIDE = [f"a{n:07d}" for n in range(30)]  # a branch at TRUNK[3]: "+28" between its ends
OTHER = [f"b{n:07d}" for n in range(5)]  # a branch at TRUNK[5]


def _tree_of_branches(sessions: Any) -> Any:
    """The trunk's start, the two branches beside it, then the rest of the trunk: its end is the leaf."""
    lines = []
    for branch, start in ((TRUNK[:6], None), (SIDE, TRUNK[3]), (OTHER, TRUNK[5]), (TRUNK[6:], TRUNK[5])):
        parents = [start, *branch[:-1]]
        for entry_id, parent in zip(branch, parents, strict=True):
            n = len(lines)
            lines.append(message(entry_id, parent, "user" if n % 2 == 0 else "assistant", f"entry {entry_id}", n))
    return sessions.write_lines(lines)


def _row(page: Any, entry_id: str) -> Any:
    return page.locator(f"#tree-panel button.tree__node[data-entry='{entry_id}']")


def test_folds_and_earlier_entries_opened_stay_open_as_the_file_grows(page, ui, sessions, record) -> None:
    seeded = _tree_of_branches(sessions)
    page.set_viewport_size({"width": 1400, "height": 800})
    ui.open(page, seeded.url)
    page.wait_for_function("() => document.getElementById('live').dataset.live === 'live'")
    fold = page.locator(f"#tree-panel .tree__row--fold[data-first='{SIDE[1]}']")
    fold.click()
    expect(_row(page, SIDE[14])).to_have_count(1)
    page.locator("#tree-panel .tree__row--earlier").click()
    expect(_row(page, TRUNK[0])).to_have_count(1)

    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url) if "/tree/" in request.url else None)
    added = message("z0000001", TRUNK[-1], "user", "An agent goes on", 200)
    seeded.append(added)
    expect(_row(page, "z0000001")).to_have_count(1)
    # What the reader opened is there still: the side branch's entries, the start of their branch.
    expect(fold).to_have_count(0)
    expect(_row(page, SIDE[14])).to_have_count(1)
    expect(page.locator("#tree-panel .tree__row--earlier")).to_have_count(0)
    expect(_row(page, TRUNK[0])).to_have_count(1)
    assert not [url for url in asked if "/tree/run/" in url], asked  # one request, nothing opened after it

    # Moved to another branch, the tab shows the panel as it first draws it there.
    _row(page, OTHER[-1]).click()
    ui.wait_position(page, OTHER[-1])
    expect(fold).to_have_count(1)
    expect(_row(page, SIDE[14])).to_have_count(0)
    assert not record.errors, record.errors


SIBLINGS = 450  # side branches, each with a "+2" fold: more than a URL of them all would hold


def test_a_panel_with_hundreds_of_folds_opened_still_follows_the_file(page, ui, sessions, record) -> None:
    """Every "+N" fold opened went into the URL the panel is fetched again with: past about 420 (pi's
    8-character ids) the URL outgrew what servers take (Twisted refuses a request line over 16 KB,
    nginx over 8 KB), and the panel stopped following the file. The page keeps the newest that fit."""
    lines = [message("t0000000", None, "user", "start", 0), message("t0000001", "t0000000", "assistant", "answer", 1)]
    for n in range(SIBLINGS):
        side = [f"s{n:04d}{k:03d}" for k in range(4)]
        for k, (entry_id, parent) in enumerate(zip(side, ["t0000001", *side[:-1]], strict=True)):
            lines.append(message(entry_id, parent, "user" if k % 2 == 0 else "assistant", f"side {n}.{k}", 2))
    lines.append(message("t0000002", "t0000001", "user", "the trunk goes on", 3))  # the leaf
    seeded = sessions.write_lines(lines)
    page.set_viewport_size({"width": 1400, "height": 800})
    ui.open(page, seeded.url)
    page.wait_for_function("() => document.getElementById('live').dataset.live === 'live'")
    folds = page.locator("#tree-panel .tree__row--fold")
    expect(folds).to_have_count(SIBLINGS, timeout=30_000)
    page.evaluate("() => document.querySelectorAll('#tree-panel .tree__row--fold').forEach((row) => row.click())")
    expect(folds).to_have_count(0, timeout=120_000)

    refreshes: list[Any] = []
    page.on("response", lambda response: refreshes.append(response) if "/tree/?" in response.url else None)
    seeded.append(message("z0000001", "t0000002", "assistant", "An agent goes on", 4))
    expect(_row(page, "z0000001")).to_have_count(1, timeout=30_000)
    assert refreshes and all(response.status == 200 and len(response.url) < 8000 for response in refreshes)
    # The folds opened last are open still; the first ones opened fold again.
    expect(folds).not_to_have_count(0)
    assert 0 < folds.count() < SIBLINGS * 3 // 4
    assert not record.errors, record.errors
