"""Writes without the assistant (fork, label, rename), compacting (which asks first), a raw line, and
reading a compacted history."""

from __future__ import annotations

import contextlib
import re

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import expect

U1, A1, SUMMARY, U2B = "f87f9c1c", "2f760a8d", "07721729", "4b928ed4"
LEAF_02 = "750a4556"


def test_fork_opens_the_new_session_with_its_lineage(page, ui, sessions, server):
    parent = sessions.seed("02-tree-branches")
    ui.open(page, parent.url)
    ui.open(page, parent.entry_url(U2B))
    ui.open_panel(page, U2B, "fork").get_by_role("button", name="Fork into a new session").click()
    page.wait_for_url(re.compile(rf"{re.escape(server.url)}/s/(?!{parent.id})[A-Za-z0-9._-]+/$"))
    ui.open(page, page.url)
    fork_id = page.url.rstrip("/").rsplit("/", 1)[-1]

    # The new file, next to its parent, copies the branch and names its parent.
    files = [f for f in sessions.all_files() if f != parent.path]
    assert len(files) == 1 and files[0].name.endswith(f"_{fork_id}.jsonl")
    assert files[0].parent == parent.path.parent
    lines = [__import__("json").loads(raw) for raw in files[0].read_bytes().split(b"\n") if raw.strip()]
    assert lines[0]["type"] == "session" and lines[0]["id"] == fork_id
    assert lines[0]["parentSession"] == str(parent.path)
    *copied, name = [e for e in lines[1:] if e["type"] != "label"]
    assert [e["id"] for e in copied] == [U1, A1, SUMMARY, U2B]
    assert name["type"] == "session_info" and name["name"] == "Branch · Title validation experiments"

    # The page shows the copied branch (and the fork's name below it) and says where it came from.
    assert ui.path_ids(page) == [U1, A1, SUMMARY, U2B, name["id"]]
    expect(page.locator("#session-title")).to_have_text("Branch · Title validation experiments")
    lineage = page.locator("p.lineage")
    expect(lineage).to_contain_text("Forked from")
    expect(lineage).to_contain_text("Title validation experiments")
    expect(lineage).to_contain_text(f"at {U2B}")
    expect(lineage.locator("a").first).to_have_attribute("href", parent.url)
    expect(lineage.locator("a", has_text=U2B)).to_have_attribute("href", parent.entry_url(U2B))
    # Labels on the copied path come along.
    expect(page.locator(f"#entry-{SUMMARY} .tag")).to_have_text("regex-approach")

    # The link goes back to the parent, which lists its fork.
    lineage.locator("a", has_text=U2B).click()
    page.wait_for_url(f"{server.url}{parent.entry_url(U2B)}")
    ui.open(page, page.url)
    assert ui.position(page) == U2B
    forks = page.locator(".lineage ul.forks a")
    expect(forks).to_have_count(1)
    expect(forks.first).to_have_attribute("href", f"/s/{fork_id}/")
    # Forking does not write to the parent (its last line is still the sample's).
    assert parent.lines()[-1]["id"] == LEAF_02

    # The list nests the fork under its parent.
    ui.open(page, "/")
    items = page.locator("li.session-item")
    titles = items.locator("a.session-item__title")
    hrefs = [titles.nth(i).get_attribute("href") for i in range(titles.count())]
    assert hrefs.index(f"/s/{fork_id}/") == hrefs.index(parent.url) + 1
    expect(items.nth(hrefs.index(f"/s/{fork_id}/")).locator(".fork-mark")).to_be_visible()


