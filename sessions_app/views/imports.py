"""The Import page: another product's export brought into one of the user's workspaces.

With JavaScript the page sends the export in pieces (each under the request size limit, so that no
request of the upload holds more than a piece in the server's memory, whatever the export's size),
then starts the import and follows its progress; without, the form posts the file whole (up to
``PITREE_MAX_UPLOAD_BYTES``) and the status page refreshes itself. The work is ``access.imports``'s.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.template.defaultfilters import filesizeformat
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from ..access import imports
from ..access.web import access_of
from ..access.workspaces import default_cwd, writable
from ..forms import FieldsForm
from .responses import form_error, is_htmx

ACCEPTED = ".zip,.json,.jsonl,application/zip,application/json,application/x-ndjson"


class ImportForm(FieldsForm):
    file = forms.FileField(label="Export", widget=forms.FileInput(attrs={"accept": ACCEPTED}))
    cwd = forms.CharField(
        max_length=4096, label="Workspace", widget=forms.TextInput(attrs={"list": "workspace-choices"})
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["file"].help_text = (
            "ChatGPT's export (.zip, or its conversations.json), an Open WebUI or LibreChat JSON export, or a "
            f"Claude Code session (.jsonl, or a .zip of its project folder); at most {filesizeformat(settings.PITREE_MAX_IMPORT_BYTES)}"
        )


class StartForm(forms.Form):
    name = forms.CharField(max_length=4096)
    size = forms.IntegerField(min_value=1)
    cwd = forms.CharField(max_length=4096)


class PieceForm(forms.Form):
    offset = forms.IntegerField(min_value=0)


def _context(request: HttpRequest, form: ImportForm) -> dict[str, Any]:
    return {"form": form, "workspaces": writable(access_of(request)), "chunk": settings.PITREE_IMPORT_CHUNK_BYTES}


@login_required  # imports go to a workspace: a share link's holder has none
@require_http_methods(["GET", "POST"])
def import_page(request: HttpRequest) -> HttpResponse:
    """The form; posted without JavaScript, the file whole, which starts its import at once."""
    access = access_of(request)
    form = ImportForm(request.POST or None, request.FILES or None, initial={"cwd": default_cwd(access)})
    if request.method == "GET":
        return render(request, "sessions_app/import.html", _context(request, form))
    if not form.is_valid():
        return render(request, "sessions_app/import.html", _context(request, form), status=422)
    uploaded = form.cleaned_data["file"]
    try:
        job = imports.start_job(access, uploaded.name or "export", uploaded.size, form.cleaned_data["cwd"])
        arrived = 0
        for piece in uploaded.chunks():
            arrived = imports.receive(job, arrived, piece)
        imports.run_job(access, job)
    except imports.JobRefused as error:
        form.add_error("file", str(error))
        return render(request, "sessions_app/import.html", _context(request, form), status=422)
    return redirect("sharing:import_status", job_id=job.id)


@login_required
@require_POST
def import_start(request: HttpRequest) -> HttpResponse:
    """A new import whose export the page is about to send in pieces: where to send them."""
    form = StartForm(request.POST)
    if not form.is_valid():
        return form_error(request, form)
    try:
        job = imports.start_job(access_of(request), **form.cleaned_data)
    except imports.JobRefused as error:
        return JsonResponse({"error": str(error)}, status=422)
    return JsonResponse(
        {
            "piece": reverse("sharing:import_piece", args=[job.id]),
            "run": reverse("sharing:import_run", args=[job.id]),
            "chunk": settings.PITREE_IMPORT_CHUNK_BYTES,
        }
    )


def _job(request: HttpRequest, job_id: str) -> imports.Job:
    job = imports.job_of(access_of(request), job_id)
    if job is None:
        raise Http404("No such import.")
    return job


@login_required
@require_POST
def import_piece(request: HttpRequest, job_id: str) -> HttpResponse:
    """A piece of the export (the request's body) at ``?offset=``."""
    job = _job(request, job_id)
    form = PieceForm(request.GET)
    if not form.is_valid():
        return form_error(request, form, status=400)
    try:
        arrived = imports.receive(job, form.cleaned_data["offset"], request.body)
    except imports.JobRefused as error:
        return JsonResponse({"error": str(error), "arrived": job.export.stat().st_size}, status=409)
    return JsonResponse({"arrived": arrived})


@login_required
@require_POST
def import_run(request: HttpRequest, job_id: str) -> HttpResponse:
    """Start the import of an export that arrived whole; the page then follows its progress."""
    job = _job(request, job_id)
    try:
        imports.run_job(access_of(request), job)
    except imports.JobRefused as error:
        return JsonResponse({"error": str(error)}, status=409)
    return redirect("sharing:import_status", job_id=job.id)


@login_required
@require_GET
def import_status(request: HttpRequest, job_id: str) -> HttpResponse:
    """How far the import is, what it wrote (htmx polls the progress part alone)."""
    job = _job(request, job_id)
    status = job.status()  # read once: the import writes it meanwhile
    context = {"job": job, "status": status, "running": imports.is_running(status)}
    if is_htmx(request):
        return render(request, "sessions_app/partials/_import_status.html", context)
    return render(request, "sessions_app/import_status.html", context)
