"""With DEBUG off (the default), error pages are pitree's own: they say what went wrong and never show
local variables, URL patterns, tracebacks or where the server keeps its files."""

from __future__ import annotations

import os

import pytest
from django.conf import settings as django_settings
from django.test import Client

from sessions_app.middleware import public_message
from sessions_app.services.lookup import _catalog_for
from sessions_app.views import pages

TREE = "02-tree-branches"
HTMX = {"HTTP_HX_REQUEST": "true"}


def _assert_discreet(html: str, sessions_dir) -> None:
    for leak in (str(sessions_dir), str(django_settings.BASE_DIR), "Traceback", "urlpatterns", "Request Method"):
        assert leak not in html, leak


def test_debug_is_off_by_default() -> None:
    assert django_settings.DEBUG is False


def test_404_pages_say_what_is_missing_without_paths(client, pi, sessions_dir) -> None:
    for url in (f"/s/{pi.id(TREE)}/e/ffffffff/", "/s/0000-nope/", "/no/such/page/", "/s/0000-nope/tree/"):
        response = client.get(url)
        html = response.content.decode()
        assert response.status_code == 404, url
        assert "<h1>Not found</h1>" in html and "All sessions" in html
        _assert_discreet(html, sessions_dir)
    assert "Entry ffffffff not found" in client.get(f"/s/{pi.id(TREE)}/e/ffffffff/").content.decode()
    assert "0000-nope" in client.get("/s/0000-nope/").content.decode()


def test_a_broken_file_page_names_neither_the_file_nor_its_folder(client, pi, sessions_dir) -> None:
    broken = pi.folder / "2026-02-02T00-00-00-000Z_019aaaaa-0000-7000-8000-000000000bad.jsonl"
    broken.write_bytes(b"not json\n")
    response = client.get("/s/019aaaaa-0000-7000-8000-000000000bad/")
    html = response.content.decode()
    assert response.status_code == 422 and "this session&#x27;s file: not a pi session" in html
    assert broken.name not in html and pi.folder.name not in html
    _assert_discreet(html, sessions_dir)


def test_a_file_replaced_by_a_fifo_is_refused_without_naming_it(client, pi, sessions_dir) -> None:
    """422 when the catalog finds the FIFO, 409 when the file it knew fails to open: neither names it."""
    path = pi.path(TREE)
    assert client.get(f"/s/{pi.id(TREE)}/").status_code == 200
    path.unlink()
    os.mkfifo(path)
    response = client.get(f"/s/{pi.id(TREE)}/")
    html = response.content.decode()
    assert response.status_code in (409, 422) and "this session&#x27;s file: a FIFO, not a session file" in html
    assert path.name not in html and path.parent.name not in html
    _assert_discreet(html, sessions_dir)


@pytest.mark.parametrize(
    "message",
    [
        "{root}/--srv-a--/2026_x.jsonl: not a pi session (no session header)",
        "{root}/--srv: a--/odd: name.jsonl: a FIFO, not a session file",
        "{root}/--srv-a--: a link to a folder outside the sessions folder: nothing is written there",
        "2026_x.jsonl: not a pi session (line 1 is not a session header)",
        "/elsewhere/secret/2026_x.jsonl: not a pi session",
    ],
)
def test_messages_name_no_file_and_no_folder(message, settings, tmp_path) -> None:
    settings.PITREE_SESSIONS_DIR = tmp_path / "sessions, with: odd/chars"
    shown = public_message(message.format(root=settings.PITREE_SESSIONS_DIR))
    for leak in ("srv", "2026_x", "odd", "name.jsonl", "elsewhere", "secret", str(tmp_path)):
        assert leak not in shown, shown
    assert shown.startswith(("this session's file: ", "this session's folder: ", "a path outside")), shown


def test_400_pages(client, pi, sessions_dir) -> None:
    response = client.get("/", {"page": "abc"})
    assert response.status_code == 400 and "page: Enter a whole number." in response.content.decode()
    _assert_discreet(response.content.decode(), sessions_dir)
    disallowed = client.get("/", HTTP_HOST="evil.example")
    assert disallowed.status_code == 400 and "This request cannot be answered" in disallowed.content.decode()
    _assert_discreet(disallowed.content.decode(), sessions_dir)