def test_label_shows_on_the_entry_and_in_the_tree_and_clears(page, ui, sessions):
    seeded = sessions.seed("02-tree-branches")
    ui.open(page, seeded.url)
    expect(page.locator(f"#entry-{A1} .entry__head .tag")).to_have_count(0)

    form = ui.open_panel(page, A1, "label").locator("form.label-form")
    form.locator("input[name=label]").fill("good-start")
    form.get_by_role("button", name="Save label").click()
    expect(page.locator(f"#entry-{A1} .entry__head .tag")).to_have_text("good-start")

    last = seeded.lines()[-1]
    assert last["type"] == "label" and last["targetId"] == A1 and last["label"] == "good-start"
    assert last["parentId"] == LEAF_02  # written where the tab stands
    assert ui.position(page) == last["id"]
    # The tree shows the tag (it reloads after the write).
    tree_tag = page.locator(f"#tree-panel li.tree__row:has(button.tree__node[data-entry='{A1}']) .tag")
    expect(tree_tag).to_have_text("good-start")
    ui.open_tree_filter(page, "labeled")
    assert A1 in ui.tree_ids(page)
    ui.open_tree_filter(page, "all")
    expect(page.locator(f"#tree-panel button.tree__node--label[data-entry='{last['id']}']")).to_be_visible()
    # It survives a reload.
    ui.open(page, seeded.url)
    expect(page.locator(f"#entry-{A1} .entry__head .tag")).to_have_text("good-start")

    # An empty label clears it.
    form = ui.open_panel(page, A1, "label").locator("form.label-form")
    expect(form.locator("input[name=label]")).to_have_value("good-start")
    form.locator("input[name=label]").fill("")
    form.get_by_role("button", name="Save label").click()
    expect(page.locator(f"#entry-{A1} .entry__head .tag")).to_have_count(0)
    cleared = seeded.lines()[-1]
    assert cleared["type"] == "label" and cleared["targetId"] == A1 and "label" not in cleared
    ui.wait_tree_at(page, cleared["id"])  # the tree reloaded after the write
    expect(page.locator(f"#tree-panel li.tree__row:has(button.tree__node[data-entry='{A1}']) .tag")).to_have_count(0)
    ui.open_tree_filter(page, "labeled")
    assert A1 not in ui.tree_ids(page)


def test_rename_changes_the_title_and_writes_session_info(page, ui, sessions, server):
    seeded = sessions.seed("01-linear")
    ui.open(page, seeded.url)
    expect(page.locator("#session-title")).to_have_text("Todo API endpoints  review")
    rename = page.locator("details.rename")
    rename.locator("summary").click()
    expect(rename.locator("input[name=name]")).to_have_value("Todo API endpoints  review")
    rename.locator("input[name=name]").fill("Endpoints, renamed")
    page.locator("#composer textarea[name=text]").fill("a draft")
    rename.get_by_role("button", name="Save name").click()

    last = ui.wait_position_change(page, "db26dc72")
    written = seeded.lines()[-1]
    assert written["type"] == "session_info" and written["name"] == "Endpoints, renamed"
    assert written["id"] == last and written["parentId"] == "db26dc72"
    # Answered in place, not by a reload: the title changes, the draft stays, and the tab that follows
    # the session keeps its URL.
    expect(page.locator("#session-title")).to_have_text("Endpoints, renamed")
    expect(page).to_have_title("Endpoints, renamed · pitree")
    expect(page.locator("#composer textarea[name=text]")).to_have_value("a draft")
    assert page.url == f"{server.url}{seeded.url}"
    expect(page.locator(f"#entry-{last}")).to_contain_text("Named “Endpoints, renamed”")
    ui.open(page, seeded.entry_url(last))
    expect(page.locator(f"#entry-{last}")).to_contain_text("Named “Endpoints, renamed”")
    # The list shows the new name.
    ui.open(page, "/")
    expect(page.locator(f"li.session-item a[href='{seeded.url}']")).to_have_text("Endpoints, renamed")


def test_rename_from_an_older_position_is_written_there(page, ui, sessions):
    """The rename form names the tab's position, so the session_info line hangs where the tab stands."""
    seeded = sessions.seed("02-tree-branches")
    ui.open(page, seeded.entry_url(U2B))
    rename = page.locator("details.rename")
    rename.locator("summary").click()
    rename.locator("input[name=name]").fill("Regex branch")
    rename.get_by_role("button", name="Save name").click()
    expect(page.locator("#session-title")).to_have_text("Regex branch")
    last = seeded.lines()[-1]
    assert last["type"] == "session_info" and last["name"] == "Regex branch" and last["parentId"] == U2B


