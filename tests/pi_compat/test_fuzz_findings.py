"""What the randomized differential test (test_differential.py) found pitree reading otherwise than pi
1.6.0: one hand-made file per finding, checked against pi's own code and against the value pi's code
gives, so that each fails on the code before its fix.

Odd files all: pi never writes these shapes itself, but its reader accepts them (hand edits, other
writers, older versions), and pitree reads them as pi does, or as docs/format.md §11.2 says it differs.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles.catalog import Catalog
from sessions_app.sessionfiles.entries import js_number
from sessions_app.sessionfiles.instants import MAX_MS
from sessions_app.sessionfiles.listing import read_info, session_info
from sessions_app.sessionfiles.store import SessionFile

pytestmark = pytest.mark.processes  # pi's own code, run by node

HEADER = {"type": "session", "version": 3, "id": "found", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}
START_MS = 1767225600000  # the header's time


def _entry(kind: str, entry_id: str, parent: str | None, second: int, **fields: Any) -> dict[str, Any]:
    stamp = f"2026-01-01T00:00:{second:02d}.000Z"
    return {"type": kind, "id": entry_id, "parentId": parent, "timestamp": stamp, **fields}


def _user(entry_id: str, parent: str | None, second: int, content: Any) -> dict[str, Any]:
    message = {"role": "user", "content": content, "timestamp": START_MS + second * 1000}
    return _entry("message", entry_id, parent, second, message=message)


def _file(folder: Path, name: str, lines: list[dict[str, Any]], header: dict[str, Any] = HEADER) -> Path:
    path = folder / f"{name}.jsonl"
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in [header, *lines]))
    return path


def _pi(pi: Any, path: Path, **asks: Any) -> dict[str, Any]:
    """What pi computes for the file, with ``asks`` (see pi_open.mjs --manifest)."""
    (got,) = pi.requests([{"file": str(path), **asks}])
    assert got["error"] is None, got["error"]
    return got


def test_names_are_trimmed_as_javascript_trims_them(pi: Any, tmp_path: Path) -> None:
    """JS's trim() removes U+FEFF and keeps U+001C–U+001F and U+0085; Python's strip() does the opposite."""
    names = {"\ufeffbom\ufeff": "bom", "\x1cfs\x1f": "\x1cfs\x1f", "\x85nl\x85": "\x85nl\x85", "\u3000ja\u3000": "ja"}
    for number, (raw, shown) in enumerate(names.items()):
        path = _file(tmp_path, f"name{number}", [_entry("session_info", "n", None, 1, name=raw)])
        assert SessionFile(path, fsync=False).index.name == read_info(path).name == shown
        assert _pi(pi, path, listing=True)["name"] == shown
        assert _pi(pi, path, listing=True)["listing"]["name"] == shown
    assert E.clean_session_name("\ufeff a\r\nb \x1c") == "a b \x1c"


def test_the_first_message_skips_texts_blank_as_javascript_sees_them(pi: Any, tmp_path: Path) -> None:
    """pi's list takes the first non-empty user text; pitree skips a blank one too (docs/format.md §10,
    §11.2), blank meaning nothing but what JS's trim() removes."""
    path = _file(tmp_path, "first", [_user("a", None, 1, "\ufeff "), _user("b", "a", 2, "\x1c")])
    assert read_info(path).first_message == "\x1c"
    assert _pi(pi, path, listing=True)["listing"]["firstMessage"] == "\ufeff "  # the documented difference


def test_the_context_leaves_out_keys_an_entry_lacks(pi: Any, tmp_path: Path) -> None:
    """pi builds its messages and model from the entry's keys; a key the entry lacks is undefined there,
    which is no value (JSON leaves it out), where pitree wrote null."""
    lines = [
        _entry("model_change", "m", None, 1, provider="anthropic"),
        _user("u", "m", 2, "hi"),
        _entry("custom_message", "c", "u", 3, content="note"),
        _entry("branch_summary", "b", "c", 4, summary="tried things"),
        _entry("compaction", "k", "b", 5, firstKeptEntryId="u"),
        _user("v", "k", 6, "again"),
    ]
    path = _file(tmp_path, "undefined", lines)
    context = SessionFile(path, fsync=False).context()
    assert context.model == {"provider": "anthropic"}
    folded, _, custom, summary, _ = context.messages
    assert folded == {"role": "compactionSummary", "timestamp": START_MS + 5000}
    assert custom == {"role": "custom", "content": "note", "timestamp": START_MS + 3000}
    assert summary == {"role": "branchSummary", "summary": "tried things", "timestamp": START_MS + 4000}
    assert _pi(pi, path)["context"] == context.as_json()


