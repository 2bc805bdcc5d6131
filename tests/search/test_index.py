"""The index the files feed: every content kind and branch found, catch-up reading only appended bytes,
rewritten and vanished files, bad files, Unicode, snippets, and the index as a disposable cache."""

from __future__ import annotations

import os
import shutil
import sqlite3
import threading
from pathlib import Path

import pytest

from sessions_app.search import index as module
from sessions_app.search.index import PAGE_SIZE, SCHEMA_VERSION, SearchIndex, SearchUnavailable
from sessions_app.search.results import Results, search
from sessions_app.search.snippets import SNIPPET_PIECE_CHARS, SNIPPET_TOKENS, Segment
from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles.catalog import Catalog
from sessions_app.sessionfiles.store import SessionFile


def test_every_content_kind_is_found(folder, find, run) -> None:
    tool_call = {"type": "toolCall", "id": "t1", "name": "grepper", "arguments": {"pattern": "needleinargs"}}
    folder.write(
        "kinds",
        {"id": "user1", **folder.user("alphauser")},
        {"id": "user2", **folder.user([folder.text("blockuser")])},
        {"id": "asst", **folder.assistant(folder.text("alphaassistant"))},
        {"id": "think", **folder.assistant({"type": "thinking", "thinking": "alphathought"})},
        {"id": "call", **folder.assistant(tool_call)},
        {
            "id": "result",
            "type": "message",
            "message": {
                "role": "toolResult",
                "toolCallId": "t1",
                "toolName": "grepper",
                "content": [folder.text("toolout")],
            },
        },
        {
            "id": "shell",
            "type": "message",
            "message": {"role": "bashExecution", "command": "makecmd", "output": "shellout"},
        },
        {
            "id": "compact",
            "type": "compaction",
            "summary": "compactsum",
            "firstKeptEntryId": "user1",
            "tokensBefore": 1,
        },
        {"id": "branch", "type": "branch_summary", "fromId": "user1", "summary": "branchsum"},
        {"id": "ext", "type": "custom_message", "customType": "x", "content": "extmessage", "display": True},
        {"id": "custom", "type": "message", "message": {"role": "custom", "customType": "x", "content": "customrole"}},
    )
    expected = {
        "alphauser": ("user1", "user"),
        "blockuser": ("user2", "user"),
        "alphaassistant": ("asst", "assistant"),
        "alphathought": ("think", "assistant"),
        "grepper": ("call", "assistant"),  # the tool's name (the result, by id, holds only its output)
        "needleinargs": ("call", "assistant"),
        "toolout": ("result", "toolResult"),
        "makecmd": ("shell", "bashExecution"),
        "shellout": ("shell", "bashExecution"),
        "compactsum": ("compact", "compaction"),
        "branchsum": ("branch", "branch_summary"),
        "extmessage": ("ext", "custom_message"),
        "customrole": ("custom", "custom"),
    }
    for word, (entry_id, kind) in expected.items():
        hits = run(word).hits
        assert [(hit.entry_id, hit.kind) for hit in hits] == [(entry_id, kind)], word


def test_every_branch_is_searched_not_only_the_active_one(folder, find) -> None:
    folder.write(
        "tree",
        {"id": "root", **folder.user("start here")},
        {"id": "left", "parentId": "root", **folder.assistant(folder.text("abandoned idea"))},
        {"id": "right", "parentId": "root", **folder.assistant(folder.text("chosen idea"))},
        {"type": "leaf", "id": "mark", "parentId": "right", "targetId": "right"},
    )
    assert sorted(find("idea")) == [("tree", "left"), ("tree", "right")]
    assert find("abandoned") == [("tree", "left")]


def test_hits_carry_the_session_title_time_and_a_highlighted_snippet(folder, run, root) -> None:
    folder.write(
        "named",
        {"id": "q", "timestamp": "2026-03-02T09:15:09.000Z", **folder.user("Where is the parser defined?")},
        {"type": "session_info", "id": "n", "name": "Parser hunt"},
    )
    (hit,) = run("parser").hits
    assert (hit.session_id, hit.title, hit.kind, hit.timestamp, hit.when) == (
        "named",
        "Parser hunt",
        "user",
        "2026-03-02T09:15:09.000Z",
        "2026-03-02 09:15",
    )
    assert hit.path == str(folder.path("named"))
    assert hit.snippet == (Segment("Where is the ", False), Segment("parser", True), Segment(" defined?", False))


