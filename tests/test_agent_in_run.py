"""An `hw.Agent` run inside `with hw.run(context=...)` is a run of its own (its run_id) with
the enclosing run's `context`, which its hooks and tools read as `ctx.context`
(docs/agent.md): an agent takes no context of its own."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import hookwrap as hw

TENANT = {"tenant": "acme"}


def make(seen: list[Any]) -> hw.Agent:
    @hw.before_model
    def look(request: hw.ModelRequest, ctx: hw.RunContext) -> None:
        seen.append(ctx.context)

    @hw.tool
    def who(ctx: hw.RunContext) -> str:
        """Who asks."""
        seen.append(ctx.context)
        return "ok"

    def model(request: hw.ModelRequest) -> Any:
        if len(request.messages) == 1:
            return hw.Message.assistant("", [hw.ToolCall("c1", "who", {})])
        return "done"

    return hw.Agent(model, tools=[who], use=[look])


@pytest.mark.parametrize("shape", ["run", "arun", "stream"])
def test_an_agent_in_a_run_reads_its_context(shape: str) -> None:
    seen: list[Any] = []
    agent = make(seen)
    if shape == "arun":

        async def main() -> tuple[str, str]:
            async with hw.run(context=TENANT) as run:
                return (await agent.arun("hi")).run_id, run.run_id

        inner, outer = asyncio.run(main())
    else:
        with hw.run(context=TENANT) as run:
            if shape == "run":
                inner = agent.run("hi").run_id
            else:
                last = list(agent.stream("hi"))[-1].result
                assert last is not None
                inner = last.run_id
            outer = run.run_id
    assert seen == [TENANT, TENANT, TENANT]  # two model calls, one tool call
    assert inner != outer  # a run of its own


def test_an_agent_outside_any_run_has_no_context() -> None:
    seen: list[Any] = []
    make(seen).run("hi")
    assert seen == [None, None, None]