def test_an_entry_without_a_timestamp_gives_its_message_no_time(pi: Any, tmp_path: Path) -> None:
    """``new Date(undefined)`` is NaN (null in JSON), ``new Date(null)`` the epoch."""
    missing = _entry("custom_message", "a", None, 1, customType="t", content="x", display=True)
    del missing["timestamp"]
    null = _entry("custom_message", "b", "a", 2, customType="t", content="y", display=True)
    null["timestamp"] = None
    path = _file(tmp_path, "times", [missing, null])
    context = SessionFile(path, fsync=False).context()
    assert [message["timestamp"] for message in context.messages] == [None, 0]
    assert _pi(pi, path)["context"] == context.as_json()


def test_empty_lists_and_objects_are_true_as_in_javascript(pi: Any, tmp_path: Path) -> None:
    """A branch summary's ``[]`` summary and a compaction's ``{}`` system message count in pi (JS truthiness)."""
    lines = [
        _user("u", None, 1, "hi"),
        _entry("branch_summary", "b", "u", 2, fromId="root", summary=[]),
        _entry("compaction", "k", "b", 3, summary="s", firstKeptEntryId="u", tokensBefore=5, systemMessage={}),
    ]
    path = _file(tmp_path, "truthy", lines)
    context = SessionFile(path, fsync=False).context()
    assert [message.get("role") for message in context.messages] == [None, "compactionSummary", "user", "branchSummary"]
    assert _pi(pi, path)["context"] == context.as_json()


def test_an_edit_without_content_leaves_the_content_undefined(pi: Any, tmp_path: Path) -> None:
    """pi replaces the content with ``replacement.content``: undefined for a replacement that is no
    ``{content}``, so the message goes on without a content."""
    assistant = {"role": "assistant", "content": [], "provider": "p", "model": "m", "timestamp": START_MS}
    lines = [
        _user("u", None, 1, "secret"),
        _entry("message", "a", "u", 2, message=assistant),
        _entry("context_edit", "e", "a", 3, targetId="u", replacement="plain text"),
        _entry("context_edit", "f", "e", 4, targetId="a", replacement={}),
    ]
    path = _file(tmp_path, "edits", lines)
    context = SessionFile(path, fsync=False).context()
    assert ["content" in message for message in context.messages] == [False, False]
    assert _pi(pi, path)["context"] == context.as_json()


def test_messages_without_content_do_not_date_the_session(pi: Any, tmp_path: Path) -> None:
    """pi's list dates a session by its user and assistant messages that have a ``content``."""
    late = _user("b", "a", 9, "late")
    del late["message"]["content"]
    lines = [_user("a", None, 1, "early"), late]
    plain = _file(tmp_path, "plain", lines)
    odd = tmp_path / "odd.jsonl"  # a blank line: the listing reads it through the index, line by line
    odd.write_bytes(plain.read_bytes() + b"\n")
    expected = "2026-01-01T00:00:01.000Z"
    assert read_info(plain).modified == read_info(odd).modified == expected
    assert session_info(SessionFile(plain, fsync=False)).modified == expected
    assert _pi(pi, plain, listing=True)["listing"]["modified"] == expected


