"""New session files: an empty session, a fork of a branch (pi's ``createBranchedSession``), and a
fork of a branch's last turns with a summary of what came before (``tail_fork``).

A fork copies the root→entry path with ids, timestamps and content unchanged, drops ``label`` lines and
re-chains what follows them, then re-emits the labels still set on the path (fresh ids, original
timestamps). Its header's ``parentSession`` is the absolute path of the source, so both files know
their lineage. Forking is also how a read-only v1/v2 file is continued: the copy is written as v3.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from . import entries as E
from .context import build_session_context
from .errors import SessionError
from .store import AT_LEAF, SessionFile, _AtLeaf, create_file


def encode_cwd(cwd: str) -> str:
    """pi's session folder name for a working directory (lossy: the header keeps the real cwd)."""
    trimmed = cwd[1:] if cwd[:1] in ("/", "\\") else cwd
    for char in "/\\:":
        trimmed = trimmed.replace(char, "-")
    return f"--{trimmed}--"


def new_header(
    cwd: str, parent_session: str | None = None, *, session_id: str | None = None, timestamp: str | None = None
) -> dict[str, Any]:
    """A version 3 header in pi's key order: a new session id and the current time unless given."""
    header: dict[str, Any] = {
        "type": "session",
        "version": E.SESSION_VERSION,
        "id": session_id or E.new_session_id(),
        "timestamp": timestamp or E.now_iso(),
        "cwd": cwd,
    }
    if parent_session is not None:
        header["parentSession"] = parent_session
    return header


def new_path(folder: Path, header: dict[str, Any]) -> Path:
    return folder / E.session_file_name(header["timestamp"], header["id"])


def create_session(root: Path, cwd: str, *, name: str | None = None, fsync: bool = True) -> SessionFile:
    """A new session for ``cwd`` under the sessions ``root``, in pi's ``--<encoded cwd>--`` folder."""
    header = new_header(cwd)
    lines: list[dict[str, Any]] = [header]
    if name and E.clean_session_name(name):
        lines.append(E.session_info(name).build(E.new_entry_id(()), None, header["timestamp"]))
    path = new_path(root / encode_cwd(cwd), header)
    create_file(path, lines, fsync=fsync, within=root)
    return SessionFile.open(path, fsync=fsync, within=root)


def fork_session(
    source: SessionFile,
    entry_id: str | _AtLeaf | None = AT_LEAF,
    *,
    fsync: bool = True,
    into: tuple[Path, str] | None = None,
    name: str | None = None,
) -> SessionFile:
    """Copy the branch ending at ``entry_id`` (default: the leaf) into a new file next to the source, or,
    with ``into`` = (sessions root, cwd), into that working directory's folder (a teammate's fork);
    ``name``: the fork's own, in a ``session_info`` after what it copied."""
    path = source.path_entries(entry_id)
    kept: list[dict[str, Any]] = []
    label_successor: dict[str, str] = {}
    pending_labels: list[str] = []
    previous: str | None = None
    for entry in path:
        if entry.get("type") == "label":
            pending_labels.append(entry["id"])
            continue
        for label_id in pending_labels:
            label_successor[label_id] = entry["id"]
        pending_labels.clear()
        copied = {**entry, "parentId": previous}
        if entry.get("type") == "compaction":
            first_kept = entry.get("firstKeptEntryId")
            if isinstance(first_kept, str):  # a malformed (unhashable) value is copied as is, not looked up
                copied["firstKeptEntryId"] = label_successor.get(first_kept, first_kept)
        kept.append(copied)
        previous = entry["id"]
    return _written(source, kept, {entry["id"] for entry in kept}, fsync=fsync, into=into, name=name)


