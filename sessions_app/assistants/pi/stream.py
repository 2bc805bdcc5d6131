"""What pi has shown of its turn but not written yet: the assistant message it is streaming (its thinking,
text and tool calls as they come) and the tools it is running (their output so far).

pi writes each message to the file when it ends (``message_end``) and each tool's result when the tool
ends; until then it exists only in pi's events. ``TurnStream`` follows them and says what is in flight
(``snapshot``), so that tabs can show it before the file has it; what pi writes then reaches them by the
file like any entry, and leaves the snapshot. Records follow pi's JSON event stream (``docs/json.md`` in
its package); a record that does not is ignored.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Part:
    """One block of the message being streamed: ``text``, ``thinking`` or ``toolCall`` (``name``, and
    its arguments as far as they came, JSON text)."""

    kind: str
    text: str = ""
    name: str = ""


@dataclass
class Running:
    """A tool pi runs: its call's name and arguments, and its output so far."""

    call_id: str
    name: str
    arguments: Any
    output: str = ""


@dataclass
class TurnStream:
    message: dict[int, Part] | None = None  # the assistant message being streamed, by content index
    running: dict[str, Running] = field(default_factory=dict)

    def take(self, record: dict[str, Any]) -> bool:
        """Follow one of pi's records; whether what is in flight changed."""
        kind = record.get("type")
        if kind == "message_start" and _role(record) == "assistant":
            self.message = {}
        elif kind == "message_update" and self.message is not None:
            if not self._update(record.get("assistantMessageEvent")):
                return False
        elif kind == "message_end" and _role(record) == "assistant":
            self.message = None
        elif kind == "tool_execution_start" and isinstance(record.get("toolCallId"), str):
            call_id = record["toolCallId"]
            self.running[call_id] = Running(call_id, str(record.get("toolName") or "tool"), record.get("args"))
        elif kind == "tool_execution_update" and record.get("toolCallId") in self.running:
            self.running[record["toolCallId"]].output = _text(record.get("partialResult"))
        elif kind == "tool_execution_end":
            if self.running.pop(str(record.get("toolCallId")), None) is None:
                return False
        elif kind in ("agent_settled", "pitree_exit"):
            if self.message is None and not self.running:
                return False
            self.message, self.running = None, {}
        else:
            return False
        return True

    def _update(self, event: Any) -> bool:
        if not isinstance(event, dict) or not isinstance(event.get("contentIndex"), int):
            return False
        assert self.message is not None
        index, kind = event["contentIndex"], event.get("type")
        if kind == "text_start":
            # An empty text shows nothing: not a change to tell (told at once, it would hold the first
            # words pi prints a read later for a whole progress interval).
            self.message[index] = Part("text")
            return False
        elif kind == "thinking_start":
            self.message[index] = Part("thinking")
        elif kind == "toolcall_start":
            self.message[index] = Part("toolCall", name=str(event.get("toolName") or "tool"))
        elif kind in ("text_delta", "thinking_delta", "toolcall_delta") and index in self.message:
            self.message[index].text += str(event.get("delta") or "")
        elif kind in ("text_end", "thinking_end") and index in self.message:
            self.message[index].text = str(event.get("content") or "")
        else:
            return False
        return True

    @property
    def empty(self) -> bool:
        return self.message is None and not self.running

    @property
    def size(self) -> int:
        """Characters in flight (what a snapshot carries)."""
        parts = self.message.values() if self.message is not None else ()
        return sum(len(part.text) for part in parts) + sum(len(tool.output) for tool in self.running.values())

    def snapshot(self) -> dict[str, Any]:
        """What is in flight, as JSON: ``message`` (its ``parts`` in order, or None) and ``running``."""
        message = None
        if self.message is not None:
            parts = [self.message[index] for index in sorted(self.message)]
            message = {"parts": [{"kind": p.kind, "text": p.text, "name": p.name} for p in parts]}
        running = [
            {"id": tool.call_id, "name": tool.name, "arguments": tool.arguments, "output": tool.output}
            for tool in self.running.values()
        ]
        return {"message": message, "running": running}


def _role(record: dict[str, Any]) -> Any:
    message = record.get("message")
    return message.get("role") if isinstance(message, dict) else None


def _text(result: Any) -> str:
    """A tool's partial result as text: its text blocks, joined."""
    content = result.get("content") if isinstance(result, dict) else None
    if not isinstance(content, list):
        return ""
    return "".join(str(block.get("text") or "") for block in content if isinstance(block, dict))