def test_a_version_1_compaction_names_an_entry_after_it_as_pi_migrates(pi: Any, tmp_path: Path) -> None:
    """pi's migration gives ids in file order and resolves each ``firstKeptEntryIndex`` as it goes: an
    index past the compaction names the entry by the id its line carries (none, usually). An index that
    is no number stays."""
    header = {key: value for key, value in HEADER.items() if key != "version"}
    user = {"role": "user", "content": "hi", "timestamp": START_MS}
    lines = [
        {"type": "message", "timestamp": "2026-01-01T00:00:01.000Z", "message": user},
        {"type": "compaction", "timestamp": "2026-01-01T00:00:02.000Z", "summary": "s", "firstKeptEntryIndex": 3},
        {"type": "message", "timestamp": "2026-01-01T00:00:03.000Z", "message": user},
        {"type": "compaction", "timestamp": "2026-01-01T00:00:04.000Z", "summary": "t", "firstKeptEntryIndex": "1"},
        {"type": "compaction", "timestamp": "2026-01-01T00:00:05.000Z", "summary": "u", "firstKeptEntryIndex": 6},
        {"type": "custom", "id": "own", "parentId": "nowhere", "timestamp": "2026-01-01T00:00:06.000Z"},
    ]
    path = _file(tmp_path, "v1", lines, header)
    session = SessionFile(path, fsync=False)
    mine = session.entries(range(len(session.index)))
    assert "firstKeptEntryId" not in mine[1] and "firstKeptEntryIndex" not in mine[1]
    assert mine[3]["firstKeptEntryIndex"] == "1" and "firstKeptEntryId" not in mine[3]
    assert mine[4]["firstKeptEntryId"] == "own" and mine[5]["id"] != "own"
    theirs = _pi(pi, path, positions=[], entries=True)
    renamed = dict(zip(theirs["entryIds"], session.index.ids))
    for entry in theirs["entries"]:
        entry.update(id=renamed[entry["id"]], parentId=renamed.get(entry["parentId"]))
    assert theirs["entries"] == mine


def test_labels_that_are_no_strings_read_as_javascript_writes_them(pi: Any, tmp_path: Path) -> None:
    """pi keeps a label's value as it is and shows it as ``String(value)``: ``true``, not ``True``."""
    values = [True, 5, 1.5, 1e21, [1, [2, None]], {"a": 1}]
    lines = [_user("u", None, 1, "hi")]
    lines += [_entry("label", f"l{n}", "u", 2 + n, targetId=f"t{n}", label=value) for n, value in enumerate(values)]
    path = _file(tmp_path, "labels", lines)
    labels = {target: text for target, (text, _) in SessionFile(path, fsync=False).index.labels.items()}
    assert labels == {"t0": "true", "t1": "5", "t2": "1.5", "t3": "1e+21", "t4": "1,2,", "t5": "[object Object]"}
    assert read_info(path).labels == tuple(labels.values())
    assert _pi(pi, path, labelTexts=True)["labelTexts"] == labels


def test_a_header_version_is_read_as_pi_s_migration_compares_it(pi: Any, tmp_path: Path) -> None:
    """pi migrates by ``version ?? 1`` compared with ``>=`` and ``<``, which read it as a number: ``"3"``
    and ``3.0`` are version 3, ``"2"`` is 2, ``0`` and ``true`` are 1, one that is no number is 3
    (docs/format.md §2.2). The migrated header's ``version`` takes the old one's place."""
    versions = [("3", 3), (3.0, 3), ("4", 4), ("abc", 3), ([3], 3), ("2", 2), (2.5, 2), (0, 1), (True, 1), ("", 1)]
    hook = {"role": "hookMessage", "customType": "ext", "content": "hi", "display": True, "timestamp": START_MS}
    lines = [_entry("message", "h", None, 1, message=hook), _user("u", "h", 2, "hello")]
    paths = [_file(tmp_path, f"v{n}", lines, {**HEADER, "version": value}) for n, (value, _) in enumerate(versions)]
    for path, (value, version), theirs in zip(paths, versions, pi.requests([_asks(path) for path in paths])):
        session = SessionFile(path, fsync=False)
        assert (session.index.version, read_info(path).version) == (version, version), value
        assert list(theirs["header"].items()) == list(session.header.items()), value
        renamed = dict(zip(theirs["entryIds"], session.index.ids))
        for entry in theirs["entries"]:
            entry.update(id=renamed[entry["id"]], parentId=renamed.get(entry["parentId"]))
        assert theirs["entries"] == session.entries(range(len(session.index))), value