def test_413_when_a_body_reaches_django_over_the_limit(client, pi, settings) -> None:
    settings.PITREE_MAX_MESSAGE_BYTES = 100
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    url = f"/s/{pi.id(TREE)}/label/"
    response = client.post(url, {"entry": "e65e9e73", "label": "x" * 2000})
    assert response.status_code == 413 and "at most 100 bytes" in response.content.decode()
    fragment = client.post(url, {"entry": "e65e9e73", "label": "x" * 2000}, **HTMX)
    assert fragment.status_code == 413 and fragment["HX-Retarget"] == "#flash"
    assert "label" not in {line.get("type") for line in pi.lines(pi.path(TREE))[-1:]}


def test_500_pages_show_nothing_of_the_failure(pi, sessions_dir, monkeypatch, sign_in) -> None:
    def fail(*args, **kwargs):
        secret = f"{sessions_dir}/secret-variable"
        raise RuntimeError(secret)

    monkeypatch.setattr(pages, "transcript_context", fail)
    client = sign_in(Client(raise_request_exception=False))
    response = client.get(f"/s/{pi.id(TREE)}/")
    html = response.content.decode()
    assert response.status_code == 500 and "Something went wrong on the server" in html
    assert "secret-variable" not in html and "RuntimeError" not in html
    _assert_discreet(html, sessions_dir)


def test_csrf_refusals_are_pitrees_own_page(pi, sessions_dir, sign_in) -> None:
    client = sign_in(Client(enforce_csrf_checks=True))
    response = client.post(f"/s/{pi.id(TREE)}/label/", {"entry": "e65e9e73", "label": "x"})
    html = response.content.decode()
    assert response.status_code == 403 and "not sent from this site" in html
    _assert_discreet(html, sessions_dir)


@pytest.mark.parametrize("name", ["app.css", "app.js", "favicon.svg"])
def test_static_files_are_served_by_the_app_with_debug_off(client, name) -> None:
    response = client.get(f"/static/pitree/{name}")
    assert response.status_code == 200
    assert b"".join(response.streaming_content)  # type: ignore[attr-defined]


def test_no_part_of_a_sessions_folder_path_shows_whatever_characters_it_holds(client, tmp_path, settings) -> None:
    root = tmp_path / "srv data, private" / "sessions"
    folder = root / "--srv-app--"
    folder.mkdir(parents=True)
    header = b'{"type":"session","id":"%s","timestamp":"2026-03-02T09:00:00.000Z","cwd":"/srv/app"}\n'
    (folder / "2026-03-02T09-00-00-000Z_broken.jsonl").write_bytes(b"not a session\n")
    (folder / "a_twice.jsonl").write_bytes(header % b"twice")
    (folder / "b_twice.jsonl").write_bytes(header % b"twice")
    (folder / "2026-03-02T09-00-00-000Z_old.jsonl").write_bytes(
        header % b"old"
        + b'{"type":"message","timestamp":"2026-03-02T09:00:01.000Z","message":{"role":"user","content":"v1"}}\n'
    )
    settings.PITREE_SESSIONS_DIR = root

    _catalog_for.cache_clear()
    answers = {
        "/s/nosuch/": 404,
        "/s/nosuch/tree/": 404,
        "/s/twice/": 404,
        "/s/broken/": 422,
    }
    for url, status in answers.items():
        response = client.get(url)
        html = response.content.decode()
        assert response.status_code == status, (url, html[:300])
        for part in ("srv data", "private", str(tmp_path)):
            assert part not in html, (url, part)
    sent = client.post("/s/old/send/", {"text": "hi", "parent": ""}, **HTMX)
    assert sent.status_code in (403, 409, 422), sent.status_code
    assert "srv data" not in sent.content.decode() and "private" not in sent.content.decode()
