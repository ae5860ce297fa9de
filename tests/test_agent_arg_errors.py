"""An agent's bad arguments are errors naming the argument (`tools`, `model`, a
middleware's `prefix`), what it expects and what it got; an async tool in a sync run is
refused before the run starts, as an async hook is."""

from __future__ import annotations

import asyncio
import functools
import re
from pathlib import Path
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.middleware import Filesystem


def answer(request: hw.ModelRequest) -> str:
    return "done"


@hw.tool
def ping() -> str:
    """Ping."""
    return "pong"


def test_an_async_tool_in_a_sync_run_is_refused_before_any_hook_runs() -> None:
    seen: list[str] = []

    @hw.tool
    async def later(a: int) -> int:
        """Later."""
        return a

    def call_later(request: hw.ModelRequest) -> hw.Message:
        if request.messages[-1].role == "tool":
            return hw.Message.assistant("done")
        return hw.Message.assistant("", [hw.ToolCall("c1", "later", {"a": 1})])

    @hw.before_agent
    def setting_up(setup: hw.AgentSetup) -> None:
        seen.append("before_agent")

    @hw.on_start
    def started() -> None:
        seen.append("on_start")

    @hw.on_error
    def failed(info: hw.FinishInfo) -> None:
        seen.append("on_error")

    agent = hw.Agent(call_later, tools=[later], use=[setting_up, started, failed])
    for run in (agent.run, agent.stream):
        with pytest.raises(TypeError, match=r"^tool 'later' is async: run this agent with `await"):
            run("x")
    assert seen == []
    assert asyncio.run(agent.arun("x")).text == "done"
    assert seen == ["before_agent", "on_start"]


@pytest.mark.parametrize(
    ("tools", "error", "says"),
    [
        (
            [lambda: "x"],
            ValueError,
            r"^Agent\(tools=\.\.\.\) got a callable hw\.tool makes no tool of: the name of "
            r".*<lambda>.* is '<lambda>': a tool name is 1 to 64 .*hw\.tool\(name=\.\.\.\)",
        ),
        (
            [functools.partial(print)],
            TypeError,
            r"^Agent\(tools=\.\.\.\) got a callable hw\.tool makes no tool of: "
            r"functools\.partial\(.*\) has no __name__: give the tool one with hw\.tool",
        ),
        (
            [ping, ping],
            ValueError,
            r"^Agent\(tools=\.\.\.\) expects tools of distinct names: two tools are named "
            r"'ping' \(the same tool twice\); give one another name with hw\.tool\(name=",
        ),
    ],
)
def test_a_bad_tool_is_an_error_naming_agent_tools(
    tools: list[Any], error: type[Exception], says: str
) -> None:
    with pytest.raises(error, match=says):
        hw.Agent(answer, tools=tools)


def test_two_tools_of_one_name_from_tools_and_use_name_both() -> None:
    class Pinging(hw.Middleware):
        tools = (hw.tool(ping.__wrapped__),)

    with pytest.raises(ValueError, match=r"^Agent\(tools=\.\.\.\) with the Middleware tools"):
        hw.Agent(answer, tools=[ping], use=[Pinging()])


def test_a_model_of_the_wrong_shape_is_an_error_naming_agent_model() -> None:
    says = (
        r"^Agent\(model=\.\.\.\) expects a model function or an SDK client: .*<lambda>.* "
        r"takes \(a, b\); expected a parameter named `messages`"
    )
    with pytest.raises(TypeError, match=says):
        hw.Agent(lambda a, b: "x")  # pyright: ignore[reportUnknownLambdaType]


def test_a_filesystem_prefix_too_long_for_a_tool_name_names_the_prefix(tmp_path: Path) -> None:
    with pytest.raises(ValueError) as excinfo:
        Filesystem(tmp_path, prefix="a" * 55)
    assert re.match(
        r"Filesystem\(prefix=\.\.\.\) may hold at most 54 characters, so that "
        r"'<prefix>list_files' is a tool name of at most 64.*\(got 55: 'aaa",
        str(excinfo.value),
    ), str(excinfo.value)
    longest = Filesystem(tmp_path, prefix="a" * 54, allow_write=True)
    assert max(len(t.name) for t in longest.tools) == 64
