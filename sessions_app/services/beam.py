"""Several answers to one message at once (a "beam"): two to four models, or one model several times,
answer the same user message, each as a sibling branch under it, written by a reply of its own
(``replies``): each is marked, stoppable and streamed to every tab like any single reply, and stored as
an ordinary assistant entry. Nothing in the file says they were asked together: a beam is the tree's
own siblings, which any session page shows as "‹ 1/3 ›".

A fused answer is one more sibling: the same context, with the beam's stored answers quoted in a last
message that asks for one answer drawing on them all. That message only goes to the model; the file
holds the answer, under the same user message as the answers it read.

The page that shows a beam names each answer by its running reply and the id its entry will have
(``Answer.ref``, decided before a word is written: ``RunningReply.journal``), so that it can show the
reply while it streams and the stored entry once it is written, whichever process writes it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

from ..assistants import get_assistant
from ..sessionfiles.context import Message, convert_to_llm
from ..sessionfiles.description import parts_of, text_of
from ..sessionfiles.store import SessionFile
from . import chat, replies

MIN_ANSWERS, MAX_ANSWERS = 2, 4
FUSE_CHARS = 12_000  # of each answer quoted to the model that fuses them (its context is not endless)
FUSE_ASK = (
    "Several assistants answered the last message; their answers follow. Write one answer to that "
    "message that keeps what each got right, settles where they disagree, and says so where it matters."
)


class BeamRefused(ValueError):
    """A beam that cannot be asked for as it is (its reason is said to the user)."""


@dataclass(frozen=True)
class Answer:
    """One answer of a beam: its running reply, the id its entry will have, the model asked."""

    reply: str
    entry: str
    model: str

    @property
    def ref(self) -> str:
        """How the beam's page names it: ``<reply>:<entry>:<model>`` (reply and entry ids hold no colon;
        a model name may)."""
        return f"{self.reply}:{self.entry}:{self.model}"

    @classmethod
    def parse(cls, ref: str) -> Answer | None:
        reply, _, rest = ref.partition(":")
        entry, colon, model = rest.partition(":")
        if not (colon and replies.REPLY_ID.fullmatch(reply) and entry):
            return None
        return cls(reply, entry, model)


async def start(session: SessionFile, prompt_id: str, models: Sequence[str]) -> list[Answer]:
    """Start one reply to ``prompt_id`` per model (``MIN_ANSWERS`` to ``MAX_ANSWERS``; a model may come
    more than once), each worded as a variant of its own, and return them as they run."""
    if not MIN_ANSWERS <= len(models) <= MAX_ANSWERS:
        raise BeamRefused(f"Ask {MIN_ANSWERS} to {MAX_ANSWERS} models at once, not {len(models)}.")
    earlier = await asyncio.to_thread(lambda: len(session.index.children(session.row_of(prompt_id))))
    started = []
    for number, model in enumerate(models):
        running = await chat.start_reply(session, prompt_id, model=model, variant=earlier + number)
        started.append(Answer(running.id, running.journal.entry_id, model))
    return started


async def fuse(session: SessionFile, prompt_id: str, answer_ids: Sequence[str], model: str) -> Answer:
    """Start a further answer to ``prompt_id`` that reads the stored answers ``answer_ids`` (siblings
    under it) and fuses them."""
    if len(answer_ids) < MIN_ANSWERS:
        raise BeamRefused(f"A fused answer reads at least {MIN_ANSWERS} answers.")

    def read() -> tuple[list[Message], int]:
        prompt_row = session.row_of(prompt_id)
        quoted = []
        for number, answer_id in enumerate(answer_ids, start=1):
            entry = session.entry(answer_id)
            if entry.get("parentId") != prompt_id:
                raise BeamRefused(f"Entry {answer_id} is not an answer to this message.")
            words = text_of(parts_of((entry.get("message") or {}).get("content")), "\n")
            quoted.append(f"## Answer {number}\n\n{words[:FUSE_CHARS]}")
        messages = convert_to_llm(session.context(prompt_id).messages)
        ask = {"role": "user", "content": FUSE_ASK + "\n\n" + "\n\n".join(quoted), "timestamp": 0}
        return [*messages, ask], len(session.index.children(prompt_row))

    reply_id = await replies.claim(session.session_id, prompt_id, None)
    try:
        messages, variant = await asyncio.to_thread(read)
        reply = get_assistant().reply(messages, model=model, variant=variant)
    except BaseException:
        await replies.release(session.session_id, prompt_id, reply_id)
        raise
    running = replies.start(session, prompt_id, reply, reply_id)
    return Answer(running.id, running.journal.entry_id, model)