def test_snippets_keep_hostile_text_as_text(folder, run) -> None:
    folder.write("evil", folder.user('<script>alert("x")</script> \x02fake\x03 mark \x1f sep'))
    (hit,) = run("alert").hits
    pieces = [(piece.text, piece.match) for piece in hit.snippet]
    assert ("alert", True) in pieces
    joined = "".join(text for text, _ in pieces)
    assert '<script>alert("x")</script>' in joined  # unescaped here: the template escapes each piece
    assert "\x02" not in joined and "\x03" not in joined and "\x1f" not in joined
    assert [text for text, match in pieces if match] == ["alert"]  # the file's control characters mark nothing


def test_a_snippet_shows_the_text_near_its_matches_however_long_the_runs_between(folder, run) -> None:
    """FTS5 counts tokens: a run of punctuation between two words is one gap, however long. A snippet
    once carried such a run whole: 800 kB a result."""
    folder.write("long", folder.user("<" * 60_000 + " needle " + "!" * 60_000 + " haystack " + "?" * 60_000))
    (hit,) = run("needle").hits
    assert sum(len(piece.text) for piece in hit.snippet) < 3 * SNIPPET_PIECE_CHARS
    assert [piece.text for piece in hit.snippet if piece.match] == ["needle"]
    first, *_, last = hit.snippet
    assert first.text.startswith("…") and first.text.endswith("< ")  # the end of what comes before
    assert last.text.endswith("…")
    (both,) = run("needle haystack").hits
    assert [piece.text for piece in both.snippet if piece.match] == ["needle", "haystack"]
    middle = both.snippet[2].text  # between the two: both its ends, next to each
    assert middle.startswith(" !!!") and middle.endswith("!!! ") and "…" in middle
    assert sum(len(piece.text) for piece in both.snippet) < 4 * SNIPPET_PIECE_CHARS


def test_a_text_holding_a_word_a_hundred_thousand_times_is_searched_at_once(folder, run) -> None:
    """FTS5's own snippet() takes time growing with the square of the matches in one text: an entry of
    the longest indexed length holding "a" 100,000 times kept a core busy for minutes, and three such
    searches pinned both cores. The snippet is cut in time linear in the text (``bench/probe_search.py``
    measures it in milliseconds); the 60 s allowed here are a bound far beyond it, not a target."""
    folder.write("dense", {"id": "many", **folder.user("a " * 100_000)}, {"id": "few", **folder.user("a b c")})
    found: list[Results] = []
    searching = threading.Thread(target=lambda: found.append(run("a")), daemon=True)
    searching.start()
    searching.join(timeout=60)
    assert found, "the search did not end"
    (few, many) = sorted(found[0].hits, key=lambda hit: hit.entry_id)
    assert [piece.text for piece in few.snippet if piece.match] == ["a"]
    assert [piece.text for piece in many.snippet if piece.match] == ["a"] * SNIPPET_TOKENS
    assert many.snippet[-1] == Segment("…", False)


def test_catch_up_reads_only_the_appended_bytes(folder, index, catalog, find) -> None:
    path = folder.write("grow", folder.user("first words"))
    first = index.catch_up(catalog.sessions())
    assert first.files_read == 1 and first.bytes_read == path.stat().st_size
    assert find("second") == []

    appended = folder.append(path, {"id": "later", **folder.user("second words")})
    report = index.catch_up(catalog.sessions())
    assert (report.files_read, report.bytes_read, report.entries) == (1, len(appended), 1)
    assert find("second") == [("grow", "later")]
    assert find("first") == [("grow", "e0000001")]  # what was indexed before is still there, once

    assert index.catch_up(catalog.sessions()).files_read == 0  # nothing changed: nothing read


def test_files_listed_unchanged_are_not_looked_at_again(folder, index, catalog, find, monkeypatch) -> None:
    """The listing already looked at every file: one it hands out unchanged (the same SessionInfo
    object) is not stat'ed again by the catch-up; one that changed is, and its new entry is found."""
    paths = [folder.write(f"s{n}", folder.user(f"words {n}")) for n in range(5)]
    index.catch_up(catalog.sessions())
    looked: list[str] = []
    real_stat = os.stat

    def stat(path, *args, **kwargs):
        if str(path).endswith(".jsonl"):
            looked.append(str(path))
        return real_stat(path, *args, **kwargs)

    monkeypatch.setattr(module.os, "stat", stat)
    listing = catalog.sessions()
    looked.clear()
    assert index.catch_up(listing).files_read == 0 and looked == []
    folder.append(paths[2], {"id": "later", **folder.user("fresh words")})
    listing = catalog.sessions()
    looked.clear()
    report = index.catch_up(listing)
    assert set(looked) == {str(paths[2])} and report.files_read == 1
    assert find("fresh") == [("s2", "later")]
    # Another connection wrote to the index (another process caught up): everything is looked at again.
    other = SearchIndex(index.path)
    folder.append(paths[0], {"id": "elsewhere", **folder.user("other words")})
    other.catch_up(Catalog(catalog.root).sessions())
    other.close()
    listing = catalog.sessions()
    looked.clear()
    assert index.catch_up(listing).files_read == 0  # the other connection read it already
    assert {str(path) for path in paths} <= set(looked)


