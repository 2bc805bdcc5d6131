"""A randomized differential test: pitree reads random session files as pi 1.6.0's own code reads them.

``support.session_fuzz`` writes random but plausible files (branches, every entry type pi writes, and
in some files the odd things real files hold). pi's ``SessionManager`` opens each one (one node run
per batch, ``pi_open.mjs --manifest``) and reports its leaf, paths, contexts, labels, name, tree and
list entry; pitree must compute the same, at the file's leaf and at other positions a user can move
to. Where pitree differs from pi on purpose (docs/format.md §11), the comparison allows for exactly
that difference and says which section documents it.

The default run is small. A long one: ``PITREE_FUZZ_FILES=5000`` (and ``PITREE_FUZZ_SEED`` for other
files; ``PITREE_FUZZ_KEEP=DIR`` keeps the files that disagree). A file is named by its seed and number:
``session_fuzz.generate(random.Random(f"{seed}:{number}"))`` builds it again.
"""

from __future__ import annotations

import json
import math
import os
import random
import re
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from support.session_fuzz import ODDITIES, FuzzFile, generate

from sessions_app.sessionfiles import tree
from sessions_app.sessionfiles.context import SessionContext
from sessions_app.sessionfiles.entries import js_string, js_trim, js_truthy
from sessions_app.sessionfiles.errors import NotASession
from sessions_app.sessionfiles.index import SessionIndex
from sessions_app.sessionfiles.instants import MAX_MS, format_iso, iso_to_ms
from sessions_app.sessionfiles.listing import FIRST_MESSAGE_CHARS, NO_MESSAGES, read_info
from sessions_app.sessionfiles.store import SessionFile, clear_cache

FILES = int(os.environ.get("PITREE_FUZZ_FILES", "240"))
SEED = os.environ.get("PITREE_FUZZ_SEED", "20261202")
POSITIONS = int(os.environ.get("PITREE_FUZZ_POSITIONS", "8"))
KEEP = os.environ.get("PITREE_FUZZ_KEEP")
SHARDS = 2
BATCH = 150
Problem = tuple[str, str]  # (what disagrees, details)
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _write(folder: Path, number: int) -> tuple[FuzzFile, Path, Path]:
    """Generate file ``number`` into ``folder``: the file pitree reads and the one pi is given (and,
    when pi's list must read other bytes, docs/format.md §11.2, those under ``pi-list/``)."""
    fuzz = generate(random.Random(f"{SEED}:{number}"), f"{number}", folder / "pitree" / f"{number}")
    mine = folder / f"{number}.jsonl"
    theirs = folder / "pi" / f"{number}.jsonl"
    mine.write_bytes(fuzz.data())
    theirs.write_bytes(fuzz.reference())
    paths = [mine, theirs]
    if fuzz.listing_reference() != fuzz.reference():
        paths.append(_listed(theirs))
        paths[-1].write_bytes(fuzz.listing_reference())
    for path in paths:
        os.utime(path, ns=(fuzz.mtime_ns, fuzz.mtime_ns))
    return fuzz, mine, theirs


def _listed(theirs: Path) -> Path:
    """Where the bytes pi's list reads of ``theirs`` go when they differ from it."""
    return theirs.parent.parent / "pi-list" / theirs.name


def _positions(index: SessionIndex, rng: random.Random, version: int) -> list[Any]:
    """Where to move the leaf: the file's leaf, "before the first entry", and a sample of nodes (all
    of them in a short file). A version 1 file names them by entry position: pi draws its own ids."""
    rows = [row for row in range(len(index)) if index.is_node(row)]
    chosen = rows if len(rows) <= POSITIONS else rng.sample(rows, POSITIONS)
    if index.leaf_row is not None and index.leaf_row not in chosen:
        chosen.append(index.leaf_row)
    named: list[Any] = chosen if version == 1 else [index.ids[row] for row in chosen]
    return [None, *named]


