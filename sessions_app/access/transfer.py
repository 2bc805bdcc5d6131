"""Sessions in and out of workspaces: new sessions and forks go where the actor may write; downloads
hold what the grant sees (as pi reads it, or as Markdown); uploads become new files, never replacing
one.
"""

from __future__ import annotations

import asyncio
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.core.exceptions import PermissionDenied

from ..assistants.base import ABORTED_MESSAGE
from ..cli.transcript import content_as_shown, tool_call
from ..services import summaries
from ..services.lookup import catalog, entry_row
from ..sessionfiles import entries as E
from ..sessionfiles.catalog import URL_SAFE_ID, SessionInfo, UnknownSession, session_info
from ..sessionfiles.context import build_session_context, estimate_tokens
from ..sessionfiles.errors import SessionError
from ..sessionfiles.fork import create_session, encode_cwd, fork_session, tail_fork
from ..sessionfiles.lines import BadLine, loads_line
from ..sessionfiles.store import SessionFile, open_regular, write_new
from ..sessionfiles.tree import path as tree_path
from .authorship import FILE, record
from .grants import Access, folder_of
from .listing import visible_sessions
from .scoped import SessionView
from .workspaces import default_cwd, may_create_in, personal_workspace

TITLE_WIDTH = 80  # characters of a Markdown download's title line (one line: a name or a first message)
_ISO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z")


class UploadError(Exception):
    """An upload that was refused; nothing was written (the message says why)."""


# ------------------------------------------------------------------------------------- new files


def new_session_for(access: Access, cwd: str, name: str | None) -> SessionFile:
    """A new session in ``cwd``'s folder, when it is one of the actor's workspaces."""
    if not may_create_in(access, cwd):
        raise PermissionDenied("You may start sessions only in your own or your teams' workspaces.")
    created = create_session(catalog().root, cwd, name=name, fsync=settings.PITREE_FSYNC)
    _created_by(access, created.session_id)
    return created


def fork_for(view: SessionView, entry_id: str | None) -> SessionFile:
    """Fork the branch through ``entry_id`` of what ``view`` shows: next to the session when the actor
    may write its workspace, else into the actor's own workspace (its ``parentSession`` still names the
    source, so both sides see the lineage)."""
    forked = fork_session(view, entry_id, fsync=settings.PITREE_FSYNC, into=_fork_target(view))
    if view.access is not None:
        _created_by(view.access, forked.session_id)
    return forked


async def tail_fork_for(view: SessionView, entry_id: str | None, turns: int, summary: str | None = None) -> SessionFile:
    """Fork only the last ``turns`` turns of the branch through ``entry_id``, the history before them
    folded into a summary (the assistant writes it unless ``summary`` is given), where ``fork_for``
    puts a fork."""
    into = await asyncio.to_thread(_fork_target, view)
    if summary is None:
        written = await summaries.summarize_before_tail(view, entry_id, turns)
    else:
        path = await asyncio.to_thread(view.path_entries, entry_id)
        written = summaries.Summary(summary, estimate_tokens(build_session_context(path).messages), None)
    forked = await asyncio.to_thread(
        tail_fork,
        view,
        entry_id,
        turns,
        written.text,
        written.tokens_before,
        usage=written.usage,
        fsync=settings.PITREE_FSYNC,
        into=into,
    )
    if view.access is not None:
        await asyncio.to_thread(_created_by, view.access, forked.session_id)
    return forked


def _fork_target(view: SessionView) -> tuple[Path, str] | None:
    """Where a fork of ``view`` goes: next to it (None) when the actor may write its workspace, else
    into the actor's own workspace (``format.md`` §7.2)."""
    access = view.access
    root = catalog().root
    if view.outside:  # seen through a link out of the sessions folder (Claude Code's): nothing is written there
        return root, default_cwd(access) if access is not None else settings.PITREE_DEFAULT_CWD
    if access is None or access.may_write_folder(folder_of(view.path, root)):
        return None
    if not access.actor.signed_in:
        raise PermissionDenied("Sign in to fork: a fork goes into your own workspace.")
    return root, personal_workspace(access.actor.user).cwd


def _created_by(access: Access, session_id: str) -> None:
    if access.actor.signed_in:
        record(session_id, FILE, access.actor.user)


# ------------------------------------------------------------------------------------- downloads


@dataclass(frozen=True)
class Download:
    name: str
    data: bytes


Builder = Callable[[SessionView, str | None], Download]