def test_a_query_matching_very_many_entries_ranks_the_newest(folder, run, monkeypatch) -> None:
    monkeypatch.setattr(module, "CANDIDATES", 25)
    old = [{"id": f"old{i:02d}", **folder.user("needle needle needle needle")} for i in range(10)]
    folder.write("old", *old)
    run("needle")  # indexed first: lower row ids
    new = [{"id": f"new{i:02d}", **folder.user(f"a needle in a longer haystack of words {i}")} for i in range(30)]
    folder.write("new", *new)
    first, second = run("needle"), run("needle", page=2)
    # 40 matches, more than 25: the 25 newest come first, by rank (the older, denser ones after them)...
    assert {hit.entry_id for hit in first.hits} <= {entry["id"] for entry in new}
    assert len(first.hits) == PAGE_SIZE and first.has_next
    # ...and the next page goes on with the rest of them, then the older ones: each match once.
    pages = [hit.entry_id for hit in [*first.hits, *second.hits]]
    assert sorted(pages) == sorted(entry["id"] for entry in [*old, *new]) and not second.has_next
    assert [name[:3] for name in pages[25:35]] == ["old"] * 10  # the rest, by rank: the denser first
    # Below the cap, every match is ranked: the densest first.
    assert run("needle", session="old").hits[0].entry_id.startswith("old")


def test_appends_by_the_store_are_found_before_the_next_query(folder, find) -> None:
    path = folder.write("store", folder.user("hello"))
    assert find("hello") == [("store", "e0000001")]
    written = SessionFile.open(path, fsync=False).append(E.user_message("appended through the store"))
    assert find("appended") == [("store", written["id"])]


def test_a_torn_last_line_is_not_indexed_until_it_is_whole(folder, index, catalog, find) -> None:
    path = folder.write("torn", folder.user("complete line"))
    whole = folder.complete({"id": "late", **folder.user("finished sentence")})
    data = folder.line(whole)
    with path.open("ab") as handle:
        handle.write(data[:25])  # a writer is half-way through the line
    assert find("finished") == []
    assert find("complete") == [("torn", "e0000001")]
    with path.open("ab") as handle:
        handle.write(data[25:])
    assert find("finished") == [("torn", "late")]


def test_a_whole_last_line_without_its_newline_counts_and_is_indexed_once(folder, index, catalog, find) -> None:
    path = folder.write("tail")
    with path.open("ab") as handle:
        handle.write(folder.line(folder.complete({"id": "t1", **folder.user("unterminated but whole")}))[:-1])
    assert find("unterminated") == [("tail", "t1")]
    with path.open("ab") as handle:
        handle.write(b"\n" + folder.line(folder.complete({"id": "t2", **folder.user("next unterminated")})))
    assert sorted(find("unterminated")) == [("tail", "t1"), ("tail", "t2")]


def test_a_file_that_shrank_is_read_again(folder, find) -> None:
    path = folder.write("shrink", folder.user("kept words"), folder.user("dropped words"))
    assert len(find("words")) == 2
    folder.write("shrink", {"id": "only", **folder.user("kept words")})  # rewritten shorter, same inode
    assert find("words") == [("shrink", "only")]
    assert find("dropped") == []
    assert path.exists()


def test_a_replaced_file_is_read_again(folder, root, find) -> None:
    path = folder.write("swap", folder.user("old content here"))
    assert find("old") == [("swap", "e0000001")]
    replacement = root / "new.tmp"
    shutil.copy(path, replacement)
    text = replacement.read_bytes().replace(b"old content", b"new content")
    replacement.write_bytes(text)
    os.replace(replacement, path)  # another inode, the same size
    assert find("old") == []
    assert find("new") == [("swap", "e0000001")]


def test_a_file_rewritten_in_place_before_the_offset_is_read_again(folder, find) -> None:
    path = folder.write("edit", folder.user("original words"))
    assert find("original") == [("edit", "e0000001")]
    data = path.read_bytes().replace(b"original", b"replaced")
    with path.open("r+b") as handle:  # same inode, grows: only the prefix check notices
        handle.write(data + folder.line(folder.complete(folder.user("more"))))
    assert find("original") == []
    assert find("replaced") == [("edit", "e0000001")]


