"""A small world of people around one session, for the permission tests (tests/teams).

Sample 02 (a tree with two branches) lives in the workspace folder of the team "crew". Its people:

- ``owner``: alice, a crew member who started it (the session's owner);
- ``member``: bob, another crew member;
- ``collaborator``: carol, to whom alice shared it as collaborator (whole, live);
- ``viewer``: dave, a member of the team "readers", with which alice shared it as viewer;
- ``link``: a browser without an account that opened alice's viewer link;
- ``stranger``: erin, signed in, nothing shared with her;
- ``anonymous``: a browser without an account or a link.

Each person is a Django test client with their own cookies; ``world.cookie(role)`` gives the header a
websocket of theirs sends.
"""

from __future__ import annotations

import copy
import json
import shutil
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from django.contrib.auth.models import Group, User
from django.test import Client

from sessions_app.access import scoped
from sessions_app.access.grants import Access, Actor
from sessions_app.access.shares import LIVE, make_share
from sessions_app.access.web import open_for
from sessions_app.models import Share, Workspace
from sessions_app.sessionfiles.store import SessionFile

SAMPLES = Path(__file__).resolve().parents[2] / "sessions_app" / "samples" / "pi"
EXPECTED = json.loads((SAMPLES / "expected.json").read_text())
TREE = "02-tree-branches"
LINEAR = "01-linear"
CREW_FOLDER = "--srv-crew-app--"
CREW_CWD = "/srv/crew/app"
ROLES = ("owner", "member", "collaborator", "viewer", "link", "stranger", "anonymous")
READERS = ("owner", "member", "collaborator", "viewer", "link")
WRITERS = ("owner", "member", "collaborator")
MEMBERS = ("owner", "member")

# Sample 02: f87f9c1c → 2f760a8d, then branch A (97690895 … 750a4556, the leaf) and branch B
# (07721729 branch_summary … de4f0d3a).
ROOT, FIRST_ANSWER = "f87f9c1c", "2f760a8d"
BRANCH_A = ("97690895", "c2ecb522", "042efc28", "8aabce23", "0f649aff", "ab506f7f", "e65e9e73", "750a4556")
BRANCH_B = ("07721729", "4b928ed4", "37bad775", "c191c95e", "de4f0d3a")
LEAF = "750a4556"


@dataclass
class World:
    root: Path
    path: Path
    session_id: str
    users: dict[str, User]
    clients: dict[str, Client] = field(default_factory=dict)
    token: str = ""  # alice's viewer link
    link_share: Share | None = None

    def url(self, rest: str = "") -> str:
        return f"/s/{self.session_id}/{rest}"

    def client(self, role: str) -> Client:
        return self.clients[role]

    def cookie(self, role: str) -> tuple[bytes, bytes]:
        jar = self.clients[role].cookies
        found = "; ".join(f"{name}={morsel.value}" for name, morsel in jar.items() if name == "sessionid")
        return (b"cookie", found.encode())

    def bytes(self) -> bytes:
        return self.path.read_bytes()

    def hello(self, at: str = LEAF) -> dict[str, Any]:
        """What a session page's socket says when it opens: the page at the file as it is, standing on
        ``at``, at the file's position (so that what is appended there is pushed to it)."""
        return {"v": 1, "cursor": len(self.bytes()), "at": at, "notes": "none"}

    def lines(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.bytes().splitlines() if line.strip()]

    def view(self, role: str) -> scoped.SessionView:
        """The session as ``role`` sees it (through the permission function)."""
        return open_for(Access(Actor(self.users.get(role)), self.root), self.session_id)

    def share(self, role: str = Share.VIEWER, mode: str = LIVE, entry: str = "", **audience: Any) -> Any:
        """Alice shares the session (``link=True``, ``user=…`` or ``team=…``)."""
        view = open_for(Access(Actor(self.users["owner"]), self.root), self.session_id)
        return make_share(view, self.users["owner"], role=role, mode=mode, entry_id=entry, **audience)

    def holder(self, token: str) -> Client:
        """A browser without an account that opened the link ``token``."""
        client = self.holder_or_none(token)
        assert client is not None, f"the link {token} does not open"
        return client

    def copy(self, root: Path) -> World:
        """This world again under ``root`` (an empty sessions folder), once the database holds its rows
        as they were built: its files copied there, its users read again, and each person a new browser
        holding the cookies theirs holds."""
        shutil.copytree(self.root, root, dirs_exist_ok=True)
        clients = {}
        for role, client in self.clients.items():
            clients[role] = Client()
            clients[role].cookies = copy.deepcopy(client.cookies)
        return replace(
            self,
            root=root,
            path=root / self.path.relative_to(self.root),
            users={role: User.objects.get(pk=user.pk) for role, user in self.users.items()},
            clients=clients,
            link_share=Share.objects.get(pk=self.link_share.pk) if self.link_share else None,
        )

    def holder_or_none(self, token: str) -> Client | None:
        client = Client()
        return client if client.get(f"/l/{token}/").status_code == 302 else None


def copy_sample(root: Path, key: str, folder: str) -> Path:
    target = root / folder
    target.mkdir(parents=True, exist_ok=True)
    path = target / EXPECTED[key]["originalFileName"]
    shutil.copy(SAMPLES / f"{key}.jsonl", path)
    return path


def build_world(sessions_dir: Path) -> World:
    path = copy_sample(sessions_dir, TREE, CREW_FOLDER)
    names = {"owner": "alice", "member": "bob", "collaborator": "carol", "viewer": "dave", "stranger": "erin"}
    users = {role: User.objects.create_user(name, password=f"{name}-pw-1234") for role, name in names.items()}
    crew = Group.objects.create(name="crew")
    crew.user_set.add(users["owner"], users["member"])
    readers = Group.objects.create(name="readers")
    readers.user_set.add(users["viewer"])
    Workspace.objects.create(folder=CREW_FOLDER, cwd=CREW_CWD, team=crew)
    found = World(sessions_dir, path, EXPECTED[TREE]["sessionId"], users)
    found.share(Share.COLLABORATOR, user=users["collaborator"])
    found.share(Share.VIEWER, team=readers)
    made = found.share(Share.VIEWER, link=True)
    found.token, found.link_share = made.token, made.share
    for role, user in users.items():
        client = Client()
        client.force_login(user)
        found.clients[role] = client
    found.clients["link"] = found.holder(made.token)
    found.clients["anonymous"] = Client()
    return found


def reread(path: Path) -> SessionFile:
    """The file as another process reads it."""
    return SessionFile(path, fsync=False)
