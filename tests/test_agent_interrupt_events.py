"""An agent stream's `interrupt` events come once the run has paused (SPEC §7, agent.md):
its checkpoint is saved first, so a caller may leave the stream at the first one and
resume the run later."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.stores import MemoryStore


class Turn:
    """A model asking for two calls in one turn: `delete_file` (which asks a human first)
    and `count`; then an answer with the last tool result."""

    def __init__(self) -> None:
        self.ran: list[str] = []
        self.store = MemoryStore()

        @hw.tool
        def delete_file(name: str) -> str:
            """Delete a file, once a human said yes."""
            if hw.interrupt({"question": f"delete {name}?"}) is not True:
                return f"{name} kept"
            self.ran.append(f"delete {name}")
            return f"{name} deleted"

        @hw.tool
        def count(name: str) -> int:
            """Count the lines of a file."""
            self.ran.append(f"count {name}")
            return 3

        @hw.on_start
        def started(ctx: hw.RunContext) -> None:
            self.run_ids.append(ctx.run_id)

        self.run_ids: list[str] = []
        self.agent = hw.Agent(
            self.model, tools=[delete_file, count], store=self.store, use=[started]
        )

    def model(self, request: hw.ModelRequest) -> hw.Message:
        last = request.messages[-1]
        if last.role == "user":
            calls = [
                hw.ToolCall("c1", "delete_file", {"name": "a"}),
                hw.ToolCall("c2", "count", {"name": "b"}),
            ]
            return hw.Message.assistant("", calls)
        return hw.Message.assistant(f"Result: {last.text}")


def leave_at_interrupt(turn: Turn, is_async: bool) -> list[tuple[str, str | None]]:
    seen: list[tuple[str, str | None]] = []

    def note(event: hw.AgentEvent) -> bool:
        seen.append((event.kind, event.call.id if event.call is not None else None))
        return event.kind == "interrupt"

    if not is_async:
        stream = turn.agent.stream("Clean up.")
        for event in stream:
            if note(event):
                break
        stream.close()
        return seen

    async def main() -> None:
        stream = turn.agent.astream("Clean up.")
        async for event in stream:
            if note(event):
                break
        await stream.aclose()

    asyncio.run(main())
    return seen


@pytest.mark.parametrize("is_async", [False, True], ids=["stream", "astream"])
def test_a_stream_left_at_its_interrupt_event_can_be_resumed(is_async: bool) -> None:
    turn = Turn()
    seen = leave_at_interrupt(turn, is_async)

    # the interrupt comes after every call of the turn ended and the run was saved
    assert seen == [
        ("tool_call", "c1"),
        ("tool_call", "c2"),
        ("tool_result", "c2"),
        ("interrupt", "c1"),
    ]
    (run_id,) = turn.run_ids
    assert turn.store.get(f"hookwrap:agent:{run_id}") is not None
    done = turn.agent.resume(run_id, {"c1": True})
    assert (done.status, done.text) == ("finished", "Result: 3")
    assert turn.ran == ["count b", "delete a"]  # each call ran once


def test_an_interrupt_event_is_not_given_for_a_run_that_aborted_instead() -> None:
    """A call of the turn aborted the run: it did not pause, and no interrupt is reported."""

    @hw.before_tool
    def refuse_count(call: hw.ToolCall) -> Any:
        return hw.Abort("no counting") if call.name == "count" else None

    turn = Turn()
    agent = hw.Agent(turn.model, tools=list(turn.agent.tools), store=turn.store, use=[refuse_count])
    events = list(agent.stream("Clean up."))
    assert [e.kind for e in events] == ["tool_call", "tool_call", "result"]
    result = events[-1].result
    assert result is not None
    assert result.status == "aborted"


@pytest.mark.parametrize("is_async", [False, True], ids=["resume_stream", "aresume_stream"])
def test_a_hook_pausing_a_resumed_run_whose_turn_is_pending_is_an_interrupt_event(
    is_async: bool,
) -> None:
    """agent.md: an `"interrupt"` event, `call` None for a hook outside tools, when the
    run pauses; also when the saved turn still has calls to run."""
    asked: list[bool] = []

    @hw.on_start
    def budget() -> None:
        if asked:
            hw.interrupt("spend more?", key="budget")
        asked.append(True)

    turn = Turn()
    agent = hw.Agent(turn.model, tools=list(turn.agent.tools), store=turn.store, use=[budget])
    paused = agent.run("Clean up.")
    assert paused.status == "interrupted"

    if is_async:

        async def events() -> list[hw.AgentEvent]:
            return [e async for e in agent.aresume_stream(paused.run_id, {"c1": True})]

        got = asyncio.run(events())
    else:
        got = list(agent.resume_stream(paused.run_id, {"c1": True}))
    assert [(e.kind, e.call, e.value) for e in got[:-1]] == [("interrupt", None, "spend more?")]
    result = got[-1].result
    assert result is not None
    assert (result.status, result.interrupt) == ("interrupted", "spend more?")
