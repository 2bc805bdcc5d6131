"""Django settings for pitree.

Flat and driven by environment variables (all listed in README.md) so that a fresh
clone runs with embedded defaults: SQLite, an in-memory channel layer and a sessions
folder under var/.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent

# Machine-local state (database, secret key, sample sessions, collected static files).
VAR_DIR = BASE_DIR / "var"
VAR_DIR.mkdir(parents=True, exist_ok=True)


# --- environment helpers -------------------------------------------------------------

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def env_str(name: str, default: str) -> str:
    """Value of `name`, or `default` when unset or blank."""
    value = os.environ.get(name, "").strip()
    return value or default


def env_bool(name: str, default: bool) -> bool:
    """Parse a yes/no variable; a typo fails loudly instead of silently meaning "off"."""
    raw = os.environ.get(name, "").strip().lower()
    if not raw:
        return default
    if raw in _TRUE:
        return True
    if raw in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r}: expected one of 1/0, true/false, yes/no, on/off")


def env_int(name: str, default: int) -> int:
    """Parse an integer variable (underscores allowed, as in 1_048_576)."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        return int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r}: expected an integer") from None


def env_float(name: str, default: float) -> float:
    """Parse a number variable (for durations in seconds)."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        return float(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r}: expected a number") from None


def env_list(name: str, default: list[str]) -> list[str]:
    """Parse a comma-separated list, ignoring blanks."""
    raw = os.environ.get(name, "")
    items = [item.strip() for item in raw.split(",") if item.strip()]
    return items or default


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

SECRET_KEY = os.environ.get("PITREE_SECRET_KEY", "").strip() or _load_or_create_secret_key(VAR_DIR / "secret_key")

DEBUG = env_bool("PITREE_DEBUG", True)

ALLOWED_HOSTS = env_list("PITREE_ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]", "testserver"])

INSTALLED_APPS = [
    "daphne",  # first: its runserver serves ASGI (websockets included)
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "sessions_app.apps.SessionsAppConfig",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "sessions_app.middleware.SessionErrorMiddleware",
    "sessions_app.middleware.ContentSecurityPolicyMiddleware",
]

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

DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": VAR_DIR / "db.sqlite3",
    }
}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "static"

# One process: in-memory layer. Several processes: Redis (pip install -e '.[redis]').
_redis_url = os.environ.get("PITREE_REDIS_URL", "").strip()
if _redis_url:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [_redis_url]},
        }
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}


# --- pitree ----------------------------------------------------------------------------

# Folder of JSONL session files; may be a pi agent folder such as ~/.pi/agent/sessions.
PITREE_SESSIONS_DIR: Path = Path(os.path.expanduser(env_str("PITREE_SESSIONS_DIR", str(VAR_DIR / "sessions"))))

# Full-text search index: a cache the session files feed (delete it and it is rebuilt).
PITREE_SEARCH_DB: Path = Path(os.path.expanduser(env_str("PITREE_SEARCH_DB", str(VAR_DIR / "search.sqlite3"))))

# fsync each append (durability over speed).
PITREE_FSYNC: bool = env_bool("PITREE_FSYNC", True)

# Working directory recorded in sessions created from the browser.
PITREE_DEFAULT_CWD: str = os.path.expanduser(env_str("PITREE_DEFAULT_CWD", str(BASE_DIR)))

# Largest user message accepted, in bytes of UTF-8.
PITREE_MAX_MESSAGE_BYTES: int = env_int("PITREE_MAX_MESSAGE_BYTES", 1_048_576)

# Who answers: "offline" (built-in, no network) or "openai" (an OpenAI-compatible server).
PITREE_ASSISTANT: str = env_str("PITREE_ASSISTANT", "offline").lower()
if PITREE_ASSISTANT not in {"offline", "openai"}:
    raise ImproperlyConfigured(f"PITREE_ASSISTANT={PITREE_ASSISTANT!r}: expected 'offline' or 'openai'")

PITREE_OPENAI_BASE_URL: str = env_str("PITREE_OPENAI_BASE_URL", "http://127.0.0.1:8080/v1")
PITREE_OPENAI_MODEL: str = env_str("PITREE_OPENAI_MODEL", "gpt-4o-mini")
PITREE_OPENAI_API_KEY: str = env_str("PITREE_OPENAI_API_KEY", env_str("OPENAI_API_KEY", ""))
PITREE_OPENAI_TIMEOUT: float = env_float("PITREE_OPENAI_TIMEOUT", 60.0)

# Seconds between the offline responder's chunks (it streams like a model would; 0 in tests).
PITREE_OFFLINE_DELAY: float = env_float("PITREE_OFFLINE_DELAY", 0.04)
