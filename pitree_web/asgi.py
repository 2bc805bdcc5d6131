"""ASGI entry point: HTTP goes to Django, websockets to Channels consumers.

Run with `manage.py runserver` (daphne's, since daphne is first in INSTALLED_APPS)
or `daphne pitree_web.asgi:application`.
"""

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pitree_web.settings")

from django.core.asgi import get_asgi_application

# Set up Django (app registry, settings) before importing anything that touches models.
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402
from django.conf import settings  # noqa: E402

from sessions_app.live import shutdown  # noqa: E402
from sessions_app.live.routing import websocket_urlpatterns  # noqa: E402

http_app = django_asgi_app
if settings.DEBUG:
    # Plain daphne serves no static files; in DEBUG let Django's finders serve them.
    from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler

    http_app = ASGIStaticFilesHandler(django_asgi_app)

shutdown.install()

application = ProtocolTypeRouter(
    {
        "http": http_app,
        "websocket": AllowedHostsOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
    }
)
