"""Who writes the assistant's replies: the offline responder or an OpenAI-compatible server.
(Selection lives here: a ``select.py`` next to scripts would shadow the standard library's module.)
"""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from .base import Assistant, AssistantError, Reply
from .offline import DEFAULT_DELAY, OfflineAssistant
from .openai_compat import OpenAICompatAssistant

__all__ = ["Assistant", "AssistantError", "OfflineAssistant", "OpenAICompatAssistant", "Reply", "get_assistant"]


def get_assistant() -> Assistant:
    """The backend the settings ask for, built now so that changed settings (and tests) take effect.

    Optional settings beyond ``settings.py``: ``PITREE_OPENAI_PROVIDER`` (the provider name stored on
    replies) and ``PITREE_OPENAI_MAX_RETRIES`` (the SDK's retries of a failed request; 0 by default, so
    an error shows at once rather than after every retry's timeout).
    """
    choice = str(getattr(settings, "PITREE_ASSISTANT", "offline")).lower()
    if choice == "offline":
        return OfflineAssistant(delay=float(getattr(settings, "PITREE_OFFLINE_DELAY", DEFAULT_DELAY)))
    if choice == "openai":
        return OpenAICompatAssistant(
            base_url=settings.PITREE_OPENAI_BASE_URL,
            model=settings.PITREE_OPENAI_MODEL,
            api_key=settings.PITREE_OPENAI_API_KEY,
            timeout=float(settings.PITREE_OPENAI_TIMEOUT),
            provider=getattr(settings, "PITREE_OPENAI_PROVIDER", None) or None,
            max_retries=int(getattr(settings, "PITREE_OPENAI_MAX_RETRIES", 0)),
        )
    raise ImproperlyConfigured(f"PITREE_ASSISTANT={choice!r}: expected 'offline' or 'openai'")