def _asks(path: Path) -> dict[str, Any]:
    return {"file": str(path), "positions": [], "entries": True}


def test_js_to_number_is_javascript_s_number(tmp_path: Path) -> None:
    """``entries.js_to_number`` against node's ``Number()`` (how pi's comparisons read a version)."""
    values = ["3", " 3\n", "\ufeff3\u2028", "\u180e3", "3.", ".5", "-.5e-3", "0x1F", "0b11", "0o7", "-0x3", "0x"]
    values += ["0e5", "00", "007", "1_0", "inf", "Infinity", "-Infinity", "1e999", "", "3 3", "0xFFFFFFFFFFFFFFFFFFFF"]
    values += [None, True, False, 2.5, [3], ["3"], [[3]], [], [None], [1, 2], {}, {"v": 3}]
    script = "console.log(JSON.stringify(JSON.parse(process.argv[1]).map((v) => String(Number(v)))))"
    shown = subprocess.run(["node", "-e", script, json.dumps(values)], capture_output=True, text=True, check=True)
    assert [js_number(E.js_to_number(value)) for value in values] == json.loads(shown.stdout)


def test_pitree_lists_the_sessions_pi_s_list_leaves_out(pi: Any, tmp_path: Path) -> None:
    """pi's list leaves out a session whose scan throws: a user or assistant message whose ``content`` is
    neither a string nor a list or holds a ``null`` block, a name that is no string. pitree lists such a
    readable session, its fields read as for any other (docs/format.md §10, §11.2)."""
    assistant = {"role": "assistant", "content": 5, "provider": "p", "model": "m", "timestamp": START_MS + 3000}
    cases = {
        "null-content": [_user("a", None, 1, None), _user("b", "a", 2, "second")],
        "number-content": [_user("a", None, 1, "first"), _entry("message", "b", "a", 3, message=assistant)],
        "null-block": [_user("a", None, 1, [None, {"type": "text", "text": "kept"}])],
        "number-name": [_user("a", None, 1, "hi"), _entry("session_info", "n", "a", 2, name=5)],
        "name-after": [_entry("session_info", "n", None, 1, name=[]), _entry("session_info", "m", "n", 2, name=" ok ")],
    }
    paths = [_file(tmp_path, name, lines, {**HEADER, "id": name}) for name, lines in cases.items()]
    theirs = pi.requests([{"file": str(path), "listing": True} for path in paths])
    assert [got["listing"] for got in theirs] == [None] * len(paths)
    mine = {path.stem: read_info(path) for path in paths}
    assert [(info.first_message, info.message_count) for info in mine.values()] == [
        ("second", 2),
        ("first", 2),
        ("kept", 1),
        ("hi", 1),
        ("(no messages)", 0),
    ]
    assert (mine["number-name"].name, mine["name-after"].name) == (None, "ok")
    assert theirs[3]["nameError"] and theirs[4]["name"] == "ok"  # pi's own name throws on the latest only
    assert mine["number-content"].modified == "2026-01-01T00:00:03.000Z"
    catalog = Catalog(tmp_path)
    assert sorted(info.path.stem for info in catalog.sessions()) == sorted(cases) and not catalog.problems


def test_a_lone_carriage_return_ends_no_line(pi: Any, tmp_path: Path) -> None:
    """A ``\\r`` between a line's tokens is JSON whitespace: pi's session reads the entry, and so does
    pitree's list, which cuts lines where pitree's reader and pi's session do, at ``\\n`` only; pi's list
    also ends a line there, loses the entry, and in the header the session (docs/format.md §1.6, §11.2)."""
    entry = json.dumps(_user("a", None, 1, "hello")).replace(', "parentId"', ',\r"parentId"')
    path = tmp_path / "cr.jsonl"
    path.write_text(json.dumps(HEADER) + "\n" + entry + "\n")
    header = tmp_path / "cr-header.jsonl"
    header.write_text(
        json.dumps(HEADER).replace(', "id"', ',\r"id"') + "\n" + json.dumps(_user("a", None, 1, "hi")) + "\n"
    )
    in_entry, in_header = pi.requests([{"file": str(path), "listing": True}, {"file": str(header), "listing": True}])
    assert in_entry["entryCount"] == in_header["entryCount"] == 1  # pi's session reads both
    assert (in_entry["listing"]["messageCount"], in_entry["listing"]["firstMessage"]) == (0, "(no messages)")
    assert in_header["listing"] is None
    assert (read_info(path).message_count, read_info(path).first_message) == (1, "hello")
    assert read_info(header).first_message == "hi"