def test_compacted_history_card_loads_the_original_entries(page, ui, sessions):
    seeded = sessions.seed("04-compaction")
    before = seeded.path.read_bytes()
    ui.open(page, seeded.url)
    card = page.locator("#entries > article.entry--fold")
    expect(card).to_have_count(1)
    expect(card).to_contain_text("History compacted")
    # The folded entries are not on the page until asked for.
    for folded in ("fc977eb2", "f18080f1", "76bb41f7", "f04a36ab"):
        expect(page.locator(f"#entry-{folded}")).to_have_count(0)
    # The kept entries and the compaction entry are shown.
    shown = ui.path_ids(page)
    assert shown[:2] == ["97f6f0ca", "9fb628c5"] and "bccf51c5" in shown and shown[-1] == "bcacb1f4"

    details = card.locator("details.fold")
    expect(details.locator(".fold__body")).not_to_be_visible()
    details.locator("> summary").click()
    body = details.locator(".fold__body")
    expect(body.locator("article.entry[data-entry='fc977eb2']")).to_contain_text("Set up the project layout")
    expect(body.locator("article.entry[data-entry='f18080f1']")).to_contain_text("Done: set up the project layout.")
    expect(body.locator("article.entry[data-entry='76bb41f7']")).to_contain_text("Add SQLite storage")
    expect(body.locator("article.entry[data-entry='f04a36ab']")).to_contain_text("Done: add sqlite storage.")
    loaded = body.locator("article.entry[data-entry]").evaluate_all("els => els.map(e => e.dataset.entry)")
    assert loaded == ["60615c59", "fc977eb2", "f18080f1", "76bb41f7", "f04a36ab"]
    expect(body).not_to_contain_text("Loading…")
    # Reading is not writing; the tab did not move.
    assert ui.position(page) == "bcacb1f4"
    assert seeded.path.read_bytes() == before


def test_new_session_with_an_overlong_workspace_is_refused_with_a_message(page, ui, sessions):
    """The workspace becomes a folder name (pi's ``--<cwd>--``), and a folder name holds at most 255
    bytes; a longer workspace must be refused like any bad input (a message, nothing written), not
    fail with a server error the page does not show."""
    cwd = "/home/alice/" + "very-long-project-name-" * 12
    assert len(cwd) < 4096 and len(("--" + cwd[1:].replace("/", "-") + "--").encode()) > 255
    ui.open(page, "/")
    new = page.locator("details.new-session")
    if new.get_attribute("open") is None:
        new.locator("summary").click()
    new.locator("input[name=cwd]").fill(cwd)
    with page.expect_response(lambda r: r.url.endswith("/new/")) as answer:
        new.get_by_role("button", name="Start").click()
    assert answer.value.status < 500, f"POST /new/ answered {answer.value.status}"
    expect(page.locator("#flash [role=alert], #flash .flash")).to_be_visible()
    assert sessions.all_files() == []


def test_raw_line_opens_the_line_as_stored(context, page, ui, sessions):
    seeded = sessions.seed("01-linear")
    ui.open(page, seeded.url)
    with context.expect_page() as opened:
        ui.tool(page, "c256703f", "Raw line").click()
    raw = opened.value
    raw.wait_for_load_state()
    stored = next(line for line in seeded.path.read_bytes().split(b"\n") if b'"c256703f"' in line[:80])
    assert raw.evaluate("() => document.body.innerText").strip() == stored.decode()
    assert __import__("json").loads(raw.evaluate("() => document.body.innerText"))["id"] == "c256703f"


def test_compact_says_what_it_will_do_and_waits_for_the_second_click(page, ui, sessions):
    seeded = sessions.seed("01-linear")
    before = seeded.path.read_bytes()
    ui.open(page, seeded.url)
    # The first click only opens the panel, which says what compacting does: nothing is written.
    panel = ui.open_panel(page, "c256703f", "compact")
    expect(panel).to_contain_text("the assistant summarises the history before this message")
    expect(panel).to_contain_text("The older entries stay in the file")
    assert seeded.path.read_bytes() == before
    # Cancel closes it, still writing nothing.
    panel.get_by_role("button", name="Cancel").click()
    expect(panel).to_be_hidden()
    expect(ui.tool(page, "c256703f", "Compact…")).to_be_focused()
    assert seeded.path.read_bytes() == before
    # The second click compacts: a compaction entry keeps the history from this message.
    panel = ui.open_panel(page, "c256703f", "compact")
    panel.locator("input[name=instructions]").fill("keep the endpoint names")
    panel.get_by_role("button", name="Compact up to here").click()
    page.wait_for_function("() => document.querySelector('#entries > article.entry--fold')")
    compaction = [line for line in seeded.entries() if line["type"] == "compaction"]
    assert len(compaction) == 1 and compaction[0]["firstKeptEntryId"] == "c256703f"
    expect(page.locator("#entries > article.entry--fold")).to_contain_text("History compacted")
    assert ui.position(page) == compaction[0]["id"]


