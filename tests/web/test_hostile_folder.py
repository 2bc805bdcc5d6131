"""The hostile sessions folder (tests/support/hostile.py) through the web pages: the list page, every
good session's page, tree panel (each filter), older pages and raw lines answer quickly, and nothing a
bad file does reaches another session or turns into a 500."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse
from support.hostile import FileReads, HostileFolder, build_hostile_folder

from sessions_app.services.lookup import _catalog_for, catalog
from sessions_app.sessionfiles.catalog import URL_SAFE_ID
from sessions_app.sessionfiles.fork import fork_session
from sessions_app.sessionfiles.store import HEADER_LIMIT, SessionFile

SECONDS = 20  # generous on a loaded 2-core machine; a FIFO or /dev/zero would hang or grow for ever


@contextmanager
def bounded(what: str) -> Iterator[None]:
    """Fail (instead of hanging the suite) if the block does not end within SECONDS."""

    def expire(signum: int, frame: object) -> None:
        raise TimeoutError(f"{what} did not answer within {SECONDS} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(SECONDS)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture
def hostile(sessions_dir: Path, settings) -> HostileFolder:
    folder = build_hostile_folder(sessions_dir)
    settings.PITREE_MAX_LINE_BYTES = folder.line_limit
    return folder


def _get(client: Client, url: str, **params: str) -> tuple[int, str]:
    with bounded(url):
        response = client.get(url, params)
    return response.status_code, response.content.decode()


def test_the_list_page_lists_every_good_session_and_reports_the_bad_files(client: Client, hostile) -> None:
    pages = []
    url = reverse("sessions:list")
    status, html = _get(client, url)
    assert status == 200
    pages.append(html)
    page = 2
    while f"page={page}" in html:
        status, html = _get(client, url, page=str(page))
        assert status == 200
        pages.append(html)
        page += 1
    listed = "".join(pages)
    for path, session_id in hostile.good.items():
        if not URL_SAFE_ID.fullmatch(session_id):
            continue
        if path in hostile.twins:  # held by two files: reported, not listed (it would not open)
            assert reverse("sessions:session", args=[session_id]) not in listed, path.name
            assert path.name in listed, f"{path.name} is not reported"
        else:
            assert reverse("sessions:session", args=[session_id]) in listed, path.name
    for path in hostile.bad:
        assert path.name in listed, f"{path.name} is not reported"


@pytest.mark.sweep
def test_every_good_session_opens_with_its_tree_and_raw_lines(client: Client, hostile) -> None:
    opened = 0
    ids = list(hostile.good.values())
    for session_id in ids:
        if not URL_SAFE_ID.fullmatch(session_id):
            continue
        if ids.count(session_id) > 1:  # two files claim one id: which one is meant cannot be told
            status, html = _get(client, reverse("sessions:session", args=[session_id]))
            assert status == 404 and "Several files hold session" in html, html[:500]
            assert not any(path.name in html for path, held in hostile.good.items() if held == session_id)
            continue
        status, html = _get(client, reverse("sessions:session", args=[session_id]))
        assert status == 200, (session_id, html[:500])
        for mode in ("default", "user", "labeled", "all"):
            status, html = _get(client, reverse("sessions:tree", args=[session_id]), filter=mode)
            assert status == 200, (session_id, mode, html[:500])
        session = SessionFile.open(catalog().locate(session_id), max_line_bytes=hostile.line_limit)
        index = session.index
        for row in range(len(index)):
            if not index.is_node(row):
                continue
            entry_id = index.ids[row]
            status, _ = _get(client, reverse("sessions:raw", args=[session_id, entry_id]))
            assert status == 200, (session_id, entry_id)
            status, html = _get(client, reverse("sessions:entry", args=[session_id, entry_id]))
            assert status == 200, (session_id, entry_id, html[:500])
        opened += 1
    assert opened >= 5


def test_a_session_page_opens_no_file_but_its_own_its_parent_and_its_forks(
    client: Client, hostile: HostileFolder, monkeypatch: pytest.MonkeyPatch
) -> None:
    parent = next(path for path, session_id in hostile.good.items() if session_id == "good-plain")
    child = fork_session(SessionFile.open(parent, max_line_bytes=hostile.line_limit), fsync=False)
    reads = FileReads(hostile.root, monkeypatch)
    pages = [
        (parent, {parent, child.path}, [reverse("sessions:session", args=["good-plain"])]),
        (child.path, {child.path, parent}, [reverse("sessions:session", args=[child.session_id])]),
        (parent, {parent, child.path}, [reverse("sessions:map_data", args=["good-plain"])]),
    ]

    # Nothing listed yet: a page learns every header once, reading at most a header's 64 KiB of each file.
    status, _ = _get(client, pages[0][2][0])
    assert status == 200
    assert all(size <= HEADER_LIMIT for path, size in reads.read.items() if os.path.realpath(path) != str(parent))

    def only_their_own(when: str) -> None:
        for _, allowed, urls in pages:
            for url in urls:
                reads.clear()
                status, html = _get(client, url)
                assert status == 200, (when, url, html[:300])
                assert reads.files() <= {os.path.realpath(path) for path in allowed}, (when, url, reads.files())

    only_their_own("once the headers are known")
    for path in hostile.bad:  # every bad file changes (those that can be written to)
        if path.is_file() and os.access(path, os.W_OK) and not path.is_symlink():
            with path.open("ab") as grown:
                grown.write(b"more bytes\n")
    only_their_own("after every bad file changed")
    _catalog_for.cache_clear()  # a restart: the header index comes back from the cache folder
    only_their_own("after a restart")


def test_a_bad_file_named_for_an_id_says_why_it_does_not_open(client: Client, hostile) -> None:
    assert hostile.named_ids
    for session_id, path in hostile.named_ids.items():
        status, html = _get(client, reverse("sessions:session", args=[session_id]))
        assert status == 422 and hostile.bad[path] in html, (session_id, status, html[:500])
        assert path.name not in html and path.parent.name not in html and "this session&#x27;s file" in html


def test_a_session_behind_a_link_out_of_the_folder_is_shown_and_never_written(client: Client, hostile) -> None:
    assert len(hostile.outside) == 2  # a link to a file outside, and a file in a folder link that leads out
    for path in hostile.outside:
        session_id = hostile.good[path]
        before = path.read_bytes()
        status, html = _get(client, reverse("sessions:session", args=[session_id]))
        assert status == 200 and "a link to a file outside the sessions folder: read-only" in html, html[:500]
        assert 'id="composer"' not in html  # nothing offers a write
        leaf = SessionFile.open(path, max_line_bytes=hostile.line_limit).leaf_id or ""
        writes = {
            "send": {"text": "through the link?", "parent": leaf},
            "label": {"entry": leaf, "label": "x", "at": leaf},
            "rename": {"name": "renamed", "at": leaf},
        }
        for name, data in writes.items():
            response = client.post(reverse(f"sessions:{name}", args=[session_id]), data, HTTP_HX_REQUEST="true")
            text = response.content.decode()
            assert response.status_code == 409, (session_id, name, response.status_code, text[:300])
            assert "a link to a file outside the sessions folder: read-only" in text, (session_id, name, text[:300])
        answered = SessionFile.open(path, max_line_bytes=hostile.line_limit).index
        assistant = next(
            (answered.ids[row] for row in range(len(answered)) if answered.roles[row] == "assistant"), None
        )
        if assistant is not None:
            again = client.post(
                reverse("sessions:regenerate", args=[session_id]), {"entry": assistant}, HTTP_HX_REQUEST="true"
            )
            assert again.status_code == 409
        moved = client.post(
            reverse("sessions:navigate", args=[session_id]), {"to": "", "at": leaf}, HTTP_HX_REQUEST="true"
        )
        assert moved.status_code == 200  # the tab moves, as a viewer's does; the file's position stays
        assert path.read_bytes() == before  # and so is the file it leads to


def test_search_answers_over_the_folder_and_finds_the_good_sessions(client: Client, hostile) -> None:
    status, html = _get(client, reverse("sessions:search"), q="file name")
    assert status == 200, html[:500]
    assert reverse("sessions:session", args=["good-undecodable-name"]) in html  # a file name that is not UTF-8
    for query in ("hello", "x", "levels"):
        status, html = _get(client, reverse("sessions:search"), q=query)
        assert status == 200, (query, html[:500])
        assert "Not searched" not in html


@pytest.mark.sweep
def test_a_session_growing_while_it_is_shown_keeps_answering(client: Client, hostile) -> None:
    assert hostile.growing is not None
    session_id = hostile.good[hostile.growing]
    with hostile.keep_growing():
        for _ in range(20):
            status, _ = _get(client, reverse("sessions:session", args=[session_id]))
            assert status == 200
            status, _ = _get(client, reverse("sessions:tree", args=[session_id]))
            assert status == 200
