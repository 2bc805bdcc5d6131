"""Exports refused whole, with the reason and the place, nothing written: malformed JSON anywhere in a
large export, a damaged zip, files that are no export, exports over the limit; and a large export
read in bounded memory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from support import exports as X

from sessions_app.imports.errors import ExportError


def _nothing_written(root: Path) -> bool:
    return not root.exists() or not list(root.rglob("*.jsonl"))


def test_malformed_json_deep_in_a_large_export(tmp_path: Path) -> None:
    export = X.write_big_chatgpt(tmp_path / "conversations.json", 120)
    data = export.read_bytes()
    cut = data.index(b'"Conversation 100"')
    export.write_bytes(data[:cut] + b"}}" + data[cut:])  # a stray brace in conversation 101
    with pytest.raises(ExportError) as refused:
        X.import_into(tmp_path / "sessions", export)
    message = str(refused.value)
    assert message.startswith("conversations.json: not valid JSON near byte ")
    assert "(after item 100)" in message
    near = int(message.split("near byte ")[1].split(" ", maxsplit=1)[0].replace(",", ""))
    assert cut - 70_000 <= near <= cut + 70_000  # the reader's buffer around the place
    assert _nothing_written(tmp_path / "sessions")  # not the 100 good conversations before it either


def test_a_truncated_export(tmp_path: Path) -> None:
    export = X.write_big_chatgpt(tmp_path / "conversations.json", 5)
    export.write_bytes(export.read_bytes()[:-2000])
    with pytest.raises(ExportError, match=r"not valid JSON near byte [\d,]+ \(after item 4\): .*premature EOF"):
        X.import_into(tmp_path / "sessions", export)
    assert _nothing_written(tmp_path / "sessions")


def test_a_damaged_zip(tmp_path: Path) -> None:
    export = X.gpt_export(tmp_path, [X.gpt_branching()] * 3)
    data = bytearray(export.read_bytes())
    with zipfile.ZipFile(export) as archive:
        info = archive.getinfo("conversations.json")
    start = info.header_offset + 30 + len(info.filename) + 40
    data[start : start + 20] = bytes(20)  # damage the compressed conversations
    export.write_bytes(bytes(data))
    with pytest.raises(ExportError, match=r"chatgpt-export\.zip/conversations\.json: "):
        X.import_into(tmp_path / "sessions", export)
    assert _nothing_written(tmp_path / "sessions")


@pytest.mark.parametrize(
    ("name", "content", "reason"),
    [
        ("notes.json", b'{"hello": "world"}', "not an export pitree reads"),
        ("list.json", b"[1, 2, 3]", "not an export pitree reads"),
        ("empty.json", b"", "an empty file"),
        ("garbage.json", b"\x00\x01 not json", "not valid JSON at its start"),
        ("photos.zip", None, "a zip without conversations.json"),
    ],
)
def test_files_that_are_no_export(tmp_path: Path, name: str, content: bytes | None, reason: str) -> None:
    path = tmp_path / name
    if content is None:
        X.write_zip(path, {"a.png": X.PNG, "b.txt": b"hi"})
    else:
        path.write_bytes(content)
    with pytest.raises(ExportError, match=reason):
        X.import_into(tmp_path / "sessions", path)


def test_a_folder_and_a_fifo_that_are_no_export(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(ExportError, match=r"a folder without conversations\.json"):
        X.import_into(tmp_path / "sessions", tmp_path / "empty")
    os.mkfifo(tmp_path / "pipe.json")
    with pytest.raises(ExportError, match="not a file or a folder"):
        X.import_into(tmp_path / "sessions", tmp_path / "pipe.json")


def test_an_export_over_the_limit(tmp_path: Path) -> None:
    export = X.gpt_export(tmp_path, [X.gpt_branching()])
    with pytest.raises(ExportError, match=r"bytes to read; the limit is 100"):
        X.import_into(tmp_path / "sessions", export, max_bytes=100)


def test_values_nested_too_deeply(tmp_path: Path) -> None:
    conversation = X.gpt_branching()
    conversation["mapping"]["u1"]["message"]["metadata"] = {"deep": "DEEP"}
    text = json.dumps([conversation]).replace('"DEEP"', "[" * 1100 + "1" + "]" * 1100)
    export = tmp_path / "conversations.json"
    export.write_text(text)
    with pytest.raises(ExportError, match="nested more than 1,024 levels deep"):
        X.import_into(tmp_path / "sessions", export)


_PEAK = """
import resource, sys
from pathlib import Path
sys.path.insert(0, "tests")
from support import exports as X
X.import_into(Path(sys.argv[2]), Path(sys.argv[1]))
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def _peak_kib(export: Path, root: Path) -> int:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "pitree_web.settings"}
    done = subprocess.run(
        [sys.executable, "-c", _PEAK, str(export), str(root)], capture_output=True, text=True, check=True, env=env
    )
    return int(done.stdout.strip())


@pytest.mark.processes
def test_a_large_export_is_read_in_bounded_memory(tmp_path: Path) -> None:
    """Peak memory of an import of 60 MB against one of 6 MB: the same but for one conversation's worth
    (the export is never held whole, nor its sessions)."""
    small = X.write_big_chatgpt(tmp_path / "small.json", 40, turns=30, words=400)
    large = X.write_big_chatgpt(tmp_path / "large.json", 400, turns=30, words=400)
    assert large.stat().st_size > 50_000_000
    grown = _peak_kib(large, tmp_path / "a") - _peak_kib(small, tmp_path / "b")
    assert grown < 20_000, f"peak memory grew by {grown:,} KiB for 10 times the export"
    assert len(list((tmp_path / "a").rglob("*.jsonl"))) == 400
