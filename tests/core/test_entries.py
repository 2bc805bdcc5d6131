"""One line's shape: pi's key orders, omitted optionals, serialisation, ids, names and times (docs/format.md §1–§3)."""

from __future__ import annotations

import json
import re
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from sessions_app.sessionfiles import entries as E


def built(draft: E.Draft) -> dict[str, Any]:
    return draft.build("abcd1234", "00000000", "2026-03-02T09:15:04.500Z")


@pytest.mark.parametrize(
    ("draft", "keys"),
    [
        (E.user_message("hi", 5), ["type", "id", "parentId", "timestamp", "message"]),
        (E.model_change("anthropic", "m"), ["type", "id", "parentId", "timestamp", "provider", "modelId"]),
        (E.thinking_level_change("high"), ["type", "id", "parentId", "timestamp", "thinkingLevel"]),
        (E.label("t", "x"), ["type", "id", "parentId", "timestamp", "targetId", "label"]),
        (E.label("t", None), ["type", "id", "parentId", "timestamp", "targetId"]),
        (E.label("t", ""), ["type", "id", "parentId", "timestamp", "targetId"]),
        (E.session_info("n"), ["type", "id", "parentId", "timestamp", "name"]),
        (
            E.compaction("s", "k", 3, details={"readFiles": []}, usage=dict(E.ZERO_USAGE)),
            [
                "type",
                "id",
                "parentId",
                "timestamp",
                "summary",
                "firstKeptEntryId",
                "tokensBefore",
                "details",
                "usage",
                "fromHook",
            ],
        ),
        (
            E.compaction("s", "k", 3),
            ["type", "id", "parentId", "timestamp", "summary", "firstKeptEntryId", "tokensBefore", "fromHook"],
        ),
        (E.branch_summary("f", "s"), ["type", "id", "parentId", "timestamp", "fromId", "summary", "fromHook"]),
        (
            E.custom_message("ext", "c", True, {"k": 1}),
            ["type", "customType", "content", "display", "details", "id", "parentId", "timestamp"],
        ),
        (
            E.custom_message("ext", "c", False),
            ["type", "customType", "content", "display", "id", "parentId", "timestamp"],
        ),
        (
            E.Draft("custom", {"customType": "ext", "data": {}}),
            ["type", "customType", "data", "id", "parentId", "timestamp"],
        ),
    ],
)
def test_key_order_is_pis(draft: E.Draft, keys: list[str]) -> None:
    assert list(built(draft)) == keys


def test_assistant_message_fields() -> None:
    message = built(
        E.assistant_message("ok", provider="anthropic", model="m", api="anthropic-messages", timestamp_ms=7)
    )["message"]
    assert list(message) == ["role", "content", "api", "provider", "model", "usage", "stopReason", "timestamp"]
    assert message["content"] == [{"type": "text", "text": "ok"}]
    assert message["usage"] == E.ZERO_USAGE
    failed = built(
        E.assistant_message("", provider="p", model="m", api="a", stop_reason="error", error_message="boom")
    )["message"]
    assert failed["content"] == [] and failed["stopReason"] == "error" and failed["errorMessage"] == "boom"


def test_a_kept_timestamp_wins() -> None:
    assert built(E.label("t", "x", "2020-01-01T00:00:00.000Z"))["timestamp"] == "2020-01-01T00:00:00.000Z"


def test_dump_line_is_compact_raw_unicode_one_line() -> None:
    obj = {"type": "x", "text": 'é \u2028 \U0001f600 \n "q"', "n": 5, "f": 0.1, "none": None}
    line = E.dump_line(obj)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert line == json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"
    assert b"\xe2\x80\xa8" in line  # raw, as JSON.stringify writes it


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("  Todo API endpoints\n review ", "Todo API endpoints  review"),
        ("a\r\nb", "a b"),
        ("a\n\n\nb", "a b"),
        ("a\rb", "a b"),
        ("\n", ""),
        ("plain", "plain"),
        ("keeps\u2028other separators", "keeps\u2028other separators"),
    ],
)
def test_clean_session_name(raw: str, clean: str) -> None:
    assert E.clean_session_name(raw) == clean


def test_entry_ids() -> None:
    ids = {E.new_entry_id(()) for _ in range(200)}
    assert all(re.fullmatch(r"[0-9a-f]{8}", i) for i in ids)

    class Everything:
        def __contains__(self, item: object) -> bool:
            return True

    fallback = E.new_entry_id(Everything())  # every 8-hex id taken: a full UUID, as pi does
    assert uuid.UUID(fallback).version == 4


def test_session_ids_are_uuid7_and_time_ordered() -> None:
    first = E.new_session_id()
    time.sleep(0.002)
    second = E.new_session_id()
    for value in (first, second):
        parsed = uuid.UUID(value)
        assert parsed.version == 7 and parsed.variant == uuid.RFC_4122
    assert first < second
    assert abs(int(first.replace("-", "")[:12], 16) - time.time() * 1000) < 60_000


def test_now_iso_is_what_js_prints() -> None:
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", E.now_iso())


def test_session_file_name() -> None:
    name = E.session_file_name("2026-03-02T09:15:03.000Z", "019cadd4-5bfc-7087-958f-9bcf1ded833f")
    assert name == "2026-03-02T09-15-03-000Z_019cadd4-5bfc-7087-958f-9bcf1ded833f.jsonl"
    assert Path(name).suffix == ".jsonl"


def test_content_text() -> None:
    blocks = [{"type": "text", "text": "a"}, {"type": "image", "data": "..."}, {"type": "text", "text": "b"}, "junk"]
    assert E.content_text(blocks) == "a b"
    assert E.content_text(blocks, separator=" | ") == "a | b"
    assert E.content_text("plain") == "plain"
    assert E.content_text(None) == ""
