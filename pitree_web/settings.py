"""Django settings for pitree.

Flat and driven by environment variables (all listed in README.md, read with ``environs`` so that a
value it cannot parse stops the start with the variable's name) so that a fresh clone runs with
embedded defaults: SQLite, an in-memory channel layer and a sessions folder under var/. DEBUG is off
unless PITREE_DEBUG says otherwise, so what runs by default is what would be deployed.
"""

from __future__ import annotations

import os
import secrets
import sys
import warnings
from datetime import timedelta
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured
from environs import Env, validate

from sessions_app.sessionfiles.index import MAX_LINE_BYTES

BASE_DIR = Path(__file__).resolve().parent.parent

# Everything pitree creates is its owner's alone (files 0600, folders 0700): sessions, the database
# (with sign-in sessions), the search index and caches. Set here, which every pitree process loads
# first; pitree_web/private.py tightens what older starts left readable.
os.umask(0o077)

# Machine-local state (database, secret key, sample sessions).
VAR_DIR = BASE_DIR / "var"
VAR_DIR.mkdir(mode=0o700, parents=True, exist_ok=True)

# A variable set to nothing (``PITREE_DEBUG= ./scripts/run``) means its default, as if it were unset.
for _name in [name for name, value in os.environ.items() if name.startswith("PITREE_") and not value.strip()]:
    del os.environ[_name]

env = Env(expand_vars=False)


def _load_or_create_secret_key(path: Path) -> str:
    """Read the key stored in `path`, creating it once so it survives restarts.

    O_EXCL makes concurrent first starts agree on a single key.
    """
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        key = path.read_text(encoding="ascii").strip()
        if key:
            return key
        raise ImproperlyConfigured(f"{path} is empty: delete it or set PITREE_SECRET_KEY") from None
    key = secrets.token_urlsafe(50)
    with os.fdopen(fd, "w", encoding="ascii") as f:
        f.write(key + "\n")
    return key


# --- core Django -----------------------------------------------------------------------

SECRET_KEY = env.str("PITREE_SECRET_KEY", "") or _load_or_create_secret_key(VAR_DIR / "secret_key")

DEBUG = env.bool("PITREE_DEBUG", False)


# Enough for ./scripts/run on 127.0.0.1:8000 and localhost; "testserver" is Django's test client.
def _names(name: str, default: list[str]) -> list[str]:
    """A comma-separated list, as people type it ("a.example, b.example"): spaces around names dropped."""
    return [item.strip() for item in env.list(name, default) if item.strip()]


ALLOWED_HOSTS = _names("PITREE_ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]", "testserver"])

# Behind a TLS-terminating proxy: the header it sets (``X-Forwarded-Proto``) and the origins users
# type, so that CSRF and the websocket origin check accept https pages.
PITREE_BEHIND_TLS_PROXY: bool = env.bool("PITREE_BEHIND_TLS_PROXY", False)
if PITREE_BEHIND_TLS_PROXY:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    # Browsers that reached it over https keep to https (Django's SecurityMiddleware sends it on https
    # answers only); 0 sends none.
    SECURE_HSTS_SECONDS = env.int("PITREE_HSTS_SECONDS", 365 * 24 * 3600, validate=validate.Range(min=0))
CSRF_TRUSTED_ORIGINS: list[str] = _names("PITREE_TRUSTED_ORIGINS", [])

# Sign-in and CSRF cookies travel over https only. Unset, PITREE_SECURE_COOKIES decides per request
# (pitree_web.cookies): secure, except for plain http from this machine (./scripts/run's 127.0.0.1)
# and while debugging; behind a TLS proxy always. Set, it says so for every request.
_secure_cookies: bool | None = env.bool("PITREE_SECURE_COOKIES", None)
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = _secure_cookies if _secure_cookies is not None else PITREE_BEHIND_TLS_PROXY
PITREE_SECURE_COOKIES_AUTO: bool = _secure_cookies is None and not DEBUG
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
# Share links carry their token in the path: no page may tell another site where it came from.
SECURE_REFERRER_POLICY = "same-origin"

