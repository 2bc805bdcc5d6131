"""Root URL configuration: everything user-facing lives in sessions_app."""

from django.urls import include, path

urlpatterns = [
    path("", include("sessions_app.urls")),
]

handler400 = "pitree_web.errors.bad_request"
