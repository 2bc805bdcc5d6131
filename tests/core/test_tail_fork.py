"""A tail fork: only a branch's last turns, the history before them folded into a summary (a
compaction keeping nothing before it), the branch's model and thinking level kept, lineage both ways."""

from __future__ import annotations

from typing import Any

import pytest

from sessions_app.sessionfiles import entries as E
from sessions_app.sessionfiles.description import parts_of, text_of
from sessions_app.sessionfiles.errors import SessionError
from sessions_app.sessionfiles.fork import fork_point, tail_fork
from sessions_app.sessionfiles.store import SessionFile


def _long(new_session: Any) -> tuple[SessionFile, list[str]]:
    session = new_session(name="Long one")
    session.append(E.model_change("anthropic", "claude-sonnet-4-5"))
    session.append(E.thinking_level_change("high"))
    users = []
    for turn in range(5):
        users.append(session.append(E.user_message(f"question {turn}"))["id"])
        session.append(
            E.assistant_message(
                f"answer {turn}", provider="anthropic", model="claude-sonnet-4-5", api="anthropic-messages"
            )
        )
    session.set_label(users[4], "the last question")
    session.set_label(users[0], "the first question")
    return session, users


def test_the_last_turns_after_a_summary(new_session: Any) -> None:
    source, users = _long(new_session)
    fork = tail_fork(source, source.leaf_id, 2, "Questions 0 to 2 were answered.", 4242, fsync=False)
    context = fork.context()
    assert [m.get("role") for m in context.messages] == ["compactionSummary", "user", "assistant", "user", "assistant"]
    assert (
        context.messages[0]["summary"] == "Questions 0 to 2 were answered."
        and context.messages[0]["tokensBefore"] == 4242
    )
    assert text_of(parts_of(context.messages[1]["content"])) == "question 3"
    assert context.model == {"provider": "anthropic", "modelId": "claude-sonnet-4-5"}
    assert context.thinking_level == "high"
    entries = fork.path_entries()
    kinds = [entry["type"] for entry in entries]
    assert kinds == [
        "model_change",
        "thinking_level_change",
        "compaction",
        "message",
        "message",
        "message",
        "message",
        "label",
    ]
    compaction = entries[2]
    assert compaction["firstKeptEntryId"] == compaction["id"]  # nothing before it is kept (pi 1.x's way)
    assert entries[3]["id"] == users[3]  # the kept entries keep their ids
    assert fork.index.labels[users[4]][0] == "the last question"
    assert users[0] not in fork.index.labels  # only the labels of what it holds
    assert fork.parent_session == str(source.path.absolute())
    last_answer = [entry["id"] for entry in source.path_entries() if entry["type"] == "message"][-1]
    assert fork_point(fork, source) == last_answer  # the source's page finds where the fork came from


def test_nothing_to_summarise_is_refused(new_session: Any) -> None:
    source, _ = _long(new_session)
    with pytest.raises(SessionError, match="The branch has 5 turns: nothing before the last 5 to summarise"):
        tail_fork(source, source.leaf_id, 5, "x", 0, fsync=False)
    assert len(list(source.path.parent.glob("*.jsonl"))) == 1
