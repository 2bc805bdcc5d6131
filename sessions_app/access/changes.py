"""What may change what an open socket is granted, and telling those sockets (in every process).

A grant is read from the database when a socket opens; it changes when a share is saved or deleted
(revoked, narrowed, its expiry moved), a user joins or leaves a team, a workspace changes owner, a
user is saved (deactivated, a new password) or deleted, or a browser signs out. Each of these is told
two ways:

- ``grant.changed`` goes through the channel layer to the groups of the sockets it may concern: a
  share's, a user's, a workspace folder's, a browser's (its Django session). Each such socket then asks
  the permission function again (``live.sockets.Guard``) and closes or reconnects if the answer changed.
  This is the instant way, and the only one that reaches just the sockets concerned; but the default
  in-memory layer lives in one process, so a change made by another (``manage.py accounts``, a shell)
  reaches nobody through it.
- The grants' generation, one row of the database (``models.GrantGeneration``), counts one more, in
  the transaction that makes the change. Every server process reads it before each batch it pushes
  (of any session) and every ``live.sockets.RECHECK`` seconds, one query for all of its sockets each
  time, and, when it moved by more than the changes it told its sockets about itself, has each of its
  sockets ask again.

Re-asking for every pushed batch instead would cost each socket a few database queries per batch
(measured 3–10 ms a socket here), a hundred tabs a second or more per line: the generation costs one
query per pushed batch, whatever the number of tabs, and a re-ask of every socket only for a change
made elsewhere.

Events are sent once the change is committed, so that what the sockets read is the change. A change
made behind the ORM's back (``QuerySet.update``, SQL) sends nothing and counts nothing: it applies
from the next request or reconnect, and an expiry from its time (each socket also arms a timer for its
grant's expiry).

The sending is bounded (``channel_layer.calls.call``): it happens in the request that made the
change, mostly a sync view, and under ASGI every sync view shares one thread, so a Redis that stops
answering would stall every sync page of the process. The change stands either way; a socket that was not told
through the layer learns of it from the generation.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import secrets
import threading
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.conf import settings
from django.contrib.auth.models import Group
from django.contrib.auth.signals import user_logged_out
from django.db import IntegrityError, transaction
from django.db.models import F
from django.db.models.signals import m2m_changed, post_delete, post_save, pre_save
from django.dispatch import receiver

from ..channel_layer.calls import call
from ..models import GrantGeneration, Share, Workspace

log = logging.getLogger(__name__)

CHANGED = "grant.changed"  # {"type": CHANGED, "ended": bool}: with ``ended``, the browser signed out
TOLD_KEPT = 256  # generations remembered as told through the layer by this process (older: asked again)

_told: dict[int, None] = {}  # those generations, oldest first
_told_lock = threading.Lock()  # noted by the threads that commit, read by the event loop


def share_group(share_id: int) -> str:
    return f"pitree-share.{share_id}"


def user_group(user_id: int) -> str:
    return f"pitree-user.{user_id}"


def folder_group(folder: str) -> str:
    # Group names are ASCII and short; folder names are any text.
    return f"pitree-folder.{hashlib.sha256(folder.encode('utf-8', 'surrogatepass')).hexdigest()[:40]}"


def browser_group(session_key: str) -> str:
    return f"pitree-browser.{session_key}"


def tell(groups: list[str], *, ended: bool = False) -> None:
    """Count one more change (``bump``) and send ``grant.changed`` to ``groups`` once the current
    transaction commits (at once without one). ``ended``: what they were granted is over whatever the
    database says (a browser signing out is told before its Django session is gone, so asking again
    could still find it)."""
    if groups:
        reached = bump()
        transaction.on_commit(lambda: _send(groups, ended, reached))


def bump() -> int:
    """Count one more change to grants, in the current transaction (so the count moves when the change
    commits, and not if it is rolled back); the generation it reached. Update first, then read: the
    update locks the row (SQLite: the whole database) until the transaction ends, so no other change
    counts between the two. The count starts at a random number: a database emptied that counts again
    (a test's) does not repeat numbers a process remembers as told (``told_here``).

    The first change makes the row. Two first changes at once (PostgreSQL lets both find no row to
    update) insert it twice: the primary key refuses the second, inside a savepoint of its own so that
    the change's transaction goes on, and that one counts on the row the first made."""
    with transaction.atomic():
        if GrantGeneration.objects.filter(pk=1).update(value=F("value") + 1):
            return GrantGeneration.objects.values_list("value", flat=True).get(pk=1)
        try:
            with transaction.atomic():
                return GrantGeneration.objects.create(pk=1, value=1 + secrets.randbits(48)).value
        except IntegrityError:
            GrantGeneration.objects.filter(pk=1).update(value=F("value") + 1)
            return GrantGeneration.objects.values_list("value", flat=True).get(pk=1)


def generation() -> int:
    """The grants' generation now (0 before any change)."""
    return GrantGeneration.objects.filter(pk=1).values_list("value", flat=True).first() or 0


def told_here(seen: int, now: int) -> bool:
    """Whether this process told every change that moved the generation from ``seen`` to ``now``
    through the channel layer itself, which reached every socket of this process they concern (so no
    other need ask again). A generation that went back (a database emptied) was not."""
    with _told_lock:
        return now > seen and all(reached in _told for reached in range(seen + 1, now + 1))


def _note_told(reached: int) -> None:
    with _told_lock:
        _told[reached] = None
        while len(_told) > TOLD_KEPT:
            del _told[next(iter(_told))]


def _send(groups: list[str], ended: bool, reached: int) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    try:
        if async_to_sync(_send_all)(layer, groups, {"type": CHANGED, "ended": ended}):
            _note_told(reached)
    except TimeoutError:
        log.warning("the channel layer did not answer: the sockets of %s were not told", ", ".join(groups))
    except Exception:  # the change stands either way; those sockets learn of it from the generation
        log.exception("could not tell the sockets of %s", ", ".join(groups))


async def _send_all(layer: Any, groups: list[str], message: dict[str, Any]) -> bool:
    """Send ``message`` to every group at once, in one bounded call; a group that could not be told is
    logged. Whether every group was told."""
    sends = asyncio.gather(*(layer.group_send(group, message) for group in groups), return_exceptions=True)
    told = True
    for group, outcome in zip(groups, await call(sends)):
        if isinstance(outcome, Exception):
            log.error("could not tell the sockets of %s", group, exc_info=outcome)
            told = False
    return told


# ------------------------------------------------------------------------------------ what changes


@receiver(post_save, sender=Share)
@receiver(post_delete, sender=Share)
def _share_changed(sender: type[Share], instance: Share, **_: Any) -> None:
    tell([share_group(instance.pk)])


@receiver(pre_save, sender=Workspace)
def _workspace_before(sender: type[Workspace], instance: Workspace, **_: Any) -> None:
    # A workspace renamed to another folder changes both: remember the one it had.
    before = Workspace.objects.filter(pk=instance.pk).values_list("folder", flat=True).first() if instance.pk else None
    instance._pitree_folder_before = before  # type: ignore[attr-defined]


@receiver(post_save, sender=Workspace)
@receiver(post_delete, sender=Workspace)
def _workspace_changed(sender: type[Workspace], instance: Workspace, **_: Any) -> None:
    folders = {instance.folder, getattr(instance, "_pitree_folder_before", None) or instance.folder}
    tell([folder_group(folder) for folder in sorted(folders)])


@receiver(post_save, sender=settings.AUTH_USER_MODEL)
@receiver(post_delete, sender=settings.AUTH_USER_MODEL)
def _user_changed(sender: type[Any], instance: Any, update_fields: Any = None, **_: Any) -> None:
    if update_fields is not None and set(update_fields) == {"last_login"}:
        return  # every sign-in saves the time of it (``update_last_login``): no grant depends on it
    tell([user_group(instance.pk)])


@receiver(m2m_changed, sender=Group.user_set.through)
def _membership_changed(sender: type[Any], instance: Any, action: str, reverse: bool, pk_set: Any, **_: Any) -> None:
    """A user joined or left teams (``user.groups``), or a team gained or lost users (``group.user_set``;
    clearing one names its users before they are gone)."""
    if action not in ("post_add", "post_remove", "pre_clear"):
        return
    if isinstance(instance, Group):
        users = list(pk_set or []) if action != "pre_clear" else list(instance.user_set.values_list("pk", flat=True))
    else:
        users = [instance.pk]
    tell([user_group(pk) for pk in users])


@receiver(user_logged_out)
def _signed_out(sender: type[Any], request: Any, user: Any, **_: Any) -> None:
    key = getattr(getattr(request, "session", None), "session_key", None)
    if key:
        tell([browser_group(key)], ended=True)
