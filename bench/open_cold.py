"""Cold open of a 100,000-entry session, next to a bare orjson parse of the same lines.

Figures (median of REPS interleaved repetitions, file in the page cache so parsing is measured, not disk):
- ``SessionFile(path)`` — the whole cold open: read, head of every line, index columns, tree links;
- bare ``orjson.loads`` of every line, the file read the same way as the store reads it
  (the store's own 1 MB chunk reader, lines cut with ``bytes.find`` into memoryview slices) — the reference;
- the index pass done two ways — ``orjson.loads`` of the full line then picking type/id/parentId, and
  ``lines.read_head`` (msgspec Struct that skips the message body) — to document which one wins;
- the floor: cutting the lines alone, and the msgspec Struct decode without building ``Head``.

Target: the cold open costs ≤ 0.5× the bare parse. Two bare parses are timed, and the target is checked
against both: one that drops each value at once (the literal reading; its dicts are freed while still
in cache, so it is ~3× cheaper than any loader), and one that keeps the values (what a loader holding
all entries pays, as pi does; this is the ~9 µs/line of the field notes).
"""

from __future__ import annotations

import gc
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _baseline
import _common as C
import _gen
import orjson

from sessions_app.sessionfiles import lines as L
from sessions_app.sessionfiles.store import LongLine, SessionFile, read_chunks

REPS = 9
PAIRS = 15


def scan(path: Path, per_buffer) -> None:
    """The store's own reading loop (``store.read_chunks``), handing each buffer and the end of its
    whole lines on, so that every variant reads the file exactly as the store does."""
    fd = os.open(path, os.O_RDONLY)
    try:
        for piece in read_chunks(fd, 0, os.fstat(fd).st_size):
            if not isinstance(piece, LongLine) and piece[2]:
                per_buffer(piece[0], piece[2])
    finally:
        os.close(fd)


def _lines_only(buf: bytes, end: int) -> None:
    view, find, pos = memoryview(buf), buf.find, 0
    while pos < end:
        nl = find(b"\n", pos)
        view[pos:nl]
        pos = nl + 1


def _bare_orjson(buf: bytes, end: int) -> None:
    view, find, pos, loads = memoryview(buf), buf.find, 0, orjson.loads
    while pos < end:
        nl = find(b"\n", pos)
        loads(view[pos:nl])
        pos = nl + 1


def _bare_orjson_kept(path: Path) -> list:
    """The same, keeping every value (what a loader that holds all entries, as pi does, pays)."""
    kept: list = []
    keep = kept.append

    def per_buffer(buf: bytes, end: int) -> None:
        view, find, pos, loads = memoryview(buf), buf.find, 0, orjson.loads
        while pos < end:
            nl = find(b"\n", pos)
            keep(loads(view[pos:nl]))
            pos = nl + 1

    scan(path, per_buffer)
    return kept


def _index_orjson(buf: bytes, end: int) -> None:
    """What an orjson index pass needs per line: decode it all, keep type / id / parentId."""
    view, find, pos, loads = memoryview(buf), buf.find, 0, orjson.loads
    while pos < end:
        nl = find(b"\n", pos)
        value = loads(view[pos:nl])
        (value.get("type"), value.get("id"), value.get("parentId"))
        pos = nl + 1


def _index_msgspec(buf: bytes, end: int) -> None:
    """The store's head pass: ``lines.read_head`` (typed Struct decoded, body skipped)."""
    view, find, pos, read_head = memoryview(buf), buf.find, 0, L.read_head
    first = pos == 0 and buf.startswith(b'{"type":"session"')
    if first:  # the header is not an entry; the store parses it apart
        pos = find(b"\n") + 1
    while pos < end:
        nl = find(b"\n", pos)
        read_head(view[pos:nl])
        pos = nl + 1


def _struct_only(buf: bytes, end: int) -> None:
    view, find, pos, decode = memoryview(buf), buf.find, 0, L.decode_head
    if buf.startswith(b'{"type":"session"'):
        pos = find(b"\n") + 1
    while pos < end:
        nl = find(b"\n", pos)
        decode(view[pos:nl])
        pos = nl + 1


