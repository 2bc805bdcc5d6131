"""Importing a large ChatGPT export: throughput against a bare JSON parse of the same file, and the
memory it takes.

A ``conversations.json`` of ``PITREE_BENCH_IMPORT_MB`` (default 300) MB is generated once (conversations
of 40 turns, questions of 10 to 60 words and answers of 100 to 400, one answer regenerated each,
with ChatGPT's message fields). Each measure runs in a fresh process, side
by side in one run:
- the bare parse: ijson yielding every conversation as Python objects (what any streaming reader of
  the export pays at least), and, for reference, orjson loading the whole file at once;
- the import into an empty sessions folder (read, convert, spool, write each session whole);
- the same import again (nothing new: every conversation planned against its file, nothing written).

Targets: the import runs at least a fifth as fast as the bare streaming parse (in CPU time), and its peak memory
stays under 250 MB whatever the export's size (the whole-file parse's grows with it).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C
import _gen
from _gen import BENCH_DIR

MEGABYTES = int(os.environ.get("PITREE_BENCH_IMPORT_MB", "300"))
T0 = 1_760_000_000

_MEASURE = """
import json, resource, sys, time
from pathlib import Path
what, export, root = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
start = time.perf_counter()
if what == "ijson":
    import ijson
    with open(export, "rb") as stream:
        count = sum(1 for _ in ijson.items(stream, "item", use_float=True))
elif what == "orjson":
    import orjson
    count = len(orjson.loads(export.read_bytes()))
else:
    from sessions_app.imports.run import import_export
    count = len(import_export(export, root=root, cwd="/home/bench/imported", fsync=False).outcomes)
usage = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"seconds": time.perf_counter() - start, "count": count, "peak_kb": usage.ru_maxrss,
                  "cpu": usage.ru_utime + usage.ru_stime}))
"""


def _message(node_id: str, role: str, text: str, at: int) -> dict[str, object]:
    return {
        "id": node_id,
        "author": {"role": role, "name": None, "metadata": {}},
        "create_time": T0 + at,
        "update_time": None,
        "content": {"content_type": "text", "parts": [text]},
        "status": "finished_successfully",
        "end_turn": True,
        "weight": 1.0,
        "metadata": {"model_slug": "gpt-4o"} if role == "assistant" else {},
        "recipient": "all",
        "channel": None,
    }


def chatgpt_export(megabytes: int) -> Path:
    """A ChatGPT ``conversations.json`` of about ``megabytes`` MB, written one conversation at a time."""
    path = BENCH_DIR / f"chatgpt-conversations-{megabytes}mb-v2.json"
    if path.exists():
        return path
    print(f"[gen] writing {path} …", file=sys.stderr, flush=True)
    words = [
        "lorem",
        "ipsum",
        "dolor",
        "sit",
        "amet",
        "consectetur",
        "adipiscing",
        "elit",
        "sed",
        "do",
        "eiusmod",
        "tempor",
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as out:
        out.write("[")
        number = 0
        while out.tell() < megabytes * 1_000_000:
            mapping: dict[str, dict[str, object]] = {
                "root": {"id": "root", "message": None, "parent": None, "children": []}
            }
            parent = "root"
            for turn in range(40):
                spread = (number * 7 + turn) % 50
                question = " ".join(words[(turn + k) % len(words)] for k in range(10 + spread))
                answer = " ".join(words[(turn + k) % len(words)] for k in range(100 + 6 * spread))
                for node_id, role, at, text in (
                    (f"q{turn}", "user", turn * 2, question),
                    (f"a{turn}", "assistant", turn * 2 + 1, answer),
                ):
                    mapping[node_id] = {
                        "id": node_id,
                        "message": _message(node_id, role, text, at),
                        "parent": parent,
                        "children": [],
                    }
                    mapping[parent]["children"].append(node_id)  # type: ignore[attr-defined]
                    parent = node_id
            mapping["again"] = {
                "id": "again",
                "message": _message("again", "assistant", "Again.", 2),
                "parent": "q0",
                "children": [],
            }
            conversation = {
                "title": f"Conversation {number}",
                "create_time": T0 + number,
                "update_time": T0 + number,
                "mapping": mapping,
                "current_node": parent,
                "id": f"conv-{number}",
                "conversation_id": f"conv-{number}",
                "default_model_slug": "gpt-4o",
                "is_archived": False,
                "safe_urls": [],
            }
            out.write(("," if number else "") + json.dumps(conversation))
            number += 1
        out.write("]")
    os.replace(tmp, path)
    return path


def _run(what: str, export: Path, root: Path) -> dict[str, float]:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "pitree_web.settings"}
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, what, str(export), str(root)],
        cwd=C.ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


def main() -> int:
    report = C.Report("import_throughput", f"Importing a {MEGABYTES} MB ChatGPT export")
    export = chatgpt_export(MEGABYTES)
    size_mb = export.stat().st_size / 1e6
    _gen.warm(export)
    root = Path(tempfile.mkdtemp(prefix="pitree-bench-import-"))
    try:
        parse = _run("ijson", export, root)
        whole = _run("orjson", export, root)
        first = _run("import", export, root)
        again = _run("import", export, root)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    report.line(f"{export.name}: {size_mb:,.0f} MB, {int(parse['count']):,} conversations")
    report.line(f"{'':<40} {'time':>9} {'CPU':>9} {'MB/s':>8} {'peak RSS':>10}")
    for name, measured in (
        ("bare parse (ijson, streaming)", parse),
        ("bare parse (orjson, whole file)", whole),
        ("import into an empty folder", first),
        ("import again (nothing new)", again),
    ):
        rate = size_mb / measured["seconds"]
        report.line(
            f"{name:<40} {C.fmt_time(measured['seconds']):>9} {C.fmt_time(measured['cpu']):>9} {rate:>8.1f} "
            f"{measured['peak_kb'] / 1024:>8.0f} MB"
        )
    # The target compares CPU time: the runs follow one another, and on a shared machine the load
    # may change between them; wall-clock throughput is shown beside it.
    ratio = parse["cpu"] / first["cpu"]
    report.figure("import MB/s", f"{size_mb / first['seconds']:.1f}")
    report.figure("import / bare streaming parse (CPU throughput)", f"{ratio:.2f}×", "≥ 0.2×", ratio >= 0.2)
    report.figure(
        "import / bare streaming parse (wall-clock throughput)", f"{parse['seconds'] / first['seconds']:.2f}×"
    )
    report.figure("import again / bare streaming parse (CPU)", f"{parse['cpu'] / again['cpu']:.2f}×")
    peak = first["peak_kb"] / 1024
    report.figure("import peak RSS", f"{peak:.0f} MB", "≤ 250 MB", peak <= 250)
    return report.finish()


if __name__ == "__main__":
    sys.exit(main())