# daphne's app only replaces ``runserver`` with one that serves ASGI (websockets included). Loaded for
# every command it would import Twisted into each ``manage.py pitree`` call (~0.3 s), so it is there
# for ``runserver`` alone; ./scripts/run starts daphne itself.
_RUNSERVER = ["daphne"] if sys.argv[1:2] == ["runserver"] else []
INSTALLED_APPS = [
    *_RUNSERVER,
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "django_htmx",
    "axes",
    "django_ratelimit",
    "sessions_app.apps.SessionsAppConfig",
]

# Every middleware is async-capable (pitree_web/middleware.py says why), so async views run on the
# event loop, not in a worker thread.
MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "pitree_web.cookies.SecureCookiesMiddleware",  # before those that set the cookies: it sees them leave
    "pitree_web.middleware.WhiteNoiseMiddleware",  # async-capable, its file index made once per process
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # Every page needs a signed-in user or a working share link (Django's LoginRequiredMiddleware,
    # which also lets a link holder through); sign-in and opening a link are ``login_not_required``.
    "sessions_app.access.web.LoginOrLinkMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "sessions_app.middleware.RefusalMiddleware",
    "sessions_app.middleware.ResponseHeadersMiddleware",
    "pitree_web.middleware.RatelimitMiddleware",
    "axes.middleware.AxesMiddleware",  # last, as django-axes asks
]

# --- accounts ----------------------------------------------------------------------------

# django-axes counts failed sign-ins per user name and address and refuses more for a while; pitree
# counts them per address alone too, with a higher limit (password spraying: sessions_app.access.guessing).
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "sessions_app.access.guessing.AddressLimitBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env.int("PITREE_SIGNIN_ATTEMPTS", 5, validate=validate.Range(min=1))
AXES_COOLOFF_TIME = timedelta(minutes=env.int("PITREE_SIGNIN_COOLOFF_MINUTES", 15, validate=validate.Range(min=1)))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
AXES_VERBOSE = False
# No access log of sign-ins: it stores each one's path, and a one-time link's path is its token.
AXES_DISABLE_ACCESS_LOG = True
PITREE_SIGNIN_ADDRESS_ATTEMPTS: int = env.int("PITREE_SIGNIN_ADDRESS_ATTEMPTS", 20, validate=validate.Range(min=1))
# Both count the visitor's address: behind a TLS proxy, the one the proxy forwards (pitree_web.addresses).
AXES_CLIENT_IP_CALLABLE = "pitree_web.addresses.client_address"
RATELIMIT_IP_META_KEY = "pitree_web.addresses.client_address"

LOGIN_URL = "accounts:login"
LOGIN_REDIRECT_URL = "sessions:list"
LOGOUT_REDIRECT_URL = "accounts:login"

# Share-link guessing: django-ratelimit counts opened links per address (in the "default" cache:
# per process, or shared through Redis when PITREE_REDIS_URL is set).
PITREE_LINK_RATE = env.str("PITREE_LINK_RATE", "30/m", validate=validate.Regexp(r"^\d+/\d*[smhd]$"))
RATELIMIT_VIEW = "sessions_app.views.shares.too_many"
# django-ratelimit wants a cache shared by every process; one process's memory is what there is
# without Redis, which is right for one process (several processes each count on their own).
SILENCED_SYSTEM_CHECKS = ["django_ratelimit.E003", "django_ratelimit.W001"]

# A one-time sign-in link (./scripts/run prints one for the first owner) works this long.
PITREE_SIGNIN_LINK_HOURS: int = env.int("PITREE_SIGNIN_LINK_HOURS", 24, validate=validate.Range(min=1))

