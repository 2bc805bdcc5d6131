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
    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
