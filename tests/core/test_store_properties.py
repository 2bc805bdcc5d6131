"""Random operation sequences against the store: the file only grows, and what a writer holds in
memory is what any later reader gets from the file (docs/format.md §5, §9.1)."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule
from support.properties import examples

from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles import tree
from sessions_app.sessionfiles.fork import create_session, fork_session
from sessions_app.sessionfiles.store import AT_LEAF, SessionFile, clear_cache

# Text that stresses serialisation and line splitting: JSON escapes, CR/LF, U+2028/U+0085, non-BMP.
TEXT = st.text(
    alphabet=st.sampled_from([*list("ab "), "\n", "\r", '"', "\\", "\u2028", "\x85", "é", "😀", "\x00", "\t"]),
    max_size=12,
)


def line_objects(data: bytes) -> list[dict[str, Any]]:
    assert data.endswith(b"\n")
    objects = []
    for raw in data.split(b"\n")[:-1]:
        obj = json.loads(raw)
        assert isinstance(obj, dict), raw
        objects.append(obj)
    return objects


class SessionMachine(RuleBasedStateMachine):
    """A model of what each operation must do to the leaf, the labels and the name, checked against
    the writer after every step, and the writer checked against fresh readers of the file."""

    def __init__(self) -> None:
        super().__init__()
        clear_cache()
        self.dir = Path(tempfile.mkdtemp(prefix="pitree-props-"))
        self.session = create_session(self.dir, "/work/proj", fsync=False)
        self.seen: dict[Path, bytes] = {self.session.path: self.session.path.read_bytes()}
        self.leaf: str | None = None
        self.labels: dict[str, str] = {}
        self.name: str | None = None

    def teardown(self) -> None:
        clear_cache()
        shutil.rmtree(self.dir, ignore_errors=True)

    # ------------------------------------------------------------------ helpers

    def nodes(self) -> list[str]:
        index = self.session.index
        return [index.ids[row] for row in range(len(index)) if index.is_node(row)]

    def pick_node(self, data: st.DataObject, *, allow_none: bool) -> str | None:
        nodes = self.nodes()
        choices: list[str | None] = [*nodes, None] if allow_none else nodes
        return data.draw(st.sampled_from(choices)) if choices else None

    # ------------------------------------------------------------------ operations

    @rule(
        data=st.data(),
        role=st.sampled_from(["user", "assistant"]),
        where=st.sampled_from(["leaf", "entry", "root"]),
        text=TEXT,
    )
    def append(self, data: st.DataObject, role: str, where: str, text: str) -> None:
        if role == "user":
            draft = E.user_message(text)
        else:
            draft = E.assistant_message(
                text, provider="prov", model=data.draw(st.sampled_from(["m1", "m2"])), api="test"
            )
        if where == "leaf" or not self.nodes():
            parent: Any = AT_LEAF
            expected_parent = self.leaf
        elif where == "root":
            parent = expected_parent = None
        else:
            parent = expected_parent = self.pick_node(data, allow_none=False)
        written = self.session.append(draft, parent)
        assert written["parentId"] == expected_parent
        assert written["type"] == "message" and written["message"]["role"] == role
        self.leaf = written["id"]

    @rule(data=st.data())
    def navigate(self, data: st.DataObject) -> None:
        target = self.pick_node(data, allow_none=True)
        before = self.session.path.read_bytes()
        marker = self.session.navigate(target)
        if target == self.leaf:
            assert marker is None
            assert self.session.path.read_bytes() == before
        else:
            assert marker is not None
            assert (marker["type"], marker["parentId"], marker["targetId"]) == ("leaf", self.leaf, target)
        self.leaf = target

    @precondition(lambda self: bool(self.nodes()))
    @rule(data=st.data(), text=st.one_of(st.none(), st.just(""), TEXT.filter(bool)))
    def label(self, data: st.DataObject, text: str | None) -> None:
        target = self.pick_node(data, allow_none=False)
        assert target is not None
        written = self.session.set_label(target, text)
        assert written["parentId"] == self.leaf and written["targetId"] == target
        assert ("label" in written) == bool(text)
        if text:
            self.labels[target] = text
        else:
            self.labels.pop(target, None)
        self.leaf = written["id"]

    @rule(text=TEXT)
    def rename(self, text: str) -> None:
        written = self.session.rename(text)
        assert "\n" not in written["name"] and "\r" not in written["name"]
        self.name = E.clean_session_name(text) or None
        self.leaf = written["id"]

    @precondition(lambda self: self.leaf is not None)
    @rule(data=st.data())
    def compact(self, data: st.DataObject) -> None:
        branch = [self.session.index.ids[row] for row in self.session.path_rows()]
        kept = data.draw(st.sampled_from(branch))
        written = self.session.compact("summary of the past", kept, 1234)
        assert written["parentId"] == self.leaf and written["firstKeptEntryId"] == kept
        context = self.session.context()
        assert context.messages[0]["role"] == "compactionSummary"
        assert context.entry_ids[0] == written["id"]
        assert context.entry_ids[1:2] == [kept]
        self.leaf = written["id"]

    @rule(data=st.data(), text=TEXT.filter(bool))
    def branch_summary(self, data: st.DataObject, text: str) -> None:
        target = self.pick_node(data, allow_none=True)
        written = self.session.branch_summary(target, text)
        assert written["parentId"] == target
        assert written["fromId"] == (self.leaf if self.leaf is not None else "root")
        self.leaf = written["id"]

    @rule()
    def writer_reopens(self) -> None:
        """Another writer (another tab, another process) takes over the same file."""
        self.session = SessionFile(self.session.path, fsync=False)
        assert self.session.leaf_id == self.leaf

    @rule(data=st.data())
    def fork(self, data: st.DataObject) -> None:
        at = self.pick_node(data, allow_none=True) if data.draw(st.booleans()) else self.leaf
        source = self.session
        source_path = source.path_entries(at)
        forked = fork_session(source, at, fsync=False)

        assert forked.parent_session == str(source.path.absolute())
        assert forked.header["version"] == 3 and forked.cwd == source.cwd
        copied = forked.entries(range(len(forked.index)))
        kept = [e for e in source_path if e["type"] != "label"]
        # The path, labels dropped, re-chained; ids, timestamps and content unchanged.
        previous = None
        for original, copy in zip(kept, copied):
            expected = {**original, "parentId": previous}
            if original["type"] == "compaction":
                assert copy["firstKeptEntryId"] in {e["id"] for e in kept}
                expected["firstKeptEntryId"] = copy["firstKeptEntryId"]
            assert copy == expected
            previous = original["id"]
        # Then the live labels on that path, with their original timestamps, chained after it.
        relabels = copied[len(kept) :]
        on_path = {e["id"] for e in kept}
        assert {r["targetId"]: r["label"] for r in relabels} == {
            t: text for t, text in self.labels.items() if t in on_path
        }
        for relabel in relabels:
            assert relabel["type"] == "label" and relabel["parentId"] == previous
            assert relabel["timestamp"] == source.index.labels[relabel["targetId"]][1]
            previous = relabel["id"]
        assert forked.context().as_json() == source.context(at).as_json()

        # Carry on in the fork, as pi switches to the new file.
        self.session = forked
        self.seen[forked.path] = forked.path.read_bytes()
        self.leaf = forked.leaf_id
        self.labels = {t: text for t, text in self.labels.items() if t in on_path}
        self.name = forked.index.name

    # ------------------------------------------------------------------ invariants

    @invariant()
    def files_only_grow(self) -> None:
        for path, old in self.seen.items():
            new = path.read_bytes()
            assert new.startswith(old)
            self.seen[path] = new

    @invariant()
    def lines_are_whole_json_with_unique_ids(self) -> None:
        objects = line_objects(self.session.path.read_bytes())
        assert objects[0]["type"] == "session"
        entry_ids = [obj["id"] for obj in objects[1:]]
        assert len(entry_ids) == len(set(entry_ids))

    @invariant()
    def writer_matches_the_model(self) -> None:
        index = self.session.index
        assert self.session.leaf_id == self.leaf
        assert {t: text for t, (text, _) in index.labels.items()} == self.labels
        assert index.name == self.name
        assert index.skipped() == []

    @invariant()
    def readers_see_what_the_writer_holds(self) -> None:
        writer = self.session
        path_ids = [writer.index.ids[row] for row in writer.path_rows()]
        context = writer.context().as_json()
        shape = tree.tree(writer.index)
        clear_cache()
        for reader in (SessionFile.open(writer.path), SessionFile(writer.path)):
            assert reader is not writer
            assert reader.leaf_id == writer.leaf_id
            assert [reader.index.ids[row] for row in reader.path_rows()] == path_ids
            assert reader.context().as_json() == context
            assert tree.tree(reader.index) == shape


SessionMachine.TestCase.settings = settings(
    max_examples=examples(40),
    stateful_step_count=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestSessionOperations = SessionMachine.TestCase
