"""Error pages Django renders itself (handler400). A request body over the limit is a 413 that says
the limit, not a 400; htmx requests get the reason in the page's flash area, like every refusal.

Under daphne such a body never gets this far (``pitree_web.bodylimit`` refuses it while it arrives);
this answers the same for any other way a request reaches Django.
"""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from sessions_app.views.responses import form_error, is_htmx


def too_large_reason() -> str:
    """What a 413 says: the largest message, which is what a person can act on."""
    return (
        f"This request is larger than pitree accepts: a message may hold at most "
        f"{settings.PITREE_MAX_MESSAGE_BYTES:,} bytes. Nothing was written."
    )


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    too_large = isinstance(exception, RequestDataTooBig)
    status = 413 if too_large else 400
    if hasattr(request, "htmx") and is_htmx(request):
        return form_error(request, too_large_reason() if too_large else "This request was malformed.", status=status)
    if too_large:
        return render(request, "413.html", {"reason": too_large_reason()}, status=413)
    return render(request, "400.html", status=400)
