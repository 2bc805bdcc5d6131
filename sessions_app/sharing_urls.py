"""URL patterns of sharing and transfer (namespace "sharing"): a session's share page and share links,
downloads and uploads, and who wrote an entry; mounted by pitree_web.urls."""

from django.urls import path

from . import converters  # noqa: F401 - registers the "sid" and "eid" converters
from .views import accounts, imports, shares, transfer

urlpatterns = [
    path("s/<sid:session_id>/share/", shares.share_page, name="share"),
    path("s/<sid:session_id>/share/<int:share_id>/revoke/", shares.revoke_share, name="revoke"),
    path("s/<sid:session_id>/download.jsonl", transfer.download_jsonl, name="download_jsonl"),
    path("s/<sid:session_id>/download.md", transfer.download_markdown, name="download_md"),
    path("s/<sid:session_id>/e/<eid:entry_id>/author/", accounts.author, name="author"),
    path("l/<str:token>/", shares.link, name="link"),
    path("upload/", transfer.upload, name="upload"),
    path("import/", imports.import_page, name="import"),
    path("import/start/", imports.import_start, name="import_start"),
    path("import/<str:job_id>/", imports.import_status, name="import_status"),
    path("import/<str:job_id>/piece/", imports.import_piece, name="import_piece"),
    path("import/<str:job_id>/run/", imports.import_run, name="import_run"),
]
