"""URL patterns of sharing and transfer (namespace "teams"): a session's share page and share links,
downloads and uploads, and who wrote an entry; mounted by pitree_web.urls."""

from django.urls import path

from . import converters  # noqa: F401 - registers the "sid" and "eid" converters
from .views import accounts, shares, transfer

urlpatterns = [
    path("s/<sid:session_id>/share/", shares.share_page, name="share"),
    path("s/<sid:session_id>/share/<int:share_id>/revoke/", shares.revoke_share, name="revoke"),
    path("s/<sid:session_id>/download.jsonl", transfer.download_jsonl, name="download_jsonl"),
    path("s/<sid:session_id>/download.md", transfer.download_markdown, name="download_md"),
    path("s/<sid:session_id>/e/<eid:entry_id>/author/", accounts.author, name="author"),
    path("l/<str:token>/", shares.link, name="link"),
    path("upload/", transfer.upload, name="upload"),
]
