"""A full disk or a read-only sessions folder, as the pages meet it: every write (send, rename, label,
fork, a new session) is refused with a message saying why (409, where the user acted: the page keeps
the draft), never a server error; the file stays exactly as it was."""

from __future__ import annotations

import errno

import pytest
from support.faults import Faults, read_only

HTMX = {"HTTP_HX_REQUEST": "true"}
TREE = "02-tree-branches"
LINEAR = "01-linear"
FULL = "nothing was written: the disk is full"


@pytest.fixture
def faults(monkeypatch: pytest.MonkeyPatch) -> Faults:
    return Faults(monkeypatch)


def _refused(response, says: str) -> str:
    assert response.status_code == 409, response.status_code
    html = response.content.decode()
    assert says in html and "flash--error" in html
    assert response["HX-Retarget"] == "#flash"  # next to the composer, whose draft stays
    return html


def test_a_message_on_a_full_disk(client, pi, faults: Faults) -> None:
    before = pi.path(LINEAR).read_bytes()
    faults.error(errno.ENOSPC)
    response = client.post(f"/s/{pi.id(LINEAR)}/send/", {"text": "Hello there", "parent": "358d8704"}, **HTMX)
    html = _refused(response, FULL)
    assert "/tmp" not in html and ".jsonl" not in html  # the page names no path
    assert pi.path(LINEAR).read_bytes() == before


def test_a_short_write_is_taken_back_and_said(client, pi, faults: Faults) -> None:
    before = pi.path(LINEAR).read_bytes()
    faults.short(keep=7)
    response = client.post(f"/s/{pi.id(LINEAR)}/send/", {"text": "Hello there", "parent": "358d8704"}, **HTMX)
    _refused(response, "nothing was written: only 7 of")
    assert pi.path(LINEAR).read_bytes() == before


@pytest.mark.parametrize(
    ("action", "data"),
    [
        ("rename", {"name": "New name", "at": "750a4556"}),
        ("label", {"entry": "e65e9e73", "label": "done", "at": "750a4556"}),
        ("fork", {"entry": "37bad775"}),
        ("navigate", {"to": "37bad775", "mode": "exact"}),
    ],
)
def test_other_writes_on_a_full_disk(client, pi, faults: Faults, action: str, data: dict[str, str]) -> None:
    files = sorted(pi.folder.iterdir())
    before = pi.path(TREE).read_bytes()
    faults.error(errno.ENOSPC)
    _refused(client.post(f"/s/{pi.id(TREE)}/{action}/", data, **HTMX), FULL)
    assert pi.path(TREE).read_bytes() == before
    assert sorted(pi.folder.iterdir()) == files  # a fork left no file behind


def test_a_new_session_on_a_full_disk(client, sessions_dir, faults: Faults) -> None:
    faults.short(keep=3)
    response = client.post("/new/", {"cwd": "/home/me/proj"}, **HTMX)
    _refused(response, "nothing was written: only 3 of")
    assert list(sessions_dir.rglob("*.jsonl")) == []


def test_a_reply_that_cannot_be_stored_is_said_and_the_message_stays(client, pi, faults: Faults) -> None:
    """The message went in; the disk filled before the reply did: the tab is shown at the message it
    sent (not given it back as a draft, which would send it twice) and told the reply was not stored."""
    faults.error(errno.ENOSPC, after=1)
    response = client.post(f"/s/{pi.id(LINEAR)}/send/", {"text": "Still there?", "parent": "358d8704"}, **HTMX)
    assert response.status_code == 200
    html = response.content.decode()
    assert "flash--error" in html and "Your message is stored, but the reply could not be: the disk is full." in html
    last = pi.lines(pi.path(LINEAR))[-1]
    assert last["message"] == {**last["message"], "role": "user", "content": "Still there?"}
    assert f"/e/{last['id']}/" in response["HX-Push-Url"]


@pytest.mark.processes
def test_a_read_only_folder(client, pi) -> None:
    before = pi.path(LINEAR).read_bytes()
    with read_only(pi.folder.parent):
        response = client.post(f"/s/{pi.id(LINEAR)}/send/", {"text": "Hello", "parent": "358d8704"}, **HTMX)
        _refused(response, "nothing was written:")
        assert "read-only" in response.content.decode()
        page = client.post(f"/s/{pi.id(LINEAR)}/rename/", {"name": "x"})  # without htmx: a page saying why
        assert page.status_code == 409 and "read-only" in page.content.decode()
    assert pi.path(LINEAR).read_bytes() == before