class Comparison:
    """What pitree computes for one file, set against what pi computed for it."""

    def __init__(self, fuzz: FuzzFile, path: Path, got: dict[str, Any]) -> None:
        self.fuzz = fuzz
        self.path = path
        self.got = _lone_surrogates_replaced(got)
        self.problems: list[Problem] = []
        self.session: SessionFile | None = None
        self.v1_ids: dict[str, str] = {}

    def check(self, expected: Any, actual: Any, what: str) -> bool:
        """Note a disagreement; True when they agree."""
        if expected != actual:
            self.problems.append((what, f"pi {_short(expected)} / pitree {_short(actual)}"))
            return False
        return True

    # ------------------------------------------------------------------ the id map

    def pi_id(self, pi_id: Any) -> Any:
        """pi's id as pitree names the entry: the same, except in a version 1 file, where pi's
        migration draws random ids and pitree derives stable ones (docs/format.md §8.6, §11.3)."""
        return self.v1_ids.get(pi_id, pi_id) if isinstance(pi_id, str) else pi_id

    # ------------------------------------------------------------------ the comparisons

    def run(self) -> list[Problem]:
        got = self.got
        try:
            self.session = SessionFile(self.path, fsync=False)
        except NotASession as refused:
            self.check(True, got["error"] is not None and "not a valid" in got["error"], f"refusal ({refused})")
            return self.problems
        index = self.session.index
        if got["error"] is not None:
            self._pi_refused(index, got["error"])
            return self.problems
        if self.fuzz.version == 1:
            self.v1_ids = dict(zip(got["entryIds"], index.ids))
        self.check(got["sessionId"], self.session.session_id, "session id")
        # Key order too: a version 1 or 2 header's new version takes the old one's place (docs/format.md §8.6).
        self.check(list(got["header"].items()), list(self.session.header.items()), "header")
        self._name(index)
        # docs/format.md §4.4: a label that is no string is kept as the text JS's String() makes of it.
        self.check({self.pi_id(k): v for k, v in got["labelTexts"].items()}, _labels(index), "labels")
        self._entries(index)
        self._leaf(index)
        self._tree(index)
        for result in got["positions"]:
            self._position(result)
        self._listing(index)
        return self.problems

    def _name(self, index: SessionIndex) -> None:
        """pi's name; where pi's ``getSessionName`` throws (the latest ``session_info`` has a name that
        is no string), pitree's is no name (docs/format.md §4.5, §11.2)."""
        if "nameError" not in self.got:
            self.check(self.got["name"], index.name, "name")
            return
        read = _pi_list_values(self.fuzz.listing_reference())  # no lone "\r" left: lines as pi's session cuts them
        names = [value.get("name") for value in read if _is_a(value, "session_info")]
        self.check(True, bool(names) and not isinstance(names[-1], str | None), f"pi's name: {self.got['nameError']}")
        self.check(None, index.name, "name where pi's throws")

    def _entries(self, index: SessionIndex) -> None:
        """Every entry line as pi holds it after loading: the same values, a version 1 or 2 file
        migrated the same way (docs/format.md §8.6)."""
        assert self.session is not None
        theirs = [_with_ids(entry, self.pi_id) for entry in self.got["entries"]]
        mine = self.session.entries(range(len(index)))
        if self.check(len(theirs), len(mine), "entry count"):
            for pis, pitrees in zip(theirs, mine):
                if not self.check(pis, pitrees, "entries"):
                    break

    def _pi_refused(self, index: SessionIndex, error: str) -> None:
        """pi refuses a file whose parent links loop (its walks would not end): pitree cuts the loop
        and reports it (docs/format.md §8.4, §11.2 "parent loops")."""
        self.check(True, "cycle" in error and _cuts_a_loop(index), f"pi refused: {error}")

    def _leaf(self, index: SessionIndex) -> None:
        assert self.session is not None
        if self._ends_with_marker(index):
            return  # docs/format.md §11.3: pi's leaf is the marker itself, pitree's its target
        if self.check(self.pi_id(self.got["leafId"]), index.leaf_id, "leaf"):
            self._context(self.got, self.session.path_rows(), self.session.context(), "at the leaf")

    def _ends_with_marker(self, index: SessionIndex) -> bool:
        return bool(index.leaf_rows) and index.leaf_rows[-1] == len(index) - 1

    def _context(self, got: dict[str, Any], rows: list[int], context: SessionContext, where: str) -> None:
        assert self.session is not None
        index = self.session.index
        if {index.ids[row] for row in index.leaf_rows} & {self.pi_id(i) for i in got["branchIds"]}:
            return  # docs/format.md §11.3: pi's path goes through a marker (one that took an entry's id)
        self.check([self.pi_id(i) for i in got["branchIds"]], [index.ids[row] for row in rows], f"path {where}")
        self.check([self.pi_id(i) for i in got["contextEntryIds"]], context.entry_ids, f"context entries {where}")
        theirs, mine = got["context"], context.as_json()
        # docs/format.md §6.1: a level change without a level leaves pi's level undefined (a key its JSON
        # leaves out), which pitree reads as null.
        self.check(theirs.get("thinkingLevel"), mine["thinkingLevel"], f"thinking level {where}")
        self.check(theirs["model"], mine["model"], f"model {where}")
        self.check(_fromids(theirs["messages"], self.pi_id), mine["messages"], f"messages {where}")

    def _position(self, result: dict[str, Any]) -> None:
        assert self.session is not None
        position = result["position"]
        entry_id = self.session.index.ids[position] if isinstance(position, int) else position
        if result.get("error") is not None:
            # docs/format.md §8.4, §11.2 "parent loops": pi's walk from here would not end, pitree's does.
            if "cycle" not in result["error"] or not _cuts_a_loop(self.session.index):
                self.problems.append(("position refused by pi", f"{entry_id}: {result['error']}"))
            return
        self.check(self.pi_id(result["leafId"]), entry_id, "position leaf")
        self._context(result, self.session.path_rows(entry_id), self.session.context(entry_id), "at a position")

    def _tree(self, index: SessionIndex) -> None:
        """pi's tree holds a duplicate id's later entry at each place one of them was (pitree: the last
        one wins, docs/format.md §8.5, §11.2), and pitree's leaf markers (§11.3), left out here; a marker
        without a readable timestamp may reorder its siblings in pi's tree (§11.3)."""
        if len(index.ids) != len(set(index.ids)) or self.fuzz.version == 1:
            return
        if any(math.isnan(index.instant(row)) for row in index.leaf_rows):
            return
        markers = {index.ids[row] for row in index.leaf_rows}
        self.check(_without(self.got["tree"], markers, self.got["labelTexts"]), tree.tree(index), "tree")

    def _listing(self, index: SessionIndex) -> None:
        """pi's list entry for the file as pi's list reads its bytes (``FuzzFile.listing_reference``:
        lines end at ``\n`` only, docs/format.md §11.2), against pitree's. pi's list leaves out a file
        whose scan throws, and dates "Invalid Date" a session with a message time beyond what JS's
        dates hold, where pitree lists the file and skips that time (docs/format.md §10, §11.2)."""
        theirs = self.got["listing"]
        values = _pi_list_values(self.fuzz.listing_reference())
        left_out = theirs is None
        if not self.check(_pi_list_throws(values), left_out, "listing: pi leaves the file out of its list"):
            return
        info = read_info(self.path)
        if left_out:
            return
        # docs/format.md §10, §11.2: a line superseded by a later one with its id is no message of the session.
        superseded = sum(1 for row in range(len(index)) if index.types[row] == "message" and not index.is_node(row))
        self.check(theirs["messageCount"], info.message_count + superseded, "listing messageCount")
        self.check(theirs["name"], info.name, "listing name")
        self.check(self._first_message(theirs["firstMessage"], values), info.first_message, "listing firstMessage")
        beyond = _dated_beyond_js(values)
        if self.check(beyond, theirs["modified"] is None, "listing modified: pi's is Invalid Date") and not beyond:
            self.check(theirs["modified"], info.modified, "listing modified")
        self.check(theirs["id"], info.id, "listing id")
        self.check(theirs["cwd"], info.cwd, "listing cwd")
        self.check(theirs["parentSessionPath"], info.parent_session_path, "listing parentSessionPath")
        created = iso_to_ms(info.created)
        if created is not None:  # pitree's ``created`` is the header's timestamp text (docs/format.md §10)
            self.check(theirs["created"], format_iso(created), "listing created")

    def _first_message(self, theirs: str, values: list[Any]) -> str:
        """pi's first message, or where pitree skips a blank one (docs/format.md §10, §11.2) the first
        user text that is not blank, found the way pi's list finds its first message; its first
        ``FIRST_MESSAGE_CHARS`` characters, all a listing keeps (§11.2)."""
        if js_trim(theirs):
            return theirs[:FIRST_MESSAGE_CHARS]
        texts = _lone_surrogates_replaced(_user_texts(values))
        return next((text[:FIRST_MESSAGE_CHARS] for text in texts if js_trim(text)), NO_MESSAGES)


