"""Websocket URL patterns, mounted by pitree_web.asgi."""

from django.urls import URLPattern, path, register_converter

from ..converters import SessionIdConverter
from .consumers import SessionConsumer, SessionListConsumer

register_converter(SessionIdConverter, "wsid")

websocket_urlpatterns: list[URLPattern] = [
    path("ws/s/<wsid:session_id>/", SessionConsumer.as_asgi()),
    path("ws/sessions/", SessionListConsumer.as_asgi()),
]
