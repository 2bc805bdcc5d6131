"""Whatever a file holds, reading it never fails and never changes it (docs/format.md §8).

pi does not validate the shape of lines that parse. pitree reads such files too, so every read path
(tree, context at every node, provider conversion, listing, fork) must survive odd shapes and bytes.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.properties import examples

from sessions_app.sessionfiles import catalog, context, tree
from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles.fork import fork_session
from sessions_app.sessionfiles.store import SessionFile, clear_cache

IDS = st.sampled_from(["a", "b", "c", "d"])
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | IDS
    | st.sampled_from(["", "user", "assistant", "2026-01-01T00:00:01.000Z"])
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(["role", "content", "type", "text", "timestamp", "summary"]), inner, max_size=3
        )
    ),
    max_leaves=6,
)
TYPES = st.sampled_from(
    [
        "message",
        "custom",
        "custom_message",
        "label",
        "session_info",
        "compaction",
        "branch_summary",
        "context_edit",
        "leaf",
        "model_change",
        "thinking_level_change",
        "odd",
    ]
)
KEYS = st.sampled_from(
    [
        "message",
        "targetId",
        "label",
        "name",
        "firstKeptEntryId",
        "summary",
        "replacement",
        "content",
        "display",
        "details",
        "fromId",
        "thinkingLevel",
        "provider",
        "modelId",
        "timestamp",
        "parentId",
        "systemMessage",
    ]
)
MESSAGES = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant", "toolResult", "bashExecution", "custom", "system", "hookMessage"])},
    optional=dict.fromkeys(
        ("content", "timestamp", "provider", "model", "command", "output", "exitCode", "customType"), VALUES
    ),
)
ENTRIES = st.builds(
    lambda kind, entry_id, parent, extra, message: {
        "type": kind,
        "id": entry_id,
        "parentId": parent,
        **extra,
        **({"message": message} if kind == "message" else {}),
    },
    TYPES,
    IDS,
    st.none() | IDS,
    st.dictionaries(KEYS, VALUES, max_size=4),
    MESSAGES | VALUES,
)
RAW_LINES = st.sampled_from(
    [
        b'{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi\xe2\x80\xa8x"}}',
        b'{"type":"message","id":"b","parentId":"a","timestamp":"t","message":{"role":"assistant","content":[{"type":"text","text":"yo"}],"provider":"p","model":"m"}}',
        b'{"type":"label","id":"c","parentId":"b","timestamp":"t","targetId":"a","label":"L"}',
        b'{"type":"leaf","id":"d","parentId":"b","timestamp":"t","targetId":"a"}',
        b'{"type":"custom","id":"e","parentId":"d","timestamp":"t","x":"\xff"}',
        b'{"type":"session","id":"second"}',
        b"[1]",
        b"",
        b"\r",
        b'{"type":"x","id":"f","parentId":"f"}',
    ]
) | st.binary(max_size=12)


def read_all_ways(path: Path) -> None:
    before = path.read_bytes()
    clear_cache()
    session = SessionFile(path, fsync=False)
    index = session.index
    tree.tree(index)
    session.context()
    session.index.skipped()
    for row in range(len(index)):
        session.raw_line(row)
        if index.is_node(row):
            context.convert_to_llm(session.context(index.ids[row]).messages)
    catalog.info_fields(catalog.session_info(session))
    assert path.read_bytes() == before
    if not index.read_only:
        reread = SessionFile(path)
        assert reread.leaf_id == session.leaf_id
        assert reread.index.skipped() == session.index.skipped()
    forked = fork_session(session, fsync=False)
    copy = SessionFile(forked.path)
    assert copy.index.skipped() == []
    assert copy.context().as_json() == session.context().as_json()
    forked.path.unlink()


@settings(max_examples=examples(150), deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(ENTRIES, max_size=8), st.sampled_from([1, 2, 3]))
def test_odd_shapes_never_break_reading(entries: list[dict[str, Any]], version: int) -> None:
    folder = Path(tempfile.mkdtemp(prefix="pitree-odd-"))
    try:
        path = folder / "odd.jsonl"
        header = {
            "type": "session",
            "version": version,
            "id": "s",
            "timestamp": "2026-01-01T00:00:00.000Z",
            "cwd": "/x",
        }
        path.write_bytes(b"".join(json.dumps(o).encode() + b"\n" for o in [header, *entries]))
        read_all_ways(path)
    finally:
        shutil.rmtree(folder)


@settings(max_examples=examples(150), deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(RAW_LINES, max_size=10), st.booleans(), st.sampled_from([b"\n", b"\r\n"]))
def test_odd_bytes_never_break_reading_or_appending(lines: list[bytes], terminated: bool, newline: bytes) -> None:
    folder = Path(tempfile.mkdtemp(prefix="pitree-bytes-"))
    try:
        path = folder / "bytes.jsonl"
        header = b'{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/x"}'
        data = header + b"\n" + newline.join(lines) + (newline if terminated else b"")
        path.write_bytes(data)
        read_all_ways(path)

        # An append after whatever is there: the old bytes stay a prefix and the new entry reads back whole.
        session = SessionFile(path, fsync=False)
        added = session.append(E.user_message("appended"), parent=None)
        after = path.read_bytes()
        assert after.startswith(data) and after.endswith(E.dump_line(added))
        reread = SessionFile(path)
        assert reread.leaf_id == added["id"]
        assert reread.entry(added["id"]) == added
    finally:
        shutil.rmtree(folder)
