"""A real pi 1.6.0 configured the way pi users configure it, in a temporary agent folder: its
``models.json`` names the fake OpenAI-compatible server of ``fake_openai`` (one model, no cost), its
``settings.json`` picks that model. Nothing of the machine's own pi configuration is read: ``HOME``
and ``PI_CODING_AGENT_DIR`` point into the temporary folder, and pi is told to make no network call of
its own (version checks, catalog refreshes).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from sessions_app.assistants.pi.command import pi_command, pi_environment
from sessions_app.assistants.pi.driver import PiSettings
from support.fake_openai import FAKE_MODEL, FakeOpenAI

PROVIDER = "fake"


def agent_folder(root: Path, fake: FakeOpenAI, thinking_model: str = "") -> Path:
    """An agent folder whose model is the fake's (and, when named, a second one that thinks)."""
    agent = root / "agent"
    agent.mkdir(parents=True, exist_ok=True)
    zero = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}
    models = [{"id": FAKE_MODEL, "name": "Fake", "reasoning": False, "input": ["text"], "cost": zero}]
    if thinking_model:
        models.append({"id": thinking_model, "name": "Thinking", "reasoning": True, "input": ["text"], "cost": zero})
    provider = {"baseUrl": fake.base_url, "api": "openai-completions", "apiKey": "none", "models": models}
    (agent / "models.json").write_text(json.dumps({"providers": {PROVIDER: provider}}))
    (agent / "settings.json").write_text(json.dumps({"defaultProvider": PROVIDER, "defaultModel": FAKE_MODEL}))
    return agent


def agent_environment(root: Path, fake: FakeOpenAI, thinking_model: str = "") -> dict[str, str]:
    """The server's environment as pi gets it, pointed at the temporary agent folder."""
    home = root / "home"
    home.mkdir(parents=True, exist_ok=True)
    return {
        **pi_environment(os.environ),
        "HOME": str(home),
        "PI_CODING_AGENT_DIR": str(agent_folder(root, fake, thinking_model)),
        "PI_OFFLINE": "1",
        "PI_SKIP_VERSION_CHECK": "1",
        "PI_TELEMETRY": "0",
    }


def pi_settings(root: Path, fake: FakeOpenAI, **waits: float) -> PiSettings:
    """How the tests start pi: the pinned one, with the temporary agent folder. Waits are generous, for
    a machine shared with other test runs (pi takes 1 to 8 s to start here)."""
    chosen: dict[str, float] = {"start_wait": 90.0, "answer_wait": 60.0, **waits}
    return PiSettings(argv=pi_command(), env=agent_environment(root, fake), **chosen)
