"""Root URL configuration: the sessions app, accounts and sharing, and Django's admin (users, teams,
workspaces, shares)."""

from django.contrib import admin
from django.urls import include, path

from sessions_app.teams_urls import accounts_patterns, teams_patterns

urlpatterns = [
    path("", include("sessions_app.urls")),
    path("", include((teams_patterns, "teams"))),
    path("accounts/", include((accounts_patterns, "accounts"))),
    path("admin/", admin.site.urls),
]

handler400 = "pitree_web.errors.bad_request"