_LIST_LINE_END = re.compile(rb"\r\n|\n|\r")


def _pi_list_values(data: bytes) -> list[Any]:
    """The values pi's list reads of a file, in order: its lines as ``readline`` cuts them (at ``\n``,
    ``\r\n`` or a lone ``\r``), decoded as Node decodes (U+FFFD for a bad byte), each parsed, leaving out
    blank and unparsable lines and values JS counts as false (``if (!entry) continue``)."""
    values = []
    for line in _LIST_LINE_END.split(data):
        text = line.decode("utf-8", "replace")
        if not js_trim(text):
            continue
        try:
            value = json.loads(text)
        except ValueError:
            continue
        if js_truthy(value):
            values.append(value)
    return values


def _is_a(value: Any, kind: str) -> bool:
    return isinstance(value, dict) and value.get("type") == kind


def _listed_message(value: Any) -> dict[str, Any] | None:
    """The message of an entry pi's list reads a text and a time from: a user or assistant message
    that has a ``content`` (``isMessageWithContent``)."""
    message = value.get("message") if _is_a(value, "message") else None
    if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
        return None
    return message if "content" in message else None


def _pi_list_throws(values: list[Any]) -> bool:
    """Whether pi's list leaves the file out: its first value is no session header, or its scan of an
    entry after it throws — a name that is no string (``.trim()``), a message entry without a
    ``message``, a user or assistant message whose ``content`` is neither a string nor a list, or a
    list holding ``null`` (``.filter``, ``block.type``)."""
    if not values or not _is_a(values[0], "session"):
        return True
    for value in values[1:]:
        if _is_a(value, "session_info") and not isinstance(value.get("name"), str | None):
            return True
        if _is_a(value, "message") and value.get("message") is None:
            return True
        message = _listed_message(value)
        content = message["content"] if message is not None else ""
        if not isinstance(content, str) and (not isinstance(content, list) or None in content):
            return True
    return False


