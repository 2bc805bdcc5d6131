"""Signing in and out, one-time sign-in links, setting a password, and who wrote an entry (on hover)."""

from __future__ import annotations

from typing import Any, cast

from django.contrib import messages
from django.contrib.auth import login, update_session_auth_hash
from django.contrib.auth.decorators import login_not_required, login_required
from django.contrib.auth.forms import PasswordChangeForm, SetPasswordForm
from django.contrib.auth.models import User
from django.contrib.auth.views import LoginView
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET
from django_ratelimit.decorators import ratelimit

from ..access import signin
from ..access.authorship import author_of
from ..access.guessing import address_locked_out
from ..access.web import open_session
from ..services.lookup import entry_row
from .shares import LINK_GROUP, link_rate


class SignInView(LoginView):
    """Django's sign-in page; from an address whose sign-ins failed too often lately, whatever the user
    names (``access.guessing``), it says so (429) instead of trying."""

    redirect_authenticated_user = True

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if address_locked_out(request):
            return render(request, "registration/locked_out.html", {"from_address": True}, status=429)
        return super().post(request, *args, **kwargs)


@login_not_required
@ratelimit(group=LINK_GROUP, key="ip", rate=link_rate, block=True)
@require_GET
def once(request: HttpRequest, token: str) -> HttpResponse:
    """A one-time sign-in link: signs its user in and is spent; 404 when unknown, used or expired."""
    user = signin.redeem(token)
    if user is None:
        raise Http404("This sign-in link is unknown, used or expired: ask for a new one.")
    login(request, user, backend="django.contrib.auth.backends.ModelBackend")
    if not user.has_usable_password():
        messages.info(request, "You are signed in. Set a password to sign in again without a link.")
        return redirect("accounts:password")
    return redirect("sessions:list")


@login_required  # a share link's holder has no account to set a password for
def password(request: HttpRequest) -> HttpResponse:
    """Set a password (first time, after a sign-in link) or change it (the old one is asked for)."""
    user = cast(User, request.user)  # signed in: LoginRequiredMiddleware
    form_class = PasswordChangeForm if user.has_usable_password() else SetPasswordForm
    form = form_class(user, request.POST or None, label_suffix="")  # labels as the app's others go: no colon
    if request.method == "POST" and form.is_valid():
        form.save()
        update_session_auth_hash(request, form.user)
        messages.info(request, "Your password is set.")
        return redirect("sessions:list")
    return render(request, "registration/password.html", {"form": form}, status=422 if form.errors else 200)


@require_GET
def author(request: HttpRequest, session_id: str, entry_id: str) -> HttpResponse:
    """Who wrote an entry through the app, and when (shown when the pointer rests on the entry)."""
    session = open_session(request, session_id)
    entry_row(session, entry_id)
    return render(
        request, "sessions_app/partials/_author.html", {"authorship": author_of(session.session_id, entry_id)}
    )
