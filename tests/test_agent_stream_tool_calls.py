"""A tool call an agent put together from a streamed answer goes back to the model in the
provider's own terms (docs/agent.md: "The adapter writes the messages and tools in the
provider's own terms"), as the call of a whole answer does: an OpenAI chat tool call is
`{"id", "type", "function"}`, with no stray top-level `name` or `arguments` (which
strict OpenAI-compatible servers refuse)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.testing import FakeProvider

CLEAN = [
    {"id": "c1", "type": "function", "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'}}
]


@hw.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def script() -> list[Any]:
    return [hw.Message.assistant("", [hw.ToolCall("c1", "add", {"a": 1, "b": 2})]), "3"]


@pytest.mark.parametrize("shape", ["run", "stream", "astream"])
def test_a_streamed_openai_tool_call_goes_back_in_the_apis_own_shape(shape: str) -> None:
    fake = FakeProvider(script())
    agent = hw.Agent((fake.openai(shape == "astream"), "gpt-4o"), tools=[add])
    if shape == "run":
        result = agent.run("go")
    elif shape == "stream":
        result = list(agent.stream("go"))[-1].result
    else:

        async def events() -> list[Any]:
            return [e async for e in agent.astream("go")]

        result = asyncio.run(events())[-1].result
    assert result is not None
    assert result.text == "3"
    assert fake.requests[1].body["messages"][1]["tool_calls"] == CLEAN
