"""What ``pitree import`` prints: a progress bar while an export is read and written (on a terminal),
and a line per session written."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any

from tqdm import tqdm

from ..imports.run import APPENDED, CREATED, UNCHANGED, Progress, Report


@contextmanager
def import_progress(name: str, stream: IO[str]) -> Iterator[Progress]:
    """A progress bar on ``stream`` (none when it is no terminal): bytes read, then sessions written."""
    bars: dict[str, Any] = {}

    def progress(stage: str, done: int, total: int) -> None:
        bar = bars.get(stage)
        if bar is None:
            for other in bars.values():
                other.close()
            reading = stage == "reading"
            bar = bars[stage] = tqdm(
                total=total,
                desc=f"{name}: {stage}",
                unit="B" if reading else " sessions",
                unit_scale=reading,
                file=stream,
                disable=None,
                leave=False,
            )
        bar.update(done - bar.n)

    try:
        yield progress
    finally:
        for bar in bars.values():
            bar.close()


def outcome_lines(report: Report) -> list[str]:
    """A line per session created or appended to, then the count of each."""
    lines = []
    counts = {CREATED: 0, APPENDED: 0, UNCHANGED: 0}
    for outcome in report.outcomes:
        if outcome.status in counts:
            counts[outcome.status] += 1
        if outcome.status == CREATED:
            lines.append(f"created {outcome.path}  {outcome.title}")
        elif outcome.status == APPENDED:
            lines.append(
                f"appended {outcome.added} entr{'y' if outcome.added == 1 else 'ies'} to {outcome.path}  {outcome.title}"
            )
    lines.append(
        f"{report.name} ({report.kind}): {counts[CREATED]} created, {counts[APPENDED]} appended to, "
        f"{counts[UNCHANGED]} unchanged"
    )
    return lines
