"""`hw.interrupt` in a tool called from inside another tool asks for the decision of the
call the agent runs, the one its interrupt event reports: a resume with that decision
goes on (the inner call has an id of its own, new each time it runs)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.stores import MemoryStore


def _tools(inner: str) -> list[Any]:
    @hw.before_tool
    def noop(call: hw.ToolCall) -> None:
        return None

    def confirm_plain(what: str) -> str:
        """Confirm."""
        return f"{what}: {hw.interrupt({'confirm': what})}"

    def confirm_ctx(what: str, ctx: hw.RunContext) -> str:
        """Confirm."""
        assert ctx.call_id != "c1"  # a call of its own
        return f"{what}: {hw.interrupt({'confirm': what})}"

    confirm = {
        "plain": hw.tool(confirm_plain),
        "ctx": hw.tool(confirm_ctx),
        "hooked": hw.tool(confirm_plain, use=[noop]),
    }[inner]

    @hw.tool
    def delete(name: str) -> str:
        """Delete."""
        return confirm(f"delete {name}")

    return [delete]


def _model(request: hw.ModelRequest) -> hw.Message:
    if request.messages[-1].role == "user":
        return hw.Message.assistant("", [hw.ToolCall("c1", "delete", {"name": "a.txt"})])
    return hw.Message.assistant(request.messages[-1].text)


@pytest.mark.parametrize("inner", ["plain", "ctx", "hooked"])
def test_the_decision_for_the_reported_call_is_taken(inner: str) -> None:
    agent = hw.Agent(_model, tools=_tools(inner), store=MemoryStore())
    events = list(agent.stream("go"))
    (paused,) = [e for e in events if e.kind == "interrupt"]
    assert paused.call is not None
    assert paused.call.id == "c1"
    assert paused.value == {"confirm": "delete a.txt"}
    result = events[-1].result
    assert result is not None
    assert result.status == "interrupted"
    resumed = agent.resume(result.run_id, decisions={"c1": "yes"})
    assert (resumed.status, resumed.text) == ("finished", "delete a.txt: yes")


@pytest.mark.parametrize("inner", ["ctx", "hooked"])
def test_async_runs_too(inner: str) -> None:
    agent = hw.Agent(_model, tools=_tools(inner), store=MemoryStore())

    async def main() -> hw.RunResult:
        first = await agent.arun("go")
        assert first.status == "interrupted"
        return await agent.aresume(first.run_id, decisions={"c1": "no"})

    resumed = asyncio.run(main())
    assert (resumed.status, resumed.text) == ("finished", "delete a.txt: no")


def test_a_keyed_question_still_takes_its_key() -> None:
    @hw.tool
    def ask(what: str, ctx: hw.RunContext) -> str:
        """Ask."""
        return str(hw.interrupt(what, key="mood"))

    @hw.tool
    def outer(what: str) -> str:
        """Outer."""
        return ask(what)

    def model(request: hw.ModelRequest) -> hw.Message:
        if request.messages[-1].role == "user":
            return hw.Message.assistant("", [hw.ToolCall("c1", "outer", {"what": "?"})])
        return hw.Message.assistant(request.messages[-1].text)

    agent = hw.Agent(model, tools=[outer], store=MemoryStore())
    first = agent.run("go")
    assert first.status == "interrupted"
    again = agent.resume(first.run_id, decisions={"c1": "not this"})
    assert again.status == "interrupted"  # the question asked for "mood"
    done = agent.resume(again.run_id, decisions={"mood": "fine"})
    assert (done.status, done.text) == ("finished", "fine")


def test_two_layers_and_a_wrapped_model_in_between_ask_for_the_agents_call() -> None:
    @hw.before_tool
    def noop(call: hw.ToolCall) -> None:
        return None

    def confirm_fn(what: str) -> str:
        """Confirm."""
        return f"{what}: {hw.interrupt({'confirm': what})}"

    layered = hw.tool(hw.tool(confirm_fn, use=[noop]), use=[noop])

    @hw.before_model
    def ask_first(request: hw.ModelRequest) -> None:
        hw.interrupt("may I ask the model?")

    judge = hw.model(lambda prompt: f"judged {prompt}", use=[ask_first])

    @hw.tool
    def delete(name: str) -> str:
        """Delete."""
        return f"{layered(name)}; {judge(name)}"

    agent = hw.Agent(_model, tools=[delete], store=MemoryStore())
    first = agent.run("go")
    assert first.status == "interrupted"
    assert first.interrupt == {"confirm": "a.txt"}
    done = agent.resume(first.run_id, decisions={"c1": "yes"})  # answers both questions
    assert (done.status, done.text) == ("finished", "a.txt: yes; judged a.txt")


def test_a_tool_approval_on_a_nested_tool_asks_for_the_agents_call() -> None:
    from hookwrap.middleware import ToolApproval

    @hw.tool(use=[ToolApproval()])
    def rm(name: str) -> str:
        """Remove."""
        return f"removed {name}"

    @hw.tool
    def delete(name: str) -> str:
        """Delete."""
        return rm(name)

    agent = hw.Agent(_model, tools=[delete], store=MemoryStore())
    events = list(agent.stream("go"))
    (paused,) = [e for e in events if e.kind == "interrupt"]
    assert paused.value["call_id"] == "c1"
    result = events[-1].result
    assert result is not None
    rejected = agent.resume(result.run_id, decisions={"c1": False})
    assert rejected.status == "finished"
    assert "rejected" in rejected.text
