"""The native turns of reasoning models, as the Anthropic, OpenAI Responses and Gemini APIs
send them (thinking blocks, reasoning items, thought parts, signatures), for the tests of
how an answer's record goes back in the next request, whole or streamed."""

from __future__ import annotations

import sys
from typing import Any

import pytest

import hookwrap as hw

anthropic = pytest.importorskip("anthropic")

# what the SDKs are built on: httpx2, or httpx for older releases
HTTPX: Any = next(
    sys.modules[root]
    for cls in anthropic.DefaultHttpxClient.__mro__
    if (root := cls.__module__.partition(".")[0]) in ("httpx", "httpx2")
)

TEXT = "Let me add 42."
REDACTED = "Let me add [x]."


@hw.tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


THINK: dict[str, Any] = {"type": "thinking", "thinking": "I should add.", "signature": "SIG123"}
TOOL_USE: dict[str, Any] = {
    "type": "tool_use",
    "id": "toolu_1",
    "name": "add",
    "input": {"a": 1, "b": 2},
}


REASONING: dict[str, Any] = {
    "id": "rs_1",
    "type": "reasoning",
    "summary": [],
    "encrypted_content": "ENC",
}
FUNCTION_CALL: dict[str, Any] = {
    "id": "fc_1",
    "type": "function_call",
    "call_id": "toolu_1",
    "name": "add",
    "arguments": '{"a": 1, "b": 2}',
    "status": "completed",
}


def output_message(text: str) -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


THOUGHT: dict[str, Any] = {"text": "I should add.", "thought": True}
CALL_PART: dict[str, Any] = {
    "functionCall": {"name": "add", "args": {"a": 1, "b": 2}},
    "thoughtSignature": "U0lH",
}
