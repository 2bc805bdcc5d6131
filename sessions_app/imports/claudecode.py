"""Claude Code's sessions: ``~/.claude/projects/<project>/<session id>.jsonl``, a line per record, records
linked by ``uuid``/``parentUuid``; its subagents' sidechains in ``<session id>/subagents/agent-*.jsonl``
(or, in older versions, ``agent-*.jsonl`` beside the sessions, or inline with ``isSidechain``).

| line | becomes |
| --- | --- |
| ``user`` text and pictures | a user message |
| ``user`` ``tool_result`` blocks | a tool result each (named after the call they answer) |
| ``assistant`` | an assistant message: text, thinking (with its signature), tool calls; its model, usage and stop reason |
| the summary a compaction starts from (``isCompactSummary``) | a ``compaction`` keeping nothing before it, as Claude Code's context does |
| other records with a ``uuid`` (``system``, ``progress``, ``attachment`` …), the compaction boundary included (placed under ``logicalParentUuid``, the message it followed) | a ``custom`` entry holding the record |
| ``summary`` and ``custom-title`` (titles, no ``uuid``) | a ``session_info`` naming the session |
| other records without a ``uuid`` (``file-history-snapshot``, ``queue-operation`` …) | a ``custom`` entry holding the record |

A record without a ``uuid`` is no node of Claude Code's tree: it is kept as a further entry of the
record before it in the file (of the first record, after that record's own, when it comes before
any), so it sits on that record's branch and forks none. A sidechain's first record has no parent: it is a root of its own.
The position is the last record of the main conversation. A record's id seen again is a repeated
write: the first one is kept.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import PurePosixPath
from typing import Any

import orjson

from ..sessionfiles.description import parts_of, text_of
from ..sessionfiles.entries import Draft
from . import shapes as S
from .conversation import Conversation, Node, entry_id
from .errors import ExportError
from .sources import CLAUDE_CODE, READ_ERRORS, Counted, Counter, Export, Member, unreadable

API, PROVIDER = "anthropic-messages", "anthropic"
_STOP = {"end_turn": "stop", "tool_use": "toolUse", "max_tokens": "length", "stop_sequence": "stop", "refusal": "error"}
_TITLES = {"summary": "summary", "custom-title": "customTitle"}
_CHUNK = 1 << 20


def conversations(export: Export, counter: Counter) -> Iterator[Conversation]:
    for main, sidechains in sessions(export.members):
        yield read_session(main, sidechains, counter)


def sessions(members: list[Member]) -> list[tuple[Member, list[Member]]]:
    """Each session file with its subagents' files (by folder, or by the session id they name)."""
    mains: dict[str, Member] = {}
    agents: list[Member] = []
    for member in members:
        path = PurePosixPath(member.name)
        if path.parent.name == "subagents" or path.name.startswith("agent-"):
            agents.append(member)
        else:
            mains[path.stem] = member
    attached: dict[str, list[Member]] = {stem: [] for stem in mains}
    alone = []
    for agent in agents:
        path = PurePosixPath(agent.name)
        owner = path.parent.parent.name if path.parent.name == "subagents" else _session_named(agent)
        if owner in attached:
            attached[owner].append(agent)
        else:
            alone.append(agent)
    return [(mains[stem], attached[stem]) for stem in mains] + [(agent, []) for agent in alone]


def _session_named(member: Member) -> str | None:
    """The session id an older sidechain file's first record names."""
    with member.open() as stream:
        line = stream.readline(1 << 20)
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    return record.get("sessionId") if isinstance(record, dict) else None


def read_session(main: Member, sidechains: list[Member], counter: Counter) -> Conversation:
    session_id = PurePosixPath(main.name).stem
    reader = _Reader(main.name)
    for member in [main, *sidechains]:
        reader.read(member, counter, main=member is main)
    return Conversation(
        source=CLAUDE_CODE,
        id=session_id,
        where=main.name,
        created_ms=reader.created or 0,
        title=None,  # its titles are entries of their own (summary lines), where the file has them
        model=None,  # each answer names its model
        nodes=reader.nodes,
        position=reader.position,
        fields={"file": main.name, "sidechains": [member.name for member in sidechains], "cwd": reader.cwd},
        notes=reader.notes,
    )


