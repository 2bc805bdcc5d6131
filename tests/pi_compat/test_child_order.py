"""pitree orders a node's children as pi 1.6.0's ``getTree()`` does, and reads dates as node's ``Date``.

pi sorts children with ``new Date(a.timestamp).getTime() - new Date(b.timestamp).getTime()``. Hand-made
cases (offsets, no milliseconds, long fractions, date-only, extended years, null, numbers, invalid
dates) and random sibling sets up to 127 children with every kind of timestamp are opened by pi's own
SessionManager and by pitree, and the trees must be equal. Dates are also compared one by one with
node's ``new Date(text).getTime()`` (in UTC, since JS reads a date-time without an offset as local):
pitree never reads another instant than node, nor a date node refuses; node's free-form guesses at
texts that are no ISO form are the one difference.
"""

from __future__ import annotations

import json
import math
import os
import random
import subprocess
from pathlib import Path
from typing import Any

import pytest

from sessions_app.sessionfiles import tree
from sessions_app.sessionfiles.instants import js_date_ms
from sessions_app.sessionfiles.store import SessionFile

pytestmark = pytest.mark.processes  # pi's own code, run by node

HEADER = {"type": "session", "version": 3, "id": "order", "timestamp": "2026-03-01T00:00:00.000Z", "cwd": "/x"}
MISSING = object()

CASES: dict[str, list[Any]] = {
    "offsets": ["2026-03-02T09:30:00.000Z", "2026-03-02T10:00:00.000+01:00", "2026-03-02T09:45:00-00:30"],
    "no-millis": ["2026-03-02T09:15:04.500Z", "2026-03-02T09:15:04Z", "2026-03-02T09:15Z"],
    "long-fraction": ["2026-03-02T09:15:04.123Z", "2026-03-02T09:15:04.1239Z", "2026-03-02T09:15:04.12Z"],
    "date-only": ["2026-03-01T23:00:00-02:00", "2026-03-02", "2026-03", "2026"],
    "years": ["+010000-01-01T00:00:00.000Z", "2026-03-02T00:00:00.000Z", "0000-01-01T00:00:00.000Z", "-000001"],
    "null-and-numbers": ["2026-03-02T00:00:00.000Z", 5, None, 0, 1e300],
    "invalid-middle": ["2026-03-02T10:00:00Z", "not a date", "2026-03-02T09:00:00Z"],
    "invalid-last": ["2026-03-02T10:00:00Z", "2026-03-02T09:00:00Z", "garbage"],
    "missing": ["2026-03-02T10:00:00Z", MISSING, "2026-03-02T09:00:00Z"],
    "grown": [
        "2026-03-02T10:00:00.000Z",
        "2026-03-02T10:30:00.000+01:00",
        "bad",
        "2026-03-02T09:00:00Z",
        "2026-03-02",
        "2026-03-02T09:00:00.000Z",
    ],
}

STAMP_POOL: list[Any] = [
    "2026-03-02T09:00:00.000Z",
    "2026-03-02T09:00:00Z",
    "2026-03-02T10:00:00+01:00",
    "2026-03-02T08:30:00.000-00:30",
    "2026-03-02T09:00:00.0001Z",
    "2026-03-02",
    "2026-03-02T09:00:01.5Z",
    "+002026-03-02T09:00:00Z",
    "not a date",
    "",
    None,
    0,
    1772442000000,
    MISSING,
]


def _file(folder: Path, name: str, stamps: list[Any]) -> Path:
    lines = [
        HEADER,
        {"type": "custom", "customType": "t", "id": "p", "parentId": None, "timestamp": HEADER["timestamp"]},
    ]
    for number, stamp in enumerate(stamps):
        child: dict[str, Any] = {"type": "custom", "customType": "t", "id": f"c{number}", "parentId": "p"}
        if stamp is not MISSING:
            child["timestamp"] = stamp
        lines.append(child)
    path = folder / f"{name}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _pitree_tree(path: Path) -> list[dict[str, Any]]:
    return tree.tree(SessionFile(path, fsync=False).index)


def test_children_are_ordered_as_pi_orders_them(pi: Any, tmp_path: Path) -> None:
    rng = random.Random(20261201)
    files = {name: _file(tmp_path, name, stamps) for name, stamps in CASES.items()}
    for number in range(40):
        count = rng.choice([2, 3, 5, 8, 13, 30, 64, 100, 127])
        files[f"random-{number}"] = _file(tmp_path, f"random-{number}", rng.choices(STAMP_POOL, k=count))
    results = pi(list(files.values()))
    for (name, path), got in zip(files.items(), results):
        assert got["error"] is None, (name, got["error"])
        assert _pitree_tree(path) == got["tree"], name


def test_dates_are_read_as_node_reads_them() -> None:
    rng = random.Random(7)
    # Each part of an ISO text, in forms node reads and (after the bar) forms it refuses or guesses at.
    parts = [
        (["2026", "0000", "9999", "+002026", "-000001", "+275760", "-271821"], ["-000000", "99999", "202"]),
        (["", "-01", "-02", "-12"], ["-13", "-00", "-1"]),
        (["", "-01", "-28", "-29", "-31"], ["-32", "-00"]),
        (["", "T00:00", "T09:15:04", "T23:59:59", "T24:00", "t09:15:30"], ["T24:00:01", "T09:60", "T9:15", " 09:15"]),
        ([""], [".5", ".123456", "."]),  # a fraction needs seconds: see the next part
        (["", "Z", "z", "+01:00", "-0130", "+23:59", "-00:00"], ["+24:00", "+01", "+1:00"]),
    ]
    texts = []
    for _ in range(3000):
        chosen = [rng.choice(bad if rng.random() < 0.1 else good) for good, bad in parts]
        if chosen[3].count(":") == 2 and rng.random() < 0.5:
            chosen[4] = rng.choice([".5", ".123", ".123456789", ".9999"])
        texts.append("".join(chosen))
    script = "for (const t of JSON.parse(require('fs').readFileSync(0, 'utf8'))) console.log(new Date(t).getTime())"
    out = subprocess.run(
        ["node", "-e", script],
        input=json.dumps(texts),
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        env={**os.environ, "TZ": "UTC"},
    ).stdout.split()
    read_alike = refused_alike = 0
    mismatches = []
    for text, expected in zip(texts, out):
        js, mine = float(expected), js_date_ms(text)
        if math.isnan(js) and math.isnan(mine):
            refused_alike += 1
        elif js == mine:
            read_alike += 1
        elif not math.isnan(js) and math.isnan(mine):
            continue  # a free-form text node guesses at (pitree reads the ISO forms only)
        else:
            mismatches.append((text, expected, mine))
    assert len(out) == len(texts)
    assert mismatches == [], mismatches[:20]  # never another instant, never a date JS refuses
    assert read_alike > 1000 and refused_alike > 500, (read_alike, refused_alike, len(texts))
