"""A Claude Code projects folder (``~/.claude/projects``) followed as pi sessions: each Claude Code
session (with its subagents' sidechains) has a pi session file in a mirror folder, brought up to date
whenever one of its files changes. The mirror is a cache of Claude Code's files (deleting it loses
nothing: it is written again); linked into the sessions folder from outside it, it is read-only
there, listed, opened, searched and followed live like any session, and forked to go on in pi.

Each look stats the folder's ``.jsonl`` files and imports again the sessions whose files changed
since: the import writes only what the mirror lacks, in one append (``run.write_to``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..sessionfiles.entries import session_file_name
from ..sessionfiles.instants import format_iso
from .claudecode import read_session, sessions
from .errors import ExportError
from .run import Outcome, session_id_for, write_to
from .sources import Counter, Member, claude_files, file_member

_KIND = "claude-code"


@dataclass
class Mirror:
    """Claude Code's ``projects`` folder mirrored into ``folder``."""

    projects: Path
    folder: Path
    fsync: bool = True

    def __post_init__(self) -> None:
        self._seen: dict[str, tuple[tuple[int, int], ...]] = {}  # a session's files' (size, mtime) last imported
        self.problems: dict[str, str] = {}  # a session file that could not be read, and why

    def look(self) -> list[Outcome]:
        """Bring the mirror up to date with what changed since the last look."""
        members = [file_member(self.projects / name, name) for name in claude_files(self.projects)]
        done = []
        for main, sidechains in sessions(members):
            stamps = tuple(_stamp(self.projects / member.name) for member in [main, *sidechains])
            if self._seen.get(main.name) == stamps:
                continue
            try:
                done.append(self._mirror(main, sidechains))
            except ExportError as error:
                self.problems[main.name] = str(error)
                continue
            self.problems.pop(main.name, None)
            self._seen[main.name] = stamps
        return done

    def _mirror(self, main: Member, sidechains: list[Member]) -> Outcome:
        conversation = read_session(main, sidechains, Counter(0))
        identity = f"{_KIND}:{self.projects}"
        session_id = session_id_for(conversation, identity)
        path = self.folder / session_file_name(format_iso(max(conversation.created_ms, 0)), session_id)
        cwd = conversation.fields.get("cwd") or ""
        return write_to(conversation, path, session_id, cwd=str(cwd), root=self.folder, fsync=self.fsync)


def _stamp(path: Path) -> tuple[int, int]:
    try:
        st = os.stat(path)
    except OSError:
        return (-1, -1)
    return (st.st_size, st.st_mtime_ns)
