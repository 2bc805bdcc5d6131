"""Accounts, workspaces and shares: who may see and write which session.

The model, in one place (``grants.Access.grant`` is the one function every view, htmx endpoint,
websocket, download, search and command-line query asks):

- a workspace is one ``--<encoded cwd>--`` folder of the sessions root, owned by a user or a team
  (``models.Workspace``); its members see, write and share every session in it;
- superusers see everything, including folders nobody owns (a pi agent's, a copied file's) until they
  are assigned; the command line acts as an unrestricted local owner unless ``--as USER`` is given;
- a share gives one session to a user, a team or a link holder, as viewer or collaborator, live or
  scoped (one branch, or a snapshot at an entry: see ``scoped``);
- anything else is answered as if it did not exist (404), so ids do not leak.

Modules: ``grants`` (actors, grants, the permission function) · ``workspaces`` (folders and their
owners) · ``scoped`` (a session as one grant sees it) · ``references`` (what a scoped view shows of a
line naming an entry it does not hold) · ``web`` (requests to actors, the views' one call) · ``page``
(what a session page shows of its lineage and shares) · ``changes`` (what may change a grant, told to
the sockets it concerns) · ``cli`` (``pitree --as USER``) · ``shares``, ``signin``, ``guessing``,
``authorship``, ``listing``. The websockets ask the same questions through ``live/sockets.py``; new
files, downloads and uploads are made on top of this package, in ``transfer/``.
"""
