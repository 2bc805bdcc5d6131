"""Exports of other chat products, built to the published descriptions of real ones, for the import
tests: builders for each format's records, and one whole export per product holding its awkward
parts (ChatGPT's hidden system node, tool nodes and pictures; Open WebUI's answers by several models
at once and tool calls inside text; LibreChat's branches and tree form; Claude Code's sidechains,
summaries and compaction).

Times are epoch seconds from ``T0`` (ChatGPT, Open WebUI) or ISO strings (LibreChat, Claude Code).
"""

from __future__ import annotations

import base64
import html
import json
import zipfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sessions_app.imports.run import import_export
from sessions_app.sessionfiles.description import parts_of, text_of
from sessions_app.sessionfiles.store import SessionFile, clear_cache

T0 = 1_760_000_000  # 2025-10-09T08:53:20Z
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def iso(seconds: float) -> str:
    return datetime.fromtimestamp(T0 + seconds, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def write_json(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def write_zip(path: Path, files: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return path


# ----------------------------------------------------------------------------------------- ChatGPT


def gpt_message(
    node_id: str,
    role: str,
    text: str | None = None,
    *,
    at: float | None,
    parts: list[Any] | None = None,
    kind: str = "text",
    content: dict[str, Any] | None = None,
    recipient: str = "all",
    name: str | None = None,
    metadata: dict[str, Any] | None = None,
) -> dict[str, Any]:
    if content is None:
        content = {"content_type": kind, "parts": parts if parts is not None else [text or ""]}
    return {
        "id": node_id,
        "author": {"role": role, "name": name, "metadata": {}},
        "create_time": None if at is None else T0 + at,
        "update_time": None,
        "content": content,
        "status": "finished_successfully",
        "end_turn": True,
        "weight": 1.0,
        "metadata": metadata if metadata is not None else {"model_slug": "gpt-4o"} if role == "assistant" else {},
        "recipient": recipient,
        "channel": None,
    }


def gpt_conversation(
    conversation_id: str, title: str, nodes: list[tuple[str, str | None, dict[str, Any] | None]], current: str
) -> dict[str, Any]:
    """``nodes``: (id, parent id, message or None), in the order the mapping lists them."""
    mapping = {
        node_id: {"id": node_id, "message": message, "parent": parent, "children": []}
        for node_id, parent, message in nodes
    }
    for node_id, parent, _ in nodes:
        if parent is not None and parent in mapping:
            mapping[parent]["children"].append(node_id)
    return {
        "title": title,
        "create_time": T0,
        "update_time": T0 + 100,
        "mapping": mapping,
        "moderation_results": [],
        "current_node": current,
        "plugin_ids": None,
        "conversation_id": conversation_id,
        "conversation_template_id": None,
        "gizmo_id": None,
        "is_archived": False,
        "safe_urls": [],
        "default_model_slug": "gpt-4o",
        "id": conversation_id,
    }


def gpt_branching() -> dict[str, Any]:
    """A regenerated answer, an edited question, a python tool call and its output, a picture, o-series
    thinking, a tool output with no call before it; the user left it on the edited question's branch
    after its second answer."""
    picture = {
        "content_type": "image_asset_pointer",
        "asset_pointer": "file-service://file-Pic123",
        "size_bytes": len(PNG),
        "width": 1,
        "height": 1,
    }
    missing = {**picture, "asset_pointer": "sediment://file_000missing"}
    nodes: list[tuple[str, str | None, dict[str, Any] | None]] = [
        ("root", None, None),
        (
            "sys",
            "root",
            {
                **gpt_message("sys", "system", "", at=None),
                "metadata": {"is_visually_hidden_from_conversation": True},
                "weight": 0.0,
            },
        ),
        (
            "ctx",
            "sys",
            gpt_message(
                "ctx",
                "user",
                at=None,
                content={
                    "content_type": "user_editable_context",
                    "user_profile": "I like tea",
                    "user_instructions": "",
                },
                metadata={"is_visually_hidden_from_conversation": True},
            ),
        ),
        (
            "u1",
            "ctx",
            gpt_message("u1", "user", at=1, parts=["What is this?", picture, missing], kind="multimodal_text"),
        ),
        ("a1", "u1", gpt_message("a1", "assistant", "A single pixel.", at=2)),
        (
            "a1b",
            "u1",
            gpt_message(
                "a1b",
                "assistant",
                "One pixel (regenerated).",
                at=3,
                metadata={"model_slug": "gpt-4o-mini", "finish_details": {"type": "stop"}},
            ),
        ),
        ("u2", "a1b", gpt_message("u2", "user", "Compute 2+2", at=4)),
        ("u2e", "a1b", gpt_message("u2e", "user", "Compute 3+3 instead", at=5)),
        (
            "th",
            "u2e",
            gpt_message(
                "th",
                "assistant",
                at=6,
                content={
                    "content_type": "thoughts",
                    "thoughts": [{"summary": "Plan", "content": "Use python."}],
                    "source_analysis_msg_id": "x",
                },
                metadata={"model_slug": "o3"},
            ),
        ),
        (
            "rr",
            "th",
            gpt_message(
                "rr",
                "assistant",
                at=6.5,
                content={"content_type": "reasoning_recap", "content": "Thought for 1s"},
                metadata={"model_slug": "o3"},
            ),
        ),
        (
            "call",
            "rr",
            gpt_message(
                "call",
                "assistant",
                at=7,
                content={"content_type": "code", "language": "unknown", "text": "print(3+3)"},
                recipient="python",
                metadata={"model_slug": "o3"},
            ),
        ),
        (
            "out",
            "call",
            gpt_message("out", "tool", at=8, name="python", content={"content_type": "execution_output", "text": "6"}),
        ),
        ("a2", "out", gpt_message("a2", "assistant", "It is 6.", at=9, metadata={"model_slug": "o3"})),
        ("a2b", "out", gpt_message("a2b", "assistant", "Six.", at=10, metadata={"model_slug": "o3"})),
        (
            "dalle",
            "u2",
            gpt_message(
                "dalle",
                "tool",
                at=11,
                name="dalle.text2im",
                parts=[picture, "DALL·E displayed 1 images."],
                kind="multimodal_text",
            ),
        ),
    ]
    return gpt_conversation("conv-branching", "Pixels and sums", nodes, current="a2")


def gpt_export(
    folder: Path, conversations: list[dict[str, Any]], *, zipped: bool = True, pictures: bool = True
) -> Path:
    """ChatGPT's data export: a zip with ``conversations.json``, ``user.json`` and the pictures
    (named ``file-<id>-<name>``), or the same as a folder."""
    files = {
        "conversations.json": json.dumps(conversations).encode(),
        "user.json": b'{"id": "user-1", "email": "a@example.org"}',
        "message_feedback.json": b"[]",
    }
    if pictures:
        files["file-Pic123-photo.png"] = PNG
    if zipped:
        return write_zip(folder / "chatgpt-export.zip", files)
    out = folder / "chatgpt-export"
    out.mkdir()
    for name, data in files.items():
        (out / name).write_bytes(data)
    return out


# -------------------------------------------------------------------------------------- Open WebUI


def webui_message(
    message_id: str, parent: str | None, role: str, content: str, *, at: float, **extra: Any
) -> dict[str, Any]:
    return {
        "id": message_id,
        "parentId": parent,
        "childrenIds": [],
        "role": role,
        "content": content,
        "timestamp": T0 + at,
        **extra,
    }


def webui_chat(
    chat_id: str, title: str, messages: list[dict[str, Any]], current: str | None, models: list[str]
) -> dict[str, Any]:
    by_id = {message["id"]: message for message in messages}
    for message in messages:
        if message["parentId"] in by_id:
            by_id[message["parentId"]]["childrenIds"].append(message["id"])
    chat = {
        "id": chat_id,
        "title": title,
        "models": models,
        "params": {"system": "Be brief."},
        "history": {"messages": by_id, "currentId": current},
        "messages": [],
        "tags": [],
        "timestamp": (T0 + 0.5) * 1000,
        "files": [],
    }
    return {
        "id": chat_id,
        "user_id": "user-1",
        "title": title,
        "chat": chat,
        "updated_at": T0 + 100,
        "created_at": T0,
        "share_id": None,
        "archived": False,
        "pinned": False,
        "meta": {"tags": []},
        "folder_id": None,
    }


def tool_details(call_id: str, name: str, arguments: dict[str, Any], result: Any) -> str:
    """How Open WebUI writes a tool call into an answer's text (attributes HTML-escaped JSON)."""
    return (
        f'<details type="tool_calls" done="true" id="{call_id}" name="{name}" '
        f'arguments="{html.escape(json.dumps(arguments))}" result="{html.escape(json.dumps(result))}" files="" '
        f'embeds="{html.escape(json.dumps(""))}">\n<summary>Tool Executed</summary>\n</details>\n'
    )


def webui_multimodel() -> dict[str, Any]:
    """A question answered by two models at once, a pasted picture, a follow-up answered with a tool
    call and reasoning inside the text, and an answer that failed. The user is on llama's branch."""
    data_url = "data:image/png;base64," + base64.b64encode(PNG).decode()
    reasoning = '<details type="reasoning" done="true" duration="2">\n<summary>Thought for 2 seconds</summary>\n> Look it up.\n> Then answer.\n</details>\n'
    messages = [
        webui_message(
            "m1",
            None,
            "user",
            "Weather in Lisbon?",
            at=1,
            models=["gpt-4o", "llama3"],
            files=[{"type": "image", "url": data_url}],
        ),
        webui_message(
            "m2a",
            "m1",
            "assistant",
            "Sunny, probably.",
            at=2,
            model="gpt-4o",
            modelName="GPT-4o",
            modelIdx=0,
            done=True,
            usage={"prompt_tokens": 12, "completion_tokens": 4},
        ),
        webui_message(
            "m2b", "m1", "assistant", "I cannot know.", at=2, model="llama3", modelName="Llama 3", modelIdx=1, done=True
        ),
        webui_message("m3", "m2b", "user", "Look it up then.", at=3, models=["llama3"]),
        webui_message(
            "m4",
            "m3",
            "assistant",
            reasoning + tool_details("call_1", "get_weather", {"city": "Lisbon"}, {"c": 21}) + "It is 21 degrees.",
            at=4,
            model="llama3",
            modelName="Llama 3",
            modelIdx=0,
            done=True,
            sources=[{"source": {"name": "weather"}}],
            annotation={"rating": 1},
        ),
        webui_message(
            "m4e", "m3", "assistant", "", at=5, model="llama3", done=True, error={"content": "Model timed out"}
        ),
    ]
    return webui_chat("chat-multi", "Lisbon weather", messages, current="m4", models=["gpt-4o", "llama3"])


# -------------------------------------------------------------------------------------- LibreChat

ROOT = "00000000-0000-0000-0000-000000000000"


def libre_message(message_id: str, parent: str, *, user: bool, text: str, at: float, **extra: Any) -> dict[str, Any]:
    return {
        "messageId": message_id,
        "conversationId": "lc-1",
        "parentMessageId": parent,
        "isCreatedByUser": user,
        "sender": "User" if user else "GPT-4o",
        "text": text,
        "model": None if user else "gpt-4o",
        "endpoint": "openAI",
        "createdAt": iso(at),
        "updatedAt": iso(at),
        "error": False,
        "unfinished": False,
        "tokenCount": len(text.split()),
        **extra,
    }


def libre_messages() -> list[dict[str, Any]]:
    """An edited question (two branches), a regenerated answer, an answer with a tool call and
    thinking in its content parts."""
    content = [
        {"type": "think", "think": {"value": "Use the calculator."}},
        {
            "type": "tool_call",
            "tool_call": {"id": "tc1", "name": "calculator", "args": '{"expr": "6*7"}', "output": "42"},
        },
        {"type": "text", "text": {"value": "The answer is 42."}},
    ]
    return [
        libre_message("q1", ROOT, user=True, text="Hi", at=1),
        libre_message("r1", "q1", user=False, text="Hello!", at=2),
        libre_message("q2", "r1", user=True, text="What is 6*7?", at=3),
        libre_message("r2", "q2", user=False, text="The answer is 42.", at=4, content=content),
        libre_message("r2b", "q2", user=False, text="42.", at=5),
        libre_message("q2e", "r1", user=True, text="What is 6 times 7?", at=6),
        libre_message("r3", "q2e", user=False, text="Forty-two.", at=7),
    ]


def libre_export(messages: list[dict[str, Any]], *, recursive: bool = False) -> dict[str, Any]:
    data: dict[str, Any] = {
        "conversationId": "lc-1",
        "endpoint": "openAI",
        "title": "Multiplication",
        "exportAt": "10:00:00 GMT+0000 (Coordinated Universal Time)",
        "branches": True,
        "recursive": recursive,
        "options": {"model": "gpt-4o", "endpoint": "openAI", "temperature": 1},
    }
    if not recursive:
        data["messages"] = messages
        return data
    nodes = {message["messageId"]: {**message, "children": []} for message in messages}
    roots = []
    for message in messages:
        if message["parentMessageId"] in nodes:
            nodes[message["parentMessageId"]]["children"].append(nodes[message["messageId"]])
        else:
            roots.append(nodes[message["messageId"]])
    data["messagesTree"] = roots
    return data


# ------------------------------------------------------------------------------------ Claude Code

SESSION = "3f0c6a1e-1111-4222-8333-444455556666"


def cc_record(kind: str, uuid: str | None, parent: str | None, at: float, **fields: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "parentUuid": parent,
        "isSidechain": False,
        "userType": "external",
        "cwd": "/home/alice/app",
        "sessionId": SESSION,
        "version": "2.1.37",
        "gitBranch": "main",
        "type": kind,
        **fields,
        "timestamp": iso(at),
    }
    if uuid is not None:
        record["uuid"] = uuid
    return record


def cc_user(uuid: str, parent: str | None, content: Any, at: float, **fields: Any) -> dict[str, Any]:
    return cc_record("user", uuid, parent, at, message={"role": "user", "content": content}, **fields)


def cc_assistant(
    uuid: str, parent: str | None, blocks: list[dict[str, Any]], at: float, stop: str | None = "end_turn", **fields: Any
) -> dict[str, Any]:
    message = {
        "model": "claude-opus-4-5-20251101",
        "id": f"msg_{uuid}",
        "type": "message",
        "role": "assistant",
        "content": blocks,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {
            "input_tokens": 10,
            "cache_creation_input_tokens": 5,
            "cache_read_input_tokens": 100,
            "output_tokens": 20,
        },
    }
    return cc_record("assistant", uuid, parent, at, message=message, requestId=f"req_{uuid}", **fields)


def cc_session() -> list[dict[str, Any]]:
    """A summary line first, a tool call and its result, a file-history snapshot, a progress record, a
    branch (the user redid a question), an inline sidechain, a compaction and what follows it."""
    return [
        {"type": "summary", "summary": "Fix the login bug", "leafUuid": "c9"},
        {
            "type": "file-history-snapshot",
            "messageId": "c1",
            "snapshot": {"trackedFileBackups": {}},
            "isSnapshotUpdate": False,
        },
        cc_user("c1", None, "The login fails, fix it", 1, thinkingMetadata={"level": "high"}),
        cc_assistant(
            "c2",
            "c1",
            [
                {"type": "thinking", "thinking": "Read the view first.", "signature": "sig-1"},
                {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "/app/login.py"}},
            ],
            2,
            stop="tool_use",
        ),
        cc_record(
            "progress", "p1", "c2", 2.5, data={"type": "hook_progress", "hookEvent": "PreToolUse"}, toolUseID="toolu_1"
        ),
        cc_user(
            "c3",
            "c2",
            [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "def login(): return False"}],
            3,
            toolUseResult={"type": "text", "file": {"filePath": "/app/login.py", "numLines": 1}},
            sourceToolAssistantUUID="c2",
        ),
        cc_assistant("c4", "c3", [{"type": "text", "text": "It always returns False. Fixed."}], 4),
        cc_user("c5", "c4", "Now add a test", 5),
        cc_user("c5b", "c4", "Now add two tests", 6),
        {**cc_user("s1", None, "Find the test folder", 6.5), "isSidechain": True, "agentId": "a1"},
        {**cc_assistant("s2", "s1", [{"type": "text", "text": "tests/"}], 6.6), "isSidechain": True, "agentId": "a1"},
        cc_assistant("c6", "c5b", [{"type": "text", "text": "Added two tests."}], 7),
        cc_record(
            "system",
            "cb",
            None,
            8,
            subtype="compact_boundary",
            content="Conversation compacted",
            logicalParentUuid="c6",
            compactMetadata={"trigger": "manual", "preTokens": 15000},
        ),
        cc_user(
            "c7",
            "cb",
            "This session is being continued from a previous conversation. Summary: login fixed, tests added.",
            8.1,
            isCompactSummary=True,
            isVisibleInTranscriptOnly=True,
        ),
        cc_user(
            "c8",
            "c7",
            [
                {"type": "text", "text": "Thanks! Here is a screenshot"},
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": base64.b64encode(PNG).decode()},
                },
            ],
            9,
        ),
        cc_assistant("c9", "c8", [{"type": "text", "text": "Looks right."}], 10),
        cc_record("system", "t1", "c9", 10.5, subtype="turn_duration", durationMs=1200, isMeta=False),
    ]


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