def lines(member: Member, counter: Counter) -> Iterator[tuple[int, bytes | None]]:
    """The file's complete lines, numbered from 1; an unterminated last line is given as None when it
    does not parse (a line Claude Code is still writing)."""
    number = 0
    rest = b""
    start = counter.done
    try:
        with member.open() as raw:
            stream = Counted(raw, counter)
            while chunk := stream.read(_CHUNK):
                rest += chunk
                *complete, rest = rest.split(b"\n")
                for line in complete:
                    number += 1
                    yield number, line
    except READ_ERRORS as error:
        raise unreadable(error, member, counter.done - start) from None
    if rest.strip():
        try:
            orjson.loads(rest)
        except orjson.JSONDecodeError:
            yield number + 1, None
            return
        yield number + 1, rest


class _Reader:
    def __init__(self, where: str) -> None:
        self.where = where
        self.nodes: list[Node] = []
        self.notes: list[str] = []
        self.position: str | None = None
        self.created: int | None = None
        self._seen: set[str] = set()
        self._tools: dict[str, str] = {}  # tool_use id -> the tool's name
        self._compacted: dict[str, int] = {}  # a compaction boundary's uuid -> tokens before it
        self._ms = 0
        self.cwd: str | None = None  # Claude Code's working directory, as its first record names it

    def read(self, member: Member, counter: Counter, *, main: bool) -> None:
        last: Node | None = None
        waiting: list[Draft] = []  # records before the file's first node: they follow its entries
        for number, line in lines(member, counter):
            if line is None:
                self.notes.append(f"{member.name} line {number}: an unfinished last line, left out")
                continue
            if not line.strip():
                continue
            try:
                record = orjson.loads(line)
            except orjson.JSONDecodeError:
                raise ExportError(f"{member.name} line {number}: not valid JSON") from None
            if not isinstance(record, dict):
                raise ExportError(f"{member.name} line {number}: not a JSON object")
            if self.cwd is None and isinstance(record.get("cwd"), str):
                self.cwd = record["cwd"]
            ms = S.iso_ms(record.get("timestamp"))
            if ms is not None:
                self._ms = ms
                self.created = ms if self.created is None else self.created
            uuid = record.get("uuid")
            if not isinstance(uuid, str) or not uuid:
                part = self._record(record, self._ms)
                if last is None:
                    waiting.append(part)
                else:
                    last.parts.append(part)
                continue
            if uuid in self._seen:
                self.notes.append(f"{member.name} line {number}: record {uuid} again: the first one is kept")
                continue
            self._seen.add(uuid)
            parent = record.get("parentUuid")
            if not isinstance(parent, str):
                logical = record.get("logicalParentUuid")
                parent = logical if isinstance(logical, str) else None
            last = Node(uuid, parent, [*self._node(record, uuid, self._ms), *waiting])
            waiting = []
            self.nodes.append(last)
            if main and not record.get("isSidechain"):
                self.position = uuid
        if waiting:  # a file of records without a uuid: they hang together under the session's start
            self.nodes.append(Node(f"{PurePosixPath(member.name).stem}-records", None, waiting))

    def _record(self, record: dict[str, Any], ms: int) -> Draft:
        kind = record.get("type")
        title = S.plain_text(record.get(_TITLES.get(str(kind), "")))
        if title:
            return S.session_info(title, ms, {"from": CLAUDE_CODE, "record": record})
        return S.custom(f"claude-code/{kind}", record, ms)

    def _node(self, record: dict[str, Any], uuid: str, ms: int) -> list[Draft]:
        kind = record.get("type")
        message = record.get("message")
        if kind == "system" and record.get("subtype") == "compact_boundary":
            metadata = record.get("compactMetadata")
            tokens = metadata.get("preTokens") if isinstance(metadata, dict) else None
            self._compacted[uuid] = tokens if isinstance(tokens, int) else 0
        if kind not in ("user", "assistant") or not isinstance(message, dict):
            return [S.custom(f"claude-code/{kind}", record, ms)]
        content = message.get("content")
        imported = {"from": CLAUDE_CODE, "record": {**record, "message": S.without(message, ["content"])}}
        if kind == "assistant":
            return [S.message(self._answer(message, record, ms), _with_rest(imported, content, _ANSWER_BLOCKS))]
        if record.get("isCompactSummary"):
            summary = content if isinstance(content, str) else text_of(parts_of(content))
            tokens = self._compacted.get(str(record.get("parentUuid")), 0)
            return [S.compaction(summary, entry_id(uuid), tokens, ms, imported)]
        if isinstance(content, str):
            return [S.message(S.user(content, ms), imported)]
        return self._user_blocks(content if isinstance(content, list) else [], imported, ms)

    def _answer(self, message: dict[str, Any], record: dict[str, Any], ms: int) -> dict[str, Any]:
        blocks = []
        for block in S.listed(message.get("content")):
            converted = _answer_block(block)
            if converted is not None:
                blocks.append(converted)
                if converted["type"] == "toolCall":
                    self._tools[converted["id"]] = converted["name"]
        usage = S.obj(message.get("usage"))
        stop = _STOP.get(str(message.get("stop_reason")))
        if stop is None:
            stop = "toolUse" if any(block["type"] == "toolCall" for block in blocks) else "stop"
        failed = bool(record.get("isApiErrorMessage"))
        return S.assistant(
            blocks,
            api=API,
            provider=PROVIDER,
            model=S.plain_text(message.get("model")) or "unknown",
            usage_=S.usage(
                usage.get("input_tokens"),
                usage.get("output_tokens"),
                usage.get("cache_read_input_tokens"),
                usage.get("cache_creation_input_tokens"),
            ),
            stop_reason="error" if failed else stop,
            error_message=(text_of(parts_of(message.get("content"))) or "error") if failed else None,
            response_id=S.plain_text(message.get("id")),
            ms=ms,
        )

    def _user_blocks(self, content: list[Any], imported: dict[str, Any], ms: int) -> list[Draft]:
        """A user record's blocks in order: each tool result an entry of its own, the text and
        pictures between them a user message."""
        turns: list[dict[str, Any]] = []
        said: list[dict[str, Any]] = []
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_result":
                if said:
                    turns.append(S.user(said, ms))
                    said = []
                call = S.plain_text(block.get("tool_use_id")) or ""
                output = block.get("content")
                blocks = [S.text(output)] if isinstance(output, str) else _result_blocks(output)
                turns.append(
                    S.tool_result(
                        call, self._tools.get(call, "tool"), blocks, ms, is_error=block.get("is_error") is True
                    )
                )
                continue
            converted = _user_block(block)
            if converted is not None:
                said.append(converted)
        if said or not turns:
            turns.append(S.user(said, ms))
        kept = _with_rest(imported, content, _USER_BLOCKS)
        return [S.message(turn, kept if number == 0 else None) for number, turn in enumerate(turns)]


