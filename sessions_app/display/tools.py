"""The tools under an entry that need more than reading: writing ones (Edit, Regenerate, Label…,
Compact…), Fork… and Share…, offered only to readers who may use them, at the entries where they may.

An entry's fragment is rendered once and cached (``templatetags.pitree.entry_html``), and a push is
rendered once for every tab (``live/fragments.py``), so neither may depend on who reads it. The
template marks each such tool (``<!--tool:write-->…<!--/tool-->``) and the tools a reader may not use
are cut out on the way out, as the CSRF token is filled in: nothing is rendered twice, and a reader
offered every tool (the session's workspace members) costs nothing more.
"""

from __future__ import annotations

import re

WRITE = "write"  # the grant writes in the file (a version 3 file, a collaborator or member)
SIBLING = "sibling"  # writes a sibling of its entry (Edit & resend, Regenerate): a WRITE, except at
# the entries a branch share starts at or above, whose siblings are outside the branch
FORK = "fork"  # the reader has a workspace to fork into (signed in)
SHARE = "share"  # the reader shares the session (a member of its workspace)
EVERY = frozenset({WRITE, SIBLING, FORK, SHARE})
READING = frozenset[str]()

_MARKED = re.compile(r"<!--tool:(\w+)-->.*?<!--/tool-->", re.DOTALL)


def offered(html: str, tools: frozenset[str]) -> str:
    """``html`` with the marked tools outside ``tools`` cut out."""
    if tools >= EVERY or "<!--tool:" not in html:
        return html
    return _MARKED.sub(lambda found: found.group(0) if found.group(1) in tools else "", html)
