"""Server time for the tree map's data: a 1,000-entry session with about 30 branch points, and the
100,000-entry benchmark session.

Both files sit in one sessions folder that Django's settings point at. After warm-up requests (the
index is cached per process, the listing too), ``/s/<id>/map/data/`` of each is fetched through
Django's test client, alternating, and the medians are printed with what the map drew: how many
nodes, and how far it folded. The branchy 1k session is generated here (cached beside the others):
pi-like turns where every ~30 entries the user goes back to an earlier prompt and asks differently.

No target is set for this figure by the brief; it is printed for context (a map must stay usable at
100k: the page has to load, so its data must come back in well under a second).
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _accounts
import _common as C
import _gen

ROUNDS = 15
WARMUP = 2


def branchy_session(entries: int = 1000, branch_points: int = 30, seed: int = 9) -> Path:
    """A pi-like session of about ``entries`` entries with a branch roughly every entries/branch_points."""
    path = _gen.BENCH_DIR / f"session-branchy-{entries}-{branch_points}-s{seed}-v{_gen.GEN_VERSION}.jsonl"
    if path.exists():
        return path
    writer = _gen.SessionWriter(seed, cwd="/home/alice/projects/todo-api", start_ms=1_767_600_000_000, scale=0.35)
    writer.model_change()
    writer.thinking_change()
    spacing = entries // (branch_points + 1)
    made = 0
    while len(writer.order) < entries:
        if made < branch_points and len(writer.order) > spacing * (made + 1):
            writer.turn(writer.branch())
            # A branch may go back to a point that already branches: count the real ones.
            children = Counter(writer.parent_of[entry_id] for entry_id in writer.order)
            made = sum(1 for parent, count in children.items() if parent is not None and count > 1)
        else:
            writer.turn()
        if writer.rng.random() < 0.05:
            writer.label()
    _gen._write_atomically(path, writer.lines)
    return path


def main() -> int:
    report = C.Report("treemap", "Tree map data, 1k entries / 30 branch points and 100k entries (warm)")
    sources = {"1k": branchy_session(), "100k": _gen.big_session()}
    with _gen.served_folder("pitree-treemap-", sources) as (folder, sessions):
        return _measure(report, folder, sessions)


def _measure(report: C.Report, folder: Path, sessions: dict[str, Path]) -> int:
    client = _accounts.django_client(folder)
    from sessions_app.sessionfiles.store import SessionFile

    urls = {name: f"/s/{SessionFile.open(path).session_id}/map/data/" for name, path in sessions.items()}
    shapes = {}
    for name, url in urls.items():
        for _ in range(WARMUP):
            response = client.get(url)
            assert response.status_code == 200, (url, response.status_code)
        payload = response.json()
        branch_points = sum(1 for node in payload["nodes"] if node.get("branches"))
        shapes[name] = (
            f"{payload['entries']:,} entries, {branch_points} branch points: {payload['shown']} nodes drawn"
            f"{', folded more' if payload['foldedMore'] else ''} ({payload['folding']})"
        )

    times: dict[str, list[float]] = {name: [] for name in urls}
    for _ in range(ROUNDS):
        for name, url in urls.items():
            start = time.perf_counter()
            client.get(url)
            times[name].append(time.perf_counter() - start)

    report.line(f"{'map data (warm)':<16} {'median':>9} {'p90':>9}")
    for name, values in times.items():
        report.line(f"{name:<16} {C.fmt_time(C.median(values)):>9} {C.fmt_time(C.pct(values, 90)):>9}   {shapes[name]}")
        report.figure(f"map data {name}: {shapes[name]}", f"{C.fmt_time(C.median(values))} median")
    ratio = C.median(times["100k"]) / C.median(times["1k"])
    report.line(f"100k / 1k: {ratio:.1f}×")
    return report.finish()


if __name__ == "__main__":
    sys.exit(main())