def cc_project(folder: Path) -> Path:
    """A Claude Code project folder: the session above and a subagent's sidechain in its own file."""
    project = folder / "-home-alice-app"
    write_jsonl(project / f"{SESSION}.jsonl", cc_session())
    agent = [
        {**cc_user("g1", None, "Search for login tests", 6.7), "isSidechain": True, "agentId": "b2"},
        {
            **cc_assistant("g2", "g1", [{"type": "text", "text": "None found."}], 6.8),
            "isSidechain": True,
            "agentId": "b2",
        },
    ]
    write_jsonl(project / SESSION / "subagents" / "agent-b2.jsonl", agent)
    return project


# ------------------------------------------------------------------------------------- importing

WORKSPACE = "/home/alice/imported"


def import_into(root: Path, export: Path, **options: Any) -> Any:
    """``import_export`` into ``WORKSPACE`` of the sessions folder ``root``, without fsync."""
    return import_export(export, root=root, cwd=options.pop("cwd", WORKSPACE), fsync=False, **options)


def opened(outcome: Any) -> Any:
    """The session an import wrote, read back from its file as any reader would."""
    clear_cache()
    return SessionFile(outcome.path)


def said(session: Any, leaf: Any = None) -> list[tuple[str, str]]:
    """The context at the leaf (or ``leaf``) as (role, its text, tool calls as ``→name``)."""
    context = session.context() if leaf is None else session.context(leaf)
    out = []
    for message in context.messages:
        content = message.get("content", message.get("summary", ""))
        calls = (
            [f"→{block['name']}" for block in content if block.get("type") == "toolCall"]
            if isinstance(content, list)
            else []
        )
        out.append((message["role"], " ".join([text_of(parts_of(content)), *calls]).strip()))
    return out


def write_big_chatgpt(path: Path, conversations: int, turns: int = 20, words: int = 60) -> Path:
    """A ChatGPT ``conversations.json`` of ``conversations`` conversations of ``turns`` questions and
    answers each (one regenerated), written one conversation at a time (never held whole)."""
    text = " ".join(["lorem"] * words)
    with path.open("w", encoding="utf-8") as out:
        out.write("[")
        for number in range(conversations):
            nodes: list[tuple[str, str | None, dict[str, Any] | None]] = [("root", None, None)]
            parent = "root"
            for turn in range(turns):
                question, answer = f"q{turn}", f"a{turn}"
                nodes.append((question, parent, gpt_message(question, "user", f"{turn} {text}", at=turn * 2)))
                nodes.append((answer, question, gpt_message(answer, "assistant", f"{turn} {text}", at=turn * 2 + 1)))
                parent = answer
            nodes.append(("again", "q0", gpt_message("again", "assistant", text, at=1.5)))
            if number:
                out.write(",")
            out.write(json.dumps(gpt_conversation(f"conv-{number}", f"Conversation {number}", nodes, parent)))
        out.write("]")
    return path
