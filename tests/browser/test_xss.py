"""Whatever a user, a model or a hand-edited file puts in a session stays text: no script runs, no
element is injected, and the payload is visible as the characters it is.

Every payload, if it ran, would set ``window.__xss`` (to say which field it came from) and/or open a
dialog; both are recorded. The DOM is also searched for what an injection would leave behind (inline
handlers, ``javascript:`` links, iframes, foreign scripts, ``<img src=x>``).
"""

from __future__ import annotations

import base64
import json
import re

import pytest
from playwright.sync_api import expect

# Markers go through alert('…') and window.__xss, so either kind of execution is caught.


def html_payload(tag: str) -> str:
    """One line of HTML-injection vectors tagged with ``tag``."""
    return (
        f"<img src=x onerror=\"window.__xss='{tag}';alert('{tag}')\">"
        f"<script>window.__xss='{tag}';alert('{tag}')</script>"
        f"<svg onload=\"window.__xss='{tag}'\"></svg>"
        f"\"'><iframe src=\"javascript:top.__xss='{tag}'\"></iframe>"
        f'<div hx-get="/" hx-trigger="load" hx-on::before-request="window.__xss=\'{tag}\'">hx</div>'
    )


def md_lines(tag: str) -> list[str]:
    """Markdown-injection vectors (links and images with dangerous schemes, raw HTML, autolinks), each
    short enough to be quoted whole by the offline responder (it quotes 5 lines of 200 characters)."""
    return [
        f"**bold** [click-{tag}](javascript:window.__xss='{tag}') <img src=x onerror=\"window.__xss='{tag}'\">",
        f"![pic](javascript:alert('{tag}')) <javascript:alert('{tag}')>",
        f"[data-{tag}](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
        f"[vb](vbscript:msgbox('{tag}')) <a href=\"javascript:alert('{tag}')\">a</a>",
    ]


def md_payload(tag: str) -> str:
    return "\n".join(md_lines(tag))


INERT_JS = r"""
() => {
  const bad = [];
  if (window.__xss !== undefined) bad.push('window.__xss = ' + window.__xss);
  if (window.top.__xss !== undefined) bad.push('top.__xss = ' + window.top.__xss);
  for (const s of document.scripts) {
    if (!s.src || !s.src.startsWith(location.origin + '/static/')) bad.push('script: ' + s.outerHTML.slice(0, 120));
  }
  const ownHandler = (el, name, value) =>
    name === 'onclick' && value === 'this.parentElement.remove()' && el.closest('.flash');
  for (const el of document.querySelectorAll('*')) {
    for (const a of el.attributes) {
      const name = a.name.toLowerCase();
      if (name.startsWith('on') && !ownHandler(el, name, a.value)) bad.push(`${el.tagName} ${name}=${a.value.slice(0, 80)}`);
      if (name.startsWith('hx-on')) bad.push(`${el.tagName} ${name}`);
      if (['href', 'src', 'action', 'formaction', 'xlink:href', 'data', 'srcdoc'].includes(name)
          && /^\s*(javascript|vbscript|data:text|data:image\/svg)/i.test(a.value)) bad.push(`${el.tagName} ${name}=${a.value.slice(0, 80)}`);
    }
  }
  for (const sel of ['iframe', 'object', 'embed', 'img[src="x"]', 'base', 'meta[http-equiv="refresh" i]', 'div[hx-get="/"]']) {
    if (document.querySelector(sel)) bad.push('element: ' + sel);
  }
  return bad;
}
"""


@pytest.fixture
def assert_inert(record):
    def check(page, where: str = "") -> None:
        page.wait_for_timeout(250)  # let a failed <img src=x> fire its onerror, htmx process new nodes
        found = page.evaluate(INERT_JS)
        assert found == [], f"{where or page.url}: injected: {found}"
        assert record.dialogs == [], f"{where or page.url}: dialogs opened: {record.dialogs}"
        assert not record.errors, f"{where or page.url}: page errors: {record.errors}"

    return check


def _send(page, ui, text: str) -> str:
    old = ui.position(page)
    page.locator("#composer textarea[name=text]").fill(text)
    page.locator("#composer button[type=submit]").click()
    return ui.wait_position_change(page, old)


