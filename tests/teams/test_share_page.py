"""The share page says what a link just made lets its holder do, and for how long: it said "can read
it until you revoke it" of a collaborator's link, and of one that expires."""

from __future__ import annotations

import re

from support.teams import World


def _made(world: World, **fields: str) -> str:
    data = {"audience": "link", "role": "viewer", "mode": "live", "entry": "", "days": "", "name": "", **fields}
    response = world.client("owner").post(f"/s/{world.session_id}/share/", data)
    assert response.status_code == 200
    page = response.content.decode()
    found = re.search(r'<div class="card share-link".*?</div>', page, re.S)
    assert found
    return " ".join(found.group(0).split())


def test_the_new_link_says_what_it_allows_and_until_when(world: World) -> None:
    viewer = _made(world)
    assert "can read it until you revoke it" in viewer
    assert 'data-copy-field="share-link-url"' in viewer  # and a Copy button
    collaborator = _made(world, role="collaborator", days="1")
    assert re.search(
        r"can read it and write to it until \d{4}-\d\d-\d\d \d\d:\d\d UTC, or until you revoke it", collaborator
    )