def jsonl(view: SessionView, entry_id: str | None) -> Download:
    """The session as pi reads it: the whole file (what the grant sees of it), or with ``entry_id`` the
    branch through that entry. Lines are the stored bytes; the session id stays, so that uploading it
    back makes a fork of this session."""
    index = view.index
    name = download_name(view, entry_id, "jsonl")
    if entry_id is None and view.grant.whole:
        return Download(name, _file_bytes(view.path, index.offset))
    if entry_id is None:
        rows = [row for row in range(len(index)) if index.is_node(row)]
    else:
        rows = tree_path(index, entry_row(view, entry_id))
    header = E.dump_line(view.header)
    return Download(name, header + b"".join(line + b"\n" for line in view.raw_lines(rows)))


def markdown(view: SessionView, entry_id: str | None) -> Download:
    """The branch through ``entry_id`` (default: the position the view stands at) as Markdown."""
    index = view.index
    row = entry_row(view, entry_id) if entry_id is not None else index.leaf_row
    rows = tree_path(index, row)
    info = session_info(view)
    parts = [
        f"# {E.one_line(info.title, TITLE_WIDTH) or 'Session'}\n",
        f"Session `{view.session_id}`, exported from pitree.\n",
    ]
    for entry in view.entries(rows):
        part = _markdown_entry(entry)
        if part:
            parts.append(part)
    return Download(download_name(view, entry_id, "md"), "\n".join(parts).encode())


def _markdown_entry(entry: dict[str, object]) -> str:
    kind = entry.get("type")
    if kind == "message":
        message = entry.get("message")
        if not isinstance(message, dict):
            return ""
        role = message.get("role")
        content = message.get("content")
        if role == "user":
            return f"## You\n\n{content_as_shown(content)}\n"
        if role == "assistant":
            return "## Assistant\n\n" + _assistant_markdown(content) + _ending(message)
        if role == "toolResult":
            return f"### Tool result: {message.get('toolName', '?')}\n\n{_fenced(content_as_shown(content))}"
        if role == "bashExecution":
            shown = f"$ {message.get('command', '')}\n{message.get('output') or ''}"
            return f"### Shell\n\n{_fenced(shown)}"
        return f"## {role}\n\n{content_as_shown(content)}\n"
    if kind in ("compaction", "branch_summary"):
        title = "Summary of the earlier history" if kind == "compaction" else "Summary of a branch left behind"
        return (
            f"> **{title}**\n>\n" + "\n".join(f"> {line}" for line in str(entry.get("summary", "")).splitlines()) + "\n"
        )
    if kind == "custom_message":
        return f"### {entry.get('customType', 'extension')}\n\n{content_as_shown(entry.get('content'))}\n"
    return ""  # position markers, labels, names, model changes: not part of the conversation's text


def _assistant_markdown(content: object) -> str:
    if not isinstance(content, list):
        return f"{content_as_shown(content)}\n"
    parts = []
    for block in content:
        if isinstance(block, dict) and block.get("type") == "toolCall":
            parts.append(f"→ `{tool_call(block)}`")
        elif isinstance(block, dict) and block.get("type") == "thinking":
            continue
        else:
            parts.append(content_as_shown([block]))
    return "\n\n".join(part for part in parts if part.strip()) + "\n"


def _ending(message: dict[str, object]) -> str:
    """What the page says under a reply that did not end well (stopped, failed), as a note after it."""
    reason = message.get("stopReason")
    if reason not in ("aborted", "error"):
        return ""
    why = E.one_line(str(message.get("errorMessage") or ""), TITLE_WIDTH * 4)
    said = ABORTED_MESSAGE if reason == "aborted" else "The reply failed"  # what replies stopped here store
    return f"\n*{said}{': ' + why if why and why != said else ''}.*\n"


def _fenced(text: str) -> str:
    fence = "`" * max(3, _longest_run(text, "`") + 1)
    return f"{fence}\n{text}\n{fence}\n"


def _longest_run(text: str, char: str) -> int:
    runs = re.findall(f"{re.escape(char)}+", text)
    return max((len(run) for run in runs), default=0)


def download_name(session: SessionFile, entry_id: str | None, extension: str) -> str:
    """The file name a download gets: the session file's own (pi's ``<time>_<id>``), or with the branch's
    entry, in characters any file system and ``Content-Disposition`` take."""
    stem = _safe(session.path.stem, 160)
    return f"{stem}.branch-{_safe(entry_id, 40)}.{extension}" if entry_id is not None else f"{stem}.{extension}"


def _safe(text: str, limit: int) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", text)[:limit].strip(".") or "session"


