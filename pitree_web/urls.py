"""Root URL configuration: everything user-facing lives in sessions_app."""

from django.urls import include, path

urlpatterns = [
    path("", include("sessions_app.urls")),
]
