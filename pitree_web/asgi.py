"""ASGI entry point: HTTP goes to Django, websockets to Channels consumers.

Served by daphne: ``daphne pitree_web.asgi:application`` (what ``./scripts/run`` does) or daphne's
``manage.py runserver``. Static files are served by WhiteNoise inside Django, so both serve them.
"""

import gc
import os
import sys

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pitree_web.settings")

from django.core.asgi import get_asgi_application

# Set up Django (app registry, settings) before importing anything that touches models.
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.conf import settings  # noqa: E402
from django.urls import get_resolver  # noqa: E402

from sessions_app.live import shutdown  # noqa: E402
from sessions_app.live.routing import websocket_urlpatterns  # noqa: E402

from .origin import SameOriginValidator  # noqa: E402

if "daphne.server" in sys.modules:
    # daphne is the server (its command line and runserver import it before the app): it buffers
    # whole request bodies before calling the app, so the body limit is set inside it, and so are the
    # limits on slow and numerous connections.
    from django.urls import reverse

    from . import bodylimit, connections

    larger = settings.PITREE_MAX_UPLOAD_BODY_BYTES
    bodylimit.install(
        settings.PITREE_MAX_BODY_BYTES, {reverse("sharing:upload"): larger, reverse("sharing:import"): larger}
    )
    per_address = None if settings.PITREE_BEHIND_TLS_PROXY else settings.PITREE_CONNECTIONS_PER_ADDRESS
    connections.install(settings.PITREE_REQUEST_SECONDS, per_address)

    from sessions_app.services import claude
    from sessions_app.services.journal import recover

    from .private import tighten

    tighten()  # what an older start left readable by others
    # Replies a killed server was writing: stored now, as stopped replies.
    recover(settings.PITREE_JOURNAL_DIR, sessions=settings.PITREE_SESSIONS_DIR, fsync=settings.PITREE_FSYNC)
    claude.start()  # a server follows Claude Code's sessions when PITREE_CLAUDE_PROJECTS names them

    if settings.DATABASES["default"].get("OPTIONS", {}).get("pool"):
        # daphne's event loop (the one it serves on) lends pooled connections to its worker threads
        # only for each call they run.
        from daphne.server import twisted_loop

        from .dbthreads import DatabaseThreads

        twisted_loop.set_default_executor(DatabaseThreads(thread_name_prefix="asyncio"))

shutdown.install()

application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        "websocket": SameOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
    }
)

# What the start-up builds (Django, Channels, Twisted, the URLconf and every view it imports) lives as
# long as the process: moved out of the garbage collector's reach, a full collection walks only what
# serving makes. Left in, it made each full collection a pause of 50–100 ms, which held a pushed line
# back from a hundred open tabs (bench/live_push.py: p99 at N=100 85 ms, 34 ms frozen).
get_resolver().url_patterns  # noqa: B018 (loads the URLconf, which a first request would load)
gc.freeze()