def _file_bytes(path: Path, end: int) -> bytes:
    """The file's first ``end`` bytes, opened as the core opens a session file: a FIFO or a device put in
    its place since it was read is refused (NotARegularFile), where reading it could wait forever."""
    fd, _ = open_regular(path)
    with open(fd, "rb") as file:
        return file.read(end)


# --------------------------------------------------------------------------------------- uploads


@dataclass(frozen=True)
class Uploaded:
    session: SessionFile
    forked_from: SessionInfo | None  # the session it is a fork of, as the uploader sees it
    skipped: int  # lines the core cannot read, kept as they were


def upload(access: Access, data: bytes, cwd: str) -> Uploaded:
    """Store an uploaded ``.jsonl`` as a new session in ``cwd``'s folder. Refused (nothing written)
    unless the core reads it as a session.

    What is stored depends only on what the uploader may see, so an upload tells nothing of sessions
    they may not see: their id is given to a new session of its own (a fork of the session with that
    id when they may see it: ``parentSession`` names it), and a ``parentSession`` naming a session they
    may not see is dropped, so nobody can claim a fork of a session that is not theirs. Only an
    uploader who sees every session keeps the file whole, when no session has its id."""
    if not may_create_in(access, cwd):
        raise PermissionDenied("You may add sessions only to your own or your teams' workspaces.")
    if len(data) > settings.PITREE_MAX_UPLOAD_BYTES:
        raise UploadError(f"The file has {len(data):,} bytes; the limit is {settings.PITREE_MAX_UPLOAD_BYTES:,}.")
    checked = _check(data)
    header = dict(checked.index.header or {})
    session_id = str(header.get("id"))
    taken, existing = _existing(session_id)
    same_id = _as_seen(access, existing)
    if access.actor.sees_everything and not taken and URL_SAFE_ID.fullmatch(session_id):
        content, forked_from = data, None
    else:
        header["id"] = session_id = E.new_session_id()
        if same_id is not None:
            header["timestamp"] = E.now_iso()  # a fork by upload, made now
        named = header.pop("parentSession", None)
        forked_from = same_id or _as_seen(access, catalog().session_named(named) if isinstance(named, str) else None)
        if forked_from is not None:
            header["parentSession"] = str(forked_from.path.absolute())
        content = E.dump_line(header) + data[_header_end(data) :]
    stamp = header.get("timestamp")
    folder = Path(catalog().root) / encode_cwd(cwd)
    path = folder / E.session_file_name(
        stamp if isinstance(stamp, str) and _ISO.fullmatch(stamp) else E.now_iso(), session_id
    )
    write_new(path, content, fsync=settings.PITREE_FSYNC)  # its folders synced too, as for a new session
    _created_by(access, session_id)
    return Uploaded(SessionFile.open(path), forked_from, len(checked.index.skipped()))


def _as_seen(access: Access, info: SessionInfo | None) -> SessionInfo | None:
    """``info`` as the actor sees it (titled as their share shows it); None when they may not see it."""
    return next(iter(visible_sessions(access, [info])), None) if info is not None else None


def _check(data: bytes) -> SessionFile:
    """The upload read by the core from a file of its own (outside the sessions folder)."""
    with tempfile.TemporaryDirectory(prefix="pitree-upload-") as folder:
        path = Path(folder) / "upload.jsonl"
        path.write_bytes(data)
        try:
            session = SessionFile(path, fsync=False, max_line_bytes=settings.PITREE_MAX_LINE_BYTES)
        except SessionError as error:
            raise UploadError(
                f"This is not a session pitree can read: {str(error).removeprefix(f'{path}: ')}"
            ) from None
        if not isinstance((session.index.header or {}).get("id"), str):
            raise UploadError("The session header has no id.")
        return session


def _existing(session_id: str) -> tuple[bool, SessionInfo | None]:
    """Whether a file here is named for this session id, and the session it holds when it is one."""
    try:
        path = catalog().locate(session_id)
    except UnknownSession:
        return False, None
    except SessionError:
        return True, None  # several files hold it, or one named for it is no session
    return True, catalog().info(path)


def _header_end(data: bytes) -> int:
    """Where the line after the header starts: the header is the first line holding a JSON object, as
    the core reads it (lines before it are skipped there, and dropped here)."""
    start = 0
    while start < len(data):
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end + 1
        try:
            if isinstance(loads_line(data[start:end].rstrip(b"\r\n")), dict):
                return end
        except BadLine:
            pass
        start = end
    return len(data)
