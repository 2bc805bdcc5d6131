"""What pages show of pi as the assistant (``get_assistant().info()``). pi answers through its own turns,
in its own process (``services.pi``), never through ``Assistant.reply``: the views hand every write that
needs the assistant to ``views.pi``. A call that gets here anyway fails, stored as a failed reply that
says so, rather than have pitree write an answer in pi's name."""

from __future__ import annotations

from ...sessionfiles.context import Message
from ..base import Assistant, AssistantError, Deltas

NOT_HERE = "pi answers in its own turns; pitree does not write its answers"


class PiAssistant(Assistant):
    name = "pi"
    label = "pi"
    server = "runs tools on this server"
    provider = ""
    model = ""
    api = ""

    async def models(self) -> list[str]:
        raise AssistantError("pi lists its models per session")

    def _reply(self, messages: list[Message], model: str, variant: int) -> Deltas:
        return _refused()

    def _summary(self, messages: list[Message], instructions: str | None) -> Deltas:
        return _refused()


async def _refused() -> Deltas:
    raise AssistantError(NOT_HERE)
    yield ""  # an async generator, as every backend's stream is