ROOT_URLCONF = "pitree_web.urls"
ASGI_APPLICATION = "pitree_web.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# Accounts, grants, shares and authorship (never an entry: those live in the session files). SQLite in
# PITREE_DB on one machine; PostgreSQL (PITREE_DATABASE_URL) when several machines share it, since
# SQLite's locking is not reliable on a network filesystem.
if env.str("PITREE_DATABASE_URL", ""):
    DATABASES = {"default": env.dj_db_url("PITREE_DATABASE_URL", conn_health_checks=True)}
    if DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
        raise ImproperlyConfigured("PITREE_DATABASE_URL: expected postgres://USER:PASSWORD@HOST:PORT/NAME")
    # Under ASGI each request runs in a thread of its own: a connection kept per thread would be a new
    # one per request, which costs PostgreSQL more than a page costs pitree. Each process keeps a pool
    # (psycopg's) that a request's connection goes back to when it ends, checked before it is lent
    # again; at most 20 connections a process (pitree_web/dbthreads.py: the event loop's worker threads
    # give theirs back after each call, a request's thread before an async view, which may last minutes).
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {"min_size": 1, "max_size": 20, "timeout": 30}
    MIDDLEWARE.append("pitree_web.dbthreads.ConnectionGivenBack")  # runs last, right before the view
    # Every machine must sign the same way, or a browser signed in on one is signed out by the next.
    if not env.str("PITREE_SECRET_KEY", ""):
        raise ImproperlyConfigured("PITREE_DATABASE_URL is set: set PITREE_SECRET_KEY too, the same on every machine")
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": env.path("PITREE_DB", VAR_DIR / "db.sqlite3").expanduser(),
            # Several threads write grants, sign-ins and authorship: each transaction takes the write
            # lock as it begins and waits for it (a read that turned into a write failed at once with
            # "database is locked" when another had written meanwhile: a sign-in answered 500 under
            # load); readers go on beside a writer (WAL). PostgreSQL's row locks and constraints do the
            # same there (``select_for_update``, ``F()`` updates, a unique row inserted once).
            "OPTIONS": {
                "timeout": 20,
                "transaction_mode": "IMMEDIATE",
                "init_command": "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL",
            },
        }
    }

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
# WhiteNoise serves static/ straight from the finders: no collectstatic step (and no STATIC_ROOT), in
# DEBUG or not.
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = DEBUG
# WhiteNoise answers with a FileResponse over a file iterator; under ASGI Django reads such a body
# in a thread and warns each time. Static files here are a few small scripts and styles.
warnings.filterwarnings("ignore", "StreamingHttpResponse must consume synchronous iterators", Warning)

# Rendered entry fragments (see sessions_app.templatetags.pitree.entry_html): per process, bounded.
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    "fragments": {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
        "LOCATION": "fragments",
        "TIMEOUT": None,
        "OPTIONS": {"MAX_ENTRIES": 5000},
    },
}

# One process: in-memory layer. Several processes: Redis (pip install -e '.[redis]').
PITREE_REDIS_URL: str = env.str("PITREE_REDIS_URL", "")
if PITREE_REDIS_URL:
    # Shared by the processes: what django-ratelimit counts (opened share links) is counted once; a
    # Redis that dies costs only that sharing (pitree_web/cache.py), never a sign-in.
    CACHES["default"] = {"BACKEND": "pitree_web.cache.FallbackRedisCache", "LOCATION": PITREE_REDIS_URL}
    CHANNEL_LAYERS = {
        "default": {
            # channels_redis's layer, its calls waiting for one of a bounded set of connections.
            "BACKEND": "pitree_web.redislayer.RedisLayer",
            # redis-py 8 gives up on a read after 5 s by default, just when channels_redis's 5 s blocking
            # pop returns: an idle listener would fail with "Timeout reading". Wait longer than the pop.
            "CONFIG": {"hosts": [{"address": PITREE_REDIS_URL, "socket_timeout": 30}]},
        }
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

# Error pages are pitree's own templates (404.html, 500.html …); nothing about the server shows.
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"refusal": {"()": "pitree_web.logs.Refusal"}},
    "formatters": {"server": {"format": "%(asctime)s %(levelname)-8s %(message)s"}},  # as daphne's own lines
    "handlers": {
        "console": {"class": "logging.StreamHandler"},
        "refusals": {"class": "logging.StreamHandler", "filters": ["refusal"], "formatter": "server"},
        "server": {"class": "logging.StreamHandler", "formatter": "server"},
    },
    "loggers": {
        "django.request": {"handlers": ["console"], "level": "ERROR", "propagate": False},
        "django.security": {"handlers": ["refusals"], "level": "WARNING", "propagate": False},
        # django-axes names each successful sign-in's path at INFO: a one-time link's is its token.
        "axes": {"level": "WARNING"},
        # pi (PITREE_ASSISTANT=pi): its stderr, line by line, and its starts and ends, in the server's log.
        "sessions_app.assistants.pi": {"handlers": ["server"], "level": "INFO"},
    },
}


