"""The shell's fragments and writes: the sidebar, an entry's action panels, the model and thinking
pickers; and the Markdown the pages show (highlighted code, plain-text previews)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from support.fake_openai import running_fake, send_json

from sessions_app.display.highlight_css import CODE_BG, MIN_CONTRAST, contrast, stylesheet
from sessions_app.display.markdown import markdown_text, render_markdown, title_text
from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles.fork import create_session

HTMX = {"HTTP_HX_REQUEST": "true"}
TREE, LINEAR = "02-tree-branches", "01-linear"
STATIC = Path(__file__).resolve().parents[2] / "static" / "pitree"


# --- the sidebar -----------------------------------------------------------------------------------


def test_the_sidebar_lists_sessions_grouped_and_marks_the_current_one(client, pi) -> None:
    html = client.get("/sidebar/", {"current": pi.id(TREE)}, **HTMX).content.decode()
    assert '<h3 class="sidebar__when">' in html  # by day (tests/web/test_newest_first.py)
    current = re.search(r'<a href="([^"]+)" aria-current="page"', html)
    assert current and current.group(1) == f"/s/{pi.id(TREE)}/"
    parent = html.index(f'href="/s/{pi.id(TREE)}/"')
    fork = html.index(f'href="/s/{pi.id("03-fork-of-02")}/"')
    assert parent < fork and 'style="--depth: 1"' in html[parent:fork]
    filtered = client.get("/sidebar/", {"q": "todos table"}, **HTMX).content.decode()
    assert "Rename the todos table" in filtered and "Title validation" not in filtered
    assert client.get("/sidebar/", {"current": "not an id!"}).status_code == 400


def test_the_sidebar_pages_and_the_next_page_loads_when_reached(client, sessions_dir) -> None:
    for n in range(55):
        create_session(sessions_dir, "/w", fsync=False).append(E.user_message(f"session {n}"), None)
    html = client.get("/sidebar/", **HTMX).content.decode()
    assert html.count("<li ") == 50
    more = re.search(r'class="sidebar__more" href="([^"]+)" hx-get="([^"]+)" hx-trigger="intersect once, click"', html)
    assert more and "page=2" in more.group(2) and "55 in all" in html
    rest = client.get(more.group(2).replace("&amp;", "&"), **HTMX).content.decode()
    assert rest.count("<li ") == 5 and "sidebar__more" not in rest


def test_the_sidebar_fetched_again_keeps_the_pages_scrolled_in(client, sessions_dir) -> None:
    """``through=N``: every page up to N at once, offering page N + 1 next (and only that page)."""
    for n in range(120):
        create_session(sessions_dir, "/w", fsync=False).append(E.user_message(f"session {n}"), None)
    two = client.get("/sidebar/", {"through": 2, "q": "session"}, **HTMX).content.decode()
    assert two.count("<li ") == 100
    more = re.search(r'class="sidebar__more" href="[^"]+" hx-get="([^"]+)"', two)
    assert more and "page=3" in more.group(1) and "through" not in more.group(1) and "q=session" in more.group(1)
    rest = client.get(more.group(1).replace("&amp;", "&"), **HTMX).content.decode()
    assert rest.count("<li ") == 20 and "sidebar__more" not in rest
    assert client.get("/sidebar/", {"through": 9}, **HTMX).content.decode().count("<li ") == 120
    assert client.get("/sidebar/", {"through": "x"}).status_code == 400


# --- an entry's actions ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "do", "present", "absent"),
    [
        ("97690895", "edit", "edit-form", ["fork-form", "label-form", "compact-form"]),
        ("97690895", "compact", "compact-form", ["edit-form", "fork-form"]),
        ("e65e9e73", "fork", "fork-form", ["edit-form", "label-form"]),
        ("e65e9e73", "label", "label-form", ["fork-form", "compact-form"]),
    ],
)
def test_a_panel_holds_the_one_form_asked_for(client, pi, entry, do, present, absent) -> None:
    html = client.get(f"/s/{pi.id(TREE)}/e/{entry}/actions/", {"do": do, "at": "750a4556"}, **HTMX).content.decode()
    assert present in html and not any(other in html for other in absent)
    assert "data-close-panel" in html


def test_heavy_actions_say_what_they_will_do(client, pi) -> None:
    fork = client.get(f"/s/{pi.id(TREE)}/e/e65e9e73/actions/", {"do": "fork"}, **HTMX).content.decode()
    assert "a new session file with the 10 entries of this branch up to this one" in fork
    assert "This session is not changed." in fork
    compact = client.get(f"/s/{pi.id(TREE)}/e/ab506f7f/actions/", {"do": "compact"}, **HTMX).content.decode()
    assert "the assistant summarises the history before this message" in compact
    assert client.get(f"/s/{pi.id(TREE)}/e/e65e9e73/actions/", {"do": "delete"}).status_code == 400


def test_each_message_has_a_row_of_actions_and_its_source_to_copy(client, pi) -> None:
    html = client.get(f"/s/{pi.id(LINEAR)}/").content.decode()
    row = re.search(r'<article[^>]*id="entry-358d8704".*?</article>', html, re.S)
    assert row
    article = row.group(0)
    for name in ("Copy", "Regenerate", "Fork…", "Label…", "Continue from here", "Raw line"):
        assert f">{name}<" in article, name
    source = re.search(r'<template class="entry__source">(.*?)</template>', article, re.S)
    assert source and "Done: added DELETE /todos/&lt;id&gt;." in source.group(1)
    marker = re.search(r'<article[^>]*id="entry-2e67a1e7".*?</article>', html, re.S)
    assert marker and "entry--marker" in marker.group(0) and "entry__tools" not in marker.group(0)


# --- the model and thinking pickers -------------------------------------------------------------------


def test_offline_the_picker_offers_its_one_model(client, pi) -> None:
    html = client.get(f"/s/{pi.id(LINEAR)}/settings/", {"at": "db26dc72"}, **HTMX).content.decode()
    assert re.search(r'<select name="model" disabled[^>]*>\s*<option value="offline-echo" selected>', html)
    assert '<option value="medium" selected>' in html  # 01-linear's thinking level
    assert "this branch last used <code>anthropic/claude-sonnet-4-5</code>" in html


def test_a_model_of_the_server_is_written_as_model_change_under_the_position(client, pi, settings) -> None:
    with running_fake() as fake:
        settings.PITREE_ASSISTANT = "openai"
        settings.PITREE_OPENAI_BASE_URL = fake.base_url
        settings.PITREE_OPENAI_MODEL = "fake-model"
        url = f"/s/{pi.id(LINEAR)}/model/"
        before = pi.path(LINEAR).read_bytes()
        refused = client.post(url, {"model": "no-such-model", "at": "db26dc72"}, **HTMX)
        assert refused.status_code == 422 and "no model &#x27;no-such-model&#x27;" in refused.content.decode()
        assert pi.path(LINEAR).read_bytes() == before
        response = client.post(url, {"model": "fake-model", "at": "c256703f"}, **HTMX)
        assert response.status_code == 200
        change = pi.lines(pi.path(LINEAR))[-1]
        assert change["type"] == "model_change" and change["parentId"] == "c256703f"
        assert (change["provider"], change["modelId"]) == ("openai-compatible", "fake-model")
        assert f'data-position="{change["id"]}"' in response.content.decode()
        # The next reply asks the model the branch names.
        client.post(f"/s/{pi.id(LINEAR)}/send/", {"text": "hi", "parent": change["id"]}, **HTMX)
        assert fake.requests[-1].body["model"] == "fake-model"


def test_the_note_beside_the_pickers_names_the_model_the_branch_answers_with(client, pi, settings) -> None:
    with running_fake() as fake:
        settings.PITREE_ASSISTANT = "openai"
        settings.PITREE_OPENAI_BASE_URL = fake.base_url
        settings.PITREE_OPENAI_MODEL = "fake-small"
        fake.list_models = lambda handler, fake: send_json(
            handler, 200, {"object": "list", "data": [{"id": name} for name in ("fake-small", "fake-large")]}
        )
        response = client.post(f"/s/{pi.id(LINEAR)}/model/", {"model": "fake-large", "at": "db26dc72"}, **HTMX)
        change = pi.lines(pi.path(LINEAR))[-1]
        assert response.status_code == 200 and change["modelId"] == "fake-large"
        html = client.get(f"/s/{pi.id(LINEAR)}/settings/", {"at": change["id"]}, **HTMX).content.decode()
        note = re.search(r'<span class="muted picker__note"[^>]*>(.*?)</span>', html, re.S)
        assert note and note.group(1).startswith(f"fake-large (OpenAI-compatible server at {fake.base_url})"), html


def test_a_model_list_that_cannot_be_fetched_changes_nothing(client, pi, settings) -> None:
    settings.PITREE_ASSISTANT = "openai"
    settings.PITREE_OPENAI_BASE_URL = "http://127.0.0.1:9/v1"
    before = pi.path(LINEAR).read_bytes()
    response = client.post(f"/s/{pi.id(LINEAR)}/model/", {"model": "gpt-4o-mini"}, **HTMX)
    assert response.status_code == 409 and "could not be fetched" in response.content.decode()
    assert pi.path(LINEAR).read_bytes() == before
    picker = client.get(f"/s/{pi.id(LINEAR)}/settings/", **HTMX).content.decode()
    assert "The model list could not be fetched" in picker and '<option value="gpt-4o-mini" selected>' in picker


def test_a_thinking_level_is_written_as_thinking_level_change(client, pi) -> None:
    url = f"/s/{pi.id(LINEAR)}/thinking/"
    before = pi.path(LINEAR).read_bytes()
    assert client.post(url, {"level": "enormous", "at": "db26dc72"}, **HTMX).status_code == 422
    assert pi.path(LINEAR).read_bytes() == before
    client.post(url, {"level": "xhigh", "at": "db26dc72"}, **HTMX)
    change = pi.lines(pi.path(LINEAR))[-1]
    assert {k: change[k] for k in ("type", "parentId", "thinkingLevel")} == {
        "type": "thinking_level_change",
        "parentId": "db26dc72",
        "thinkingLevel": "xhigh",
    }
    picker = client.get(f"/s/{pi.id(LINEAR)}/settings/", {"at": change["id"]}, **HTMX).content.decode()
    assert '<option value="xhigh" selected>' in picker


# --- Markdown -------------------------------------------------------------------------------------------


def test_code_is_highlighted_with_classes_and_framed_with_buttons() -> None:
    html = render_markdown("```python\nimport os  # <b>\n```\n\n```nosuchlanguage\n<script>x</script>\n```")
    assert '<span class="tok-kn">import</span>' in html and "# &lt;b&gt;" in html
    assert "style=" not in html and "<script" not in html
    assert html.count("data-copy-code>Copy</button>") == 2
    assert "&lt;script&gt;x&lt;/script&gt;" in html  # an unknown language is escaped, not guessed
    long = render_markdown("```\n" + "line\n" * 31 + "```")
    assert 'class="code code--long"' in long and "Show all 31 lines" in long
    assert "code--long" not in render_markdown("```\n" + "line\n" * 30 + "```")


def test_a_table_sits_in_a_frame_that_scrolls_sideways_and_takes_the_focus() -> None:
    html = str(render_markdown("| name | value |\n|---|---|\n| a | 1 |\n"))
    assert html.startswith('<div class="md-table" tabindex="0" role="region" aria-label="Table"><table>')
    assert html.rstrip().endswith("</table>\n</div>") and html.count("<table>") == 1


def test_markdown_as_plain_text() -> None:
    assert (
        markdown_text("## Plan\n\n- **first** step\n- `second` [step](http://x)", 80) == "Plan first step second step"
    )
    assert markdown_text("a " * 100, 20) == "a a a a a a a a a a…"
    assert title_text("  A  *name*  ", "ignored", 80) == "  A  *name*  "  # a name is shown as written
    assert title_text(None, "**Fix** the `bug`", 80) == "Fix the bug"


def test_the_highlighting_stylesheet_is_generated_and_readable() -> None:
    assert (STATIC / "highlight.css").read_text() == stylesheet(), (
        "static/pitree/highlight.css is stale: python -m sessions_app.display.highlight_css > static/pitree/highlight.css"
    )
    for light, dark in re.findall(r"light-dark\((#[0-9a-f]{6}), (#[0-9a-f]{6})\)", stylesheet())[2:]:
        assert contrast(light, CODE_BG["light"]) >= MIN_CONTRAST
        assert contrast(dark, CODE_BG["dark"]) >= MIN_CONTRAST


def test_pages_load_no_inline_script_and_the_theme_before_the_styles(client, pi) -> None:
    html = client.get(f"/s/{pi.id(LINEAR)}/").content.decode()
    scripts = re.findall(r"<script([^>]*)>(.*?)</script>", html, re.S)
    assert scripts and all('src="' in attrs and not body.strip() for attrs, body in scripts)
    prefs = html.index("pitree/prefs.js")
    assert prefs < html.index("pitree/app.css") and "defer" not in html[prefs - 40 : prefs + 30]
    assert json.loads(re.search(r"content='(\{\"allowEval\".*?)'>", html).group(1))["allowEval"] is False


def test_every_script_of_the_app_is_loaded_by_a_template_and_the_namespace_first() -> None:
    """static/pitree/ holds one script per job: each is named by a template (none left behind when a
    job moves), each named one exists, and app.js, which makes the namespace the others use, comes
    before every other deferred script of the app on the pages that load them."""
    templates = Path(__file__).resolve().parents[2] / "templates"
    named: set[str] = set()
    for template in templates.rglob("*.html"):
        named |= set(re.findall(r"\{% static 'pitree/([\w-]+\.js)' %\}", template.read_text()))
    assert named == {path.name for path in STATIC.glob("*.js")}


def test_the_session_page_loads_its_scripts_deferred_after_the_shared_ones(client, pi) -> None:
    html = client.get(f"/s/{pi.id(LINEAR)}/").content.decode()
    scripts = re.findall(r'<script src="/static/pitree/([\w-]+)\.js"( defer)?>', html)
    names = [name for name, _ in scripts]
    assert names[:2] == ["prefs", "app"] and all(defer for name, defer in scripts if name != "prefs")
    assert {"live", "copy", "sidebar", "drafts", "sending", "stop", "tree-panel", "shortcuts"} <= set(names)
    assert names.index("live") < names.index("sending")  # the session page's own come after the shared ones
