"""Short titles: an untitled session is named after its first answer (the model's few words when a
server answers, the first words of the first message otherwise), once, through the store; a fork is
named as a branch of its source; an upload keeps its own name."""

from __future__ import annotations

import asyncio
import json
import threading
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from support.fake_openai import FakeOpenAI, happy, running_fake, say, send_json

from sessions_app.services import chat
from sessions_app.services.titles import BRANCH_PREFIX, heuristic_title, model_title
from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles.fork import create_session
from sessions_app.sessionfiles.store import SessionFile

HTMX = {"HTTP_HX_REQUEST": "true"}
FIRST = "How do I parse ISO dates in Python? I tried strptime and it fails on the Z suffix."


def _names(path: Path) -> list[str]:
    """The names the file's ``session_info`` lines give, in file order."""
    lines = [json.loads(line) for line in path.read_bytes().splitlines()[1:]]
    return [line["name"] for line in lines if line["type"] == "session_info"]


def _new_chat(client: Any, root: Path, **fields: str) -> tuple[str, Path]:
    """A session made by *New chat* (with ``fields``): its id and file."""
    made = client.post("/new/", fields, **HTMX)
    session_id = made["HX-Redirect"].split("/")[2]
    (path,) = [p for p in root.rglob("*.jsonl") if session_id in p.name]
    return session_id, path


def _send(client: Any, session_id: str, text: str, parent: str = "") -> Any:
    return client.post(f"/s/{session_id}/send/", {"text": text, "parent": parent}, **HTMX)


# ------------------------------------------------------------------------------------------ the words


@pytest.mark.parametrize(
    ("text", "title"),
    [
        (FIRST, "How do I parse ISO dates in Python"),
        ("**Fix** the `build` please!", "Fix the build please"),
        ("  a\nmessage\n\nover lines.", "a message over lines"),
        (
            "Explain the difference between optimistic and pessimistic locking in databases",
            "Explain the difference between optimistic and",
        ),
        ("x" * 80, "x" * 50),
        ("...", ""),
    ],
)
def test_the_heuristic_title_is_the_first_sentence_cut_at_a_word(text: str, title: str) -> None:
    assert heuristic_title(text) == title
    assert len(heuristic_title(text)) <= 50


def test_a_model_s_answer_is_cleaned_into_a_title() -> None:
    assert model_title('"Title: Parsing ISO dates."\nSome more words') == "Parsing ISO dates"
    assert model_title("\n  Parsing ISO dates in Python\n") == "Parsing ISO dates in Python"


# ------------------------------------------------------------------------------------------ new chats


def test_a_new_chat_is_titled_after_its_first_answer(client: Any, sessions_dir: Path) -> None:
    session_id, path = _new_chat(client, sessions_dir)
    answered = _send(client, session_id, FIRST)
    assert answered.status_code == 200
    assert _names(path) == ["How do I parse ISO dates in Python"]
    # The tab that asked stands on the title, as every other tab does once it is pushed.
    assert f'data-position="{SessionFile(path).leaf_id}"' in answered.content.decode()
    # In the reply's own write, below the reply: where the session stands now, so the next message
    # hangs under it (and no tab sees the answer without its title).
    session = SessionFile(path)
    reply = session.index.ids[-2]
    assert session.entry(session.leaf_id)["parentId"] == reply
    assert session.entry(reply)["message"]["role"] == "assistant"
    page = client.get(f"/s/{session_id}/").content.decode()
    assert "How do I parse ISO dates in Python</" in page and FIRST not in page.split("<h1", 1)[1].split("</h1>")[0]
    assert "How do I parse ISO dates in Python" in client.get("/sidebar/", **HTMX).content.decode()
    # The second answer writes no other title.
    _send(client, session_id, "And with a time zone?", session.leaf_id)
    assert _names(path) == ["How do I parse ISO dates in Python"]


def test_a_name_the_user_gave_is_never_replaced(client: Any, sessions_dir: Path) -> None:
    session_id, path = _new_chat(client, sessions_dir, name="Dates")
    _send(client, session_id, FIRST)
    assert _names(path) == ["Dates"]


