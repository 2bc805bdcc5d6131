"""Every page and fragment, asked with hostile values for every query parameter any view reads, and
every form posted with them: each answers with a status below 500 and names no server path, and
what the session file held is still there."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from asgiref.sync import async_to_sync

HTMX = {"HTTP_HX_REQUEST": "true"}
PARAMETERS = [
    "q",
    "page",
    "current",
    "at",
    "before",
    "fold_before",
    "fold_id",
    "unfold",
    "filter",
    "first",
    "last",
    "earlier",
    "open_first",
    "open_last",
    "loaded",
    "do",
    "e",
    "end",
    "diff",
    "hl",
    "cursor",
]
# A number past any integer field's range, an over-long id, and one value with what a path, HTML, a
# C string and a comparison's ``e=session:entry`` refs mean (other values: tests/web/test_hostile_input.py).
VALUES = ["99999999999999999999", "a" * 5000, "ü/../..<b>\x00 2,1:x"]
GETS = [
    "/",
    "/search/",
    "/sidebar/",
    "/s/{sid}/",
    "/s/{sid}/e/{eid}/",
    "/s/{sid}/older/",
    "/s/{sid}/tree/",
    "/s/{sid}/tree/run/",
    "/s/{sid}/e/{eid}/block/0/",
    "/s/{sid}/e/{eid}/raw/",
    "/s/{sid}/e/{eid}/actions/",
    "/s/{sid}/settings/",
    "/s/{sid}/compare/",
    "/s/{sid}/map/",
    "/s/{sid}/map/data/",
    "/s/{sid}/share/",
    "/s/{sid}/download.jsonl",
    "/s/{sid}/download.md",
    "/s/{sid}/e/{eid}/author/",
    "/upload/",
]
POSTS = [
    "/new/",
    "/s/{sid}/send/",
    "/s/{sid}/regenerate/",
    "/s/{sid}/stop/",
    "/s/{sid}/compact/",
    "/s/{sid}/navigate/",
    "/s/{sid}/label/",
    "/s/{sid}/rename/",
    "/s/{sid}/fork/",
    "/s/{sid}/model/",
    "/s/{sid}/thinking/",
    "/s/{sid}/share/",
]
FIELDS = [
    "text",
    "parent",
    "stream",
    "cursor",
    "branch",
    "entry",
    "to",
    "mode",
    "at",
    "summarize",
    "label",
    "name",
    "keep_from",
    "instructions",
    "cwd",
    "model",
    "level",
    "reply",
    "kind",
    "role",
    "user",
    "team",
    "expires",
    "scope",
    "live",
]


@pytest.fixture
def target(pi) -> dict[str, str]:
    sid = pi.id("02-tree-branches")
    return {"sid": sid, "eid": next(iter(pi.reopen(pi.path("02-tree-branches")).index.ids))}


def _body(response: Any) -> bytes:
    """The answer's bytes, a streamed download's included (read through, as a client would)."""
    if not response.streaming:
        return response.content
    if not response.is_async:
        return response.getvalue()

    async def read() -> bytes:
        return b"".join([piece async for piece in response.streaming_content])

    return async_to_sync(read)()


@pytest.mark.sweep
@pytest.mark.parametrize("url", GETS)
def test_every_get_answers_hostile_queries_below_500(client, target, pi, url) -> None:
    path = url.format(**target)
    folder = str(pi.folder).encode()
    for number, (parameter, value) in enumerate(itertools.product(PARAMETERS, VALUES)):
        response = client.get(path, {parameter: value}, **(HTMX if number % 2 else {}))
        assert response.status_code < 500, (path, parameter, value[:20], response.status_code)
        assert folder not in _body(response), (path, parameter, value[:20])
    for value in VALUES:
        response = client.get(path, dict.fromkeys(PARAMETERS, value), **HTMX)
        assert response.status_code < 500, (path, "all", value[:20], response.status_code)


@pytest.mark.sweep
@pytest.mark.parametrize("url", POSTS)
def test_every_post_answers_hostile_fields_below_500(client, target, pi, url) -> None:
    path = url.format(**target)
    before = pi.path("02-tree-branches").read_bytes()
    folder = str(pi.folder).encode()
    for field, value in itertools.product(FIELDS, VALUES):
        response = client.post(path, {field: value}, **HTMX)
        assert response.status_code < 500, (path, field, value[:20], response.status_code)
        assert folder not in response.content, (path, field, value[:20])
    assert pi.path("02-tree-branches").read_bytes().startswith(before)  # what was there is still there
