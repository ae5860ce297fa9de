"""What comes out of a sync tool or model an async agent runs in a worker thread, and tool
results that are no JSON data. A `StopIteration` (a `next()` on an empty iterator) cannot be
set on the future the agent awaits: it left the run waiting for ever."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

import hookwrap as hw

LIMIT = 10  # seconds: the run must end long before; without the fix it never does


def first_match(word: str) -> str:
    """The first name containing `word`."""
    return next(name for name in ["Ada", "Grace"] if word in name)


def answers_then_reads_the_tool(request: hw.ModelRequest) -> hw.Message:
    tool = [m for m in request.messages if m.role == "tool"]
    if tool:
        return hw.Message.assistant(f"saw: {tool[-1].text}")
    return hw.Message.assistant("", [hw.ToolCall("c1", "first_match", {"word": "zz"})])


def run_async(agent: hw.Agent, streamed: bool) -> Any:
    async def go() -> Any:
        if not streamed:
            return await agent.arun("who?")
        events = [event async for event in agent.astream("who?")]
        return events[-1].result

    return asyncio.run(asyncio.wait_for(go(), LIMIT))


@pytest.mark.parametrize("streamed", [False, True])
def test_a_sync_tools_stop_iteration_is_a_tool_error_in_an_async_agent(streamed: bool) -> None:
    agent = hw.Agent(answers_then_reads_the_tool, tools=[hw.tool(first_match)])
    assert agent.run("who?").text == "saw: Error: StopIteration: "
    assert run_async(agent, streamed).text == "saw: Error: StopIteration: "


def test_a_sync_models_stop_iteration_ends_an_async_run_with_an_error() -> None:
    def empty_model(request: hw.ModelRequest) -> str:
        return next(iter(()))

    with pytest.raises(RuntimeError) as caught:
        run_async(hw.Agent(empty_model), streamed=False)
    assert isinstance(caught.value.__cause__, StopIteration)


def result_of(value: Any) -> str:
    def tool() -> Any:
        """Returns the value."""
        return value

    def model(request: hw.ModelRequest) -> hw.Message:
        tool_messages = [m for m in request.messages if m.role == "tool"]
        if tool_messages:
            return hw.Message.assistant(tool_messages[-1].text)
        return hw.Message.assistant("", [hw.ToolCall("c1", "tool", {})])

    return hw.Agent(model, tools=[hw.tool(tool)]).run("go").text


def test_a_result_that_contains_itself_is_sent_as_its_repr() -> None:
    looped: list[Any] = ["root"]
    looped.append(looped)
    assert result_of(looped) == "['root', [...]]"


def test_a_result_holding_nan_is_no_json_and_is_sent_as_its_repr() -> None:
    text = result_of({"score": float("nan")})
    assert text == "{'score': nan}"
    assert result_of({"score": 1.5}) == json.dumps({"score": 1.5})