def _dated_beyond_js(values: list[Any]) -> bool:
    """Whether pi's list dates the session past what a JS date holds ("Invalid Date"): its newest
    activity is the largest message time that is a number, and one is beyond ``MAX_MS``."""
    for value in values[1:]:
        message = _listed_message(value)
        stamp = message.get("timestamp") if message is not None else None
        if isinstance(stamp, int | float) and not isinstance(stamp, bool) and stamp > MAX_MS:
            return True
    return False


def _user_texts(values: list[Any]) -> list[str]:
    """The texts pi's list reads its first message from: of each user message after the header that has
    a ``content``, a string as is, or its text blocks' ``text`` joined by spaces."""
    texts = []
    for value in values[1:]:
        message = _listed_message(value)
        if message is None or message.get("role") != "user":
            continue
        content = message["content"]
        if isinstance(content, list):
            blocks = [block for block in content if isinstance(block, dict) and block.get("type") == "text"]
            content = " ".join(_joined(block.get("text")) for block in blocks)
        texts.append(content)
    return texts


def _joined(value: Any) -> str:
    """What ``Array.prototype.join`` makes of an item: "" for null and undefined, else ``String()``."""
    return "" if value is None else js_string(value)


def _with_ids(entry: Any, pi_id: Any) -> Any:
    """A version 1 entry as pi migrated it, with pitree's ids in place of the random ones pi drew."""
    if not isinstance(entry, dict):
        return entry
    return {
        key: pi_id(value) if key in ("id", "parentId", "firstKeptEntryId") else value for key, value in entry.items()
    }


