"""An inbox stays in its groups however long it is open: channel layers forget a group's members after
``group_expiry`` (a day by default), so it joins them again every ``GROUP_RENEWAL`` seconds, and it
leaves them when closed."""

from __future__ import annotations

import asyncio
from typing import Any

from channels.layers import InMemoryChannelLayer

from sessions_app.channel_layer import calls as layer_module
from sessions_app.channel_layer.calls import Inbox


async def _deliveries(monkeypatch: Any, renewal: float) -> tuple[list[dict[str, Any]], InMemoryChannelLayer]:
    monkeypatch.setattr(layer_module, "GROUP_RENEWAL", renewal)
    layer = InMemoryChannelLayer(group_expiry=1)
    received: list[dict[str, Any]] = []

    async def handle(message: dict[str, Any]) -> None:
        received.append(message)

    inbox = Inbox(layer, handle, "test inbox", ["grants.1"])
    await inbox.open()
    await asyncio.sleep(2.2)  # past the layer's expiry of members
    await layer.group_send("grants.1", {"type": "grant.changed"})
    await asyncio.sleep(0.1)
    await inbox.close()
    return received, layer


async def test_an_inbox_open_past_the_layer_s_expiry_still_hears_its_groups(monkeypatch) -> None:
    received, layer = await _deliveries(monkeypatch, renewal=0.3)
    assert received == [{"type": "grant.changed"}]
    assert not layer.groups.get("grants.1")  # left when closed


async def test_without_renewal_the_layer_forgets_the_member(monkeypatch) -> None:
    """The failure the renewal prevents, shown on the same layer."""
    received, _ = await _deliveries(monkeypatch, renewal=3600)
    assert received == []
