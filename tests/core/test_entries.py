"""One line's shape: pi's key orders, omitted optionals, serialisation, ids, names and times (docs/format.md §1–§3)."""

from __future__ import annotations

import json
import math
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


@pytest.mark.parametrize(
    ("value", "number"),
    [
        *[(value, 3.0) for value in (3, 3.0, "3", " 3\n", "\ufeff3\u2028", "3.", "3e0", "0x3", "0X3", "0b11", "0o3")],
        *[(value, 3.0) for value in ([3], ["3"], [[3]])],
        *[(value, 0.0) for value in (None, False, "", " ", [], [None], "0e5", "00")],
        (True, 1.0),
        (".5", 0.5),
        ("-.5e-3", -0.0005),
        ("+Infinity", math.inf),
        ("-Infinity", -math.inf),
        ("1e999", math.inf),
        (10**400, math.inf),
        ("0xFFFFFFFFFFFFFFFFFFFF", float(2**80 - 1)),
        *[(value, math.nan) for value in ("abc", "inf", "nan", "1_0", "-0x3", "0x", "0b2", ".", "3 3", "\u180e3")],
        *[(value, math.nan) for value in ({}, {"v": 3}, [1, 2])],
    ],
)
def test_js_to_number_reads_values_as_javascript_does(value: Any, number: float) -> None:
    """``Number(value)``, what JS's comparisons make of a header's version (checked against node in
    tests/pi_compat/test_fuzz_findings.py)."""
    got = E.js_to_number(value)
    assert got == number or (math.isnan(got) and math.isnan(number))


def test_joined_text_joins_text_blocks_as_javascript_joins_them() -> None:
    """pi's list reads a content's text blocks' ``text`` joined by a space: a value that is no string as
    ``String()`` writes it, a missing or null one as nothing, which still takes its place."""
    odd = [5, None, [1, [2, None], "x"], {"k": 1}, 1e21, True, 1.5, 2.0]
    blocks = [{"type": "text", "text": "a"}, {"type": "text"}, *({"type": "text", "text": text} for text in odd)]
    blocks += [{"type": "image", "data": "…"}, "junk", None, {"type": "thinking", "thinking": "t"}]
    assert E.joined_text(blocks) == "a  5  1,2,,x [object Object] 1e+21 true 1.5 2"
    assert E.joined_text([{"type": "text"}, {"type": "text", "text": "b"}]) == " b"
    assert E.joined_text("plain") == "plain"
    assert E.joined_text(None) == E.joined_text(5) == E.joined_text({"type": "text", "text": "x"}) == ""
    assert E.block_text({"type": "image"}) is None and E.block_text({"type": "text"}) == ""