def _cuts_a_loop(index: SessionIndex) -> bool:
    """Whether pitree cut a parent link that would loop (a self-parent, or a cycle) and said so, or
    left out a line superseded by a later one with its id, whose parent link pi's tree still follows
    (docs/format.md §8.5, §11.2 "duplicate ids")."""
    reasons = [reason for _, reason in index.skipped()]
    return any("closes a cycle" in reason or "own parent" in reason or "superseded" in reason for reason in reasons)


def _labels(index: SessionIndex) -> dict[str, Any]:
    return {target: text for target, (text, _) in index.labels.items()}


def _fromids(messages: list[Any], pi_id: Any) -> list[Any]:
    """pi's messages with the entry ids they name (a branch summary's ``fromId``) as pitree names them."""
    return [
        {**message, "fromId": pi_id(message["fromId"])}
        if isinstance(message, dict) and message.get("role") == "branchSummary" and "fromId" in message
        else message
        for message in messages
    ]


def _without(nodes: list[dict[str, Any]], ids: set[str], labels: dict[str, str]) -> list[dict[str, Any]]:
    """A tree without the nodes in ``ids`` (childless leaf markers), its labels as ``labels`` shows them,
    at any depth, iteratively."""
    top: list[dict[str, Any]] = []
    stack = [(nodes, top)]
    while stack:
        source, target = stack.pop()
        for node in source:
            if node["id"] in ids and not node["children"]:
                continue
            copy = {**node, "children": []}
            if "label" in copy:
                copy["label"] = labels[node["id"]]
            target.append(copy)
            stack.append((node["children"], copy["children"]))
    return top


def _lone_surrogates_replaced(value: Any) -> Any:
    """pi's answer with each lone surrogate (half an emoji, which a JS string holds) as U+FFFD, which
    pitree reads in its place (docs/format.md §8.2, §11.2)."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_lone_surrogates_replaced(item) for item in value]
    if isinstance(value, dict):
        return {_lone_surrogates_replaced(key): _lone_surrogates_replaced(item) for key, item in value.items()}
    return value


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 300 else text[:300] + "…"


def run_batch(pi: Any, folder: Path, numbers: list[int]) -> tuple[list[tuple[int, Problem]], int]:
    """Generate, open in pi and compare files ``numbers``; returns the problems and how many positions
    were compared."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pi").mkdir(exist_ok=True)
    (folder / "pi-list").mkdir(exist_ok=True)
    clear_cache()
    written = {number: _write(folder, number) for number in numbers}
    requests = []
    for number, (fuzz, mine, theirs) in written.items():
        try:
            index = SessionFile(mine, fsync=False).index
            positions = _positions(index, random.Random(number), fuzz.version)
        except NotASession:
            positions = []
        request = {"file": str(theirs), "positions": positions, "entries": True, "labelTexts": True, "listing": True}
        if _listed(theirs).exists():
            request["listingFile"] = str(_listed(theirs))
        requests.append(request)
    results = pi.requests(requests)
    problems: list[tuple[int, Problem]] = []
    compared = 0
    for (number, (fuzz, mine, _)), got in zip(written.items(), results):
        found = Comparison(fuzz, mine, got).run()
        compared += len(got.get("positions") or [])
        problems += [(number, problem) for problem in found]
        if found and KEEP:
            Path(KEEP).mkdir(parents=True, exist_ok=True)
            shutil.copy(mine, Path(KEEP) / f"{SEED}-{number}.jsonl")
    return problems, compared