def _written(
    source: SessionFile,
    kept: list[dict[str, Any]],
    taken: set[str],
    *,
    fsync: bool,
    into: tuple[Path, str] | None,
    name: str | None,
) -> SessionFile:
    """A fork's file: the ``kept`` entries, then the labels still set on them re-emitted after them
    (fresh ids, not in ``taken``; their own timestamps; a label of an entry the fork does not hold is
    left behind), then its ``name`` if given (the last ``session_info`` names a session, so it wins over
    a name the path copied), beside the source or ``into`` a workspace."""
    copied = {entry["id"] for entry in kept}
    previous = kept[-1]["id"] if kept else None
    for target, (text, timestamp) in source.index.labels.items():
        if target in copied:
            label = E.label(target, text, timestamp).build(E.new_entry_id(taken), previous, timestamp)
            taken.add(label["id"])
            kept.append(label)
            previous = label["id"]
    cwd, folder = (source.cwd, source.path.parent) if into is None else (into[1], into[0] / encode_cwd(into[1]))
    within = source.within if into is None else into[0]
    header = new_header(cwd, str(source.path.absolute()))
    if name and E.clean_session_name(name):
        kept.append(E.session_info(name).build(E.new_entry_id(taken), previous, header["timestamp"]))
    created = new_path(folder, header)
    create_file(created, [header, *kept], fsync=fsync, within=within)
    return SessionFile.open(created, fsync=fsync, within=within)


def fork_point(fork: SessionFile, source: SessionFile) -> str | None:
    """The last entry ``fork`` copied from ``source``: its entries keep their ids, in path order, up to
    the first one the source does not have after them (labels are re-written by a fork, so they do not
    count; a tail fork's first entries, its settings and summary, are its own, so they are passed)."""
    index = fork.index
    last = None
    for row in range(len(index)):
        if index.types[row] == "label" or not index.is_node(row):
            continue
        if source.index.row(index.ids[row]) is None:
            if last is not None:
                break
            continue
        last = index.ids[row]
    return last


def tail_start(path: list[dict[str, Any]], turns: int) -> int:
    """Where the last ``turns`` turns of a path begin (a turn begins with a user message): the position
    in ``path`` of that message. Refused when the path holds no more turns than that (nothing would be
    summarised)."""
    starts = [
        number
        for number, entry in enumerate(path)
        if entry.get("type") == "message"
        and isinstance(entry.get("message"), dict)
        and entry["message"].get("role") == "user"
    ]
    if turns < 1 or len(starts) <= turns:
        raise SessionError(
            f"The branch has {len(starts)} turn{'s' if len(starts) != 1 else ''}: nothing before the last {turns} to summarise"
        )
    return starts[-turns]


def tail_fork(
    source: SessionFile,
    entry_id: str | _AtLeaf | None,
    turns: int,
    summary: str,
    tokens_before: int,
    *,
    usage: dict[str, Any] | None = None,
    fsync: bool = True,
    into: tuple[Path, str] | None = None,
    name: str | None = None,
) -> SessionFile:
    """A fork of the branch ending at ``entry_id`` that holds only its last ``turns`` turns, the history
    before them folded into ``summary`` (a ``compaction`` keeping nothing before it, as pi 1.x writes
    one), for handing a long session's current state on without its whole history.

    The model and thinking level the dropped history had chosen are written first, so the fork goes on
    as the branch would; the kept entries keep their ids (``fork_point`` finds where the fork came
    from) and labels, as ``fork_session`` copies them; ``parentSession`` names the source; ``name``: as
    ``fork_session``'s."""
    path = source.path_entries(entry_id)
    start = tail_start(path, turns)
    context = build_session_context(path[:start])
    out: list[dict[str, Any]] = []
    now = E.now_iso()
    taken = {entry["id"] for entry in path}

    def add(draft: E.Draft) -> None:
        entry = draft.build(E.new_entry_id(taken), out[-1]["id"] if out else None, now)
        taken.add(entry["id"])
        out.append(entry)

    if context.model and {"provider", "modelId"} <= context.model.keys():
        add(E.model_change(context.model["provider"], context.model["modelId"]))
    if context.thinking_level not in ("off", None):
        add(E.thinking_level_change(context.thinking_level))
    compaction_id = E.new_entry_id(taken)
    taken.add(compaction_id)
    folded = E.compaction(summary, compaction_id, tokens_before, usage=usage)
    out.append(folded.build(compaction_id, out[-1]["id"] if out else None, now))
    previous = compaction_id
    for entry in path[start:]:
        if entry.get("type") == "label":
            continue
        out.append({**entry, "parentId": previous})
        previous = entry["id"]
    return _written(source, out, taken, fsync=fsync, into=into, name=name)
