"""The websocket of a session page: joins the session's group and turns group events into htmx
out-of-band swaps. For now the events are the chunks of a reply being written; entries themselves
reach the page with the HTTP response that wrote them."""

from __future__ import annotations

from typing import Any

from asgiref.sync import sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.http import Http404
from django.utils.html import escape

from ..services.lookup import open_session
from .groups import session_group


class SessionConsumer(AsyncWebsocketConsumer):
    """One open tab of one session."""

    group: str = ""

    async def connect(self) -> None:
        session_id = self.scope["url_route"]["kwargs"]["session_id"]
        try:
            await sync_to_async(open_session, thread_sensitive=False)(session_id)
        except Http404:
            await self.close(code=4404)
            return
        self.group = session_group(session_id)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()

    async def disconnect(self, code: int) -> None:
        if self.group:
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        """Tabs only listen; anything they send is ignored."""

    async def reply_progress(self, event: dict[str, Any]) -> None:
        """The whole text so far of a reply being written, into the tab that shows its placeholder (other
        tabs have no such element; the Live work will show it there too)."""
        await self.send(
            text_data=f'<div id="stream-{escape(event["reply"])}" hx-swap-oob="innerHTML">{escape(event["text"])}</div>'
        )

    async def reply_finished(self, event: dict[str, Any]) -> None:
        """The stored entry reaches this tab with the answer to its request; nothing to do here yet."""
