"""Sharing a session: the share page (who has it, new shares, revoking), and opening a share link."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django import forms
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_not_required
from django.contrib.auth.models import Group
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_ratelimit.decorators import ratelimit

from ..access.scoped import SessionView
from ..access.shares import BRANCH, LIVE, MODES, ShareError, make_share, open_link, revoke
from ..access.web import open_session, remember_link
from ..display.branchlist import Branch, branch_through
from ..forms import EntryIdField, FieldsForm, PositionForm
from ..models import Share
from .responses import form_error, is_htmx, permalink

MAX_DAYS = 3650
LINK_GROUP = "pitree-links"  # share and sign-in links are guessed alike: they are counted together


def link_rate(group: str, request: HttpRequest) -> str:
    """How many share or sign-in links one address may open (``PITREE_LINK_RATE``)."""
    return str(settings.PITREE_LINK_RATE)


ROLES = [
    (Share.VIEWER, "Viewer: reads it and, signed in, may fork it into a workspace of theirs."),
    (Share.COLLABORATOR, "Collaborator: also writes in it (sends, edits, labels)."),
]


class ShareForm(FieldsForm):
    """A new share: what (a kind, and the entry a branch or a snapshot goes to, picked from a list of the
    branch the page came from: ``display.branchlist``), then with whom, as what, until when."""

    mode = forms.ChoiceField(label="What", choices=MODES, initial=LIVE, widget=forms.RadioSelect)
    entry = EntryIdField(
        label="At entry", required=False, help_text="for a branch or a snapshot", widget=forms.RadioSelect
    )
    audience = forms.ChoiceField(
        label="With", choices=[("link", "anyone with the link"), ("user", "a user"), ("team", "a team")]
    )
    name = forms.CharField(max_length=150, required=False, help_text="for a user or a team")
    role = forms.ChoiceField(label="As", choices=ROLES, initial=Share.VIEWER, widget=forms.RadioSelect)
    days = forms.IntegerField(
        label="Expires after", min_value=1, max_value=MAX_DAYS, required=False, help_text="days; empty: never"
    )

    def __init__(self, *args: Any, branch: Branch, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        entry = self.fields["entry"]
        entry.widget.choices = [
            (row.entry_id, format_html('<span class="pick__role">{}</span> {}', row.role, row.preview))
            for row in branch.rows
        ]
        if branch.earlier or branch.later:
            entry.help_text = (
                f"for a branch or a snapshot; {branch.earlier} earlier and {branch.later} later messages of "
                "this branch are not listed: Share… in a message's actions lists those around it"
            )

    def clean(self) -> dict[str, Any]:
        """The user or team named, as an error of the name field (a name it refused already, too
        long say, is not looked up)."""
        data = super().clean() or {}
        audience = data.get("audience")
        data["user"] = data["team"] = None
        if audience in ("user", "team") and "name" in data:
            name = data["name"].strip()
            if not name:
                self.add_error("name", f"Name the {audience} to share with.")
            elif audience == "user":
                data["user"] = get_user_model().objects.filter(username=name, is_active=True).first()
                if data["user"] is None:
                    self.add_error("name", f"No user is named {name!r}.")
            else:
                data["team"] = Group.objects.filter(name=name).first()
                if data["team"] is None:
                    self.add_error("name", f"No team is named {name!r}.")
        return data


def _owned(request: HttpRequest, session_id: str) -> SessionView:
    session = open_session(request, session_id)
    if not session.grant.can_share:
        raise PermissionDenied("Only the members of this session's workspace share it.")
    return session


@require_http_methods(["GET", "POST"])
def share_page(request: HttpRequest, session_id: str) -> HttpResponse:
    """Who has this session, a form for a new share, and the token of a link just made (shown this
    once). ``?at=`` (the entry the page came from) is preselected, in the list of its branch; an htmx
    request gets the form alone, for the session page's dialog."""
    session = _owned(request, session_id)
    made_link, made_share = None, None
    if request.method == "POST":
        picked = request.POST.get("entry", "")
        form = ShareForm(request.POST, branch=branch_through(session, picked))
        if not form.is_valid():
            return _page(request, session, form, status=422)
        data = form.cleaned_data
        days = data["days"]
        try:
            made = make_share(
                session,
                request.user,
                role=data["role"],
                mode=data["mode"],
                entry_id=data["entry"] or "",
                user=data["user"],
                team=data["team"],
                link=data["audience"] == "link",
                expires_at=timezone.now() + timedelta(days=days) if days else None,
            )
        except ShareError as error:
            form.add_error(error.field, str(error))
            return _page(request, session, form, status=422)
        if made.token is not None:
            made_link = request.build_absolute_uri(reverse("sharing:link", args=[made.token]))
            made_share = made.share
        initial = {"entry": data["entry"], "mode": data["mode"], "role": data["role"], "audience": data["audience"]}
        form = ShareForm(initial=initial, branch=branch_through(session, data["entry"] or None))
    else:
        position = PositionForm(request.GET)
        if not position.is_valid():
            return form_error(request, position, status=400)
        at = position.cleaned_data["at"]
        entry = at if at and session.index.row(at) is not None else ""
        form = ShareForm(
            initial={"entry": entry, "mode": BRANCH if entry else LIVE}, branch=branch_through(session, at)
        )
    return _page(request, session, form, made_link=made_link, made_share=made_share)


def _page(
    request: HttpRequest,
    session: SessionView,
    form: ShareForm,
    *,
    status: int = 200,
    made_link: str | None = None,
    made_share: Share | None = None,
) -> HttpResponse:
    shares = Share.objects.filter(session_id=session.session_id).select_related("user", "team", "created_by")
    context = {
        "session": session,
        "session_id": session.session_id,
        "form": form,
        "shares": shares.order_by("-created_at"),
        "now": timezone.now(),
        "back": permalink(session, form.initial.get("entry") or form.data.get("entry") or None),
        "made_link": made_link,
        "made_share": made_share,
    }
    template = "sessions_app/partials/_share_panel.html" if is_htmx(request) else "sessions_app/share.html"
    return render(request, template, context, status=status)


@require_POST
def revoke_share(request: HttpRequest, session_id: str, share_id: int) -> HttpResponse:
    """End a share now: its link answers 404 and its open sockets close."""
    session = _owned(request, session_id)
    share = Share.objects.filter(pk=share_id, session_id=session.session_id).first()
    if share is None:
        raise Http404("No such share of this session.")
    revoke(share)
    return redirect("sharing:share", session_id=session.session_id)


@login_not_required
@ratelimit(group=LINK_GROUP, key="ip", rate=link_rate, block=True)
@require_GET
def link(request: HttpRequest, token: str) -> HttpResponse:
    """Open a share link: this browser may then see the session (at the shared entry, for a snapshot). Unknown, revoked and expired links are 404, like everything else not there."""
    share = open_link(token)
    if share is None:
        raise Http404("This link is unknown, revoked or expired.")
    remember_link(request, share.pk)
    if share.is_snapshot:
        return redirect("sessions:entry", share.session_id, share.entry_id)
    # A branch opens where it is now, as the whole session does: at its latest entry (the shared one
    # is often a question whose answers are below it).
    return redirect("sessions:session", share.session_id)


def too_many(request: HttpRequest, exception: Exception) -> HttpResponse:
    """What django-ratelimit answers when an address opened too many links."""
    response = form_error(request, "Too many attempts from this address; wait a minute and try again.", status=429)
    response["Retry-After"] = "60"
    return response