def test_a_name_cleared_on_purpose_is_not_replaced(client: Any, sessions_dir: Path) -> None:
    created = create_session(sessions_dir, "/home/me/project", fsync=False)
    created.rename("")
    _send(client, created.session_id, FIRST, created.leaf_id or "")
    assert _names(created.path) == [""]


def test_a_failed_answer_writes_no_title_and_the_next_answer_does(client: Any, sessions_dir: Path, settings) -> None:
    session_id, path = _new_chat(client, sessions_dir)
    settings.PITREE_ASSISTANT = "openai"
    settings.PITREE_OPENAI_BASE_URL = "http://127.0.0.1:9/v1"  # nothing listens on the discard port
    _send(client, session_id, FIRST)
    assert SessionFile(path).entry(SessionFile(path).leaf_id)["message"]["stopReason"] == "error"
    assert _names(path) == []
    settings.PITREE_ASSISTANT = "offline"
    _send(client, session_id, "Parse 2026-12-03T10:00:00Z for me", SessionFile(path).leaf_id)
    assert _names(path) == ["How do I parse ISO dates in Python"]  # from the first user message


def _titles_from(title: Any) -> Any:
    """A fake server answering a title request (its system prompt asks for a title) with ``title``
    (a responder), and anything else with "Hello world" once the title is answered (a model's reply
    takes longer than its few words of title; here that is made sure of)."""
    titled = threading.Event()

    def respond(handler: BaseHTTPRequestHandler, fake: FakeOpenAI) -> None:
        system = handler.body["messages"][0]
        if system["role"] == "system" and "title" in system["content"]:
            title(handler, fake)
            titled.set()
        else:
            titled.wait(10)
            happy(handler, fake)

    return respond


def _openai(settings: Any, fake: FakeOpenAI) -> None:
    settings.PITREE_ASSISTANT = "openai"
    settings.PITREE_OPENAI_BASE_URL = fake.base_url
    settings.PITREE_OPENAI_MODEL = "fake-model"


def test_with_a_model_server_the_title_is_the_model_s(client: Any, sessions_dir: Path, settings) -> None:
    session_id, path = _new_chat(client, sessions_dir)
    with running_fake() as fake:
        _openai(settings, fake)
        fake.respond = _titles_from(say('"Parsing ISO dates."'))
        _send(client, session_id, FIRST)
    asked = [r.body for r in fake.requests if r.method == "POST" and "title" in r.body["messages"][0]["content"]]
    assert len(asked) == 1 and asked[0]["model"] == "fake-model"
    assert FIRST in asked[0]["messages"][1]["content"]
    assert _names(path) == ["Parsing ISO dates"]


def test_a_failing_title_request_falls_back_to_the_first_words(client: Any, sessions_dir: Path, settings) -> None:
    session_id, path = _new_chat(client, sessions_dir)
    with running_fake() as fake:
        _openai(settings, fake)
        fake.respond = _titles_from(lambda handler, _: send_json(handler, 500, {"error": {"message": "down"}}))
        _send(client, session_id, FIRST)
    assert SessionFile(path).entry(SessionFile(path).index.ids[-2])["message"]["stopReason"] == "stop"
    assert _names(path) == ["How do I parse ISO dates in Python"]


async def test_two_writers_answering_at_once_write_one_title(sessions_dir: Path, settings) -> None:
    """Two processes (two readers of the file, each with its own index) answer the same untitled
    session at once: each reply would title it, and the store's lock lets only the first."""
    created = create_session(sessions_dir, "/home/me/project", fsync=False)
    message = created.append(E.user_message(FIRST))
    first, second = SessionFile(created.path, fsync=False), SessionFile(created.path, fsync=False)
    await asyncio.gather(chat.answer(first, message["id"]), chat.answer(second, message["id"]))
    index = SessionFile(created.path).index
    assert [index.roles[row] for row in range(len(index)) if index.types[row] == "message"] == [
        "user",
        "assistant",
        "assistant",
    ]
    assert _names(created.path) == ["How do I parse ISO dates in Python"]


# ------------------------------------------------------------------------------------------ forks


