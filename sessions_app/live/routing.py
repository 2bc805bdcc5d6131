"""Websocket URL patterns, mounted by pitree_web.asgi."""

from django.urls import URLPattern, path, re_path, register_converter

from ..converters import SessionIdConverter
from .consumers import FollowConsumer, NoSuchSocket, SessionConsumer, SessionListConsumer

register_converter(SessionIdConverter, "wsid")

websocket_urlpatterns: list[URLPattern] = [
    path("ws/s/<wsid:session_id>/", SessionConsumer.as_asgi()),
    path("ws/sessions/", SessionListConsumer.as_asgi()),
    path("ws/follow/", FollowConsumer.as_asgi()),
    re_path(r"", NoSuchSocket.as_asgi()),  # last: every other path
]
