#!/usr/bin/env python3
"""Django's command-line entry point for pitree."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pitree_web.settings")
    try:
        from django.core.management import execute_from_command_line
    except ImportError as exc:
        raise ImportError(
            "Django is not importable. Run ./scripts/run (it creates .venv) or activate .venv first."
        ) from exc
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured
    from environs import EnvError

    try:
        settings.INSTALLED_APPS  # noqa: B018  (loads pitree_web/settings.py, which reads the environment)
    except (EnvError, ImproperlyConfigured) as error:
        sys.exit(f"pitree: {error}")  # a variable that does not parse: one line that names it
    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