def main() -> int:
    report = C.Report("open_cold", "Cold open of a 100k-entry session vs a bare orjson parse")
    path = _gen.big_session()
    size = _gen.warm(path)
    with open(path, "rb") as handle:
        entries = sum(1 for _ in handle) - 1
    report.line(
        f"file: {path} — {size / 1e6:.1f} MB, {entries:,} entries, {size / entries:.0f} B/line (page cache warm)"
    )

    baseline = _baseline.load()
    variants = {
        "SessionFile(path)  cold open": lambda: SessionFile(path),
        "bare orjson.loads every line": lambda: scan(path, _bare_orjson),
        "bare orjson.loads, values kept": lambda: _bare_orjson_kept(path),
        "index pass: orjson + pick": lambda: scan(path, _index_orjson),
        "index pass: msgspec read_head": lambda: scan(path, _index_msgspec),
        "msgspec Struct decode only": lambda: scan(path, _struct_only),
        "cut lines only (floor)": lambda: scan(path, _lines_only),
    }
    SessionFile(path)  # warm up imports and allocator
    times: dict[str, list[float]] = {name: [] for name in variants}
    names = list(variants)
    for rep in range(REPS):
        order = names[rep % len(names) :] + names[: rep % len(names)]  # rotate, so no variant always runs first
        for name in order:
            times[name].append(C.timed(variants[name]))
    gc.collect()

    def ratio(a: str, b: str) -> float:
        """Median of the per-repetition ratios (both timed in the same round: robust to load drifts)."""
        return C.median([x / y for x, y in zip(times[a], times[b])])

    OPEN, BARE, KEPT = "SessionFile(path)  cold open", "bare orjson.loads every line", "bare orjson.loads, values kept"
    med = {name: C.median(values) for name, values in times.items()}
    report.line()
    report.line(f"{'variant':<32} {'median':>9} {'µs/line':>8} {'× bare':>7}   (min … max of {REPS})")
    for name in names:
        report.line(
            f"{name:<32} {C.fmt_time(med[name]):>9} {med[name] / entries * 1e6:>8.2f} {ratio(name, BARE):>7.2f}   "
            f"({C.fmt_time(min(times[name]))} … {C.fmt_time(max(times[name]))})"
        )

    open_ratio, open_kept = ratio(OPEN, BARE), ratio(OPEN, KEPT)
    head_vs_orjson = ratio("index pass: msgspec read_head", "index pass: orjson + pick")
    report.line()
    report.line(
        f"index pass: msgspec read_head costs {head_vs_orjson:.2f}× the orjson pass "
        f"→ {'msgspec' if head_vs_orjson < 1 else 'orjson'} wins"
    )
    report.line(
        f"cold open: {open_ratio:.2f}× the bare parse, {open_kept:.2f}× the bare parse that keeps the values; "
        f"beyond the head pass the index costs {(med[OPEN] - med['index pass: msgspec read_head']) / entries * 1e6:.2f} µs/line"
    )
    report.line(
        f"the floor without any index: msgspec Struct decode alone is {ratio('msgspec Struct decode only', BARE):.2f}× "
        f"the bare parse, cutting lines alone {ratio('cut lines only (floor)', BARE):.2f}×"
    )

    report.figure("cold open 100k entries", C.fmt_time(med[OPEN]))
    report.figure(
        "bare orjson parse 100k entries (values dropped / kept)", f"{C.fmt_time(med[BARE])} / {C.fmt_time(med[KEPT])}"
    )
    report.figure("cold open / bare parse, values dropped", f"{open_ratio:.2f}×", "≤ 0.50×", open_ratio <= 0.5)
    report.figure("cold open / bare parse, values kept", f"{open_kept:.2f}×", "≤ 0.50×", open_kept <= 0.5)
    report.figure(
        "Struct decode alone / bare parse, values dropped", f"{ratio('msgspec Struct decode only', BARE):.2f}×"
    )
    report.figure("index pass msgspec / orjson", f"{head_vs_orjson:.2f}×")
    if baseline is not None:
        # Now and the baseline back to back, in alternating order: adjacent timings share the load.
        now: list[float] = []
        before: list[float] = []
        for pair in range(PAIRS):
            runs = [(now, lambda: SessionFile(path)), (before, lambda: baseline.store.SessionFile(path))]
            for out, run in runs if pair % 2 else runs[::-1]:
                out.append(C.timed(run))
        paired = C.median([a / b for a, b in zip(now, before)])
        report.line(
            f"cold open now / at {baseline.commit}, {PAIRS} adjacent pairs: {paired:.3f}× "
            f"({C.fmt_time(C.median(now))} vs {C.fmt_time(C.median(before))})"
        )
        report.figure(f"cold open now / {_baseline.label(baseline)}", f"{paired:.3f}×")
    return report.finish()


if __name__ == "__main__":
    sys.exit(main())
