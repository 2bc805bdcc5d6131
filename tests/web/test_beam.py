"""Several models at once (a beam): the message stored once, an answer per model as siblings under it,
each written by a reply of its own, shown side by side on the beam's page, stopped one by one or all
together, and a fused answer that reads them."""

from __future__ import annotations

import asyncio
import json
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from support.fake_openai import completions, listing, running_fake, say

from sessions_app.services import beam, replies

LINEAR = "01-linear"
PARENT = "358d8704"


def _answers(pi: Any, prompt_id: str) -> list[dict[str, Any]]:
    return [line for line in pi.lines(pi.path(LINEAR)) if line.get("parentId") == prompt_id]


async def _all_stored(pi: Any, prompt_id: str, count: int) -> list[dict[str, Any]]:
    for _ in range(1000):
        found = _answers(pi, prompt_id)
        if len(found) == count and not replies.running(pi.id(LINEAR)):
            return found
        await asyncio.sleep(0.01)
    raise AssertionError(f"{count} answers were not stored")


def _beam_refs(response: Any) -> tuple[str, list[beam.Answer]]:
    """The prompt and answers named by the beam page a response sends the tab to."""
    query = parse_qs(urlsplit(response.headers["HX-Redirect"]).query)
    parsed = [beam.Answer.parse(ref) for ref in query["a"]]
    assert None not in parsed
    return query["beam"][0], [answer for answer in parsed if answer is not None]


async def test_a_beam_stores_the_message_once_and_one_answer_per_pick_as_siblings(asgi, pi) -> None:
    url = f"/s/{pi.id(LINEAR)}/beam/"
    response = await asgi.post(url, data={"text": "Two takes?", "parent": PARENT, "ask": ["offline-echo"] * 2 + [""]})
    assert response.status_code == 200
    prompt_id, named = _beam_refs(response)
    user = [line for line in pi.lines(pi.path(LINEAR)) if line.get("id") == prompt_id]
    assert len(user) == 1 and user[0]["parentId"] == PARENT and user[0]["message"]["content"] == "Two takes?"
    stored = await _all_stored(pi, prompt_id, 2)
    assert sorted(line["id"] for line in stored) == sorted(answer.entry for answer in named)
    assert [answer.model for answer in named] == ["offline-echo", "offline-echo"]
    texts = [line["message"]["content"][0]["text"] for line in stored]
    assert all("Two takes?" in text for text in texts) and texts[0] != texts[1]  # each its own variant
    assert len({answer.reply for answer in named}) == 2

    page = await asgi.get(response.headers["HX-Redirect"])
    assert page.status_code == 200
    assert page.text.count("Continue with this answer") == 2 and "Stop all" not in page.text
    for line in stored:
        assert f'name="to" value="{line["id"]}"' in page.text


@pytest.mark.parametrize(
    ("models", "error"),
    [
        (["offline-echo"], "Pick 2 to 4 models"),
        (["offline-echo"] * 5, "Pick 2 to 4 models"),
        (["offline-echo", "no-such-model"], "Not a model this server offers: no-such-model"),
    ],
)
async def test_a_beam_of_the_wrong_size_or_an_unknown_model_writes_nothing(asgi, pi, models, error) -> None:
    before = pi.path(LINEAR).read_bytes()
    response = await asgi.post(f"/s/{pi.id(LINEAR)}/beam/", data={"text": "Hm?", "parent": PARENT, "ask": models})
    assert response.status_code == 422 and error in response.text
    assert pi.path(LINEAR).read_bytes() == before


async def test_answers_stream_as_placeholders_then_stop_all_stores_each_as_aborted(asgi, pi, settings) -> None:
    settings.PITREE_OFFLINE_DELAY = 30  # each reply waits after its first words until it is stopped
    sid = pi.id(LINEAR)
    response = await asgi.post(
        f"/s/{sid}/beam/", data={"text": "Slow ones", "parent": PARENT, "ask": ["offline-echo"] * 3}
    )
    prompt_id, named = _beam_refs(response)
    for _ in range(1000):
        if all(running.reply.text for running in replies.running(sid)) and len(replies.running(sid)) == 3:
            break
        await asyncio.sleep(0.01)
    page = await asgi.get(response.headers["HX-Redirect"])
    for answer in named:  # each answer's placeholder, with its text so far and a Stop of its own
        assert f'id="reply-{answer.reply}"' in page.text and f'name="reply" value="{answer.reply}"' in page.text
    assert "Stop all" in page.text and "Continue with this answer" not in page.text
    assert json.dumps([a.reply for a in named]).replace('"', "&quot;") in page.text  # what its socket follows

    stopped = await asgi.post(f"/s/{sid}/beam/stop/", data={"reply": [answer.reply for answer in named]})
    assert stopped.status_code == 204
    stored = await _all_stored(pi, prompt_id, 3)
    assert {line["message"]["stopReason"] for line in stored} == {"aborted"}
    again = await asgi.post(f"/s/{sid}/beam/stop/", data={"reply": [named[0].reply]})
    assert again.status_code == 204  # ended meanwhile: nothing to do, nothing written
    assert len(_answers(pi, prompt_id)) == 3


@pytest.mark.parametrize("query", ["beam=358d8704&a=only:one:model", "beam=358d8704&a=bad id!:x:m&a=r2:e2:m"])
async def test_a_malformed_beam_page_says_why(asgi, pi, query) -> None:
    response = await asgi.get(f"/s/{pi.id(LINEAR)}/compare/?{query}")
    assert response.status_code == 400 and "A beam names 2 to 5 answers" in response.text


async def test_a_fused_answer_reads_the_others_and_is_one_more_sibling(asgi, pi, settings) -> None:
    with running_fake() as fake:
        fake.list_models = listing("alpha", "beta")
        fake.respond = say("An answer from the fake.")
        settings.PITREE_ASSISTANT = "openai"
        settings.PITREE_OPENAI_BASE_URL = fake.base_url
        settings.PITREE_OPENAI_MODEL = "alpha"
        sid = pi.id(LINEAR)
        response = await asgi.post(
            f"/s/{sid}/beam/", data={"text": "Which is best?", "parent": PARENT, "ask": ["alpha", "beta"]}
        )
        prompt_id, named = _beam_refs(response)
        stored = await _all_stored(pi, prompt_id, 2)
        assert sorted(r.body["model"] for r in completions(fake)) == ["alpha", "beta"]
        assert sorted(line["message"]["model"] for line in stored) == ["alpha", "beta"]

        page = await asgi.get(response.headers["HX-Redirect"])
        assert "A fused answer that reads them" in page.text
        fake.respond = say("The fused answer.")
        fused = await asgi.post(
            f"/s/{sid}/beam/fuse/",
            data={
                "prompt": prompt_id,
                "answer": [line["id"] for line in stored],
                "model": "beta",
                "beam": [answer.ref for answer in named],
            },
        )
        assert fused.status_code == 200
        _, columns = _beam_refs(fused)
        assert columns[:2] == named and columns[2].model == "beta"
        third = await _all_stored(pi, prompt_id, 3)
        asked = completions(fake)[-1].body
    last = asked["messages"][-1]["content"]
    # The question, then (one user turn, as the backend joins consecutive ones) the answers to fuse.
    assert last.index("Which is best?") < last.index(beam.FUSE_ASK)
    assert "## Answer 1" in last and "## Answer 2" in last and "An answer from the fake." in last
    fused_entry = next(line for line in third if line["id"] == columns[2].entry)
    assert fused_entry["message"]["content"] == [{"type": "text", "text": "The fused answer."}]