_ANSWER_BLOCKS = {"text", "thinking", "redacted_thinking", "tool_use"}
_USER_BLOCKS = {"text", "image", "tool_result"}


def _with_rest(imported: dict[str, Any], content: Any, converted: set[str]) -> dict[str, Any]:
    """``imported`` with the content blocks pi's message does not hold (server tools' blocks …)."""
    if not isinstance(content, list):
        return imported
    rest = [block for block in content if not (isinstance(block, dict) and block.get("type") in converted)]
    if not rest:
        return imported
    record = imported["record"]
    return {**imported, "record": {**record, "message": {**record["message"], "content": rest}}}


def _answer_block(block: Any) -> dict[str, Any] | None:
    if not isinstance(block, dict):
        return None
    kind = block.get("type")
    if kind == "text":
        return S.text(S.plain_text(block.get("text")) or "")
    if kind == "thinking":
        return S.thinking(S.plain_text(block.get("thinking")) or "", S.plain_text(block.get("signature")))
    if kind == "redacted_thinking":
        return S.thinking("", S.plain_text(block.get("data")), redacted=True)
    if kind == "tool_use":
        name = S.plain_text(block.get("name")) or "tool"
        return S.tool_call(S.plain_text(block.get("id")) or "", name, block.get("input", {}))
    return None


def _user_block(block: dict[str, Any]) -> dict[str, Any] | None:
    if block.get("type") == "text":
        return S.text(S.plain_text(block.get("text")) or "")
    if block.get("type") == "image":
        source = block.get("source")
        if isinstance(source, dict) and source.get("type") == "base64" and isinstance(source.get("data"), str):
            return {
                "type": "image",
                "data": source["data"],
                "mimeType": S.plain_text(source.get("media_type")) or "image/png",
            }
    return None


def _result_blocks(output: Any) -> list[dict[str, Any]]:
    blocks = []
    for block in output if isinstance(output, list) else []:
        if isinstance(block, dict):
            converted = _user_block(block)
            if converted is not None:
                blocks.append(converted)
    return blocks
