"""After a `Skip`, `after_tool` sees the call as the `before_tool` hooks left it
(docs/hooks/after-tool.md), in every shape a tool runs in."""

from __future__ import annotations

import asyncio
from typing import Any

import hookwrap as hw


def _hooks(seen: list[Any]) -> list[Any]:
    @hw.before_tool(priority=5)
    def bump(call: hw.ToolCall) -> hw.ToolCall:
        return call.replace(arguments={"a": call.arguments["a"] + 1})

    @hw.before_tool
    def skip(call: hw.ToolCall) -> hw.Skip:
        return hw.Skip(f"skipped {call.arguments['a']}")

    @hw.after_tool
    def record(call: hw.ToolCall, outcome: hw.ToolOutcome) -> None:
        seen.append((dict(call.arguments), outcome.ok, outcome.result))

    return [bump, skip, record]


def test_a_direct_sync_call() -> None:
    seen: list[Any] = []

    @hw.tool(use=_hooks(seen))
    def t(a: int) -> int:
        """t"""
        return a

    assert t(1) == "skipped 2"
    assert seen == [({"a": 2}, True, "skipped 2")]


def test_a_direct_async_call() -> None:
    seen: list[Any] = []

    @hw.tool(use=_hooks(seen))
    async def t(a: int) -> int:
        """t"""
        return a

    assert asyncio.run(t(1)) == "skipped 2"
    assert seen == [({"a": 2}, True, "skipped 2")]


def test_hooks_of_an_agent() -> None:
    seen: list[Any] = []

    @hw.tool
    def t(a: int) -> int:
        """t"""
        return a

    def model(request: hw.ModelRequest) -> hw.Message:
        if request.messages[-1].role == "user":
            return hw.Message.assistant("", [hw.ToolCall("c1", "t", {"a": 1})])
        return hw.Message.assistant(request.messages[-1].text)

    agent = hw.Agent(model, tools=[t], use=_hooks(seen))
    assert agent.run("go").text == "skipped 2"
    assert asyncio.run(agent.arun("go")).text == "skipped 2"
    assert seen == [({"a": 2}, True, "skipped 2")] * 2
