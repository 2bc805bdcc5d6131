"""``get_assistant()`` follows the settings at call time."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from sessions_app.assistants import OfflineAssistant, get_assistant
from sessions_app.assistants.openai_compat import OpenAICompatAssistant


def test_offline_by_default_and_delay_from_settings(settings) -> None:
    settings.PITREE_ASSISTANT = "offline"
    settings.PITREE_OFFLINE_DELAY = 0
    assistant = get_assistant()
    assert isinstance(assistant, OfflineAssistant)
    assert assistant.delay == 0


def test_openai_backend_built_from_settings(settings) -> None:
    settings.PITREE_ASSISTANT = "openai"
    settings.PITREE_OPENAI_BASE_URL = "http://127.0.0.1:11434/v1/"
    settings.PITREE_OPENAI_MODEL = "llama3.2"
    settings.PITREE_OPENAI_API_KEY = "k"
    settings.PITREE_OPENAI_TIMEOUT = 12.5
    assistant = get_assistant()
    assert isinstance(assistant, OpenAICompatAssistant)
    assert assistant.endpoint == "http://127.0.0.1:11434/v1/chat/completions"
    assert (assistant.model, assistant.timeout) == ("llama3.2", 12.5)
    assert (assistant.provider, assistant.api) == ("openai-compatible", "openai-completions")
    assert "llama3.2" in assistant.label


def test_provider_is_openai_for_openai_and_can_be_overridden(settings) -> None:
    settings.PITREE_ASSISTANT = "openai"
    settings.PITREE_OPENAI_BASE_URL = "https://api.openai.com/v1"
    assert get_assistant().provider == "openai"
    settings.PITREE_OPENAI_PROVIDER = "ollama"
    assert get_assistant().provider == "ollama"


def test_unknown_choice_is_a_configuration_error(settings) -> None:
    settings.PITREE_ASSISTANT = "magic"
    with pytest.raises(ImproperlyConfigured):
        get_assistant()
