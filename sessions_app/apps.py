"""App configuration; the explicit label keeps it apart from django.contrib.sessions."""

from django.apps import AppConfig


class SessionsAppConfig(AppConfig):
    name = "sessions_app"
    label = "sessions_app"
    verbose_name = "pitree sessions"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # A grant changed anywhere (a page, the admin, a command: shares, teams, workspaces, users,
        # signing out) makes the sockets it may concern ask again what they may receive; a failed
        # sign-in, from whichever page, is counted per address (password spraying).
        from .access import changes, guessing  # noqa: F401, PLC0415 (Django's apps are ready only now)
