"""``python manage.py accounts …``: users, teams, workspace folders and one-time sign-in links.

- ``add-user NAME [--superuser] [--team TEAM …]``: a user who signs in first by the one-time link printed;
- ``sign-in-link NAME [--hours H]``: a new one-time sign-in link for a user;
- ``join TEAM USER …`` / ``leave TEAM USER …``: team membership (teams are Django groups, made on first use);
- ``assign (--user NAME | --team TEAM) [--cwd DIR] -- FOLDER``: give a folder of the sessions root to its
  owners (``--`` first: pi's folder names start with ``--`` themselves);
- ``folders``: every folder of the sessions root and who owns it (nobody: only superusers see it);
- ``first-run``: when no account exists, make the owner and print their one-time link (``./scripts/run``).

``--url`` (or ``PITREE_URL``, else ``PITREE_BIND`` as ``./scripts/run`` reads it) is the address links
are printed under. Failures are one line on stderr
and a non-zero exit.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand, CommandError, CommandParser

from sessions_app.access import signin
from sessions_app.access.workspaces import WorkspaceError, assign, personal_workspace
from sessions_app.models import Workspace


class Command(BaseCommand):
    help = "Users, teams, workspace folders and one-time sign-in links of pitree."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--url",
            default=os.environ.get("PITREE_URL") or "http://" + (os.environ.get("PITREE_BIND") or "127.0.0.1:8000"),
            help="the address links are printed under (default: $PITREE_URL, else http://$PITREE_BIND, as "
            "./scripts/run listens)",
        )
        sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

        p = sub.add_parser("add-user", help="a new user; prints a one-time sign-in link for them")
        p.add_argument("name", metavar="NAME")
        p.add_argument("--email", default="")
        p.add_argument("--superuser", action="store_true", help="sees and administers everything")
        p.add_argument("--team", action="append", default=[], metavar="TEAM", help="a team to join (repeatable)")

        p = sub.add_parser("sign-in-link", help="a new one-time sign-in link for a user")
        p.add_argument("name", metavar="NAME")
        p.add_argument("--hours", type=int, default=None, help="how long it works (default PITREE_SIGNIN_LINK_HOURS)")

        for verb, text in (("join", "add users to a team (made if new)"), ("leave", "take users out of a team")):
            p = sub.add_parser(verb, help=text)
            p.add_argument("team", metavar="TEAM")
            p.add_argument("names", metavar="USER", nargs="+")

        p = sub.add_parser("assign", help="give a folder of the sessions root to a user or a team")
        p.add_argument(
            "folder", metavar="FOLDER", help="a folder name under PITREE_SESSIONS_DIR, after --: -- --home-me-app--"
        )
        owner = p.add_mutually_exclusive_group(required=True)
        owner.add_argument("--user", metavar="NAME")
        owner.add_argument("--team", metavar="TEAM")
        p.add_argument("--cwd", default="", help="working directory new sessions there record")

        sub.add_parser("folders", help="every folder of the sessions root and its owner")
        sub.add_parser("first-run", help="with no account yet: make the owner and print a one-time link")

    def handle(self, *args: Any, command: str, url: str, **options: Any) -> None:
        self.base = url.rstrip("/")
        getattr(self, "do_" + command.replace("-", "_"))(**options)

    def link(self, token: str) -> str:
        return self.base + signin.link_path(token)

    def user(self, name: str) -> Any:
        found = get_user_model().objects.filter(username=name).first()
        if found is None:
            raise CommandError(f"no user named {name!r}")
        return found

    # ------------------------------------------------------------------ users and links

    def do_add_user(self, *, name: str, email: str, superuser: bool, team: list[str], **_: Any) -> None:
        User = get_user_model()
        if User.objects.filter(username=name).exists():
            raise CommandError(f"a user named {name!r} exists already")
        make = User.objects.create_superuser if superuser else User.objects.create_user
        user = make(username=name, email=email, password=None)
        for team_name in team:
            Group.objects.get_or_create(name=team_name)[0].user_set.add(user)
        workspace = personal_workspace(user)
        self.stdout.write(f"{name}: workspace {workspace.folder}; sign in once at {self.link(signin.mint(user))}")

    def do_sign_in_link(self, *, name: str, hours: int | None, **_: Any) -> None:
        if hours is not None and hours < 1:
            raise CommandError("--hours must be at least 1")
        self.stdout.write(self.link(signin.mint(self.user(name), hours)))

    def do_first_run(self, **_: Any) -> None:
        token = signin.first_owner()
        if token is None:
            return  # accounts exist: nothing secret is printed on later starts
        owner = get_user_model().objects.get()
        self.stdout.write(
            f"pitree: made the owner account {owner.get_username()!r}. Sign in once (single use, "
            f"{settings.PITREE_SIGNIN_LINK_HOURS} h) at:\n  {self.link(token)}\n"
            "Later: .venv/bin/python manage.py accounts sign-in-link NAME"
        )

    # ------------------------------------------------------------------ teams

    def do_join(self, *, team: str, names: list[str], **_: Any) -> None:
        group, _created = Group.objects.get_or_create(name=team)
        group.user_set.add(*[self.user(name) for name in names])
        self.stdout.write(f"{team}: {', '.join(sorted(group.user_set.values_list('username', flat=True)))}")

    def do_leave(self, *, team: str, names: list[str], **_: Any) -> None:
        group = Group.objects.filter(name=team).first()
        if group is None:
            raise CommandError(f"no team named {team!r}")
        group.user_set.remove(*[self.user(name) for name in names])
        self.stdout.write(
            f"{team}: {', '.join(sorted(group.user_set.values_list('username', flat=True))) or '(empty)'}"
        )

    # ------------------------------------------------------------------ folders

    def do_assign(self, *, folder: str, user: str | None, team: str | None, cwd: str, **_: Any) -> None:
        group = None
        if team is not None:
            group = Group.objects.filter(name=team).first()
            if group is None:
                raise CommandError(f"no team named {team!r}")
        try:
            workspace = assign(folder, user=self.user(user) if user else None, team=group, cwd=cwd)
        except WorkspaceError as error:
            raise CommandError(str(error)) from None
        if not (Path(settings.PITREE_SESSIONS_DIR) / folder).is_dir():
            self.stderr.write(f"note: {folder} is not a folder of {settings.PITREE_SESSIONS_DIR} (yet)")
        self.stdout.write(f"{workspace.folder}: {workspace.owner_name}")

    def do_folders(self, **_: Any) -> None:
        root = Path(settings.PITREE_SESSIONS_DIR)
        owned = {ws.folder: ws for ws in Workspace.objects.select_related("owner", "team")}
        on_disk = sorted(entry.name for entry in os.scandir(root) if entry.is_dir()) if root.is_dir() else []
        for folder in sorted(set(on_disk) | set(owned)):
            found = owned.get(folder)
            owner = found.owner_name if found else "nobody (superusers only)"
            missing = "" if folder in on_disk else "  (no such folder yet)"
            self.stdout.write(f"{folder}\t{owner}{missing}")
