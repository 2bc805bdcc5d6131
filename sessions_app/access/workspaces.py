"""Workspace folders and their owners: a user's personal workspace, assigning a folder, and where new
sessions of an actor go."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q

from ..models import Workspace
from ..sessionfiles.fork import encode_cwd
from ..sessionfiles.store import read_header
from .grants import Access


class WorkspaceError(Exception):
    """A folder that cannot be assigned (the message says why)."""


def personal_workspace(user: Any) -> Workspace:
    """The user's own workspace, made on first need. Its folder is the one for ``PITREE_DEFAULT_CWD``
    when that folder is still nobody's and the user is a superuser (the first owner keeps what
    pitree did before accounts existed; a superuser sees every folder anyway); otherwise the first of
    ``PITREE_DEFAULT_CWD/<user name>``, ``…/<user name>-2`` … whose folder is nobody's and not on disk
    yet, so that nobody is handed sessions another program left there."""
    found = Workspace.objects.filter(owner=user, personal=True).first()
    if found is not None:
        return found
    base = os.path.abspath(settings.PITREE_DEFAULT_CWD)
    candidates = [base] if user.is_superuser else []
    name = user.get_username()
    candidates += [os.path.join(base, name)] + [os.path.join(base, f"{name}-{n}") for n in range(2, 100)]
    root = Path(settings.PITREE_SESSIONS_DIR)
    for cwd in candidates:
        folder = encode_cwd(cwd)
        if Workspace.objects.filter(folder=folder).exists():
            continue
        if cwd != base and os.path.lexists(root / folder):
            continue
        try:
            with transaction.atomic():
                return Workspace.objects.create(folder=encode_cwd(cwd), cwd=cwd, owner=user, personal=True)
        except IntegrityError:
            found = Workspace.objects.filter(owner=user, personal=True).first()
            if found is not None:
                return found
    raise WorkspaceError(f"no free folder for {name}'s workspace under {base}")


def assign(folder: str, *, user: Any = None, team: Any = None, cwd: str = "") -> Workspace:
    """Give a folder of the sessions root to a user or a team (replacing its owner, if any)."""
    if (user is None) == (team is None):
        raise WorkspaceError("a folder is owned by one user or one team")
    if not folder or folder in {".", ".."} or "/" in folder or "\\" in folder or "\x00" in folder:
        raise WorkspaceError(f"{folder!r} is not a folder name of the sessions root")
    workspace, _ = Workspace.objects.update_or_create(
        folder=folder,
        defaults={"owner": user, "team": team, "cwd": cwd or recorded_cwd(folder), "personal": False},
    )
    return workspace


def recorded_cwd(folder: str) -> str:
    """The working directory a folder's sessions record (the newest file's header), for sessions made
    there later; "" when none says."""
    path = Path(settings.PITREE_SESSIONS_DIR) / folder
    try:
        files = sorted((f for f in os.scandir(path) if f.name.endswith(".jsonl")), key=lambda f: f.name, reverse=True)
    except OSError:
        return ""
    for item in files[:20]:
        try:
            cwd = read_header(item.path).get("cwd")
        except Exception:  # any file may be in a shared folder: the next one may say
            continue
        if isinstance(cwd, str) and encode_cwd(cwd) == folder:
            return cwd
    return ""


def workspace_cwds(folders: Iterable[str]) -> dict[str, str]:
    """The working directory each of ``folders`` that is a workspace records (for its name)."""
    rows = Workspace.objects.filter(folder__in=list(folders)).exclude(cwd="").values_list("folder", "cwd")
    return dict(rows)


def writable(access: Access) -> list[Workspace]:
    """The workspaces new sessions of the actor may go to, their personal one first."""
    if not access.actor.signed_in:
        return []
    user = access.actor.user
    own = personal_workspace(user)
    others = Workspace.objects.filter(Q(owner=user) | Q(team__in=user.groups.all())).exclude(pk=own.pk)
    return [own, *others.order_by("folder")]


def default_cwd(access: Access) -> str:
    """Where a new session of the actor goes unless they say otherwise."""
    if not access.actor.signed_in:
        return settings.PITREE_DEFAULT_CWD
    return personal_workspace(access.actor.user).cwd or settings.PITREE_DEFAULT_CWD


def may_create_in(access: Access, cwd: str) -> bool:
    """Whether the actor may start sessions for ``cwd``: its folder is one of their workspaces (a
    superuser: anywhere). A folder nobody owns is not taken by typing its name: pi may write there."""
    return access.may_write_folder(encode_cwd(cwd))
