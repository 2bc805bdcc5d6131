"""Who writes the assistant's replies: the offline responder or an OpenAI-compatible server; or pi itself,
which writes its own (``pi/``).
(Selection lives here: a ``select.py`` next to scripts would shadow the standard library's module.)
"""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from .base import Assistant, AssistantError, Reply
from .offline import OfflineAssistant
from .pi.assistant import PiAssistant

__all__ = ["Assistant", "AssistantError", "OfflineAssistant", "Reply", "get_assistant"]


def get_assistant() -> Assistant:
    """The backend the settings ask for, built now so that changed settings (and tests) take effect."""
    choice = settings.PITREE_ASSISTANT
    if choice == "offline":
        return OfflineAssistant(delay=settings.PITREE_OFFLINE_DELAY)
    if choice == "pi":
        return PiAssistant()
    if choice != "openai":
        raise ImproperlyConfigured(f"PITREE_ASSISTANT={choice!r}: expected 'offline', 'openai' or 'pi'")
    # Imported here, not above: the SDK takes tens of milliseconds and pydantic to import, a cost every
    # command and server process would pay at start-up, even those that never talk to a model.
    from .openai_compat import OpenAICompatAssistant  # noqa: PLC0415

    return OpenAICompatAssistant(
        base_url=settings.PITREE_OPENAI_BASE_URL,
        model=settings.PITREE_OPENAI_MODEL,
        api_key=settings.PITREE_OPENAI_API_KEY,
        timeout=float(settings.PITREE_OPENAI_TIMEOUT),
        provider=settings.PITREE_OPENAI_PROVIDER or None,
        max_retries=settings.PITREE_OPENAI_MAX_RETRIES,
    )