def test_deleted_files_are_dropped(folder, index, catalog, find) -> None:
    keep = folder.write("keep", folder.user("shared word"))
    gone = folder.write("gone", folder.user("shared word"))
    assert len(find("shared")) == 2
    gone.unlink()
    report = index.catch_up(catalog.sessions())
    assert report.files_dropped == 1
    assert find("shared") == [("keep", "e0000001")]
    assert keep.exists()


def test_files_that_are_not_sessions_are_skipped_and_left_alone(folder, root, find) -> None:
    folder.write("good", folder.user("findable text"))
    junk = root / "--home-alice-project--" / "2026-01-01T00-00-00-000Z_junk.jsonl"
    junk.write_bytes(b'{"type":"message","id":"x","message":{"role":"user","content":"findable text"}}\n')
    empty = root / "--home-alice-project--" / "empty.jsonl"
    empty.write_bytes(b"")
    assert find("findable") == [("good", "e0000001")]
    assert junk.read_bytes().startswith(b'{"type":"message"') and empty.read_bytes() == b""


def test_bad_lines_inside_a_session_are_skipped(folder, find) -> None:
    path = folder.write("bad", folder.user("before garbage"))
    with path.open("ab") as handle:
        handle.write(b'not json at all\n\xff\xfe garbage bytes\n[1, 2]\n{"type": "message"}\n')
    folder.append(path, {"id": "after", **folder.user("after garbage")})
    assert sorted(find("garbage")) == [("bad", "after"), ("bad", "e0000001")]


def test_a_duplicate_id_keeps_the_last_entry(folder, find) -> None:
    folder.write("dup", {"id": "same", **folder.user("earlier text")}, {"id": "same", **folder.user("later text")})
    assert find("text") == [("dup", "same")]
    assert find("earlier") == []


def test_legacy_v1_files_are_found_with_the_ids_the_reader_gives_them(root, samples_dir, find) -> None:
    target = root / "--legacy--" / "2025-11-20T08-00-00-000Z_5f0c2a9e-1b7d-4c1e-9a43-2d8f6e1b0c77.jsonl"
    target.parent.mkdir()
    shutil.copy(samples_dir / "05-legacy-v1.input.jsonl", target)
    session = SessionFile(target)
    hits = find("the")
    assert hits, "the v1 sample holds words"
    for session_id, entry_id in hits:
        assert session_id == session.session_id
        assert session.index.row(entry_id) is not None  # an id the session page can open


@pytest.mark.parametrize(
    ("stored", "query"),
    [
        ("我喜欢编程语言", "编程"),
        ("我喜欢编程语言", "程"),
        ("東京都に住んでいます", "東京"),
        ("コーヒーを飲む", "コーヒー"),
        ("학교에서 공부해요", "학교"),
        ("กินข้าวหรือยัง", "ข้าว"),
        ("Un café crème", "cafe"),
        ("Un cafe creme", "CAFÉ"),
        ("naïve résumé", "resume"),
        ("ｐｙｔｈｏｎ scripts", "python"),
        ("python scripts", "ｐｙｔｈｏｎ"),
        ("party🎉time", "🎉"),
        ("party🎉time", "party"),
        ("party🎉time", "time"),
        ("thumbs 👍🏽 up", "👍"),
        ("Ελληνικά κείμενα", "ελληνικά"),  # case folds; Greek accents do not (the tokenizer folds Latin ones)
        ("Русский текст", "русский"),
    ],
)
def test_unicode_text_is_found(folder, find, stored: str, query: str) -> None:
    folder.write("uni", {"id": "hit", **folder.user(stored)}, {"id": "miss", **folder.user("unrelated words")})
    assert find(query) == [("uni", "hit")]


def test_cjk_words_match_as_a_whole_not_as_scattered_characters(folder, find) -> None:
    folder.write("cjk", {"id": "together", **folder.user("编程")}, {"id": "apart", **folder.user("编辑的过程")})
    assert find("编程") == [("cjk", "together")]


def test_cjk_snippets_read_as_written(folder, run) -> None:
    folder.write("cjk", folder.user("我喜欢编程语言"))
    (hit,) = run("编程").hits
    assert hit.snippet == (Segment("我喜欢", False), Segment("编程", True), Segment("语言", False))