def _open_all_details(page) -> None:
    """Open every fold (lazy ones load their content) and wait for the loads."""
    for _ in range(3):  # loaded content may hold more folds
        closed = page.locator("details:not([open]):not(.user-menu):not(.jump) > summary")  # menus are not folds
        count = closed.count()
        if not count:
            break
        for _i in range(count):
            closed.first.evaluate("s => s.parentElement.open = true")
        page.wait_for_function("() => !document.querySelector('.htmx-request')")
        page.wait_for_timeout(150)


def test_message_text_stays_text(page, ui, sessions, assert_inert, record, server):
    seeded = sessions.seed("01-linear")
    ui.open(page, seeded.url)
    html_text = "\n".join(html_payload(f"msg{i}") for i in range(1, 4)) + "\n" + md_payload("msg-md")
    reply_id = _send(page, ui, html_text)
    assert_inert(page, "after sending HTML")

    stored = seeded.entries()
    user = stored[-2]
    assert user["message"]["content"] == html_text
    # The user's message is shown exactly as typed (plain text).
    user_el = page.locator(f"#entry-{user['id']}")
    assert user_el.locator(".plain").text_content() == html_text
    # The reply renders the quoted text as Markdown, with raw HTML escaped.
    reply_el = page.locator(f"#entry-{reply_id}")
    expect(reply_el).to_contain_text("<script>window.__xss='msg1';alert('msg1')</script>")
    expect(reply_el).to_contain_text("<img src=x onerror=")
    expect(reply_el.locator("strong", has_text="bold").first).to_be_visible()  # Markdown does render

    md_text = md_payload("md2") + "\n- item [ok](/relative) and `<b>code</b>`"
    reply2 = _send(page, ui, md_text)
    assert_inert(page, "after sending Markdown")
    reply2_el = page.locator(f"#entry-{reply2}")
    expect(reply2_el).to_contain_text("javascript:window.__xss='md2'")  # the refused link stays as text
    expect(reply2_el).to_contain_text("vbscript:msgbox('md2')")
    assert reply2_el.locator("a[href^='javascript' i], a[href^='data' i], a[href^='vbscript' i]").count() == 0

    # Reloaded, in the tree (all filter), in the list and in search results: still text.
    ui.open(page, page.url)
    assert_inert(page, "reloaded session page")
    user2 = seeded.entries()[-2]
    ui.open_tree_filter(page, "user")
    expect(page.locator(f"#tree-panel button.tree__node[data-entry='{user2['id']}']")).to_contain_text(
        "<img src=x onerror="
    )
    assert_inert(page, "tree, user filter")
    ui.open_tree_filter(page, "all")
    assert_inert(page, "tree, all filter")
    _open_all_details(page)
    assert_inert(page, "all folds open")

    ui.open(page, "/")
    assert_inert(page, "list")
    page.goto("/?q=" + "%3Cscript%3Ewindow.__xss%3D%27q%27%3C%2Fscript%3E")
    expect(page.locator("main")).to_contain_text("<script>window.__xss='q'</script>")
    assert_inert(page, "search")
    # A session whose first message is the payload is listed with it as its title.
    other = sessions.seed("01-linear")
    ui.open(page, other.url)
    page.locator("#composer input[name=parent]").evaluate("i => i.value = ''")  # a new root message
    _send(page, ui, html_payload("title"))
    ui.open(page, "/")
    assert_inert(page, "list with a payload title")

    # The raw line of the stored message is served as JSON, not HTML.
    response = page.goto(f"/s/{seeded.id}/e/{user['id']}/raw/")
    assert response is not None and response.headers["content-type"].startswith("application/json")
    assert response.headers.get("x-content-type-options") == "nosniff"
    assert_inert(page, "raw line")


