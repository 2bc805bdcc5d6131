"""Root URL configuration: the sessions app, accounts and sharing, and Django's admin (users, teams,
workspaces, shares)."""

from django.contrib import admin
from django.contrib.auth.decorators import login_not_required
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic import RedirectView

from sessions_app import accounts_urls, sharing_urls

urlpatterns = [
    path("", include("sessions_app.urls")),
    path("", include((sharing_urls.urlpatterns, "sharing"))),
    path("accounts/", include((accounts_urls.urlpatterns, "accounts"))),
    path("admin/", admin.site.urls),
    # What a browser asks for when a document names no icon (a raw JSON line, say): the app's own.
    path(
        "favicon.ico",
        login_not_required(RedirectView.as_view(url=static("pitree/favicon.svg"), permanent=True)),
        name="favicon",
    ),
]

handler400 = "pitree_web.errors.bad_request"
