"""Fixtures for the search tests: a sessions folder written line by line, an index beside it, and a
``find`` that searches the folder the way the web view and the CLI do (catch up, then query).

pytest runs with ``--import-mode=importlib``: test modules cannot import each other or this file, so
everything they share is handed out as a fixture.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from sessions_app.search import index as search_index
from sessions_app.search.index import SearchIndex
from sessions_app.search.results import Results, search
from sessions_app.sessionfiles.catalog import Catalog
from sessions_app.sessionfiles.store import clear_cache

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sessions_app" / "samples" / "pi"


def line(obj: dict[str, Any]) -> bytes:
    """One line the way pi writes it (compact, non-ASCII raw), newline included."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


class Folder:
    """A sessions folder in pi's layout; files are written and grown the way pi does, a line at a time."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._count = 0

    def path(self, name: str) -> Path:
        return self.root / "--home-alice-project--" / f"{name}.jsonl"

    def write(self, name: str, *entries: dict[str, Any], version: int = 3) -> Path:
        """A session file ``name`` (its session id is ``name``) holding ``entries``; an entry without
        ``id``/``parentId``/``timestamp`` gets a fresh id, no parent (a root) and a timestamp."""
        path = self.path(name)
        path.parent.mkdir(parents=True, exist_ok=True)
        header = {"type": "session", "version": version, "id": name, "timestamp": "2026-03-02T09:00:00.000Z"}
        header["cwd"] = "/home/alice/project"
        data = line(header) + b"".join(line(self.complete(entry)) for entry in entries)
        path.write_bytes(data)
        return path

    def complete(self, entry: dict[str, Any]) -> dict[str, Any]:
        self._count += 1
        full = {"type": "message", "id": f"e{self._count:07d}", "parentId": None}
        full["timestamp"] = f"2026-03-02T09:{self._count // 60 % 60:02d}:{self._count % 60:02d}.000Z"
        full.update(entry)
        return full

    def append(self, path: Path, entry: dict[str, Any]) -> bytes:
        """Append one entry line; returns the bytes written."""
        data = line(self.complete(entry))
        with path.open("ab") as handle:
            handle.write(data)
        return data

    # Entry shapes (docs/format.md §3): the tests build entries with these.

    @staticmethod
    def user(content: Any) -> dict[str, Any]:
        return {"type": "message", "message": {"role": "user", "content": content, "timestamp": 1772442933000}}

    @staticmethod
    def assistant(*blocks: dict[str, Any]) -> dict[str, Any]:
        message = {"role": "assistant", "content": list(blocks), "stopReason": "stop", "timestamp": 1772442936000}
        return {"type": "message", "message": message}

    @staticmethod
    def line(entry: dict[str, Any]) -> bytes:
        return line(entry)

    @staticmethod
    def text(value: str) -> dict[str, Any]:
        return {"type": "text", "text": value}


class FailingExtraction:
    """The index's text extraction failing (an extraction bug) on every entry holding the word "fails",
    until ``mend()``; ``tries`` holds the ids of the entries it failed on."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.tries: list[str] = []
        self._real = search_index.searchable_text
        self._monkeypatch = monkeypatch
        monkeypatch.setattr(search_index, "searchable_text", self._fails_on_bad)

    def _fails_on_bad(self, entry: dict[str, Any]) -> str | None:
        if "fails" in str(entry):
            self.tries.append(entry["id"])
            raise ValueError("an extraction bug")
        return self._real(entry)

    def mend(self) -> None:
        self._monkeypatch.setattr(search_index, "searchable_text", self._real)


@pytest.fixture
def failing_extraction(monkeypatch: pytest.MonkeyPatch) -> FailingExtraction:
    return FailingExtraction(monkeypatch)


@pytest.fixture(autouse=True)
def _fresh_file_cache() -> Iterator[None]:
    clear_cache()
    yield
    clear_cache()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "sessions"
    path.mkdir()
    return path


@pytest.fixture
def folder(root: Path) -> Folder:
    return Folder(root)


@pytest.fixture
def index(tmp_path: Path) -> Iterator[SearchIndex]:
    found = SearchIndex(tmp_path / "var" / "search.sqlite3")
    yield found
    found.close()


@pytest.fixture
def catalog(root: Path) -> Catalog:
    return Catalog(root)


@pytest.fixture
def run(index: SearchIndex, catalog: Catalog) -> Callable[..., Results]:
    """Search the folder as the app does: list it, catch up, query."""

    def go(query: str, **options: Any) -> Results:
        return search(index, catalog, query, **options)

    return go


@pytest.fixture
def find(run: Callable[..., Results]) -> Callable[..., list[tuple[str, str]]]:
    """(session id, entry id) of every hit of ``query`` on its first page."""

    def go(query: str, **options: Any) -> list[tuple[str, str]]:
        return [(hit.session_id, hit.entry_id) for hit in run(query, **options).hits]

    return go


@pytest.fixture
def samples_dir() -> Path:
    return SAMPLES
