"""ASGI entry point: HTTP goes to Django, websockets to Channels consumers.

Served by daphne: ``daphne pitree_web.asgi:application`` (what ``./scripts/run`` does) or daphne's
``manage.py runserver``. Static files are served by WhiteNoise inside Django, so both serve them.
"""

import os
import sys

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pitree_web.settings")

from django.core.asgi import get_asgi_application

# Set up Django (app registry, settings) before importing anything that touches models.
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.conf import settings  # noqa: E402

from sessions_app.live import shutdown  # noqa: E402
from sessions_app.live.routing import websocket_urlpatterns  # noqa: E402

from .origin import SameOriginValidator  # noqa: E402

if "daphne.server" in sys.modules:
    # daphne is the server (its command line and runserver import it before the app): it buffers
    # whole request bodies before calling the app, so the body limit is set inside it.
    from django.urls import reverse

    from .bodylimit import install

    install(settings.PITREE_MAX_BODY_BYTES, {reverse("teams:upload"): settings.PITREE_MAX_UPLOAD_BODY_BYTES})

shutdown.install()

application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        "websocket": SameOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
    }
)