# --- pitree ----------------------------------------------------------------------------

# Folder of JSONL session files; may be a pi agent folder such as ~/.pi/agent/sessions.
PITREE_SESSIONS_DIR: Path = env.path("PITREE_SESSIONS_DIR", VAR_DIR / "sessions").expanduser()

# Full-text search index: a cache the session files feed (delete it and it is rebuilt).
PITREE_SEARCH_DB: Path = env.path("PITREE_SEARCH_DB", VAR_DIR / "search.sqlite3").expanduser()

# Replies being written keep their text here as it streams, so that a killed server loses none of it
# (sessions_app/services/journal.py): the next start stores what it finds as stopped replies.
PITREE_JOURNAL_DIR: Path = env.path("PITREE_JOURNAL_DIR", VAR_DIR / "replies").expanduser()

# Folder of caches the files feed (the session listing); deleting it loses nothing.
PITREE_CACHE_DIR: Path = env.path("PITREE_CACHE_DIR", VAR_DIR).expanduser()

# fsync each append (durability over speed).
PITREE_FSYNC: bool = env.bool("PITREE_FSYNC", True)

# Working directory recorded in sessions created from the browser.
PITREE_DEFAULT_CWD: str = os.path.expanduser(env.str("PITREE_DEFAULT_CWD", str(BASE_DIR)))

# Largest user message accepted, in bytes of UTF-8.
PITREE_MAX_MESSAGE_BYTES: int = env.int("PITREE_MAX_MESSAGE_BYTES", 1_048_576, validate=validate.Range(min=1))

# Largest request body the server reads at all. A message travels URL-encoded, and every byte of it
# may become three ("%E2"), next to a few small fields: anything larger cannot be a valid write and
# is refused with 413 while it arrives (see pitree_web.bodylimit).
PITREE_MAX_BODY_BYTES: int = 3 * PITREE_MAX_MESSAGE_BYTES + 64 * 1024
DATA_UPLOAD_MAX_MEMORY_SIZE = PITREE_MAX_BODY_BYTES

# Seconds a connection has to send a request's headers (then its body the same again, plus a second
# per 64 KiB it announces), and connections one address may hold open (pitree_web.connections); behind
# a TLS proxy every connection comes from the proxy, which limits connections per visitor itself.
PITREE_REQUEST_SECONDS: float = env.float(
    "PITREE_REQUEST_SECONDS", 30.0, validate=validate.Range(min=0, min_inclusive=False)
)
PITREE_CONNECTIONS_PER_ADDRESS: int = env.int("PITREE_CONNECTIONS_PER_ADDRESS", 128, validate=validate.Range(min=1))

# Searches, downloads and uploads one person may have under way at once; more answer 429
# (sessions_app/views/busy.py).
PITREE_BUSY_PER_USER: int = env.int("PITREE_BUSY_PER_USER", 4, validate=validate.Range(min=1))

# Session lists (the list page, each page's sidebar) one person may hold open in a process: each is
# rendered again at every change of the sessions folder. One more is closed with 4429, which the page says.
PITREE_LIST_SOCKETS_PER_USER: int = env.int("PITREE_LIST_SOCKETS_PER_USER", 50, validate=validate.Range(min=1))

# Largest session file accepted by the upload page; its request may be that much larger than others.
PITREE_MAX_UPLOAD_BYTES: int = env.int("PITREE_MAX_UPLOAD_BYTES", 32 << 20, validate=validate.Range(min=1))
PITREE_MAX_UPLOAD_BODY_BYTES: int = max(PITREE_MAX_BODY_BYTES, PITREE_MAX_UPLOAD_BYTES + 64 * 1024)

# Largest export an import reads (the sum of what it holds, a zip's unpacked); the import page
# receives it in pieces (PITREE_IMPORT_CHUNK_BYTES each, under PITREE_MAX_BODY_BYTES) into
# PITREE_IMPORTS_DIR, a scratch folder emptied as imports end.
PITREE_MAX_IMPORT_BYTES: int = env.int("PITREE_MAX_IMPORT_BYTES", 4 << 30, validate=validate.Range(min=1))
PITREE_IMPORT_CHUNK_BYTES: int = max(4096, min(2 << 20, PITREE_MAX_BODY_BYTES - 64 * 1024))
PITREE_IMPORTS_DIR: Path = env.path("PITREE_IMPORTS_DIR", VAR_DIR / "imports").expanduser()