def _summary(problems: list[tuple[int, Problem]]) -> str:
    """Disagreements grouped by what disagrees, with a few files each."""
    kinds = Counter(what for _, (what, _) in problems)
    lines = [f"{len(problems)} disagreements (seed {SEED}):"]
    for what, count in kinds.most_common():
        examples = [(number, detail) for number, (kind, detail) in problems if kind == what][:3]
        lines.append(f"  {what}: {count}")
        lines += [f"    file {number}: {detail}" for number, detail in examples]
    return "\n".join(lines)


@pytest.mark.processes
@pytest.mark.parametrize("shard", range(SHARDS))
def test_pitree_reads_random_files_as_pi_does(pi: Any, tmp_path: Path, shard: int) -> None:
    numbers = list(range(shard, FILES, SHARDS))
    problems: list[tuple[int, Problem]] = []
    compared = 0
    for start in range(0, len(numbers), BATCH):
        batch = tmp_path / f"batch-{start}"
        found, positions = run_batch(pi, batch, numbers[start : start + BATCH])
        problems += found
        compared += positions
        shutil.rmtree(batch)
    print(f"shard {shard}: {len(numbers)} files, {compared} positions compared (seed {SEED})")  # shown by -rP
    assert compared > len(numbers)  # positions besides "before the first entry" were compared
    assert not problems, _summary(problems)


def test_the_generator_covers_what_it_claims(tmp_path: Path) -> None:
    """Guard against the generator silently losing its point: over the default run's files, every
    entry type, role and stop reason pi writes, every odd thing, and every kind of file appear."""
    files = [generate(random.Random(f"{SEED}:{n}"), f"{n}", tmp_path / f"{n}") for n in range(FILES)]
    traits = Counter(trait for fuzz in files for trait in fuzz.traits)
    kinds, roles, stops, markers = Counter(), Counter(), Counter(), Counter()
    for fuzz in files:
        for line in fuzz.lines:
            value = line.value if isinstance(line.value, dict) else _parsed(line.raw)
            kinds[value.get("type")] += 1
            message = value.get("message")
            if isinstance(message, dict):
                roles[message.get("role")] += 1
                stops[message.get("stopReason")] += 1
            if value.get("type") == "compaction":
                markers[_kept_kind(value)] += 1
    assert set(ODDITIES_NAMES) <= set(traits), set(ODDITIES_NAMES) - set(traits)
    assert {"v1", "v2", "pitree_written", "leaf-markers", "torn_tail", "junk_before_header"} <= set(traits)
    assert "v1_odd_version" in traits
    assert {"message", "model_change", "thinking_level_change", "compaction", "branch_summary", "label"} <= set(kinds)
    assert {"session_info", "custom", "custom_message", "context_edit", "usage", "leaf", "x_future"} <= set(kinds)
    assert {"user", "assistant", "toolResult", "bashExecution", "custom", "hookMessage", "system"} <= set(roles)
    assert {"stop", "length", "toolUse", "error", "aborted", "deferred"} <= set(stops)
    assert {"on the path or elsewhere", "itself", "no entry", "absent"} <= set(markers)
    assert sum(len(fuzz.lines) > 30 for fuzz in files) > FILES // 10  # long sessions too


ODDITIES_NAMES = [oddity.__name__ for oddity in ODDITIES]


def _parsed(raw: bytes | None) -> dict[str, Any]:
    try:
        value = json.loads(raw or b"")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _kept_kind(compaction: dict[str, Any]) -> str:
    kept = compaction.get("firstKeptEntryId")
    if kept is None:
        return "absent"
    if kept == compaction["id"]:
        return "itself"
    return "no entry" if kept == "0badf00d" else "on the path or elsewhere"
