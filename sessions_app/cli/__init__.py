"""Helpers of the ``manage.py pitree`` command: resolving FILE arguments, rendering transcripts and
trees as text, the ``inspect --json`` document, the session listing and sample seeding.

Nothing here writes to a session file; the command calls the core (``sessions_app.sessionfiles``)
for that. Nothing here imports Django either, so every helper is testable on its own.
"""