def test_results_are_ranked_and_paged(folder, run) -> None:
    entries = [
        {"id": f"weak{i:02d}", **folder.user(f"needle in a long haystack of words number {i} " * 3)} for i in range(30)
    ]
    entries.append({"id": "strong", **folder.user("needle needle needle")})
    folder.write("many", *entries)
    first = run("needle")
    assert first.hits[0].entry_id == "strong"  # bm25: the densest match first
    assert len(first.hits) == PAGE_SIZE and first.has_next
    second = run("needle", page=2)
    assert len(second.hits) == 31 - PAGE_SIZE and not second.has_next
    assert not {hit.entry_id for hit in first.hits} & {hit.entry_id for hit in second.hits}
    assert run("needle", page=3).hits == []


def test_a_session_filter_keeps_one_session(folder, find) -> None:
    folder.write("one", folder.user("common word"))
    folder.write("two", folder.user("common word"))
    assert sorted(find("common")) == [("one", "e0000001"), ("two", "e0000002")]
    assert find("common", session="two") == [("two", "e0000002")]
    assert find("common", session="nobody") == []


def test_a_query_with_nothing_to_search_reads_no_file(folder, run, index) -> None:
    folder.write("s", folder.user("text"))
    results = run('" * "')
    assert results.hits == [] and not results.searched
    assert not index.path.exists()


def test_deleting_the_index_loses_nothing(folder, index, find) -> None:
    folder.write("s", folder.user("durable words"))
    assert find("durable") == [("s", "e0000001")]
    index.close()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{index.path}{suffix}").unlink(missing_ok=True)
    assert find("durable") == [("s", "e0000001")]


def test_an_index_of_another_schema_is_rebuilt(folder, index, find) -> None:
    folder.write("s", folder.user("rebuilt words"))
    assert find("rebuilt") == [("s", "e0000001")]
    index.close()
    with sqlite3.connect(index.path) as db:
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
        db.execute("DELETE FROM entries")
    assert find("rebuilt") == [("s", "e0000001")]


def test_an_unusable_index_file_is_a_clear_error_and_left_alone(folder, root, tmp_path) -> None:
    folder.write("s", folder.user("words"))
    bogus = tmp_path / "not-a-db.sqlite3"
    bogus.write_bytes(b"this is not a database file, and it is kept as it is" * 100)
    before = bogus.read_bytes()
    with pytest.raises(SearchUnavailable, match="not a database"):
        search(SearchIndex(bogus), Catalog(root), "words")
    assert bogus.read_bytes() == before


def test_an_index_in_a_folder_that_cannot_be_created_is_a_clear_error(folder, root, tmp_path) -> None:
    folder.write("s", folder.user("words"))
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(SearchUnavailable, match="cannot be used"):
        search(SearchIndex(blocker / "index.sqlite3"), Catalog(root), "words")


def test_a_file_name_that_is_not_utf8_is_indexed_and_found(folder, root, index, catalog, find) -> None:
    folder.write("plain", folder.user("hello from a plain name"))
    odd = Path(os.fsdecode(os.fsencode(folder.path("plain").parent) + b"/2026_odd\xff.jsonl"))
    odd.write_bytes(folder.path("plain").read_bytes().replace(b'"plain"', b'"odd"', 1))
    found = sorted(find("hello"))
    assert [session for session, _ in found] == ["odd", "plain"]
    (hit,) = [hit for hit in search(index, catalog, "hello").hits if hit.session_id == "odd"]
    assert hit.path == str(odd)  # the name comes back as it is on disk
    odd.unlink()
    assert [session for session, _ in find("hello")] == ["plain"]


def test_one_file_that_fails_is_skipped_and_reported_and_the_others_are_found(
    folder, index, catalog, failing_extraction
) -> None:
    folder.write("good", folder.user("needle in the good file"))
    bad = folder.write("bad", folder.user("needle in the file that fails"))
    results = search(index, catalog, "needle")
    assert [hit.session_id for hit in results.hits] == ["good"]
    assert results.catch_up.failed == {str(bad): "could not be indexed (ValueError: an extraction bug)"}
    again = search(index, catalog, "needle")
    # not read again while unchanged
    assert again.catch_up.failed == results.catch_up.failed and len(failing_extraction.tries) == 1
    failing_extraction.mend()
    folder.append(bad, folder.user("the file changed"))
    assert sorted(hit.session_id for hit in search(index, catalog, "needle").hits) == ["bad", "good"]


def test_lines_are_read_with_the_catalogs_line_limit(folder, root, index) -> None:
    folder.write("s", folder.user("short needle"), {"id": "long", **folder.user("long needle " + "x" * 5000)})
    catalog = Catalog(root, max_line_bytes=4096)
    assert [hit.entry_id for hit in search(index, catalog, "needle").hits] == ["e0000001"]  # as the session shows
