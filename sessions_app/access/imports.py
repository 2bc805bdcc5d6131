"""Imports as an actor: into one of their workspaces (their own unless they name another they may
write), each new session recorded as theirs, and a conversation whose session was moved elsewhere
appended to there only when they may write it. From the page, an import is a job: the export arrives
in pieces, then is imported in a thread of its own while the page follows its progress."""

from __future__ import annotations

import os
import re
import secrets
import shutil
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import connections

from ..imports.run import CREATED, Progress, Report, import_export
from ..sessionfiles.catalog import Catalog
from ..sessionfiles.errors import SessionError
from .authorship import FILE, record
from .grants import Access
from .workspaces import may_create_in


def import_for(
    access: Access, path: Path, cwd: str, catalog: Catalog, *, name: str | None = None, progress: Progress | None = None
) -> Report:
    """Import the export at ``path`` into the workspace ``cwd`` (``ExportError`` refuses it whole)."""
    if not may_create_in(access, cwd):
        raise PermissionDenied("You may import only into your own or your teams' workspaces.")
    elsewhere = {info.id: info.path for info in catalog.sessions()}

    def locate(session_id: str, own: Path) -> Path | None:
        if own.exists():
            return own
        found = elsewhere.get(session_id)
        if found is None:
            return None
        grant = access.grant(session_id, Path(found))
        if grant is None or not grant.can_write:
            raise SessionError("an earlier import of this conversation was moved where you may not write")
        return Path(found)

    report = import_export(
        path,
        root=catalog.root,
        cwd=cwd,
        fsync=settings.PITREE_FSYNC,
        name=name,
        max_bytes=settings.PITREE_MAX_IMPORT_BYTES,
        progress=progress,
        locate=locate,
    )
    if access.actor.signed_in:
        for outcome in report.outcomes:
            if outcome.status == CREATED:
                record(outcome.session_id, FILE, access.actor.user)
    return report


# ----------------------------------------------------------------------------- imports from the page

JOB_ID = re.compile(r"[A-Za-z0-9_-]{22}")
UPLOADING, READING, WRITING, DONE, FAILED = "uploading", "reading", "writing", "done", "failed"
_KEPT_SECONDS = 24 * 3600  # a finished import's report stays this long
_STATUS_EVERY = 0.25  # seconds between two writes of a running import's progress
_SHOWN_NOTES = 50


@dataclass(frozen=True)
class Job:
    """An import started from the page: a folder of ``PITREE_IMPORTS_DIR`` holding what it is
    (``meta.json``), the export as it arrives (``export``), and how far it is (``status.json``, written
    whole by each change, so any process serving the page can read it)."""

    id: str
    folder: Path
    meta: dict[str, Any]

    @property
    def export(self) -> Path:
        return self.folder / "export"

    def status(self) -> dict[str, Any]:
        try:
            return orjson.loads((self.folder / "status.json").read_bytes())
        except (OSError, orjson.JSONDecodeError):
            return {"state": FAILED, "message": "This import's progress was lost."}

    def tell(self, **status: Any) -> None:
        scratch = self.folder / f"status.{threading.get_ident()}.json"
        scratch.write_bytes(orjson.dumps(status))
        os.replace(scratch, self.folder / "status.json")


class JobRefused(Exception):
    """A request about an import that cannot be met (the message says why)."""


def start_job(access: Access, name: str, size: int, cwd: str) -> Job:
    """A new import of a ``size``-byte export called ``name``, into ``cwd``, waiting for its bytes."""
    if not may_create_in(access, cwd):
        raise PermissionDenied("You may import only into your own or your teams' workspaces.")
    if size > settings.PITREE_MAX_IMPORT_BYTES:
        raise JobRefused(f"The export has {size:,} bytes; the limit is {settings.PITREE_MAX_IMPORT_BYTES:,}.")
    _forget_old_jobs()
    job_id = secrets.token_urlsafe(16)
    folder = Path(settings.PITREE_IMPORTS_DIR) / job_id
    folder.mkdir(parents=True)
    meta = {"owner": access.actor.user.pk, "name": Path(name).name[:200] or "export", "size": size, "cwd": cwd}
    (folder / "meta.json").write_bytes(orjson.dumps(meta))
    job = Job(job_id, folder, meta)
    job.export.touch()
    job.tell(state=UPLOADING, done=0, total=size)
    return job


