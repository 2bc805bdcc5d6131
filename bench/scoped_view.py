"""What a share's scope costs: a session as a branch or snapshot share sees it, against the whole file.

On the 100,000-entry benchmark session, side by side in one run:
- the cold open of the file (``SessionFile``, no cache): the reference;
- the first view of a branch anchored near the root (its index built from the visible lines) and of a
  snapshot at the file's leaf (the file's first bytes read again, checked, and the path fed);
- a warm view of each (the per-process cache of scoped parts: nothing new in the file), against a warm
  whole-file view, which is the file's own index;
- the branch view after another process appended one entry under it (the new line fed incrementally).

Targets: a first scoped view costs at most 2× the file's cold open; a warm scoped view, like an
appended line, at most 5 ms (a page pays it on every request).
"""

from __future__ import annotations

import os
import subprocess
import sys
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C
import _gen

ROUNDS = 30
COLD_REPS = 3


def main() -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pitree_web.settings")
    import django

    django.setup()
    from sessions_app.access import scoped
    from sessions_app.access.grants import FULL, Grant, Role, Scope
    from sessions_app.sessionfiles.cursor import cursor_of
    from sessions_app.sessionfiles.store import SessionFile
    from sessions_app.sessionfiles.tree import path as tree_path

    report = C.Report("scoped_view", "A branch or snapshot share's view of a 100k-entry session")
    path = _gen.scratch_copy(_gen.big_session(), "scoped-view.jsonl")
    report.line(_gen.describe(path))
    full = SessionFile(path, fsync=False)
    index = full.index
    anchor = index.ids[tree_path(index, index.leaf_row)[2]]  # near the root: nearly everything is below it
    offset = cursor_of(index)
    branch = Grant(Role.VIEWER, Scope(anchor))
    snapshot = Grant(Role.VIEWER, Scope(index.leaf_id or anchor, offset, scoped.prefix_digest(path, offset)))

    def first(grant: Grant) -> object:
        scoped.clear_cache()
        return scoped.SessionView(full, grant).index

    cold_open = C.median([C.timed(lambda: SessionFile(path, fsync=False)) for _ in range(COLD_REPS)])
    cold_branch = C.median([C.timed(lambda: first(branch)) for _ in range(COLD_REPS)])
    cold_snapshot = C.median([C.timed(lambda: first(snapshot)) for _ in range(COLD_REPS)])
    seen = len(scoped.SessionView(full, branch).index)
    report.line(
        f"branch at {anchor}: {seen:,} of {len(index):,} rows; snapshot: {len(tree_path(index, index.leaf_row)):,}"
    )

    scoped.clear_cache()
    scoped.SessionView(full, branch)
    scoped.SessionView(full, snapshot)
    warm: dict[str, list[float]] = {"whole": [], "branch": [], "snapshot": []}
    for _ in range(ROUNDS):
        for name, grant in (("whole", FULL), ("branch", branch), ("snapshot", snapshot)):
            warm[name].append(C.timed(partial(scoped.SessionView, full, grant), collect=False))

    grown: list[float] = []
    for number in range(ROUNDS):
        parent = scoped.SessionView(full, branch).index.leaf_id
        code = (
            "import sys; from sessions_app.sessionfiles.store import SessionFile; "
            "from sessions_app.sessionfiles import entries as E; "
            f"SessionFile(sys.argv[1], fsync=False).append(E.user_message('grown {number}'), sys.argv[2])"
        )
        subprocess.run([sys.executable, "-c", code, str(path), str(parent)], cwd=C.ROOT, check=True)
        full.refresh()
        grown.append(C.timed(lambda: scoped.SessionView(full, branch).index, collect=False))

    report.line(f"{'':<34} {'median':>9}")
    rows = [
        ("cold open of the file", cold_open),
        ("first branch view", cold_branch),
        ("first snapshot view", cold_snapshot),
        ("warm whole-file view", C.median(warm["whole"])),
        ("warm branch view", C.median(warm["branch"])),
        ("warm snapshot view", C.median(warm["snapshot"])),
        ("branch view after one append", C.median(grown)),
    ]
    for name, value in rows:
        report.line(f"{name:<34} {C.fmt_time(value):>9}")
    for name, value in (("first branch view", cold_branch), ("first snapshot view", cold_snapshot)):
        ratio = value / cold_open
        report.figure(f"{name} / cold open", f"{ratio:.2f}×", "≤ 2×", ratio <= 2)
    for name, values in (("warm branch view", warm["branch"]), ("after one append", grown)):
        report.figure(name, C.fmt_time(C.median(values)), "≤ 5 ms", C.median(values) <= 0.005)
    return report.finish()


if __name__ == "__main__":
    sys.exit(main())
