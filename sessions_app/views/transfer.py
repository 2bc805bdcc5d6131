"""Take a session elsewhere: download it (or one branch) as ``.jsonl`` for pi or as Markdown, and
upload a ``.jsonl`` from pi or a teammate into a workspace."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseBase, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.template.defaultfilters import filesizeformat, pluralize
from django.views.decorators.http import require_GET, require_http_methods

from ..access.web import access_of, open_session
from ..access.workspaces import default_cwd, writable
from ..forms import EntryIdField, FieldsForm
from ..sessionfiles.errors import WriteFailed
from ..transfer import downloads, uploads
from ..transfer.markdown import markdown
from .busy import few_at_once
from .responses import form_error, permalink


class DownloadForm(forms.Form):
    entry = EntryIdField(required=False)


@require_GET
@few_at_once
async def download_jsonl(request: HttpRequest, session_id: str) -> HttpResponseBase:
    """The session (as the grant sees it), or with ``?entry=`` the branch through that entry, as pi
    reads it."""
    return await _download(request, session_id, downloads.jsonl, "application/x-ndjson")


@require_GET
@few_at_once
async def download_markdown(request: HttpRequest, session_id: str) -> HttpResponseBase:
    """The branch through ``?entry=`` (default: the session's position) as Markdown."""
    return await _download(request, session_id, markdown, "text/markdown; charset=utf-8")


async def _download(
    request: HttpRequest, session_id: str, build: downloads.Builder, content_type: str
) -> HttpResponseBase:
    """Async, the download made in worker threads as the client takes it: its file work never holds
    the thread every sync view shares, nor the event loop (``_sent``)."""
    session = await asyncio.to_thread(open_session, request, session_id)
    form = DownloadForm(request.GET)
    if not form.is_valid():
        return await asyncio.to_thread(form_error, request, form, status=400)
    found = await asyncio.to_thread(build, session, form.cleaned_data["entry"] or None)
    response = StreamingHttpResponse(_sent(found.pieces), content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{found.name}"'
    if found.size is not None:
        response["Content-Length"] = str(found.size)
    return response


async def _sent(pieces: downloads.Pieces) -> AsyncIterator[bytes]:
    """The pieces, each made in a worker thread; what they hold is let go of however the sending ends
    (the client gone included)."""
    try:
        while (piece := await asyncio.to_thread(next, pieces, None)) is not None:
            yield piece
    finally:
        await asyncio.to_thread(pieces.close)


class UploadForm(FieldsForm):
    file = forms.FileField(
        label="Session file", widget=forms.FileInput(attrs={"accept": ".jsonl,application/x-ndjson,application/json"})
    )
    cwd = forms.CharField(
        max_length=4096, label="Workspace", widget=forms.TextInput(attrs={"list": "workspace-choices"})
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        limit = filesizeformat(settings.PITREE_MAX_UPLOAD_BYTES)
        self.fields["file"].help_text = f"a .jsonl file from pi or a teammate, at most {limit}"


@login_required  # uploads go to a workspace: a share link's holder has none
@require_http_methods(["GET", "POST"])
async def upload(request: HttpRequest) -> HttpResponseBase:
    """Add a session file to one of the user's workspaces: a new file, never replacing one. Async, its
    work in a worker thread (a large file is read whole to be checked); a post counts among the
    person's expensive requests (``busy``)."""
    if request.method == "POST":
        return await _posted(request)
    return await asyncio.to_thread(_upload, request)


@few_at_once
async def _posted(request: HttpRequest) -> HttpResponseBase:
    return await asyncio.to_thread(_upload, request)


def _upload(request: HttpRequest) -> HttpResponse:
    access = access_of(request)
    form = UploadForm(request.POST or None, request.FILES or None, initial={"cwd": default_cwd(access)})
    context = {"form": form, "workspaces": writable(access)}
    if request.method == "POST":
        if not form.is_valid():
            return render(request, "sessions_app/upload.html", context, status=422)
        uploaded = form.cleaned_data["file"]
        if uploaded.size > settings.PITREE_MAX_UPLOAD_BYTES:
            form.add_error(
                "file", f"The file has {uploaded.size:,} bytes; the limit is {settings.PITREE_MAX_UPLOAD_BYTES:,}."
            )
            return render(request, "sessions_app/upload.html", context, status=413)
        try:
            done = uploads.upload(access, uploaded.read(), form.cleaned_data["cwd"])
        except uploads.UploadError as error:
            form.add_error("file", str(error))
            return render(request, "sessions_app/upload.html", context, status=422)
        except WriteFailed as error:
            form.add_error(None, f"The session file could not be written: {error.why}; nothing was written.")
            return render(request, "sessions_app/upload.html", context, status=409)
        except OSError as error:
            form.add_error(None, f"The session file could not be written: {error.strerror}.")
            return render(request, "sessions_app/upload.html", context, status=409)
        messages.success(request, _saved_notice(done))
        return redirect(permalink(done.session, None))
    return render(request, "sessions_app/upload.html", context)


def _saved_notice(done: uploads.Uploaded) -> str:
    """What the session page says once the upload has taken the user there."""
    fork = f", a fork of “{done.forked_from.title[:80]}”" if done.forked_from else ""
    kept = ""
    if done.skipped:
        were = "was kept as it was" if done.skipped == 1 else "were kept as they were"
        kept = f" {done.skipped:,} line{pluralize(done.skipped)} pitree cannot read {were}."
    return f"Uploaded: saved as a new session{fork}.{kept}"