def job_of(access: Access, job_id: str) -> Job | None:
    """The actor's import ``job_id``, or None (someone else's, or none at all)."""
    if not JOB_ID.fullmatch(job_id) or not access.actor.signed_in:
        return None
    folder = Path(settings.PITREE_IMPORTS_DIR) / job_id
    try:
        meta = orjson.loads((folder / "meta.json").read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    return Job(job_id, folder, meta) if meta.get("owner") == access.actor.user.pk else None


def receive(job: Job, offset: int, data: bytes) -> int:
    """Add a piece of the export at ``offset``; returns how many bytes have arrived. A piece for
    another offset (sent twice, or out of order) is refused with the offset expected."""
    if job.status().get("state") != UPLOADING:
        raise JobRefused("This import is not receiving its export any more.")
    with open(job.export, "ab") as export:
        arrived = export.tell()
        if offset != arrived:
            raise JobRefused(f"expected the bytes from {arrived}")
        if arrived + len(data) > job.meta["size"]:
            raise JobRefused("More bytes than the export was said to have.")
        export.write(data)
        arrived += len(data)
    job.tell(state=UPLOADING, done=arrived, total=job.meta["size"])
    return arrived


def run_job(access: Access, job: Job) -> None:
    """Import the export, once all of it has arrived, in a thread of its own (a page's request does
    not wait for a 300 MB import), telling its progress as it goes."""
    if job.status().get("state") != UPLOADING:
        raise JobRefused("This import has already started.")
    if job.export.stat().st_size != job.meta["size"]:
        raise JobRefused("The export has not arrived whole.")
    job.tell(state=READING, done=0, total=job.meta["size"])
    threading.Thread(target=_run, args=(access, job), name=f"pitree-import-{job.id}", daemon=True).start()


def _run(access: Access, job: Job) -> None:
    last = 0.0

    def progress(stage: str, done: int, total: int) -> None:
        nonlocal last
        now = time.monotonic()
        if now - last >= _STATUS_EVERY or done == total:
            last = now
            job.tell(state=stage, done=done, total=total)

    catalog = Catalog(
        Path(settings.PITREE_SESSIONS_DIR),
        max_line_bytes=settings.PITREE_MAX_LINE_BYTES,
        cache_folder=settings.PITREE_CACHE_DIR,
    )
    try:
        try:
            report = import_for(access, job.export, job.meta["cwd"], catalog, name=job.meta["name"], progress=progress)
        finally:
            job.export.unlink(missing_ok=True)  # gone before the status says the import has ended
    except (SessionError, PermissionDenied) as error:
        job.tell(state=FAILED, message=str(error))
    except Exception:
        job.tell(state=FAILED, message="The import stopped on an error of pitree's own; nothing more was written.")
        raise
    else:
        job.tell(
            state=DONE,
            kind=report.kind,
            outcomes=[
                {"title": o.title, "session": o.session_id, "status": o.status, "added": o.added, "reason": o.reason}
                for o in report.outcomes
            ],
            notes=report.notes[:_SHOWN_NOTES],
            more_notes=max(len(report.notes) - _SHOWN_NOTES, 0),
        )
    finally:
        connections.close_all()  # this thread's own


def _forget_old_jobs() -> None:
    folder = Path(settings.PITREE_IMPORTS_DIR)
    if not folder.is_dir():
        return
    for item in folder.iterdir():
        try:
            if time.time() - item.stat().st_mtime > _KEPT_SECONDS:
                shutil.rmtree(item)
        except OSError:
            continue


def is_running(status: dict[str, Any]) -> bool:
    return status.get("state") in (UPLOADING, READING, WRITING)
