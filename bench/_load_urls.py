"""pitree's URLs plus ``/bench/minimal/``: the least a Django view can do, through the same middleware."""

from django.http import HttpRequest, HttpResponse
from django.urls import path

from pitree_web.urls import urlpatterns as pitree_urlpatterns


def minimal(request: HttpRequest) -> HttpResponse:
    return HttpResponse(b"ok", content_type="text/plain")


urlpatterns = [path("bench/minimal/", minimal), *pitree_urlpatterns]
