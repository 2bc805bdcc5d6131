"""A hostile sessions folder (tests/support/hostile.py): whatever other programs left in it, every good
session is listed and reads every way, every bad file is reported with its reason, nothing blocks, and
no file keeps another from being listed or found."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import orjson
import pytest
from support.hostile import HostileFolder, build_hostile_folder

from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles import tree
from sessions_app.sessionfiles.catalog import AmbiguousId, Catalog, info_fields, session_info
from sessions_app.sessionfiles.context import convert_to_llm, estimate_tokens
from sessions_app.sessionfiles.errors import ReadOnlySession, SessionError
from sessions_app.sessionfiles.fork import create_session, encode_cwd, fork_session
from sessions_app.sessionfiles.store import SessionFile

T = TypeVar("T")


def bounded(action: Callable[[], T], seconds: float = 60) -> T:
    """``action()`` in a thread that must finish within ``seconds`` (a FIFO opened blocking never would)."""
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append((True, action()))
        except BaseException as error:
            outcome.append((False, error))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout=seconds)
    assert not thread.is_alive(), f"{action} did not finish within {seconds} s"
    finished, value = outcome[0]
    if not finished:
        raise value
    return value  # type: ignore[no-any-return]


@pytest.fixture
def hostile(tmp_path: Path) -> HostileFolder:
    return build_hostile_folder(tmp_path / "sessions")


def test_every_good_session_is_listed_and_every_bad_file_reported(hostile: HostileFolder) -> None:
    catalog = Catalog(hostile.root, max_line_bytes=hostile.line_limit)
    infos = bounded(catalog.sessions)
    twins = hostile.twins
    assert twins  # the corpus has some: two files holding one id are found nowhere (docs/format.md §1.3)
    assert {info.path: info.id for info in infos} == hostile.listed
    assert set(catalog.problems) == set(hostile.bad) | twins
    for path, reason in hostile.bad.items():
        assert reason in catalog.problems[path], (path.name, catalog.problems[path])
    for path in twins:
        assert "neither is listed or opened" in catalog.problems[path]
    for info in infos:
        orjson.dumps(info_fields(info))
        assert info.modified and isinstance(info.title, str)
        assert info.url_id in (None, info.id)
    assert sorted(id(info) for info, _ in catalog.forest(infos)) == sorted(id(info) for info in infos)
    assert {info.id: info.url_id for info in infos if info.id.startswith("a/b")} == {"a/b?c#d%e&f g": None}


def test_a_remembered_listing_of_the_folder_is_the_listing(hostile: HostileFolder, tmp_path: Path) -> None:
    """Listed with a cache folder, then by a new catalog (a restart) from the cache: the same sessions
    and the same problems as a catalog that keeps nothing, every time."""
    cache = tmp_path / "var"
    plain = Catalog(hostile.root, max_line_bytes=hostile.line_limit)
    expected = bounded(plain.sessions)
    for _ in range(2):
        catalog = Catalog(hostile.root, max_line_bytes=hostile.line_limit, cache_folder=cache)
        assert bounded(catalog.sessions) == expected
        assert catalog.problems == plain.problems


def test_every_good_session_reads_every_way(hostile: HostileFolder) -> None:
    for path in hostile.good:
        session = SessionFile(path, fsync=False, max_line_bytes=hostile.line_limit)
        index = session.index
        tree.tree(index)
        index.skipped()
        session_info(session)
        nodes = [row for row in range(len(index)) if index.is_node(row)]
        session.entries(nodes)
        for row in nodes[:40]:
            context = session.context(index.ids[row])
            convert_to_llm(context.messages)
            estimate_tokens(context.messages)
            E.dump_json(context.as_json())
            tree.siblings(index, row)
            tree.latest_position_under(index, row)
        fork = fork_session(session, fsync=False)
        copied = SessionFile(fork.path).context().as_json()
        assert E.dump_json(copied) == E.dump_json(session.context().as_json()), path.name  # == would recurse
        fork.path.unlink()
        if not index.read_only:
            written = session.append(E.user_message("still writable"))
            reread = SessionFile(path, max_line_bytes=hostile.line_limit)
            assert reread.entry(written["id"]) == written and reread.leaf_id == written["id"]


def test_every_bad_file_is_refused_with_its_reason(hostile: HostileFolder) -> None:
    for path, reason in hostile.bad.items():
        with pytest.raises((SessionError, OSError)) as refused:
            bounded(lambda path=path: SessionFile(path, max_line_bytes=hostile.line_limit), 20)
        message = refused.value.strerror if isinstance(refused.value, OSError) else str(refused.value)
        assert message and (reason in message or isinstance(refused.value, OSError)), (path.name, message)


def test_sessions_are_found_by_id_whatever_else_is_there(hostile: HostileFolder) -> None:
    catalog = Catalog(hostile.root, max_line_bytes=hostile.line_limit)
    counts: dict[str, int] = {}
    for session_id in hostile.good.values():
        counts[session_id] = counts.get(session_id, 0) + 1
    for path, session_id in hostile.good.items():
        if counts[session_id] > 1:
            with pytest.raises(AmbiguousId):
                bounded(lambda session_id=session_id: catalog.locate(session_id))
        else:
            assert bounded(lambda session_id=session_id: catalog.locate(session_id)) == path
    assert catalog.find("good-ren").id == "good-renamed"
    with pytest.raises(SessionError, match="not a pi session"):
        catalog.locate("broken-named")


def test_listing_and_reading_while_a_file_grows(hostile: HostileFolder) -> None:
    catalog = Catalog(hostile.root, max_line_bytes=hostile.line_limit)
    assert hostile.growing is not None
    with hostile.keep_growing():
        session = SessionFile.open(hostile.growing, fsync=False)
        seen = []
        for _ in range(20):
            infos = {info.path: info for info in bounded(catalog.sessions)}
            seen.append(infos[hostile.growing].message_count)
            session.refresh()
            assert tree.path(session.index, session.index.leaf_row)[0] == session.row_of("g0")
    assert seen[-1] > seen[0]
    assert session.refresh() is not None
    fresh = SessionFile(hostile.growing)
    assert len(fresh.index) == len(session.index) and fresh.index.skipped() == []


# ---------------------------------------------------------------------------------------------- links out of the folder


def test_a_link_out_of_the_sessions_folder_is_read_and_never_written_through(tmp_path: Path) -> None:
    root, elsewhere = tmp_path / "sessions", tmp_path / "elsewhere"
    inside = create_session(root, "/srv/app", fsync=False)
    inside.append(E.user_message("inside"))
    outside = create_session(elsewhere, "/srv/app", fsync=False)
    outside.append(E.user_message("outside"))
    link = inside.path.parent / "2026-03-02T09-00-00-000Z_linked.jsonl"
    link.symlink_to(outside.path)
    secret = outside.path.read_bytes()

    session = SessionFile.open(link, fsync=False, within=root)
    assert session.outside and session.entries(session.path_rows())[0]["message"]["content"] == "outside"
    with pytest.raises(ReadOnlySession, match="a link to a file outside the sessions folder: read-only"):
        session.append(E.user_message("through the link"))
    fork = fork_session(session, fsync=False)  # next to the link, in the folder: allowed
    assert fork.path.parent == link.parent and not fork.outside
    assert outside.path.read_bytes() == secret

    # Retargeted after it was opened: the descriptor about to be written is what is checked.
    other = create_session(root, "/srv/app", fsync=False)
    retargeted = inside.path.parent / "2026-03-02T09-00-00-000Z_moving.jsonl"
    retargeted.symlink_to(other.path)
    moving = SessionFile.open(retargeted, fsync=False, within=root)
    moving.append(E.user_message("inside, through a link that stays inside"))
    retargeted.unlink()
    retargeted.symlink_to(outside.path)
    with pytest.raises(ReadOnlySession):
        moving.append(E.user_message("now it leads out"))
    assert outside.path.read_bytes() == secret

    # A workspace folder that is a link out: its sessions are read-only, and nothing is created there.
    (root / encode_cwd("/far")).symlink_to(elsewhere / encode_cwd("/srv/app"), target_is_directory=True)
    far = SessionFile.open(root / encode_cwd("/far") / outside.path.name, fsync=False, within=root)
    assert far.outside
    with pytest.raises(ReadOnlySession, match="a link to a folder outside the sessions folder"):
        create_session(root, "/far", fsync=False)
    with pytest.raises(ReadOnlySession, match="a link to a folder outside the sessions folder"):
        fork_session(far, fsync=False)
    with pytest.raises(ReadOnlySession, match="a link to a folder outside the sessions folder"):
        fork_session(inside, fsync=False, into=(root, "/far"))
    assert sorted(p.name for p in (elsewhere / encode_cwd("/srv/app")).iterdir()) == [outside.path.name]


def test_a_sessions_folder_that_is_itself_a_link_is_written_as_usual(tmp_path: Path) -> None:
    real = tmp_path / "real-sessions"
    real.mkdir()
    (tmp_path / "sessions").symlink_to(real, target_is_directory=True)
    session = create_session(tmp_path / "sessions", "/srv/app", fsync=False)
    assert not session.outside
    session.append(E.user_message("fine"))
    assert SessionFile(session.path, fsync=False).index.message_count == 1