def test_label_and_session_name_stay_text(page, ui, sessions, assert_inert, server):
    seeded = sessions.seed("02-tree-branches")
    ui.open(page, seeded.url)
    label = "<img src=x onerror=\"window.__xss='label'\"><script>window.__xss='label2'</script>"
    assert len(label) <= 200
    form = ui.open_panel(page, "2f760a8d", "label").locator("form.label-form")
    form.locator("input[name=label]").fill(label)
    form.get_by_role("button", name="Save label").click()
    tag = page.locator("#entry-2f760a8d .entry__head .tag")
    expect(tag).to_have_text(label)
    assert seeded.lines()[-1]["label"] == label
    expect(page.locator("#tree-panel li.tree__row:has(button[data-entry='2f760a8d']) .tag")).to_have_text(label)
    assert_inert(page, "label on the session page")
    ui.open_tree_filter(page, "labeled")
    ui.open_tree_filter(page, "all")
    assert_inert(page, "label in the tree")

    name = "<img src=x onerror=window.__xss='n1'><script>window.__xss='n2'</script>"
    assert len(name) <= 80  # shown whole in the title, the list and a fork's lineage
    rename = page.locator("details.rename")
    rename.locator("summary").click()
    rename.locator("input[name=name]").fill(name)
    rename.get_by_role("button", name="Save name").click()
    expect(page.locator("#session-title")).to_have_text(name)
    last = seeded.lines()[-1]
    assert last["type"] == "session_info" and last["name"] == name
    ui.open(page, page.url)
    assert page.title().startswith(name[:40])
    expect(page.locator(f"#entry-{last['id']}")).to_contain_text(f"Named “{name}”")
    assert_inert(page, "session name")
    ui.open_tree_filter(page, "all")
    assert_inert(page, "session name in the tree")

    ui.open(page, "/")
    expect(page.locator(f"li.session-item a[href='{seeded.url}']")).to_have_text(name)
    expect(page.locator("li.session-item .tag", has_text="label2")).to_have_text(label)
    assert_inert(page, "list with name and label")

    # A fork names its parent (by that name), and the parent lists the fork.
    ui.open(page, seeded.url)
    ui.open_panel(page, "f87f9c1c", "fork").get_by_role("button", name="Fork into a new session").click()
    page.wait_for_url(re.compile(rf"/s/(?!{seeded.id})[^/]+/$"))
    ui.open(page, page.url)
    expect(page.locator("p.lineage")).to_contain_text(name)
    assert_inert(page, "fork lineage")
    ui.open(page, seeded.url)
    expect(page.locator(".lineage ul.forks")).to_be_visible()
    assert_inert(page, "parent with forks")


def test_workspace_of_a_new_session_stays_text(page, ui, sessions, assert_inert, server):
    cwd = "/tmp/<img src=x onerror=\"window.__xss='cwd'\"><script>window.__xss='cwd2'</script>/../../etc"
    name = "<b>bold</b><img src=x onerror=\"window.__xss='new-name'\">"
    ui.open(page, "/")
    new = page.locator("details.new-session")
    if new.get_attribute("open") is None:
        new.locator("summary").click()
    new.locator("input[name=cwd]").fill(cwd)
    new.locator("input[name=name]").fill(name)
    new.get_by_role("button", name="Start").click()
    page.wait_for_url(re.compile(r"/s/[A-Za-z0-9._-]+/$"))
    ui.open(page, page.url)
    expect(page.locator(".crumbs code")).to_have_text(cwd)
    expect(page.locator("#session-title")).to_have_text(name)
    assert_inert(page, "session page of a hostile workspace")

    files = sessions.all_files()
    assert len(files) == 1
    path = files[0]
    assert path.parent.parent == sessions.root  # one folder below the root, whatever the cwd says
    header = json.loads(path.read_bytes().split(b"\n", 1)[0])
    assert header["cwd"] == cwd

    ui.open(page, "/")  # newest first, by day: the row names the session (its workspace only beside others')
    expect(page.locator(".session-item__title", has_text="<b>bold</b>")).to_have_text(name)
    assert_inert(page, "list with a hostile workspace")

    # The message composer of that session still works and stays inert.
    ui.open(page, f"/s/{header['id']}/")
    _send(page, ui, "hello")
    assert_inert(page, "after a reply in a hostile workspace")


