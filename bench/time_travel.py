"""Time travel: opening a 100,000-entry session as it was after line N, against opening it as it is.

Side by side in one run, interleaved round by round, medians of a few cold opens each: the file opened (``SessionFile``, no cache)
and its state after 10 %, 50 % and 100 % of its lines (``PastSession``: the index of the file's first
lines, built as a cold open builds one). The state costs the open of its prefix; the largest one, the
whole file, costs about what the file's open does.

Target: every state opens in at most 1.2× the file's cold open.
"""

from __future__ import annotations

import sys
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C
import _gen

REPS = 5


def main() -> int:
    from sessions_app.sessionfiles.past import PastSession, last_line
    from sessions_app.sessionfiles.store import SessionFile

    report = C.Report("time_travel", "A 100k-entry session as it was after line N, against its open")
    path = _gen.big_session()
    report.line(_gen.describe(path))
    _gen.warm(path)
    source = SessionFile(path, fsync=False)
    lines = last_line(source.index)
    shares = (10, 50, 100)
    at = {share: max(1, lines * share // 100) for share in shares}
    # Interleaved, one round at a time: a load that changes during the run weighs on both sides alike.
    opens: list[float] = []
    states: dict[int, list[float]] = {share: [] for share in shares}
    for _ in range(REPS):
        opens.append(C.timed(lambda: SessionFile(path, fsync=False)))
        for share in shares:
            states[share].append(C.timed(partial(PastSession, source, at[share])))
    cold = C.median(opens)
    report.line(f"{'':<36} {'median':>9} {'× open':>8}")
    report.line(f"{'cold open of the file':<36} {C.fmt_time(cold):>9} {1:>8.2f}")
    worst = 0.0
    for share in shares:
        took = C.median(states[share])
        worst = max(worst, took / cold)
        report.line(f"{f'state after line {at[share]:,} ({share} %)':<36} {C.fmt_time(took):>9} {took / cold:>8.2f}")
    report.figure("largest state / cold open", f"{worst:.2f}×", "≤ 1.2×", worst <= 1.2)
    return report.finish()


if __name__ == "__main__":
    sys.exit(main())
