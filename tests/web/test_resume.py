"""An entry's page with ``?resume=1`` (a search hit's link): the entry's branch where it was left, the
entry in it, rather than the branch cut off at the entry; unless the entry is too far up for the page
that opens there, where it would not be shown."""

from __future__ import annotations

from sessions_app.display.transcript import RESUME_WITHIN
from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles.fork import create_session


def _position(client, session, entry_id: str, **query: str) -> str:
    response = client.get(f"/s/{session.session_id}/e/{entry_id}/", query)
    assert response.status_code == 200
    return response.context["position"]


def test_a_hit_opens_on_its_branch_where_it_was_left_when_the_page_shows_it(client, sessions_dir) -> None:
    session = create_session(sessions_dir, "/w", fsync=False)
    ids = [session.append(E.user_message(f"message {n}"))["id"] for n in range(RESUME_WITHIN + 10)]
    near, far = ids[-RESUME_WITHIN], ids[-RESUME_WITHIN - 3]
    assert _position(client, session, near, resume="1") == ids[-1]
    assert _position(client, session, far, resume="1") == far  # further up than the page reaches
    assert _position(client, session, near) == near  # a permalink: that branch state
    # A branch left elsewhere: the hit's own branch, not the file's position.
    other = session.append(E.user_message("another branch"), ids[-3])
    assert session.leaf_id == other["id"]
    assert _position(client, session, ids[-2], resume="1") == ids[-1]
