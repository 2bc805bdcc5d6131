"""App configuration; the explicit label keeps it apart from django.contrib.sessions."""

from django.apps import AppConfig


class SessionsAppConfig(AppConfig):
    name = "sessions_app"
    label = "sessions_app"
    verbose_name = "pitree sessions"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # A share revoked or deleted anywhere (a page, the admin, a command) closes its open sockets.
        from .access import shares  # noqa: F401
