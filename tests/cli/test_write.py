"""Write commands: each prints exactly one line (the new entry id, or the new file's path) and adds
exactly one line to the file; a refused write leaves the file's bytes as they were."""

from __future__ import annotations

import errno
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management.base import CommandError

from sessions_app.sessionfiles import store


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def _write(pitree, path: Path, *args: str) -> dict[str, Any]:
    """Run a write command on ``path``; check it printed one id and appended one line; return that line."""
    before = _lines(path)
    out = pitree(*args)
    after = _lines(path)
    assert out.count("\n") == 1 and out.endswith("\n"), out
    assert after[: len(before)] == before
    assert len(after) == len(before) + 1
    entry = json.loads(after[-1])
    assert out.strip() == entry["id"]
    return entry


def _inspect(pitree, path: Path) -> dict[str, Any]:
    return json.loads(pitree("inspect", str(path), "--json"))


# ------------------------------------------------------------------------------------------- new


def test_new_creates_a_session_in_pis_layout(pitree, sessions_dir) -> None:
    out = pitree("new", "--cwd", "/home/bob/app")
    assert out.count("\n") == 1
    path = Path(out.strip())
    assert path.parent == sessions_dir / "--home-bob-app--"
    lines = _lines(path)
    assert len(lines) == 1
    header = json.loads(lines[0])
    assert header["type"] == "session" and header["version"] == 3 and header["cwd"] == "/home/bob/app"
    assert path.name.endswith(f"_{header['id']}.jsonl")


