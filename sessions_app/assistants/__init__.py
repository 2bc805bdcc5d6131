"""Who writes the assistant's replies: the offline responder or an OpenAI-compatible server.

Usage from a view (async)::

    assistant = get_assistant()
    stream = assistant.stream(convert_to_llm(context.messages))
    async for chunk in stream:        # blocking work runs in a worker thread
        ...send chunk to the browser...
    store.append(stream.reply.draft())  # exactly one assistant entry, errors included

Selection lives here rather than in a ``select.py``: a module named ``select`` next to scripts
would shadow the standard library module of that name.
"""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from .base import Assistant, Cancel, Finish, Reply, ReplyStream, StopReason
from .offline import DEFAULT_DELAY, OfflineAssistant
from .openai_compat import OpenAICompatAssistant

__all__ = [
    "Assistant",
    "Cancel",
    "Finish",
    "OfflineAssistant",
    "OpenAICompatAssistant",
    "Reply",
    "ReplyStream",
    "StopReason",
    "get_assistant",
]


def get_assistant() -> Assistant:
    """The backend the settings ask for, built now so that changed settings (and tests) take effect.

    Optional settings beyond those in ``settings.py``: ``PITREE_OFFLINE_DELAY`` (seconds between
    offline chunks) and ``PITREE_OPENAI_PROVIDER`` (the provider name stored on replies).
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
        )
    raise ImproperlyConfigured(f"PITREE_ASSISTANT={choice!r}: expected 'offline' or 'openai'")