def test_a_fork_is_named_as_a_branch_of_its_source(client: Any, pi: Any) -> None:
    source_id = pi.id("01-linear")
    answer = client.post(f"/s/{source_id}/fork/", {"entry": SessionFile(pi.path("01-linear")).leaf_id}, **HTMX)
    fork_id = answer["HX-Redirect"].split("/")[2]
    (path,) = [p for p in pi.folder.glob("*.jsonl") if fork_id in p.name]
    fork = SessionFile(path)
    assert fork.index.name == f"{BRANCH_PREFIX}Todo API endpoints  review"
    assert fork.leaf_id == fork.index.ids[-1]  # the name is the fork's last line: it opens there
    assert f"{BRANCH_PREFIX}Todo API endpoints  review" in client.get(f"/s/{fork_id}/").content.decode()
    # A fork of the fork is a branch of the same title, not of "Branch · …".
    again = client.post(f"/s/{fork_id}/fork/", {"entry": fork.leaf_id}, **HTMX)
    again_id = again["HX-Redirect"].split("/")[2]
    (again_path,) = [p for p in pi.folder.glob("*.jsonl") if again_id in p.name]
    assert SessionFile(again_path).index.name == f"{BRANCH_PREFIX}Todo API endpoints  review"
    # The source's name, wherever the fork is made: a fork of an earlier entry is a branch of it too.
    earlier = client.post(f"/s/{source_id}/fork/", {"entry": "358d8704"}, **HTMX)
    earlier_id = earlier["HX-Redirect"].split("/")[2]
    (earlier_path,) = [p for p in pi.folder.glob("*.jsonl") if earlier_id in p.name]
    assert SessionFile(earlier_path).index.name == f"{BRANCH_PREFIX}Todo API endpoints  review"


def test_a_fork_of_an_untitled_session_is_named_from_its_first_message(client: Any, sessions_dir: Path) -> None:
    created = create_session(sessions_dir, "/home/me/project", fsync=False)
    message = created.append(E.user_message(FIRST))
    answer = client.post(f"/s/{created.session_id}/fork/", {"entry": message["id"]}, **HTMX)
    fork_id = answer["HX-Redirect"].split("/")[2]
    (path,) = [p for p in created.path.parent.glob("*.jsonl") if fork_id in p.name]
    assert _names(path) == [f"{BRANCH_PREFIX}How do I parse ISO dates in Python"]


def test_a_fork_keeps_only_the_labels_of_entries_it_holds(client: Any, pi: Any) -> None:
    """Sample 02 labels entries on two branches; a fork of one branch keeps the labels of that branch."""
    source = SessionFile(pi.path("02-tree-branches"))
    labels = source.index.labels
    leaf = source.leaf_id
    on_path = {source.index.ids[row] for row in source.path_rows(leaf)}
    assert set(labels) - on_path and set(labels) & on_path  # labels on both sides of the fork
    answer = client.post(f"/s/{pi.id('02-tree-branches')}/fork/", {"entry": leaf}, **HTMX)
    fork_id = answer["HX-Redirect"].split("/")[2]
    (path,) = [p for p in pi.folder.glob("*.jsonl") if fork_id in p.name]
    fork = SessionFile(path)
    assert set(fork.index.labels) == set(labels) & on_path
    assert all(fork.index.row(target) is not None for target in fork.index.labels)


def test_a_tail_fork_is_named_as_a_branch_too(client: Any, pi: Any) -> None:
    source_id = pi.id("04-compaction")
    source = SessionFile(pi.path("04-compaction"))
    answer = client.post(f"/s/{source_id}/tail-fork/", {"entry": source.leaf_id, "turns": 1}, **HTMX)
    fork_id = answer["HX-Redirect"].split("/")[2]
    (path,) = [p for p in pi.folder.glob("*.jsonl") if fork_id in p.name]
    assert SessionFile(path).index.name.startswith(BRANCH_PREFIX)


def test_an_upload_keeps_its_own_title(client: Any, pi: Any) -> None:
    data = pi.path("01-linear").read_bytes()
    response = client.post("/upload/", {"file": SimpleUploadedFile("s.jsonl", data), "cwd": "/home/me/uploads"})
    session_id = response["Location"].split("/")[2]
    (path,) = [p for p in pi.folder.parent.rglob("*.jsonl") if session_id in p.name]
    assert SessionFile(path).index.name == "Todo API endpoints  review"