def test_new_with_a_name_and_a_relative_cwd(pitree, sessions_dir, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    path = Path(pitree("new", "--cwd", "proj", "--name", "My\nwork ").strip())
    got = _inspect(pitree, path)
    assert got["cwd"] == str(tmp_path / "proj")
    assert got["name"] == "My work"
    assert len(_lines(path)) == 2


def test_new_needs_cwd(pitree) -> None:
    with pytest.raises(CommandError, match="--cwd"):
        pitree("new")


# ------------------------------------------------------------------------------------------- append


def test_append_user_then_assistant_at_the_leaf(pitree, sample) -> None:
    path = sample("01-linear")
    user = _write(pitree, path, "append", str(path), "--role", "user", "--text", "And PATCH?")
    assert user["parentId"] == "db26dc72"
    assert user["message"]["role"] == "user" and user["message"]["content"] == "And PATCH?"
    assert isinstance(user["message"]["timestamp"], int)
    reply = _write(pitree, path, "append", str(path), "--role", "assistant", "--text", "Added PATCH.")
    assert reply["parentId"] == user["id"]
    message = reply["message"]
    assert list(message) == ["role", "content", "api", "provider", "model", "usage", "stopReason", "timestamp"]
    assert (message["provider"], message["model"], message["api"]) == ("pitree", "cli", "pitree-cli")
    assert message["content"] == [{"type": "text", "text": "Added PATCH."}]
    assert message["stopReason"] == "stop"
    assert message["usage"]["totalTokens"] == 0
    got = _inspect(pitree, path)
    assert got["leaf"] == reply["id"]
    assert got["context"]["model"] == {"provider": "pitree", "modelId": "cli"}


def test_append_with_a_parent_starts_a_branch(pitree, sample) -> None:
    path = sample("02-tree-branches")
    entry = _write(pitree, path, "append", str(path), "--role", "user", "--text", "Try attrs", "--parent", "2f760a8d")
    assert entry["parentId"] == "2f760a8d"
    got = _inspect(pitree, path)
    assert got["path"] == ["f87f9c1c", "2f760a8d", entry["id"]]


def test_append_uses_the_fsync_setting(pitree, sample, settings, monkeypatch) -> None:
    path = sample("01-linear")
    synced: list[int] = []
    monkeypatch.setattr(store.os, "fdatasync", synced.append)
    pitree("append", str(path), "--role", "user", "--text", "no sync")
    assert synced == []
    settings.PITREE_FSYNC = True
    pitree("append", str(path), "--role", "user", "--text", "sync")
    assert len(synced) == 1


# ------------------------------------------------------------------------------------------- navigate


def test_navigate_writes_a_leaf_entry_once(pitree, sample) -> None:
    path = sample("02-tree-branches")
    entry = _write(pitree, path, "navigate", str(path), "de4f0d3a")
    assert entry["type"] == "leaf"
    assert entry["targetId"] == "de4f0d3a" and entry["parentId"] == "750a4556"
    assert _inspect(pitree, path)["leaf"] == "de4f0d3a"
    before = path.read_bytes()
    assert pitree("navigate", str(path), "de4f0d3a") == ""  # already there: nothing written, exit 0
    assert path.read_bytes() == before


def test_navigate_to_root(pitree, sample) -> None:
    path = sample("01-linear")
    entry = _write(pitree, path, "navigate", str(path), "root")
    assert entry["targetId"] is None
    got = _inspect(pitree, path)
    assert got["leaf"] is None and got["path"] == [] and got["context"]["messages"] == []
    assert pitree("navigate", str(path), "root") == ""
    user = _write(pitree, path, "append", str(path), "--role", "user", "--text", "fresh start")
    assert user["parentId"] is None


# ------------------------------------------------------------------------------------------- label / rename


def test_label_set_and_clear(pitree, sample) -> None:
    path = sample("01-linear")
    entry = _write(pitree, path, "label", str(path), "2e0d4433", "question")
    assert entry["type"] == "label" and entry["targetId"] == "2e0d4433" and entry["label"] == "question"
    assert _inspect(pitree, path)["labels"] == {"2e0d4433": "question"}
    cleared = _write(pitree, path, "label", str(path), "2e0d4433")
    assert "label" not in cleared
    assert _inspect(pitree, path)["labels"] == {}


def test_rename(pitree, sample) -> None:
    path = sample("01-linear")
    entry = _write(pitree, path, "rename", str(path), "  New\r\nname ")
    assert entry["type"] == "session_info" and entry["name"] == "New name"
    assert _inspect(pitree, path)["name"] == "New name"
    _write(pitree, path, "rename", str(path), "")
    assert _inspect(pitree, path)["name"] is None


# ------------------------------------------------------------------------------------------- fork


def test_fork_at_an_entry(pitree, sample) -> None:
    path = sample("02-tree-branches")
    before = path.read_bytes()
    out = pitree("fork", str(path), "37bad775")
    assert out.count("\n") == 1
    new = Path(out.strip())
    assert new.parent == path.parent and new != path
    got = _inspect(pitree, new)
    assert got["parentSession"] == str(path.absolute())
    assert got["path"][:4] == ["f87f9c1c", "2f760a8d", "07721729", "4b928ed4"]
    assert "37bad775" in got["path"]
    assert got["labels"] == {"07721729": "regex-approach"}
    assert path.read_bytes() == before


def test_fork_continues_a_read_only_v1_file(pitree, sample) -> None:
    path = sample("05-legacy-v1.input")
    before = path.read_bytes()
    new = Path(pitree("fork", str(path)).strip())
    got = _inspect(pitree, new)
    assert got["version"] == 3
    # The whole branch, then the fork's name below it (format.md §7.2).
    assert got["path"][:-1] == _inspect(pitree, path)["path"] and got["name"].startswith("Branch · ")
    _write(pitree, new, "append", str(new), "--role", "user", "--text", "continue here")
    assert path.read_bytes() == before


# ------------------------------------------------------------------------------------------- compact


def test_compact_with_tokens_before(pitree, sample) -> None:
    path = sample("01-linear")
    entry = _write(
        pitree,
        path,
        "compact",
        str(path),
        "--keep-from",
        "c256703f",
        "--summary",
        "Listed endpoints.",
        "--tokens-before",
        "900",
    )
    assert entry["type"] == "compaction"
    assert (entry["firstKeptEntryId"], entry["tokensBefore"], entry["summary"]) == (
        "c256703f",
        900,
        "Listed endpoints.",
    )
    roles = [m["role"] for m in _inspect(pitree, path)["context"]["messages"]]
    assert roles == ["compactionSummary", "user", "assistant"]


def test_compact_estimates_tokens_before(pitree, sample) -> None:
    path = sample("01-linear")
    entry = _write(pitree, path, "compact", str(path), "--keep-from", "c256703f", "--summary", "S")
    assert entry["tokensBefore"] > 0


# ------------------------------------------------------------------------------------------- refusals


def _refused(pitree, path: Path, *args: str, match: str) -> str:
    before = path.read_bytes()
    with pytest.raises(CommandError, match=match) as caught:
        pitree(*args)
    assert path.read_bytes() == before
    message = str(caught.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize(
    "args",
    [
        ("append", "{f}", "--role", "user", "--text", "hi"),
        ("navigate", "{f}", "root"),
        ("label", "{f}", "ID", "x"),
        ("rename", "{f}", "x"),
        ("compact", "{f}", "--keep-from", "ID", "--summary", "x"),
    ],
)
def test_writes_to_a_v1_file_are_refused_with_a_fork_hint(pitree, sample, args) -> None:
    path = sample("05-legacy-v1.input")
    first = _inspect(pitree, path)["path"][0]
    argv = [str(path) if a == "{f}" else first if a == "ID" else a for a in args]
    message = _refused(pitree, path, *argv, match="read-only")
    assert "fork" in message


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (("append", "{f}", "--role", "user", "--text", "hi", "--parent", "nope"), "nope"),
        (("append", "{f}", "--role", "user", "--text", "  "), "empty"),
        (("append", "{f}", "--role", "system", "--text", "hi"), "invalid choice"),
        (("append", "{f}", "--role", "user"), "--text"),
        (("navigate", "{f}", "nope"), "nope"),
        (("navigate", "{f}"), "required"),
        (("label", "{f}", "nope", "x"), "nope"),
        (("compact", "{f}", "--keep-from", "nope", "--summary", "x"), "nope"),
        (("compact", "{f}", "--keep-from", "07721729", "--summary", "x"), "not on the branch"),
        (("compact", "{f}", "--keep-from", "f87f9c1c", "--summary", "x", "--tokens-before", "-3"), "negative"),
        (("compact", "{f}", "--summary", "x"), "--keep-from"),
        (("fork", "{f}", "nope"), "nope"),
        (("rename", "{f}"), "required"),
    ],
)
def test_bad_write_arguments_change_nothing(pitree, sample, sessions_dir, args, match) -> None:
    path = sample("02-tree-branches")
    files = sorted(sessions_dir.rglob("*"))
    _refused(pitree, path, *[str(path) if a == "{f}" else a for a in args], match=match)
    assert sorted(sessions_dir.rglob("*")) == files


def test_write_to_a_torn_file_keeps_the_partial_line(pitree, sample) -> None:
    path = sample("06-corrupt-tail.input")
    before = path.read_bytes()
    assert not before.endswith(b"\n")
    out = pitree("append", str(path), "--role", "user", "--text", "after the tear")
    after = path.read_bytes()
    assert after.startswith(before + b"\n")
    last = json.loads(after.splitlines()[-1])
    assert last["id"] == out.strip() and last["parentId"] == "b2b2b2b2"


def test_write_by_session_id(pitree, sample, expected) -> None:
    path = sample("04-compaction")
    session_id = expected["04-compaction"]["sessionId"]
    entry = _write(pitree, path, "rename", session_id[:12], "Compacted")
    assert entry["name"] == "Compacted"


def test_a_failing_disk_write_is_one_line(pitree, sample, monkeypatch) -> None:
    """An OS error while appending (a full disk; as root, permissions would not stop the write)."""

    def full_disk(fd: int, data: bytes) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(store.os, "write", full_disk)
    path = sample("01-linear")
    _refused(pitree, path, "rename", str(path), "x", match="nothing was written: the disk is full")
