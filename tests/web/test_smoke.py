"""The project is wired the way runserver, daphne and the templates rely on."""

import runpy
import sys
from pathlib import Path

import pytest
from channels.routing import ProtocolTypeRouter
from django.conf import settings
from django.contrib.staticfiles import finders
from django.template.loader import render_to_string

from pitree_web.asgi import application

SETTINGS_FILE = Path(__file__).resolve().parents[2] / "pitree_web" / "settings.py"


@pytest.mark.parametrize(("argv", "first"), [(["manage.py", "runserver"], "daphne"), (["manage.py", "pitree"], None)])
def test_daphne_is_first_for_runserver_alone(
    monkeypatch: pytest.MonkeyPatch, argv: list[str], first: str | None
) -> None:
    """runserver serves ASGI through daphne's app; other commands don't import Twisted for nothing."""
    monkeypatch.setattr(sys, "argv", argv)
    apps = runpy.run_path(str(SETTINGS_FILE))["INSTALLED_APPS"]
    assert (apps[0] == "daphne") == (first == "daphne") and apps.count("daphne") == (first is not None)


def test_asgi_application_routes_http_and_websockets() -> None:
    assert isinstance(application, ProtocolTypeRouter)
    assert set(application.application_mapping) == {"http", "websocket"}


def test_base_template_links_only_static_files_that_exist() -> None:
    html = render_to_string("base.html")
    prefix = settings.STATIC_URL
    linked = [part.split('"', 1)[0] for part in html.split(f'"{prefix}')[1:]]
    assert any(name.startswith("vendor/htmx-2.0.") for name in linked)
    assert any(name.startswith("vendor/htmx-ext-ws-2.0.") for name in linked)
    for name in linked:
        assert finders.find(name), name


def test_sessions_dir_fixture_points_settings_at_a_fresh_folder(sessions_dir) -> None:
    assert sessions_dir == settings.PITREE_SESSIONS_DIR
    assert sessions_dir.is_dir() and not any(sessions_dir.iterdir())