# Claude Code's projects folder (~/.claude/projects), followed as a read-only source of sessions by
# the server (sessions_app/services/claude.py); unset: not followed.
PITREE_CLAUDE_PROJECTS: Path | None = env.path("PITREE_CLAUDE_PROJECTS", None)
if PITREE_CLAUDE_PROJECTS is not None:
    PITREE_CLAUDE_PROJECTS = PITREE_CLAUDE_PROJECTS.expanduser()

# Longest line of a session file that is read; a longer one is skipped and reported, never buffered.
PITREE_MAX_LINE_BYTES: int = env.int("PITREE_MAX_LINE_BYTES", MAX_LINE_BYTES, validate=validate.Range(min=1))

# Who answers: "offline" (built-in, no network), "openai" (an OpenAI-compatible server) or "pi" (the pi
# coding agent itself, which runs its tools on this server: see the README).
PITREE_ASSISTANT: str = env.str("PITREE_ASSISTANT", "offline").strip().lower()
if PITREE_ASSISTANT not in {"offline", "openai", "pi"}:
    raise ImproperlyConfigured(f"PITREE_ASSISTANT={PITREE_ASSISTANT!r}: expected 'offline', 'openai' or 'pi'")

# pi runs only in sessions whose working folder is one of these folders or inside one (":"-separated).
PITREE_PI_ROOTS: list[Path] = [
    Path(os.path.abspath(os.path.expanduser(root)))
    for root in env.str("PITREE_PI_ROOTS", "").split(":")
    if root.strip()
]
# The command that starts pi (default: pi 1.6.0 as scripts/install-pi installs it), and how long an idle
# pi is kept before it is stopped.
PITREE_PI_COMMAND: str = env.str("PITREE_PI_COMMAND", "")
PITREE_PI_IDLE_SECONDS: float = env.float(
    "PITREE_PI_IDLE_SECONDS", 600.0, validate=validate.Range(min=0, min_inclusive=False)
)

PITREE_OPENAI_BASE_URL: str = env.str("PITREE_OPENAI_BASE_URL", "http://127.0.0.1:8080/v1")
PITREE_OPENAI_MODEL: str = env.str("PITREE_OPENAI_MODEL", "gpt-4o-mini")
PITREE_OPENAI_API_KEY: str = env.str("PITREE_OPENAI_API_KEY", "") or os.environ.get("OPENAI_API_KEY", "").strip()
PITREE_OPENAI_TIMEOUT: float = env.float(
    "PITREE_OPENAI_TIMEOUT", 60.0, validate=validate.Range(min=0, min_inclusive=False)
)
# Provider name stored on replies (default: the base URL's host); the SDK's retries of a failed request
# (0: an error shows at once rather than after every retry's timeout).
PITREE_OPENAI_PROVIDER: str = env.str("PITREE_OPENAI_PROVIDER", "")
PITREE_OPENAI_MAX_RETRIES: int = env.int("PITREE_OPENAI_MAX_RETRIES", 0, validate=validate.Range(min=0, max=10))

# Seconds a reply being written may have nothing new from its model server before its tabs show it as
# waiting, with the time it has waited and Stop (a server that hangs says nothing until its timeout).
PITREE_REPLY_WAITING_AFTER: float = env.float(
    "PITREE_REPLY_WAITING_AFTER", 10.0, validate=validate.Range(min=0, min_inclusive=False)
)

# Seconds between the offline responder's chunks (it streams like a model would; 0 in tests).
PITREE_OFFLINE_DELAY: float = env.float("PITREE_OFFLINE_DELAY", 0.04, validate=validate.Range(min=0))

# How open tabs learn that a session file grew: "auto" (inotify, except on network filesystems, where
# another machine's writes are invisible to it) or "poll" (os.stat every 250 ms, anywhere).
PITREE_WATCH: str = env.str("PITREE_WATCH", "auto", validate=validate.OneOf(["auto", "poll"]))