def test_hand_written_entries_stay_text(page, ui, sessions, assert_inert, record, server):
    p = html_payload
    big = "x" * 5000
    svg = base64.b64encode(
        b"<svg xmlns='http://www.w3.org/2000/svg' onload='top.__xss=1'><script>top.__xss=2</script></svg>"
    ).decode()
    html_b64 = base64.b64encode(b"<script>top.__xss='img-html'</script>").decode()
    hostile_id = '"><img src=x onerror="window.__xss=\'entry-id\'">'
    ts = "2026-03-02T09:00:{:02d}.000Z"
    chain: list[dict] = []

    def add(entry: dict, *, entry_id: str | None = None) -> str:
        entry_id = entry_id or f"e{len(chain):07x}"
        parent = chain[-1]["id"] if chain else None
        chain.append(
            {
                "type": entry.pop("type"),
                "id": entry_id,
                "parentId": parent,
                "timestamp": ts.format(len(chain) % 60),
                **entry,
            }
        )
        return entry_id

    first_user = add(
        {
            "type": "message",
            "message": {
                "role": "user",
                "timestamp": 1,
                "content": [
                    {"type": "text", "text": p("user-text")},
                    {"type": "image", "mimeType": "data:text/html", "data": html_b64},
                    {"type": "image", "mimeType": "text/html", "data": html_b64},
                    {"type": "image", "mimeType": "image/svg+xml", "data": svg},
                    {"type": "image", "mimeType": "image/png\" onerror=\"window.__xss='mime'", "data": "iVBORw0KGgo="},
                    {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo=\" onerror=\"window.__xss='data'"},
                    {"type": p("block-type"), p("block-key"): p("block-value")},
                ],
            },
        }
    )
    add(
        {
            "type": "message",
            "message": {
                "role": "assistant",
                "provider": p("provider"),
                "model": p("model"),
                "api": "x",
                "stopReason": "error",
                "errorMessage": p("error-message"),
                "timestamp": 2,
                "content": [
                    {
                        "type": "text",
                        "text": md_payload("assistant-md")
                        + "\n\n"
                        + p("assistant-html")
                        + "\n\n[ok](https://example.org/)",
                    },
                    {"type": "thinking", "thinking": p("thinking")},
                    {"type": "thinking", "thinking": p("thinking-big") + big},
                    {
                        "type": "toolCall",
                        "id": "c1",
                        "name": p("tool-name"),
                        "arguments": {p("arg-key"): p("arg-value")},
                    },
                    {"type": "toolCall", "id": "c2", "name": "big", "arguments": {"a": p("arg-big") + big}},
                ],
            },
        }
    )
    add(
        {
            "type": "message",
            "message": {
                "role": "toolResult",
                "toolCallId": "c1",
                "toolName": p("tool-result-name"),
                "isError": True,
                "timestamp": 3,
                "content": [{"type": "text", "text": p("tool-output")}],
            },
        }
    )
    add(
        {
            "type": "message",
            "message": {
                "role": "toolResult",
                "toolCallId": "c2",
                "toolName": "big",
                "isError": False,
                "timestamp": 4,
                "content": [{"type": "text", "text": p("tool-output-big") + big}],
            },
        }
    )
    add(
        {
            "type": "message",
            "message": {
                "role": "bashExecution",
                "command": p("bash-command"),
                "output": p("bash-output"),
                "exitCode": 1,
                "cancelled": False,
                "truncated": False,
                "timestamp": 5,
            },
        }
    )
    add(
        {
            "type": "message",
            "message": {
                "role": "bashExecution",
                "command": "cat big",
                "output": p("bash-big") + big,
                "exitCode": 0,
                "cancelled": False,
                "truncated": False,
                "timestamp": 6,
            },
        }
    )
    add(
        {
            "type": "message",
            "message": {
                "role": "custom",
                "customType": p("custom-role-type"),
                "display": True,
                "content": p("custom-role-content"),
                "timestamp": 7,
            },
        }
    )
    add(
        {
            "type": "message",
            "message": {"role": p("unknown-role"), "content": p("unknown-role-content"), "timestamp": 8},
        }
    )
    add(
        {
            "type": "custom_message",
            "customType": p("custom-message-type"),
            "content": p("custom-message-content"),
            "display": True,
        }
    )
    add({"type": "custom", "customType": p("custom-state-type"), "data": {p("custom-key"): [p("custom-value")]}})
    add({"type": "model_change", "provider": p("mc-provider"), "modelId": p("mc-model")})
    add({"type": "thinking_level_change", "thinkingLevel": p("thinking-level")})
    add({"type": "context_edit", "targetId": first_user, "replacement": None, p("ce-key"): p("ce-value")})
    add(
        {
            "type": "branch_summary",
            "fromId": first_user,
            "summary": md_payload("branch-summary") + p("branch-summary-html"),
        }
    )
    add({"type": p("unknown-type"), p("unknown-key"): p("unknown-value"), "nested": {"k": [p("unknown-nested")]}})
    add({"type": "label", "targetId": first_user, "label": p("label")[:200]})
    kept = add({"type": "message", "message": {"role": "user", "content": "kept after compaction", "timestamp": 9}})
    add(
        {
            "type": "compaction",
            "summary": md_payload("compaction") + p("compaction-html"),
            "firstKeptEntryId": kept,
            "tokensBefore": p("tokens"),
        }
    )
    add({"type": "session_info", "name": p("session-name")})
    add(
        {"type": "message", "message": {"role": "user", "content": p("hostile-id-entry"), "timestamp": 10}},
        entry_id=hostile_id,
    )

    seeded = sessions.write_lines(chain, cwd="/w/" + p("header-cwd").replace("/", "∕"))
    response = page.goto(seeded.url)
    assert response is not None and response.status == 200, f"session page answered {response and response.status}"
    ui.open(page, seeded.url)
    assert ui.position(page) == hostile_id
    assert_inert(page, "hand-written session")

    # What is not folded is there, as text.
    main = page.locator("main")
    for visible in ("compaction-html", "hostile-id-entry", "header-cwd"):
        expect(main).to_contain_text(f"window.__xss='{visible}'")
    expect(page.locator("#session-title")).to_contain_text("window.__xss='session-name'")

    # Open every fold (the compacted history, then the large blocks inside it): all of it is text.
    _open_all_details(page)
    for visible in (
        "user-text",
        "block-type",
        "block-key",
        "block-value",
        "provider",
        "model",
        "error-message",
        "assistant-html",
        "thinking",
        "thinking-big",
        "tool-name",
        "arg-key",
        "arg-value",
        "arg-big",
        "tool-result-name",
        "tool-output",
        "tool-output-big",
        "bash-command",
        "bash-output",
        "bash-big",
        "custom-role-type",
        "custom-role-content",
        "unknown-role",
        "unknown-role-content",
        "custom-message-type",
        "custom-message-content",
        "custom-state-type",
        "custom-key",
        "custom-value",
        "mc-provider",
        "mc-model",
        "thinking-level",
        "branch-summary-html",
        "unknown-type",
        "unknown-key",
        "unknown-value",
        "unknown-nested",
        "compaction-html",
        "hostile-id-entry",
    ):
        expect(main).to_contain_text(f"window.__xss='{visible}'")
    for md in ("assistant-md", "branch-summary", "compaction"):
        expect(main).to_contain_text(f"[click-{md}](javascript:window.__xss='{md}')")
    expect(page.locator(".content-image")).to_have_count(0)  # no image here has a real image type
    expect(main.locator("text=[image of an unsupported type]")).to_have_count(5)
    expect(main.locator("a[href='https://example.org/']")).to_have_count(1)  # a plain link still works
    assert_inert(page, "hand-written session, all folds open")
    jump = page.locator("details.jump")  # its places name the labels, as the session holds them
    jump.evaluate("d => d.open = true")
    expect(jump.locator(".jump__menu li").first).to_be_visible()
    assert_inert(page, "hand-written session, Jump to open")
    jump.evaluate("d => d.open = false")

    for mode in ("default", "user", "labeled", "all"):
        ui.open_tree_filter(page, mode)
        assert_inert(page, f"hand-written session, tree {mode}")
    expect(page.locator("#tree-panel")).to_contain_text("window.__xss='label'")

    # The entry with the hostile id: its permalink and tree button work and stay inert.
    page.locator(f"#tree-panel button.tree__node[data-entry='{first_user}']").click()
    ui.wait_position(page, first_user)
    assert_inert(page, "after moving in a hand-written session")

    ui.open(page, "/")
    assert_inert(page, "list with a hand-written session")
    for entry in chain:
        raw = (
            page.goto(f"/s/{seeded.id}/e/{entry['id']}/raw/")
            if re.fullmatch(r"[A-Za-z0-9._-]{1,64}", entry["id"])
            else None
        )
        if raw is not None:
            assert raw.status == 200 and raw.headers["content-type"].startswith("application/json")
            assert_inert(page, f"raw line of {entry['id']}")
