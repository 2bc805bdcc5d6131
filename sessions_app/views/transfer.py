"""Take a session elsewhere: download it (or one branch) as ``.jsonl`` for pi or as Markdown, and
upload a ``.jsonl`` from pi or a teammate into a workspace."""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.defaultfilters import filesizeformat
from django.views.decorators.http import require_GET, require_http_methods

from ..access.web import access_of, open_session
from ..access.workspaces import default_cwd, writable
from ..forms import EntryIdField, FieldsForm
from ..transfer import downloads, uploads
from ..transfer.markdown import markdown
from .responses import form_error, permalink


class DownloadForm(forms.Form):
    entry = EntryIdField(required=False)


@require_GET
def download_jsonl(request: HttpRequest, session_id: str) -> HttpResponse:
    """The session (as the grant sees it), or with ``?entry=`` the branch through that entry, as pi
    reads it."""
    return _download(request, session_id, downloads.jsonl, "application/x-ndjson")


@require_GET
def download_markdown(request: HttpRequest, session_id: str) -> HttpResponse:
    """The branch through ``?entry=`` (default: the session's position) as Markdown."""
    return _download(request, session_id, markdown, "text/markdown; charset=utf-8")


def _download(request: HttpRequest, session_id: str, build: downloads.Builder, content_type: str) -> HttpResponse:
    session = open_session(request, session_id)
    form = DownloadForm(request.GET)
    if not form.is_valid():
        return form_error(request, form, status=400)
    found = build(session, form.cleaned_data["entry"] or None)
    response = HttpResponse(found.data, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{found.name}"'
    return response


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
def upload(request: HttpRequest) -> HttpResponse:
    """Add a session file to one of the user's workspaces: a new file, never replacing one."""
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
        except OSError as error:
            form.add_error(None, f"The session file could not be written: {error.strerror}.")
            return render(request, "sessions_app/upload.html", context, status=409)
        context["done"] = done
        context["url"] = permalink(done.session, None)
    return render(request, "sessions_app/upload.html", context)