def test_message_times_beyond_javascript_dates_do_not_date_the_session(pi: Any, tmp_path: Path) -> None:
    """pi's list dates a session by its newest message time, and one beyond ±8.64e15 ms makes that
    "Invalid Date"; pitree passes over such a time and dates the session by the others
    (docs/format.md §10, §11.2). The last instant JS holds counts for both."""
    beyond = _user("b", "a", 2, "beyond")
    beyond["message"]["timestamp"] = 1e20
    path = _file(tmp_path, "beyond", [_user("a", None, 1, "hi"), beyond])
    last = _user("a", None, 1, "at the end of time")
    last["message"]["timestamp"] = MAX_MS
    edge = _file(tmp_path, "edge", [last])
    at_beyond, at_edge = pi.requests([{"file": str(path), "listing": True}, {"file": str(edge), "listing": True}])
    assert at_beyond["listing"]["modified"] is None
    assert read_info(path).modified == "2026-01-01T00:00:01.000Z"
    assert at_edge["listing"]["modified"] == read_info(edge).modified == "+275760-09-13T00:00:00.000Z"


def test_text_blocks_whose_text_is_no_string_read_as_pi_lists_them(pi: Any, tmp_path: Path) -> None:
    """pi's list joins a message's text blocks' ``text`` with spaces as JS's ``join`` writes each (a
    number as ``String()`` does, a missing one as nothing, which still takes its place); the context
    keeps the blocks as they are."""
    odd = [5, None, [1, [2, None], "x"], {"k": 1}, 1e21, True, 1.5, 2.0]
    blocks = [{"type": "text", "text": "a"}, {"type": "text"}, *({"type": "text", "text": text} for text in odd)]
    paths = [
        _file(tmp_path, "odd", [_user("a", None, 1, blocks)]),
        _file(tmp_path, "spaced", [_user("a", None, 1, [{"type": "text"}, {"type": "text", "text": "b"}])]),
    ]
    theirs = pi.requests([{"file": str(path), "listing": True} for path in paths])
    assert [read_info(path).first_message for path in paths] == ["a  5  1,2,,x [object Object] 1e+21 true 1.5 2", " b"]
    assert [got["listing"]["firstMessage"] for got in theirs] == [read_info(path).first_message for path in paths]
    assert theirs[0]["context"] == SessionFile(paths[0], fsync=False).context().as_json()


def test_a_leaf_marker_that_reuses_an_entry_s_id_supersedes_it_and_is_no_node(pi: Any, tmp_path: Path) -> None:
    """The last line with an id wins (docs/format.md §8.5), a ``leaf`` marker too: pi then has the
    marker as that node, under the marker's parent; pitree has no node of that id, and what hangs under
    it is a root, reported (§5.3, §11.3)."""
    lines = [
        _user("root", None, 1, "first"),
        _user("taken", "root", 2, "second"),
        _user("after", "taken", 3, "third"),
        _entry("custom", "other", None, 4, customType="x"),
        _entry("leaf", "taken", "other", 5, targetId="root"),
    ]
    path = _file(tmp_path, "marker", lines)
    session = SessionFile(path, fsync=False)
    assert session.index.row("taken") is None  # no node of that id
    assert [session.index.ids[row] for row in session.path_rows("after")] == ["after"]
    assert session.index.skipped() == [
        (3, "duplicate id taken: superseded by line 6"),
        (4, "parent taken is a leaf marker: shown as a root"),
    ]
    (theirs,) = _pi(pi, path, positions=["after"])["positions"]
    assert theirs["branchIds"] == ["other", "taken", "after"]