def test_compacting_says_the_assistant_is_at_work_until_the_summary_is_written(page, ui, sessions):
    # A summary takes as long as a reply: meanwhile the button cannot be pressed again, and the panel
    # says what is happening (it once looked as if the press had done nothing).
    seeded = sessions.seed("01-linear")
    ui.open(page, seeded.url)
    held: list = []

    def hold(route) -> None:  # the request waits here, as for a slow model (a bound method is refused)
        held.append(route)

    page.route("**/compact/", hold)
    panel = ui.open_panel(page, "c256703f", "compact")
    button = panel.get_by_role("button", name="Compact up to here")
    status = panel.get_by_role("status")
    expect(status).to_have_text("", use_inner_text=True)  # nothing said before it is asked
    button.click()
    expect(button).to_be_disabled()
    expect(status).to_have_text("The assistant is writing the summary…", use_inner_text=True)
    assert len(held) == 1
    held[0].continue_()
    expect(page.locator("#entries > article.entry--fold")).to_contain_text("History compacted")
    assert [line["firstKeptEntryId"] for line in seeded.entries() if line["type"] == "compaction"] == ["c256703f"]


def test_who_wrote_an_entry_shows_on_hover_without_moving_its_tools(page, ui, sessions):
    """The author arrives when the pointer rests on an entry: it floats over the head, so the button
    the pointer is heading for stays where it was (it once moved, and the click missed)."""
    seeded = sessions.seed("02-tree-branches")
    ui.open(page, seeded.url)
    entry = page.locator("#entry-2f760a8d")
    button = ui.tool(page, "2f760a8d", "Continue from here")
    button.scroll_into_view_if_needed()
    before = button.bounding_box()
    entry.locator(".entry__head").hover()
    author = entry.locator(".entry__author")
    expect(author).to_have_text("not written through pitree (pi or the command line)")
    expect(author).to_have_css("opacity", "1")
    assert button.bounding_box() == before


def test_the_last_panel_asked_for_is_the_one_shown_whatever_order_the_forms_arrive_in(page, ui, sessions):
    """Label pressed, then Fork before the label form arrived: Fork is what the reader asked for last, yet
    the late label form replaced it; and Fork pressed again while the label form was on its way closed
    the fork panel, and the label one opened in its place. An entry's panel is now the last one asked for."""
    seeded = sessions.seed("01-linear")
    ui.open(page, seeded.url)
    held: list = []

    def hold(route) -> None:
        held.append(route)

    page.route(re.compile(r"/actions/\?.*do=label"), hold)
    panel = page.locator("#entry-c256703f > .entry__panel")
    tools = page.locator("#entry-c256703f > .entry__tools")

    _ask_held(tools.locator("[data-panel=label]"), held)  # its form held on the way
    tools.locator("[data-panel=fork]").click()
    expect(panel.locator("form.fork-form")).to_be_visible()
    expect(panel).to_have_attribute("data-action", "fork")
    _let_through(held)  # too late: the fork panel was asked for since
    expect(panel).to_have_attribute("data-action", "fork")

    _ask_held(tools.locator("[data-panel=label]"), held)  # held again, the fork panel still shown
    tools.locator("[data-panel=fork]").click()  # calls it off and keeps the fork panel
    expect(panel).to_be_visible()
    _let_through(held)
    expect(panel).to_have_attribute("data-action", "fork")
    tools.locator("[data-panel=fork]").click()  # pressed once more: closed, as always
    expect(panel).to_be_hidden()


def _ask_held(tool, held: list) -> None:
    """Press ``tool`` and wait until its request is held (before that, the page might call it off unseen)."""
    tool.click()
    for _ in range(300):
        if held:
            return
        tool.page.wait_for_timeout(50)
    raise AssertionError("the request was never sent")


def _let_through(held: list) -> None:
    """Answer the one held request, then give its form the time to arrive and be swapped in, if it can."""
    assert len(held) == 1
    route = held.pop()
    with contextlib.suppress(PlaywrightError):  # called off by the page: there is nothing to answer
        route.continue_()
    route.request.frame.page.wait_for_timeout(500)
