"""The layers of one tool call share its id and state (SPEC §5: `call_id` and `call_state`
are "scoped to the current model or tool call"), as a model wrapped twice does: a tool made
of a tool (`hw.tool(tool, use=[...])`), a tool method read from an instance, and either
given to an agent. The inner tool's own hooks see the model's `ToolCall.id`, so a
`ToolApproval` or `hw.interrupt` among them is resumed by it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from tool_doubles import Bot, alook, inner, look, outer, seen

import hookwrap as hw
from hookwrap.middleware import ToolApproval
from hookwrap.stores import MemoryStore


@pytest.fixture(autouse=True)
def clear() -> None:
    seen.clear()


def one_call(call_id: str) -> list[Any]:
    return [("outer", call_id, call_id), ("inner", call_id, call_id, "outer")]


def run(value: Any) -> Any:
    return asyncio.run(value) if asyncio.iscoroutine(value) else value


CALL = hw.ToolCall("c1", "look", {"city": "paris"})
SHAPES = pytest.mark.parametrize("fn", [look, alook], ids=["sync", "async"])


@SHAPES
def test_a_tool_made_of_a_tool_is_one_call(fn: Callable[..., Any]) -> None:
    tool = hw.tool(hw.tool(fn, use=[inner]), use=[outer], name="look")
    assert run(tool.ainvoke(CALL)) == "PARIS"
    assert seen == one_call("c1")


@SHAPES
def test_a_direct_call_of_a_tool_made_of_a_tool_is_one_call(fn: Callable[..., Any]) -> None:
    tool = hw.tool(hw.tool(fn, use=[inner]), use=[outer])
    assert run(tool("paris")) == "PARIS"
    [(_, call_id, _), _] = seen
    assert seen == one_call(call_id)


@SHAPES
def test_a_layer_without_hooks_between_is_still_one_call(fn: Callable[..., Any]) -> None:
    tool = hw.tool(hw.tool(hw.tool(fn, use=[inner])), use=[outer], name="look")
    assert run(tool.ainvoke(CALL)) == "PARIS"
    assert seen == one_call("c1")


@pytest.mark.parametrize("method", ["look", "alook"], ids=["sync", "async"])
def test_a_tool_method_in_a_tool_is_one_call(method: str) -> None:
    tool = hw.tool(getattr(Bot(), method), use=[outer])
    assert run(tool.ainvoke(CALL)) == "PARIS"
    assert seen == one_call("c1")


def test_a_tool_called_inside_a_tool_made_of_a_tool_is_a_call_of_its_own() -> None:
    states: list[Any] = []

    @hw.before_tool
    def note(call: hw.ToolCall, ctx: hw.RunContext) -> None:
        states.append((call.name, ctx.call_id, dict(ctx.call_state)))

    @hw.tool(use=[note])
    def helper(city: str) -> str:
        """Help."""
        return city.upper()

    def asks(city: str) -> str:
        """Ask the helper."""
        return helper(city)

    for made in (hw.tool(hw.tool(asks), use=[outer]), hw.tool(hw.tool(asks, use=[inner]))):
        states.clear()
        assert made.invoke(hw.ToolCall("c1", "asks", {"city": "paris"})) == "PARIS"
        [(name, call_id, state)] = states
        assert (name, state) == ("helper", {})
        assert call_id != "c1"


def model(request: hw.ModelRequest) -> hw.Message:
    """Calls `look` once, then says what it answered."""
    answered = [m.text for m in request.messages if m.role == "tool"]
    if not answered:
        return hw.Message.assistant("", [hw.ToolCall("c1", "look", {"city": "paris"})])
    return hw.Message.assistant(f"look said {answered[-1]}")


def tools(kind: str, is_async: bool, use: list[Any]) -> Any:
    """The agent's tool `look`, with `use` as its inner tool's own hooks."""
    if kind == "method":

        class Own:
            @hw.tool(use=use, name="look")
            def look(self, city: str) -> str:
                """Look a city up."""
                return city.upper()

            @hw.tool(use=use, name="look")
            async def alook(self, city: str) -> str:
                """Look a city up, awaited."""
                return city.upper()

        return getattr(Own(), "alook" if is_async else "look")
    made = hw.tool(alook if is_async else look, use=use, name="look")
    return hw.tool(made, use=[outer])


def agent(kind: str, is_async: bool, use: list[Any], store: MemoryStore) -> hw.Agent:
    return hw.Agent(model, tools=[tools(kind, is_async, use)], use=[outer], store=store)


def go(made: hw.Agent, is_async: bool) -> hw.RunResult:
    return asyncio.run(made.arun("go")) if is_async else made.run("go")


def resume(made: hw.Agent, is_async: bool, run_id: str, decision: Any) -> hw.RunResult:
    if is_async:
        return asyncio.run(made.aresume(run_id, {"c1": decision}))
    return made.resume(run_id, {"c1": decision})


KINDS = pytest.mark.parametrize("kind", ["tool of a tool", "method"])
ASYNC = pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])


@KINDS
@ASYNC
def test_an_agents_tool_call_is_one_call_in_every_layer(kind: str, is_async: bool) -> None:
    result = go(agent(kind, is_async, [inner], MemoryStore()), is_async)
    assert result.text == "look said PARIS"
    assert [entry[1:3] for entry in seen] == [("c1", "c1")] * len(seen)
    assert seen[-1] == ("inner", "c1", "c1", "outer")


@KINDS
@ASYNC
def test_tool_approval_on_the_inner_tool_is_resumed_by_the_models_call_id(
    kind: str, is_async: bool
) -> None:
    store = MemoryStore()
    first = go(agent(kind, is_async, [ToolApproval()], store), is_async)
    assert first.status == "interrupted"
    assert first.interrupt == {
        "type": "tool_approval",
        "call_id": "c1",
        "tool": "look",
        "arguments": {"city": "paris"},
    }
    done = resume(agent(kind, is_async, [ToolApproval()], store), is_async, first.run_id, True)
    assert (done.status, done.text) == ("finished", "look said PARIS")


@KINDS
@ASYNC
def test_hw_interrupt_in_the_inner_tools_hook_is_resumed_by_the_models_call_id(
    kind: str, is_async: bool
) -> None:
    answers: list[Any] = []

    @hw.before_tool
    def ask(call: hw.ToolCall) -> None:
        answers.append(hw.interrupt({"ask": call.id}))

    store = MemoryStore()
    first = go(agent(kind, is_async, [ask], store), is_async)
    assert (first.status, first.interrupt) == ("interrupted", {"ask": "c1"})
    done = resume(agent(kind, is_async, [ask], store), is_async, first.run_id, "yes")
    assert (done.status, done.text) == ("finished", "look said PARIS")
    assert answers == ["yes"]
