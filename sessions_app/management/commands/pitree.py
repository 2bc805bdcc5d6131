"""``python manage.py pitree …``: list, read and append to pi session files from the shell.

Reading: ``ls``, ``show``, ``tree``, ``inspect``, ``search``. Writing (each prints only the new entry id, or the new
file's path): ``new``, ``append``, ``navigate``, ``label``, ``rename``, ``fork``, ``compact``. ``seed``
fills an empty sessions folder with pi's sample sessions; ``import`` brings in other products' chat
histories (``sessions_app.imports``).

FILE is a path to a ``.jsonl`` file, or a session id / unique id prefix looked up in
``PITREE_SESSIONS_DIR``. Every failure is one line on stderr and a non-zero exit; a failed write leaves
the file's bytes as they were. The rendering lives in ``sessions_app.cli``; the file work in
``sessions_app.sessionfiles``.

``--as USER`` acts as that user: only the sessions they may see exist, writes need a grant that allows
them and are recorded as theirs, new sessions and forks go to their workspaces. Without it the command
line is the unrestricted local owner (``sessions_app.access.cli``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import orjson
from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.core.management.base import BaseCommand, CommandError, CommandParser

from sessions_app.access.authorship import FILE, record
from sessions_app.access.cli import actor_named, open_as
from sessions_app.access.grants import Access
from sessions_app.access.imports import import_for
from sessions_app.access.listing import search_scope, visible_sessions
from sessions_app.access.scoped import SessionView
from sessions_app.access.workspaces import default_cwd, may_create_in
from sessions_app.cli.imports import import_progress, outcome_lines
from sessions_app.cli.inspect import inspect_json, summary_lines
from sessions_app.cli.listing import ls_json, ls_lines
from sessions_app.cli.resolve import entry_or_root
from sessions_app.cli.search import search_json, search_lines
from sessions_app.cli.seed import seed
from sessions_app.cli.transcript import printable, printable_json, render_transcript, terminal_line
from sessions_app.cli.treeview import tree_lines
from sessions_app.imports.run import REFUSED
from sessions_app.search.index import SearchIndex, SearchUnavailable
from sessions_app.search.query import fts_query, only_excluded
from sessions_app.search.results import search
from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles.catalog import Catalog
from sessions_app.sessionfiles.context import estimate_tokens
from sessions_app.sessionfiles.errors import SessionError
from sessions_app.sessionfiles.fork import create_session
from sessions_app.sessionfiles.instants import now_ms
from sessions_app.sessionfiles.store import AT_LEAF, OUTSIDE
from sessions_app.sessionfiles.tree import path as tree_path
from sessions_app.sessionfiles.tree import path_tail
from sessions_app.transfer.newfiles import fork_for, tail_fork_for

CLI_PROVIDER, CLI_MODEL, CLI_API = "pitree", "cli", "pitree-cli"


class OneLineParser(CommandParser):
    """Argument errors as one line (no usage dump) and exit status 2; a CommandError under call_command."""

    def error(self, message: str) -> None:  # type: ignore[override]
        if self.called_from_command_line:
            self.exit(2, f"{self.prog}: error: {message} (see --help)\n")
        raise CommandError(f"Error: {message}")


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative: {value}")
    return value


def _positive(text: str) -> int:
    value = _count(text)
    if value == 0:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


class Command(BaseCommand):
    help = (
        "List, read and append to pi session files. FILE is a .jsonl path, or a session id / unique id "
        "prefix in PITREE_SESSIONS_DIR. Write commands print only the new entry id (or file path)."
    )
    requires_system_checks: list[str] = []  # noqa: RUF012 - Django declares it as an instance attribute

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        parser = super().create_parser(prog_name, subcommand, **kwargs)
        parser.__class__ = OneLineParser
        return parser

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--as",
            dest="as_user",
            metavar="USER",
            help="act as this pitree user, seeing and writing what they may (default: the unrestricted local owner)",
        )
        sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True, parser_class=OneLineParser)
        file_help = "a .jsonl path, or a session id / unique id prefix in PITREE_SESSIONS_DIR"

        p = sub.add_parser("ls", help="sessions by workspace, forks nested under their parent")
        p.add_argument(
            "--json", action="store_true", help="pi's SessionInfo fields per session, plus shortId and depth"
        )

        p = sub.add_parser("show", help="transcript of the active path (or of the path to --leaf)")
        p.add_argument("file", metavar="FILE", help=file_help)
        p.add_argument("--leaf", metavar="ID", help="show the path to this entry instead of the file's leaf")
        p.add_argument(
            "--tail", metavar="N", type=_positive, help="only the last N entries of the path (cheap on huge files)"
        )

        p = sub.add_parser("tree", help="the whole tree, active path marked with *, the leaf with ← leaf")
        p.add_argument("file", metavar="FILE", help=file_help)

        p = sub.add_parser("inspect", help="the session as one JSON object (docs/format.md §12)")
        p.add_argument("file", metavar="FILE", help=file_help)
        p.add_argument("--json", action="store_true", help="print that JSON object (without it: a short summary)")
        p.add_argument("--leaf", metavar="ID", help="path and context at this entry instead of the file's leaf")

        p = sub.add_parser("new", help="create an empty session; prints its path")
        p.add_argument("--cwd", metavar="DIR", required=True, help="the workspace (made absolute)")
        p.add_argument("--name", help="a session name (written as a session_info entry)")

        p = sub.add_parser(
            "append",
            help="append a message; prints its id",
            description=(
                "Append a user or assistant message. An assistant entry carries what pi writes: "
                f'provider "{CLI_PROVIDER}", model "{CLI_MODEL}", api "{CLI_API}", zero usage, '
                'stopReason "stop" and a timestamp.'
            ),
        )
        p.add_argument("file", metavar="FILE", help=file_help)
        p.add_argument("--role", choices=("user", "assistant"), required=True)
        p.add_argument("--text", required=True)
        p.add_argument("--parent", metavar="ID", help="the parent entry (default: the file's leaf)")

        p = sub.add_parser(
            "navigate",
            help="move the persisted position; prints the leaf entry's id",
            description=(
                "Move the position to ID (or 'root': before the first entry) by appending a leaf entry, "
                "and print that entry's id. When the position is already there nothing is written, "
                "nothing is printed, and the exit status is 0."
            ),
        )
        p.add_argument("file", metavar="FILE", help=file_help)
        p.add_argument("target", metavar="ID|root")

        p = sub.add_parser("label", help="set (or, without LABEL, clear) an entry's label; prints the label entry's id")
        p.add_argument("file", metavar="FILE", help=file_help)
        p.add_argument("target", metavar="ID")
        p.add_argument("label", metavar="LABEL", nargs="?")

        p = sub.add_parser("rename", help="name the session (an empty NAME clears it); prints the entry id")
        p.add_argument("file", metavar="FILE", help=file_help)
        p.add_argument("name", metavar="NAME")

        p = sub.add_parser(
            "fork",
            help="copy the path to ID into a new file next to FILE; prints its path",
            description="Fork the branch ending at ID (default: the leaf). Also how a read-only v1/v2 file is continued.",
        )
        p.add_argument("file", metavar="FILE", help=file_help)
        p.add_argument("target", metavar="ID", nargs="?")
        p.add_argument(
            "--tail",
            metavar="N",
            type=_positive,
            help="keep only the last N turns; the history before them is folded into a summary (a compaction)",
        )
        p.add_argument("--summary", help="with --tail: the summary to use (default: the assistant writes it)")

        p = sub.add_parser("compact", help="append a compaction; prints its id")
        p.add_argument("file", metavar="FILE", help=file_help)
        p.add_argument("--keep-from", metavar="ID", required=True, help="the first entry kept in context")
        p.add_argument("--summary", required=True, help="what the history before ID is folded into")
        p.add_argument(
            "--tokens-before",
            metavar="N",
            type=_count,
            help="context size before compacting (default: a rough estimate, characters / 4 as pi estimates)",
        )

        sub.add_parser("seed", help="copy pi's sample sessions into PITREE_SESSIONS_DIR if it has no .jsonl file")

        p = sub.add_parser(
            "import",
            help="bring in chat histories from ChatGPT, Open WebUI, LibreChat and Claude Code, branches kept",
            description=(
                "Import each FILE: ChatGPT's export (.zip, or its conversations.json), an Open WebUI or LibreChat "
                "JSON export, a Claude Code session (.jsonl) or project folder. One session per conversation, "
                "in your workspace; importing again adds only what is new. Prints a line per session written."
            ),
        )
        p.add_argument("files", metavar="FILE", nargs="+")
        p.add_argument("--cwd", metavar="DIR", help="the workspace to import into (default: your own)")

        p = sub.add_parser(
            "search",
            help="entries of every session and branch matching QUERY, best first, 20 a page",
            description=(
                'QUERY: words (all must match; the last also matches words it starts), "quoted phrases", and '
                '-word or -"a phrase" to leave out the entries holding it (a QUERY starting with - goes after --). '
                "The index (PITREE_SEARCH_DB) catches up with the files first."
            ),
        )
        p.add_argument("query", metavar="QUERY")
        p.add_argument(
            "--session", metavar="FILE", help="only this session's entries (an id, a unique prefix or a path)"
        )
        p.add_argument("--page", metavar="N", type=_positive, default=1)
        p.add_argument("--json", action="store_true", help="one JSON object: query, page, hasNext, hits")

    # ------------------------------------------------------------------ dispatch

    def handle(self, *args: Any, command: str, as_user: str | None = None, **options: Any) -> None:
        self.sessions_dir = Path(settings.PITREE_SESSIONS_DIR)
        self.fsync = bool(settings.PITREE_FSYNC)
        self.max_line_bytes = int(settings.PITREE_MAX_LINE_BYTES)
        try:
            self.access = Access(actor_named(as_user), self.sessions_dir)
            getattr(self, "do_" + command)(**options)
        except BrokenPipeError:
            _silence_stdout()
        except (SessionError, PermissionDenied) as error:
            raise CommandError(terminal_line(str(error))) from None
        except OSError as error:
            where = f"{error.filename}: " if error.filename else ""
            raise CommandError(terminal_line(f"{where}{error.strerror or error}")) from None

    def out(self, line: str) -> None:
        self.stdout.write(printable(line))

    def out_json(self, data: bytes) -> None:
        """JSON for programs, on one line: ids and texts exactly as stored (``printable_json``)."""
        self.stdout.write(printable_json(data.decode()))

    def open(self, file: str) -> SessionView:
        return open_as(self.access, file, self.catalog(), fsync=self.fsync, max_line_bytes=self.max_line_bytes)

    def catalog(self) -> Catalog:
        return Catalog(self.sessions_dir, max_line_bytes=self.max_line_bytes, cache_folder=settings.PITREE_CACHE_DIR)

    def open_writable(self, file: str) -> SessionView:
        session = self.open(file)
        if not session.grant.can_write:
            raise CommandError(f"{file}: {self.access.actor.user} may read this session but not write to it")
        if session.index.read_only:
            raise CommandError(
                f"{session.path}: a version {session.index.version} session is read-only "
                f"(pitree never rewrites it); continue it with: manage.py pitree fork {file} [ID]"
            )
        if session.outside:
            raise CommandError(
                terminal_line(f"{session.path}: {OUTSIDE}; continue it with: manage.py pitree fork {file} [ID]")
            )
        return session

    # ------------------------------------------------------------------ reading

    def do_ls(self, *, json: bool, **_: Any) -> None:
        catalog = self.catalog()
        forest = catalog.forest(visible_sessions(self.access, catalog.sessions()))
        problems = catalog.problems.items() if self.access.actor.sees_everything else []
        for path, problem in sorted(problems):
            self.stderr.write(terminal_line(f"skipped {path}: {problem}"))
        if json:
            self.out_json(orjson.dumps(ls_json(forest)))
        elif not forest:
            self.out(f"no sessions in {self.sessions_dir}")
        else:
            for line in ls_lines(forest, now_ms()):
                self.out(line)

    def do_show(self, *, file: str, leaf: str | None, tail: int | None, **_: Any) -> None:
        session = self.open(file)
        leaf_row = session.index.leaf_row if leaf is None else session.row_of(leaf)
        rows = tree_path(session.index, leaf_row) if tail is None else path_tail(session.index, leaf_row, tail)
        if not rows:
            self.out("(no entries on the path: the position is before the first entry)")
            return
        for line in render_transcript(session.entries(rows), session.index.labels):
            self.out(line)

    def do_tree(self, *, file: str, **_: Any) -> None:
        session = self.open(file)
        if not session.index.node_count:
            self.out("(no entries)")
        for line in tree_lines(session.index, session.entries):
            self.out(line)

    def do_inspect(self, *, file: str, json: bool, leaf: str | None, **_: Any) -> None:
        session = self.open(file)
        target: Any = AT_LEAF
        if leaf is not None:
            session.row_of(leaf)
            target = leaf
        if json:
            self.out_json(inspect_json(session, target))
            return
        for line in summary_lines(session, target):
            self.out(line)

    # ------------------------------------------------------------------ writing

    def do_new(self, *, cwd: str, name: str | None, **_: Any) -> None:
        workspace = os.path.abspath(os.path.expanduser(cwd))
        if not may_create_in(self.access, workspace):
            raise CommandError(
                f"{self.access.actor.user} may start sessions only in their own or their teams' workspaces"
            )
        session = create_session(self.sessions_dir, workspace, name=name, fsync=self.fsync)
        if not self.access.actor.unrestricted:
            record(session.session_id, FILE, self.access.actor.user)
        self.out(str(session.path))

    def do_append(self, *, file: str, role: str, text: str, parent: str | None, **_: Any) -> None:
        if not text.strip():
            raise CommandError("--text is empty")
        session = self.open_writable(file)
        if role == "user":
            draft = E.user_message(text)
        else:
            draft = E.assistant_message(text, provider=CLI_PROVIDER, model=CLI_MODEL, api=CLI_API)
        entry = session.append(draft, AT_LEAF if parent is None else parent)
        self.out(entry["id"])

    def do_navigate(self, *, file: str, target: str, **_: Any) -> None:
        session = self.open_writable(file)
        entry = session.navigate(entry_or_root(target))
        if entry is not None:
            self.out(entry["id"])

    def do_label(self, *, file: str, target: str, label: str | None, **_: Any) -> None:
        session = self.open_writable(file)
        self.out(session.set_label(target, label)["id"])

    def do_rename(self, *, file: str, name: str, **_: Any) -> None:
        session = self.open_writable(file)
        self.out(session.rename(name)["id"])

    def do_fork(self, *, file: str, target: str | None, tail: int | None, summary: str | None, **_: Any) -> None:
        session = self.open(file)
        if target is not None:
            session.row_of(target)
        entry = session.leaf_id if target is None else target
        if tail is None:
            if summary is not None:
                raise CommandError("--summary goes with --tail")
            fork = fork_for(session, entry)
        else:
            fork = asyncio.run(tail_fork_for(session, entry, tail, summary))
        self.out(str(fork.path))

    def do_compact(self, *, file: str, keep_from: str, summary: str, tokens_before: int | None, **_: Any) -> None:
        session = self.open_writable(file)
        session.row_of(keep_from)
        if tokens_before is None:
            tokens_before = estimate_tokens(session.context().messages)
        self.out(session.compact(summary, keep_from, tokens_before)["id"])

    def do_seed(self, **_: Any) -> None:
        if not self.access.actor.sees_everything:
            raise CommandError("only the instance's owners seed its sessions folder")
        written = seed(self.sessions_dir)
        if not written:
            self.out(f"{self.sessions_dir} already has sessions: nothing seeded")
            return
        for path in written:
            self.out(f"seeded {path}")
        self.out(f"{len(written)} sample sessions copied into {written[0].parent}")

    def do_import(self, *, files: list[str], cwd: str | None, **_: Any) -> None:
        workspace = os.path.abspath(os.path.expanduser(cwd)) if cwd else default_cwd(self.access)
        failed = False
        for file in files:
            with import_progress(file, sys.stderr) as progress:
                report = import_for(self.access, Path(file).expanduser(), workspace, self.catalog(), progress=progress)
            for note in report.notes:
                self.stderr.write(terminal_line(f"note: {note}"))
            for line in outcome_lines(report):
                self.out(line)
            for outcome in report.outcomes:
                if outcome.status == REFUSED:
                    failed = True
                    self.stderr.write(terminal_line(f"not written: {outcome.title}: {outcome.reason}"))
        if failed:
            raise CommandError("some conversations were not written (see above)")

    def do_search(self, *, query: str, session: str | None, page: int, json: bool, **_: Any) -> None:
        if only_excluded(query):
            raise CommandError(
                f"nothing to search for in {query!r}: a -word only leaves entries out; add a word to find"
            )
        if fts_query(query) is None:
            raise CommandError(f"nothing to search for in {query!r}: give words or a quoted phrase")
        if session is not None:  # an id prefix or a path, as for FILE; an unknown one is an error
            session = self.open(session).session_id
        index = SearchIndex(settings.PITREE_SEARCH_DB)
        try:
            results = search(
                index,
                self.catalog(),
                query,
                session=session,
                page=page,
                visible=lambda infos: search_scope(self.access, infos),
            )
        except SearchUnavailable as error:
            raise CommandError(terminal_line(str(error))) from None
        finally:
            index.close()
        failed = results.catch_up.failed if results.catch_up is not None and self.access.actor.sees_everything else {}
        for path, reason in sorted(failed.items()):
            self.stderr.write(terminal_line(f"not searched: {path}: {reason}"))
        if json:
            self.out_json(orjson.dumps(search_json(results)))
            return
        among = [info.id for info in visible_sessions(self.access, self.catalog().sessions())]
        for line in search_lines(results, among):
            self.out(line)


def _silence_stdout() -> None:
    """The reader went away (``… | head``): stop writing, without a traceback at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
