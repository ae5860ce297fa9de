"""`hw.Agent` (SPEC §7): the model → tools → model loop as one run, its hooks in order,
events, tool errors as messages, limits, aborts, and interrupt/resume through a store."""

from __future__ import annotations

import asyncio
import dataclasses
import enum
import gc
import json
import logging
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest

import hookwrap as hw
from hookwrap._agent import Agent, AgentEvent, interrupt
from hookwrap.middleware import CallLimit, ToolApproval
from hookwrap.stores import MemoryStore
from hookwrap.testing import FakeProvider

Reply = Any  # a Message, a str, or a function of the request returning one


class Script:
    """A model function answering from a script, recording every request it gets."""

    def __init__(self, *replies: Reply) -> None:
        self.replies = list(replies)
        self.requests: list[hw.ModelRequest] = []

    def __call__(self, request: hw.ModelRequest) -> hw.Message:
        self.requests.append(request)
        reply = self.replies.pop(0)
        if callable(reply):
            reply = reply(request)
        return hw.Message.assistant(reply) if isinstance(reply, str) else reply


def calls(*items: tuple[str, str, dict[str, Any]]) -> hw.Message:
    """An assistant message asking for tool calls `(id, name, arguments)`."""
    return hw.Message.assistant("", [hw.ToolCall(i, n, a) for i, n, a in items])


def tool_texts(result: hw.RunResult) -> dict[str, str]:
    return {m.tool_call_id or "": m.text for m in result.messages if m.role == "tool"}


def go(agent: Agent, value: Any, is_async: bool) -> hw.RunResult:
    return asyncio.run(agent.arun(value)) if is_async else agent.run(value)


def resume(agent: Agent, run_id: str, decisions: dict[str, Any], is_async: bool) -> hw.RunResult:
    if is_async:
        return asyncio.run(agent.aresume(run_id, decisions))
    return agent.resume(run_id, decisions)


def events_of(agent: Agent, value: Any, is_async: bool) -> list[AgentEvent]:
    if not is_async:
        return list(agent.stream(value))

    async def read() -> list[AgentEvent]:
        return [e async for e in agent.astream(value)]

    return asyncio.run(read())


@pytest.fixture(params=["sync", "async"])
def is_async(request: pytest.FixtureRequest) -> bool:
    return request.param == "async"


@hw.tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: the first
        b: the second
    """
    return a + b


@hw.tool
def forecast(city: str) -> dict[str, Any]:
    """The weather in a city."""
    return {"city": city, "celsius": 18}


# -- the loop -------------------------------------------------------------------------------


def test_tool_calls_run_and_their_results_go_back_to_the_model(is_async: bool) -> None:
    model = Script(
        calls(("c1", "add", {"a": 2, "b": 3}), ("c2", "forecast", {"city": "Paris"})),
        lambda request: f"sum {request.messages[-2].text}, weather {request.messages[-1].text}",
    )
    agent = Agent(model, tools=[add, forecast], instructions="Be brief.")
    result = go(agent, "add 2 and 3, and the weather in Paris", is_async)

    assert result.status == "finished"
    assert result.text == 'sum 5, weather {"city": "Paris", "celsius": 18}'
    assert [m.role for m in result.messages] == ["user", "assistant", "tool", "tool", "assistant"]
    assert tool_texts(result) == {"c1": "5", "c2": '{"city": "Paris", "celsius": 18}'}
    assert result.iterations == 2
    assert len(result.run_id) == 32
    first = model.requests[0]
    assert first.messages[0] == hw.Message.system("Be brief.")  # not part of the history
    assert [s.name for s in first.tools] == ["add", "forecast"]
    assert first.tools[0].parameters["properties"]["a"] == {
        "type": "integer",
        "description": "the first",
    }


def test_input_may_be_a_list_of_messages_dicts_or_messages() -> None:
    model = Script(lambda request: f"{len(request.messages)} messages")
    history = [{"role": "user", "content": "hi"}, hw.Message.assistant("hello"), "and now?"]
    result = Agent(model).run(history)
    assert result.text == "3 messages"
    assert [m.role for m in result.messages] == ["user", "assistant", "user", "assistant"]


def test_plain_functions_are_tools_and_middleware_adds_its_tools() -> None:
    def shout(text: str) -> str:
        """Upper-case a text."""
        return text.upper()

    class Provides(hw.Middleware):
        tools = (forecast,)

    model = Script(calls(("c1", "shout", {"text": "hey"})), "done")
    result = Agent(model, tools=[shout], use=[Provides()]).run("go")
    assert tool_texts(result) == {"c1": "HEY"}
    assert [s.name for s in model.requests[0].tools] == ["shout", "forecast"]


@pytest.mark.parametrize("how", ["in a Stack", "in Stacks added", "a Stack itself"])
def test_a_middleware_in_a_stack_adds_its_tools_too(how: str) -> None:
    """`use=` takes Stacks as it takes lists: a Middleware inside one provides its tools."""

    @hw.before_model
    def noted(request: hw.ModelRequest) -> None:
        return None

    class Provides(hw.Middleware):
        tools = (forecast,)

        @hw.before_model
        def look(self, request: hw.ModelRequest) -> None:
            return None

    use: Any = {
        "in a Stack": [hw.Stack(Provides())],
        "in Stacks added": [hw.Stack(noted) + hw.Stack(Provides())],
        "a Stack itself": hw.Stack(noted, Provides()),
    }[how]
    assert [t.name for t in Agent(Script("ok"), tools=[add], use=use).tools] == [
        "add",
        "forecast",
    ]


def test_before_agent_changes_instructions_and_tools() -> None:
    @hw.before_agent
    def setup(agent: hw.AgentSetup) -> hw.AgentSetup:
        kept = tuple(t for t in agent.tools if t.name != "forecast")
        return agent.replace(instructions=agent.instructions + " Use tools.", tools=kept)

    model = Script(calls(("c1", "forecast", {"city": "Oslo"})), "ok")
    result = Agent(model, tools=[add, forecast], instructions="Hi.", use=[setup]).run("x")
    assert model.requests[0].messages[0].text == "Hi. Use tools."
    assert [s.name for s in model.requests[0].tools] == ["add"]
    assert tool_texts(result)["c1"] == "Error: there is no tool 'forecast' (tools: add)"


def test_model_functions_in_the_messages_form_work_too() -> None:
    answers = iter(["", "the answer"])

    def llm(messages: list[dict[str, Any]]) -> dict[str, Any]:
        text = next(answers)
        if not text:
            call = {"id": "c1", "function": {"name": "add", "arguments": '{"a": 1, "b": 1}'}}
            return {"role": "assistant", "content": "", "tool_calls": [call]}
        return {"role": "assistant", "content": f"{text} after {messages[-1]['content']}"}

    result = Agent(llm, tools=[add]).run("one plus one")
    assert result.text == "the answer after 2"


# -- one run, hooks in order ------------------------------------------------------------------


def recorder(log: list[str]) -> list[Any]:
    @hw.before_agent
    def before_agent(agent: hw.AgentSetup) -> None:
        log.append("before_agent")

    @hw.on_start
    def on_start() -> None:
        log.append("on_start")

    @hw.on_iteration
    def on_iteration(info: hw.IterationInfo) -> None:
        log.append(f"on_iteration {info.iteration} ({len(info.messages)} messages)")

    @hw.before_model
    def before_model(request: hw.ModelRequest) -> None:
        log.append("before_model")

    @hw.wrap_model
    def wrap_model(request: hw.ModelRequest) -> Any:
        log.append("wrap_model in")
        response = yield request
        log.append("wrap_model out")
        return response

    @hw.after_model
    def after_model(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        log.append("after_model")

    @hw.before_tool
    def before_tool(call: hw.ToolCall) -> None:
        log.append(f"before_tool {call.name}")

    @hw.wrap_tool
    def wrap_tool(call: hw.ToolCall) -> Any:
        log.append("wrap_tool")
        return (yield call)

    @hw.after_tool
    def after_tool(call: hw.ToolCall, outcome: hw.ToolOutcome) -> None:
        log.append(f"after_tool {outcome.result}")

    @hw.after_agent
    def after_agent(result: hw.RunResult) -> None:
        log.append(f"after_agent {result.status}")

    @hw.on_finish
    def on_finish(info: hw.FinishInfo) -> None:
        log.append("on_finish")

    return [
        before_agent,
        on_start,
        on_iteration,
        before_model,
        wrap_model,
        after_model,
        before_tool,
        wrap_tool,
        after_tool,
        after_agent,
        on_finish,
    ]


@pytest.mark.parametrize("mode", ["run", "stream"])
def test_every_stage_runs_in_order_once_per_run(is_async: bool, mode: str) -> None:
    log: list[str] = []
    model = Script(calls(("c1", "add", {"a": 1, "b": 2})), "three")
    agent = Agent(model, tools=[add], use=recorder(log))
    if mode == "run":
        assert go(agent, "1 + 2?", is_async).text == "three"
    else:
        assert events_of(agent, "1 + 2?", is_async)[-1].result.text == "three"  # type: ignore[union-attr]
    model_call = ["before_model", "wrap_model in", "wrap_model out", "after_model"]
    assert log == [
        "before_agent",
        "on_start",
        "on_iteration 1 (1 messages)",
        *model_call,
        "before_tool add",
        "wrap_tool",
        "after_tool 3",
        "on_iteration 2 (3 messages)",
        *model_call,
        "after_agent finished",
        "on_finish",
    ]


def test_the_whole_loop_is_one_run_with_shared_state(is_async: bool) -> None:
    seen: list[tuple[str, str, int]] = []

    @hw.before_model
    def count(request: hw.ModelRequest, ctx: hw.RunContext) -> None:
        ctx.state.set("model_calls", ctx.state.get("model_calls", 0) + 1)
        seen.append(("model", ctx.run_id, ctx.iteration))

    @hw.tool
    def look(ctx: hw.RunContext) -> int:
        """How many model calls so far."""
        seen.append(("tool", ctx.run_id, ctx.iteration))
        return int(ctx.state.get("model_calls"))

    model = Script(calls(("c1", "look", {})), calls(("c2", "look", {})), "done")
    result = go(Agent(model, tools=[look], use=[count]), "go", is_async)
    assert tool_texts(result) == {"c1": "1", "c2": "2"}
    assert {run_id for _, run_id, _ in seen} == {result.run_id}
    assert [(kind, i) for kind, _, i in seen] == [
        ("model", 1),
        ("tool", 1),
        ("model", 2),
        ("tool", 2),
        ("model", 3),
    ]


def test_async_tools_of_one_turn_run_concurrently() -> None:
    started = {"left": asyncio.Event(), "right": asyncio.Event()}

    async def meet(me: str, other: str) -> str:
        started[me].set()
        await asyncio.wait_for(started[other].wait(), timeout=1)  # only if both run at once
        return f"{me} met {other}"

    @hw.tool
    async def left() -> str:
        """Left."""
        return await meet("left", "right")

    @hw.tool
    async def right() -> str:
        """Right."""
        return await meet("right", "left")

    model = Script(calls(("c1", "left", {}), ("c2", "right", {})), "both done")

    result = asyncio.run(Agent(model, tools=[left, right]).arun("meet"))
    assert tool_texts(result) == {"c1": "left met right", "c2": "right met left"}


def test_sync_tools_run_in_an_async_run() -> None:
    model = Script(calls(("c1", "add", {"a": 4, "b": 4})), "eight")
    result = asyncio.run(Agent(model, tools=[add]).arun("4 + 4"))
    assert tool_texts(result) == {"c1": "8"}


# -- tool errors, limits, aborts ---------------------------------------------------------------


def test_tool_errors_are_messages_to_the_model_never_a_crash(is_async: bool) -> None:
    @hw.tool
    def broken(x: int) -> int:
        """Always fails."""
        raise ValueError(f"cannot handle {x}")

    model = Script(
        calls(
            ("c1", "broken", {"x": 1}),
            ("c2", "add", {"a": "two", "b": 1}),  # not an int
            ("c3", "add", {"a": 1}),  # b missing
            ("c4", "nope", {}),
        ),
        "sorry",
    )
    result = go(Agent(model, tools=[broken, add]), "x", is_async)
    assert result.status == "finished"
    texts = tool_texts(result)
    assert texts["c1"] == "Error: ValueError: cannot handle 1"
    assert texts["c2"].startswith("Error: ToolArgumentError: argument 'a' of add: expected int")
    assert texts["c3"] == "Error: ToolArgumentError: add() is missing argument(s): b"
    assert texts["c4"] == "Error: there is no tool 'nope' (tools: add, broken)"


def test_max_iterations_ends_the_run_as_aborted(is_async: bool) -> None:
    reasons: list[str | None] = []

    @hw.on_abort
    def aborted(info: hw.FinishInfo) -> None:
        reasons.append(info.reason)

    def loops(request: hw.ModelRequest) -> hw.Message:
        return calls((f"c{len(request.messages)}", "add", {"a": 1, "b": 1}))

    agent = Agent(loops, tools=[add], use=[aborted], max_iterations=2)
    result = go(agent, "forever", is_async)
    assert result.status == "aborted"
    assert result.iterations == 2
    assert [m.role for m in result.messages] == ["user", "assistant", "tool", "assistant", "tool"]
    assert reasons == ["max_iterations (2) reached"]


def test_an_abort_from_a_hook_is_an_aborted_result(is_async: bool) -> None:
    log: list[str] = []

    @hw.before_tool
    def refuse(call: hw.ToolCall) -> Any:
        return hw.Abort(f"{call.name} is not allowed")

    @hw.after_agent
    def after(result: hw.RunResult) -> None:
        log.append(f"after_agent {result.status}")

    @hw.on_abort
    def on_abort(info: hw.FinishInfo) -> None:
        log.append(f"on_abort {info.reason}")

    @hw.on_finish
    def on_finish(info: hw.FinishInfo) -> None:
        log.append("on_finish")

    model = Script(hw.Message.assistant("Let me add.", [hw.ToolCall("c1", "add", {})]))
    agent = Agent(model, tools=[add], use=[refuse, after, on_abort, on_finish])
    result = go(agent, "x", is_async)
    assert (result.status, result.text, result.iterations) == ("aborted", "Let me add.", 1)
    assert log == ["after_agent aborted", "on_abort add is not allowed"]


def answered_in_order(messages: tuple[hw.Message, ...]) -> bool:
    """Whether every tool call is answered by a tool message right after its turn, as the
    providers ask of a conversation sent to them."""
    for i, message in enumerate(messages):
        ids = [c.id for c in message.tool_calls]
        if ids and [m.tool_call_id for m in messages[i + 1 : i + 1 + len(ids)]] != ids:
            return False
    return True


@pytest.mark.parametrize("streaming", [False, True], ids=["run", "stream"])
def test_a_call_limit_cutting_a_turn_keeps_the_results_of_the_calls_that_ran(
    is_async: bool, streaming: bool
) -> None:
    ran: list[str] = []

    def look(q: str) -> str:
        ran.append(q)
        return f"found {q}"

    async def alook(q: str) -> str:  # in order: the first call of a turn ends first
        return look(q)

    def two_calls(request: hw.ModelRequest) -> hw.Message:
        n = len(request.messages)
        return calls((f"a{n}", "look", {"q": f"a{n}"}), (f"b{n}", "look", {"q": f"b{n}"}))

    tool = hw.tool(alook if is_async else look, name="look")
    agent = Agent(two_calls, tools=[tool], use=[CallLimit(tool_calls=3)])
    if streaming:
        events = events_of(agent, "go", is_async)
        result = events[-1].result
        assert result is not None
        results = [e.call.id for e in events if e.kind == "tool_result" and e.call]
        assert results == ["a1", "b1", "a4"]  # none for the refused call
    else:
        result = go(agent, "go", is_async)
    assert (result.status, ran, result.iterations) == ("aborted", ["a1", "b1", "a4"], 2)
    assert [m.role for m in result.messages] == ["user", *["assistant", "tool", "tool"] * 2]
    assert answered_in_order(result.messages)
    assert tool_texts(result) == {
        "a1": "found a1",
        "b1": "found b1",
        "a4": "found a4",
        "b4": "Error: the run was aborted before this call returned "
        "(CallLimit: tool_calls=3 reached)",
    }


def test_calls_after_the_abort_of_a_sync_turn_do_not_run_and_are_answered() -> None:
    ran: list[int] = []

    @hw.tool
    def step(x: int) -> int:
        """Aborts the run at 2."""
        if x == 2:
            hw.current().abort("stop at 2")
        ran.append(x)
        return x

    model = Script(
        calls(("c1", "step", {"x": 1}), ("c2", "step", {"x": 2}), ("c3", "step", {"x": 3}))
    )
    result = Agent(model, tools=[step]).run("go")
    assert (result.status, ran) == ("aborted", [1])
    cut = "Error: the run was aborted before this call returned (stop at 2)"
    assert tool_texts(result) == {"c1": "1", "c2": cut, "c3": cut}
    assert answered_in_order(result.messages)


def test_a_model_call_a_call_limit_refuses_is_no_iteration(is_async: bool) -> None:
    started: list[int] = []
    seen: list[int] = []

    @hw.on_iteration
    def count(info: hw.IterationInfo) -> None:
        started.append(info.iteration)

    @hw.on_abort
    def aborted(info: hw.FinishInfo, ctx: hw.RunContext) -> None:
        seen.append(ctx.iteration)

    def loops(request: hw.ModelRequest) -> hw.Message:
        return calls((f"c{len(request.messages)}", "add", {"a": 1, "b": 1}))

    model = Script(loops, loops, loops)
    agent = Agent(model, tools=[add], use=[CallLimit(model_calls=2), count, aborted])
    result = go(agent, "go", is_async)
    assert (result.status, result.iterations, len(model.requests)) == ("aborted", 2, 2)
    assert started == [1, 2, 3]  # on_iteration comes before the call is refused
    assert seen == [2]
    assert answered_in_order(result.messages)


def test_other_failures_raise_after_on_error(is_async: bool) -> None:
    errors: list[BaseException | None] = []

    @hw.on_error
    def on_error(info: hw.FinishInfo) -> None:
        errors.append(info.error)

    def fails(request: hw.ModelRequest) -> str:
        raise RuntimeError("model down")

    with pytest.raises(RuntimeError, match="model down") as caught:
        go(Agent(fails, use=[on_error]), "x", is_async)
    assert errors == [caught.value]


# -- interrupt and resume ------------------------------------------------------------------------

deleted: list[str] = []


@hw.tool
def delete(path: str) -> str:
    """Delete a file, once a human approved."""
    if interrupt({"confirm": f"delete {path}?"}) is not True:
        return f"kept {path}"
    deleted.append(path)
    return f"deleted {path}"


def interrupting_model() -> Script:
    return Script(
        calls(("c1", "add", {"a": 1, "b": 2}), ("c2", "delete", {"path": "a.txt"})),
        lambda request: "; ".join(m.text for m in request.messages if m.role == "tool"),
    )


def test_an_interrupted_tool_call_is_no_failure_for_after_tool(is_async: bool) -> None:
    seen: list[tuple[str, bool]] = []

    @hw.after_tool
    def forgiving(call: hw.ToolCall, outcome: hw.ToolOutcome) -> Any:
        seen.append((call.name, outcome.ok))
        return None if outcome.ok else "failed, but fine"  # would swallow a failure

    agent = Agent(interrupting_model(), tools=[add, delete], use=[forgiving], store=MemoryStore())
    paused = go(agent, "tidy up", is_async)
    assert (paused.status, paused.interrupt) == ("interrupted", {"confirm": "delete a.txt?"})
    assert seen == [("add", True)]  # the pausing call did not end: no outcome for it
    done = resume(agent, paused.run_id, {"c2": False}, is_async)
    assert done.text == "3; kept a.txt"
    assert seen == [("add", True), ("delete", True)]


@pytest.mark.parametrize("fresh", [False, True], ids=["same agent", "fresh agent"])
def test_an_interrupt_pauses_and_resume_continues_with_the_decision(
    is_async: bool, fresh: bool
) -> None:
    deleted.clear()
    store = MemoryStore()
    added: list[int] = []

    @hw.after_tool
    def count(call: hw.ToolCall, outcome: hw.ToolOutcome, ctx: hw.RunContext) -> None:
        if call.name == "add":
            added.append(outcome.result)
        if outcome.ok:
            ctx.state.set("tools_run", ctx.state.get("tools_run", 0) + 1)

    model = interrupting_model()
    agent = Agent(model, tools=[add, delete], use=[count], store=store)
    paused = go(agent, "tidy up", is_async)
    assert paused.status == "interrupted"
    assert paused.interrupt == {"confirm": "delete a.txt?"}
    assert [m.role for m in paused.messages] == ["user", "assistant"]  # the turn is pending
    assert deleted == []
    assert added == [3]

    decided: list[Any] = []

    @hw.after_agent
    def decisions(result: hw.RunResult, ctx: hw.RunContext) -> None:
        decided.append((dict(ctx.decisions), ctx.state.get("tools_run")))

    later = (
        Agent(model, tools=[add, delete], use=[count, decisions], store=store) if fresh else agent
    )
    done = resume(later, paused.run_id, {"c2": True}, is_async)
    assert done.status == "finished"
    assert done.run_id == paused.run_id
    assert done.text == "3; deleted a.txt"
    assert deleted == ["a.txt"]
    assert added == [3]  # the finished call of the turn did not run again
    assert done.iterations == 2
    if fresh:
        assert decided == [({"c2": True}, 2)]  # state saved at the interrupt came back
    with pytest.raises(LookupError, match="no checkpoint of an interrupted run"):
        resume(later, paused.run_id, {"c2": True}, is_async)  # finished runs are forgotten


def test_a_resumed_run_streams_its_events(is_async: bool) -> None:
    deleted.clear()
    agent = Agent(interrupting_model(), tools=[add, delete], store=MemoryStore())
    paused = go(agent, "clean up", is_async)
    assert paused.status == "interrupted"

    async def read_async() -> list[AgentEvent]:
        return [e async for e in agent.aresume_stream(paused.run_id, {"c2": True})]

    if is_async:
        events = asyncio.run(read_async())
    else:
        events = list(agent.resume_stream(paused.run_id, {"c2": True}))
    kinds = [e.kind for e in events]
    assert kinds[:2] == ["tool_call", "tool_result"]  # the pending call, with its decision
    assert events[0].call is not None
    assert events[0].call.id == "c2"
    assert events[1].value == "deleted a.txt"
    assert "chunk" in kinds
    assert kinds[-1] == "result"
    result = events[-1].result
    assert result is not None
    assert (result.status, result.run_id) == ("finished", paused.run_id)
    assert result.text == "3; deleted a.txt"
    assert deleted == ["a.txt"]


def test_streams_refuse_bad_input_before_the_first_event() -> None:
    agent = Agent(Script(), store=MemoryStore())
    with pytest.raises(TypeError):
        agent.stream(42)
    with pytest.raises(TypeError):
        agent.astream(42)
    with pytest.raises(LookupError, match="no checkpoint"):
        agent.resume_stream("nope")
    with pytest.raises(TypeError, match="decisions"):
        agent.aresume_stream("nope", {1: True})  # type: ignore[dict-item]
    with pytest.raises(TypeError, match="run id"):
        agent.aresume_stream(42)  # type: ignore[arg-type]


def test_resuming_without_a_decision_interrupts_again() -> None:
    store = MemoryStore()
    agent = Agent(interrupting_model(), tools=[add, delete], store=store)
    paused = agent.run("x")
    again = agent.resume(paused.run_id, {"someone-else": 1})
    assert (again.status, again.interrupt, again.run_id) == (
        "interrupted",
        {"confirm": "delete a.txt?"},
        paused.run_id,
    )
    done = agent.resume(paused.run_id, {"c2": "no"})
    assert done.text == "3; kept a.txt"


@pytest.mark.parametrize("streamed", [False, True], ids=["arun", "astream"])
def test_a_sync_model_in_an_async_run_leaves_the_event_loop_free(streamed: bool) -> None:
    import threading

    threads: list[int] = []

    def model(request: hw.ModelRequest) -> Iterator[str]:
        threads.append(threading.get_ident())
        yield from ("from ", "a thread")

    agent = Agent(model, store=MemoryStore())

    async def go_async() -> tuple[int, str]:
        if streamed:
            events = [e async for e in agent.astream("hi")]
            text = "".join(e.text for e in events if e.kind == "chunk")
        else:
            text = (await agent.arun("hi")).text
        return threading.get_ident(), text

    loop_thread, text = asyncio.run(go_async())
    assert text == "from a thread"
    assert threads
    assert loop_thread not in threads


def test_an_interrupt_in_a_model_hook_redoes_that_turn_on_resume() -> None:
    @hw.before_model
    def gate(request: hw.ModelRequest, ctx: hw.RunContext) -> None:
        if "go" not in ctx.decisions:
            interrupt("may I call the model?")

    model = Script(lambda request: f"{len(request.messages)} messages")
    agent = Agent(model, use=[gate], store=MemoryStore())
    paused = agent.run("hello")
    assert (paused.status, paused.interrupt, paused.iterations) == (
        "interrupted",
        "may I call the model?",
        0,
    )
    done = agent.resume(paused.run_id, {"go": True})
    assert (done.status, done.text, done.iterations) == ("finished", "1 messages", 1)


def test_a_model_hook_names_the_key_of_its_decision(is_async: bool) -> None:
    answers: list[Any] = []

    @hw.before_model
    def budget(request: hw.ModelRequest) -> None:
        answers.append(interrupt({"question": "spend more?"}, key="budget"))

    agent = Agent(Script("spent"), use=[budget], store=MemoryStore())
    paused = go(agent, "hello", is_async)
    assert (paused.status, paused.interrupt) == ("interrupted", {"question": "spend more?"})
    done = resume(agent, paused.run_id, {"budget": "yes"}, is_async)
    assert (done.status, done.text, answers) == ("finished", "spent", ["yes"])
    with pytest.raises(TypeError, match=r"hw.interrupt\(key=...\) expects a str or None"):
        interrupt("x", key=3)  # type: ignore[arg-type]


def test_a_tools_own_question_shares_the_approval_of_its_call_unless_keyed(
    is_async: bool,
) -> None:
    """`ToolApproval` and a tool's plain `hw.interrupt` both decide by the call id: the
    approval answers the tool's question too. A key of its own keeps the question apart."""

    @hw.tool
    def plain(amount: int) -> str:
        """Asks by the call id."""
        return f"from {interrupt('which account?')!r}"

    @hw.tool
    def keyed(amount: int, ctx: hw.RunContext) -> str:
        """Asks by a key of its own."""
        key = f"account:{ctx.call_id}"
        return f"from {interrupt({'question': 'which account?', 'key': key}, key=key)!r}"

    def model(request: hw.ModelRequest) -> hw.Message:
        if request.messages[-1].role == "user":
            return calls(("t1", request.messages[-1].text, {"amount": 5}))
        return hw.Message.assistant(request.messages[-1].text)

    agent = Agent(model, tools=[plain, keyed], use=[ToolApproval()], store=MemoryStore())
    paused = go(agent, "plain", is_async)
    assert paused.interrupt["type"] == "tool_approval"
    assert resume(agent, paused.run_id, {"t1": True}, is_async).text == "from True"

    paused = go(agent, "keyed", is_async)
    asked = resume(agent, paused.run_id, {"t1": True}, is_async)
    assert (asked.status, asked.interrupt) == (
        "interrupted",
        {"question": "which account?", "key": "account:t1"},
    )
    done = resume(agent, asked.run_id, {"account:t1": "savings"}, is_async)
    assert (done.status, done.text) == ("finished", "from 'savings'")


@pytest.mark.parametrize("kind", ["before_agent", "on_start"])
def test_an_interrupt_before_the_loop_pauses_and_resume_starts_it(
    kind: str, is_async: bool
) -> None:
    passed: list[str] = []
    ends: list[str] = []

    def gate(ctx: hw.RunContext) -> None:
        if ctx.decisions.get("start") is not True:
            interrupt({"question": "may I start?"})
        passed.append(kind)

    if kind == "before_agent":

        @hw.before_agent
        def hook(agent: hw.AgentSetup, ctx: hw.RunContext) -> None:
            gate(ctx)

    else:

        @hw.on_start
        def hook(ctx: hw.RunContext) -> None:
            gate(ctx)

    @hw.on_finish
    def finished(info: Any) -> None:
        ends.append("finish")

    model = Script(lambda request: f"{len(request.messages)} messages")
    agent = Agent(model, use=[hook, finished], store=MemoryStore())
    paused = go(agent, "hello", is_async)
    assert (paused.status, paused.interrupt, paused.iterations) == (
        "interrupted",
        {"question": "may I start?"},
        0,
    )
    assert (passed, ends) == ([], ["finish"])
    events = events_of(Agent(model, use=[hook], store=MemoryStore()), "hello", is_async)
    assert [e.kind for e in events] == ["interrupt", "result"]
    assert events[0].call is None
    done = resume(agent, paused.run_id, {"start": True}, is_async)
    assert (done.status, done.text, done.iterations) == ("finished", "1 messages", 1)
    assert (passed, ends) == ([kind], ["finish", "finish"])


def test_decisions_are_keyed_by_str_refused_before_the_store_is_read() -> None:
    agent = Agent(Script(), store=MemoryStore())
    with pytest.raises(TypeError, match=r"decisions=.*str.*got the key None of type NoneType"):
        agent.resume("any", {None: True})  # type: ignore[dict-item]
    with pytest.raises(TypeError, match=r"decisions=...\) must be a dict"):
        asyncio.run(agent.aresume("any", [("c1", True)]))  # type: ignore[arg-type]


def test_resuming_an_unknown_run_is_a_clear_error() -> None:
    agent = Agent(Script(), store=MemoryStore())
    with pytest.raises(LookupError, match="no checkpoint of an interrupted run 'nope'"):
        agent.resume("nope")
    with pytest.raises(TypeError, match="run id"):
        agent.resume(42)  # type: ignore[arg-type]


def test_interrupt_outside_an_agent_raises() -> None:
    with pytest.raises(hw.Interrupt) as caught:
        interrupt({"why": "no run"})
    assert caught.value.payload == {"why": "no run"}
    assert hw.interrupt is interrupt
    assert hw.Agent is Agent


# -- events ---------------------------------------------------------------------------------------


def streaming_model() -> Callable[[hw.ModelRequest], Iterator[str]]:
    def model(request: hw.ModelRequest) -> Iterator[str]:
        if request.messages[-1].role == "user":
            yield from ()
            return
        yield from ["the ", "sum ", "is ", request.messages[-1].text]

    return model


@hw.tool
def noisy(a: int, ctx: hw.RunContext) -> int:
    """Emit an event and double `a`."""
    ctx.emit("progress", {"a": a})
    return a * 2


def test_stream_gives_custom_events_before_the_chunks_that_came_after_them(
    is_async: bool,
) -> None:
    """An event a `before_model` hook emits comes before the model's first chunk, one an
    `after_model` hook emits after its last."""

    @hw.before_model
    def opening(request: hw.ModelRequest, ctx: hw.RunContext) -> None:
        ctx.emit("asked", 1)

    @hw.after_model
    def closing(request: hw.ModelRequest, response: hw.ModelResponse, ctx: hw.RunContext) -> None:
        ctx.emit("answered", 2)

    def model(request: hw.ModelRequest) -> Iterator[str]:
        yield "a "
        yield "b"

    agent = Agent(model, use=[opening, closing])
    if is_async:

        async def pull() -> list[AgentEvent]:
            return [event async for event in agent.astream("x")]

        events = asyncio.run(pull())
    else:
        events = list(agent.stream("x"))
    assert [(e.kind, e.name or e.text) for e in events] == [
        ("custom", "asked"),
        ("chunk", "a "),
        ("chunk", "b"),
        ("custom", "answered"),
        ("result", ""),
    ]


def test_astream_gives_each_tool_result_of_a_turn_when_its_call_ends() -> None:
    """Async tool calls of one turn run together; `astream` hands on each result (and the
    events emitted before it) as its call ends, not when the slowest ends."""
    release = asyncio.Event()
    order: list[str] = []

    @hw.tool
    async def slow() -> str:
        """Slow."""
        await release.wait()
        return "slow done"

    @hw.tool
    async def fast() -> str:
        """Fast."""
        hw.current().emit("fast", 1)
        return "fast done"

    def model(request: hw.ModelRequest) -> Any:
        if request.messages[-1].role == "user":
            calls = [hw.ToolCall("c1", "slow", {}), hw.ToolCall("c2", "fast", {})]
            return hw.Message.assistant("", calls)
        return "ok"

    async def main() -> None:
        async for event in Agent(model, tools=[slow, fast]).astream("x"):
            order.append(f"{event.kind}:{event.name or event.text}")
            if event.kind == "tool_result" and event.text == "fast done":
                release.set()  # the slow call ends only once the fast one's result is out

    asyncio.run(asyncio.wait_for(main(), 5))
    results = [o for o in order if o.startswith(("custom", "tool_result"))]
    assert results == ["custom:fast", "tool_result:fast done", "tool_result:slow done"]


def test_cancelling_the_task_pulling_astream_ends_the_run_as_closed_by_consumer() -> None:
    reasons: list[str | None] = []

    @hw.on_abort
    def aborted(info: hw.FinishInfo) -> None:
        reasons.append(info.reason)

    async def model(request: hw.ModelRequest) -> AsyncIterator[str]:
        yield "first"
        await asyncio.sleep(10)
        yield "never"

    agent = Agent(model, use=[aborted])

    async def consume() -> None:
        async for _ in agent.astream("x"):
            pass

    async def main() -> None:
        task = asyncio.create_task(consume())
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert reasons == ["closed by consumer"]


def test_stream_yields_chunks_tool_events_custom_events_and_the_result(is_async: bool) -> None:
    turn = iter([calls(("c1", "noisy", {"a": 21})), None])

    def model(request: hw.ModelRequest) -> Any:
        reply = next(turn)
        if reply is not None:
            return reply
        return iter(["the ", "answer ", "is ", request.messages[-1].text])

    events = events_of(Agent(model, tools=[noisy]), "go", is_async)
    kinds = [e.kind for e in events]
    assert kinds == ["tool_call", "custom", "tool_result", *["chunk"] * 4, "result"]
    assert events[0].call == hw.ToolCall("c1", "noisy", {"a": 21})
    assert (events[1].name, events[1].value) == ("progress", {"a": 21})
    assert (events[2].text, events[2].value, events[2].ok) == ("42", 42, True)
    assert "".join(e.text for e in events if e.kind == "chunk") == "the answer is 42"
    result = events[-1].result
    assert result is not None
    assert result.text == "the answer is 42"


def test_a_model_that_does_not_stream_gives_its_text_as_one_chunk() -> None:
    events = list(Agent(Script("whole answer")).stream("hi"))
    assert [(e.kind, e.text) for e in events[:-1]] == [("chunk", "whole answer")]


def test_an_interrupt_is_an_event_then_the_result() -> None:
    events = list(Agent(interrupting_model(), tools=[add, delete], store=MemoryStore()).stream("x"))
    assert [e.kind for e in events] == [
        "tool_call",
        "tool_result",
        "tool_call",
        "interrupt",
        "result",
    ]
    assert events[3].value == {"confirm": "delete a.txt?"}
    assert events[3].call is not None
    assert events[3].call.id == "c2"


def test_leaving_a_stream_early_ends_the_run_as_closed() -> None:
    reasons: list[str | None] = []

    @hw.on_abort
    def on_abort(info: hw.FinishInfo) -> None:
        reasons.append(info.reason)

    model = Script(calls(("c1", "add", {"a": 1, "b": 1})), "two")
    stream = Agent(model, tools=[add], use=[on_abort]).stream("x")
    assert next(stream).kind == "tool_call"
    stream.close()  # type: ignore[attr-defined]
    assert reasons == ["closed by consumer"]
    assert len(model.requests) == 1


def asks_weather(request: hw.ModelRequest) -> Any:
    """A model that calls `weather` once, then answers with what the tool said."""
    if request.messages[-1].role == "user":
        return hw.Message.assistant("", [hw.ToolCall("c1", "weather", {"city": "Oslo"})])
    return request.messages[-1].text


def test_a_tool_hook_the_tool_has_already_runs_once() -> None:
    """The agent's tool hooks go outside the tool's own; one the tool has already is not
    added again (as when wrapping again): it runs once per call."""
    seen: list[str] = []

    @hw.wrap_tool
    def counted(call: hw.ToolCall, call_next: Any) -> Any:
        seen.append(call.name)
        return call_next(call)

    @hw.tool(use=[counted])
    def weather(city: str) -> str:
        """The weather."""
        return "sunny"

    assert Agent(asks_weather, tools=[weather], use=[counted]).run("hi").text == "sunny"
    assert seen == ["weather"]


@pytest.mark.parametrize("where", ["agent's before_tool", "agent's after_tool", "tool's own"])
def test_a_tool_hooks_error_ends_the_run_after_on_error(where: str, is_async: bool) -> None:
    """A hook around a tool that raises ends the run as any hook's error does (after
    `on_error`, the same object); only the tool's own errors go to the model as text."""
    boom = ValueError("hook broke")
    ended: list[str] = []

    @hw.before_tool
    def before(call: hw.ToolCall) -> None:
        raise boom

    @hw.after_tool
    def after(call: hw.ToolCall, outcome: hw.ToolOutcome) -> None:
        raise boom

    @hw.on_error
    def failed(info: hw.FinishInfo) -> None:
        ended.append(type(info.error).__name__)

    own = [before] if where == "tool's own" else []
    around = {"agent's before_tool": [before], "agent's after_tool": [after]}.get(where, [])

    @hw.tool(use=own)
    def weather(city: str) -> str:
        """The weather."""
        return "sunny"

    agent = Agent(asks_weather, tools=[weather], use=[*around, failed])
    with pytest.raises(ValueError) as excinfo:
        go(agent, "hi", is_async)
    assert excinfo.value is boom
    assert ended == ["ValueError"]


def test_a_tools_own_error_still_reaches_the_model_as_text(is_async: bool) -> None:
    @hw.tool
    def weather(city: str) -> str:
        """The weather."""
        raise RuntimeError("no network")

    result = go(Agent(asks_weather, tools=[weather]), "hi", is_async)
    assert (result.status, result.text) == ("finished", "Error: RuntimeError: no network")


# -- real SDK clients against the fake provider ---------------------------------------------------


@pytest.mark.parametrize("sdk", ["openai", "anthropic", "genai"])
def test_sdk_clients_drive_the_loop(sdk: str) -> None:
    pytest.importorskip("google.genai" if sdk == "genai" else sdk)
    provider = FakeProvider([calls(("call_1", "add", {"a": 2, "b": 3})), "The sum is 5."])
    client = getattr(provider, sdk)()
    result = Agent((client, "some-model"), tools=[add], instructions="Be brief.").run("2 + 3?")
    assert (result.status, result.text) == ("finished", "The sum is 5.")
    assert result.usage.total_tokens > 0
    second = provider.requests[1].body
    assert second.get("model", "some-model") == "some-model"
    assert "5" in json.dumps(second)  # the tool result went back over the wire


@pytest.mark.parametrize(
    ("sdk", "given", "method"),
    [
        ("openai", "client", "client.chat.completions.create"),
        ("openai", "responses", "client.responses.create"),
        ("anthropic", "client", "client.messages.create"),
        ("anthropic", "method", "client.messages.create"),
        ("genai", "client", "client.models.generate_content"),
        ("genai", "aio", "client.models.generate_content"),
    ],
)
def test_a_client_without_a_model_name_is_told_its_own_method(
    sdk: str, given: str, method: str
) -> None:
    pytest.importorskip("google.genai" if sdk == "genai" else sdk)
    client = getattr(FakeProvider(), sdk)()
    model = {
        "client": client,
        "responses": getattr(client, "responses", None),
        "method": getattr(client, "messages", None),
        "aio": getattr(client, "aio", None),
    }[given]
    if given in ("responses", "method"):
        model = model.create
    hint = f'pass (client, "model-name") or functools.partial({method}, model="model-name")'
    with pytest.raises(TypeError, match="without a model name") as caught:
        Agent(model)
    assert str(caught.value).endswith(hint)


@pytest.mark.parametrize("sdk", ["openai", "anthropic", "genai"])
def test_a_client_made_in_the_agents_arguments_stays_open(sdk: str) -> None:
    """`Agent((provider_client(), "model"))` with no other reference to the client: the
    agent keeps the client itself, so its HTTP client is not closed under it."""
    pytest.importorskip("google.genai" if sdk == "genai" else sdk)
    provider = FakeProvider(["one", "two"])
    agent = Agent((getattr(provider, sdk)(), "some-model"))
    gc.collect()
    assert agent.run("hi").text == "one"
    gc.collect()
    assert agent.run("hi").text == "two"


# name -> (the client to make from the provider, async?) -> its method
METHODS: dict[str, Callable[[Any], Any]] = {
    "chat.completions.create": lambda client: client.chat.completions.create,
    "responses.create": lambda client: client.responses.create,
    "messages.create": lambda client: client.messages.create,
    "models.generate_content": lambda client: client.models.generate_content,
    "models.generate_content_stream": lambda client: client.models.generate_content_stream,
}


def client_of(provider: FakeProvider, method: str, is_async: bool) -> Any:
    if method.startswith("models."):
        client = provider.genai()
        return (client, client.aio) if is_async else (client, client)
    made = (
        provider.anthropic(is_async) if method == "messages.create" else provider.openai(is_async)
    )  # type: ignore[call-overload]
    return made, made


PATHS = {
    "chat.completions.create": "/chat/completions",
    "responses.create": "/responses",
    "messages.create": "/messages",
    "models.generate_content": ":generateContent",
    "models.generate_content_stream": ":streamGenerateContent",
}


@pytest.mark.parametrize("method", list(METHODS))
@pytest.mark.parametrize("streamed", [False, True], ids=["run", "stream"])
def test_an_sdk_method_with_its_model_and_arguments_bound_drives_the_loop(
    method: str, streamed: bool, is_async: bool
) -> None:
    sdks = {"models": "google.genai", "messages": "anthropic"}
    pytest.importorskip(sdks.get(method.partition(".")[0], "openai"))
    import functools

    provider = FakeProvider([calls(("call_1", "add", {"a": 2, "b": 3})), "The sum is 5."])
    seen: list[int] = []

    @hw.before_model
    def count(request: hw.ModelRequest) -> None:
        seen.append(len(request.messages))

    client, side = client_of(provider, method, is_async)  # a genai client closes when dropped
    hooked = hw.wrap(METHODS[method](side), use=[count])  # its own hooks stay
    bound: dict[str, Any] = {"temperature": 0.25}
    if "models." in method:  # Gemini takes its options in `config`
        bound = {"config": bound}
    elif method == "messages.create":  # newer anthropic releases take no `temperature`
        bound = {"max_tokens": 77}
    model = functools.partial(hooked, model="bound-model", **bound)
    agent = Agent(model, tools=[add], store=MemoryStore())
    if streamed:
        events = events_of(agent, "2 + 3?", is_async)
        result = events[-1].result
        assert "".join(e.text for e in events if e.kind == "chunk") == "The sum is 5."
    else:
        result = go(agent, "2 + 3?", is_async)
    assert result is not None
    assert (result.status, result.text) == ("finished", "The sum is 5.")
    assert tool_texts(result) == {"call_1": "5"}
    assert seen == [1, 3]  # the method's own hook ran for both model calls
    assert all(PATHS[method] in r.path for r in provider.requests)
    body = provider.requests[0].body
    assert body.get("model", "bound-model") == "bound-model"
    assert "bound-model" in provider.requests[0].path or body["model"] == "bound-model"
    sent = body.get("generationConfig", body)
    assert sent.get("max_tokens", 77) == 77
    assert sent.get("temperature", 0.25) == 0.25
    assert set(bound) & set(sent) or "config" in bound
    del client


def test_openai_streams_through_the_hooks(is_async: bool) -> None:
    pytest.importorskip("openai")
    provider = FakeProvider([calls(("call_1", "add", {"a": 2, "b": 3})), "The sum is 5."])
    client = provider.openai(is_async)  # type: ignore[call-overload]

    @hw.on_chunk
    def loud(chunk: hw.Chunk) -> hw.Chunk | None:
        return chunk.replace(text=chunk.text.upper()) if chunk.kind == "text" else None

    usage: list[hw.Usage] = []

    @hw.on_usage
    def record(value: hw.Usage) -> None:
        usage.append(value)

    agent = Agent((client, "gpt-4o"), tools=[add], use=[loud, record])
    events = events_of(agent, "2 + 3?", is_async)
    text = "".join(e.text for e in events if e.kind == "chunk")
    assert text == "THE SUM IS 5."
    assert [e.text for e in events if e.kind == "tool_result"] == ["5"]
    assert provider.requests[0].body["stream"] is True
    assert provider.requests[0].body["tools"][0]["function"]["name"] == "add"
    assert len(usage) == 2
    result = events[-1].result
    assert result is not None
    assert result.text == "THE SUM IS 5."


# -- bad input ------------------------------------------------------------------------------------


def test_bad_constructor_arguments_are_clear_errors() -> None:
    model = Script()

    @hw.before_model
    def hook(request: hw.ModelRequest) -> None:
        return None

    with pytest.raises(TypeError, match=r"tools=...\) got the before_model hook .*hook .*use="):
        Agent(model, tools=[hook])
    with pytest.raises(TypeError, match=r"got the model .* \(made with hw.model\)"):
        Agent(model, tools=[hw.model(lambda prompt: prompt)])
    with pytest.raises(
        TypeError, match=r"^Agent\(model=\.\.\.\) expects a model function or an SDK client"
    ):
        Agent(42)
    with pytest.raises(TypeError, match=r"as a tuple must be \(client, \"model-name\"\)"):
        Agent((model,))
    with pytest.raises(TypeError, match="without a model name"):
        Agent(FakeProvider().openai())
    with pytest.raises(TypeError, match=r"without a model name.*functools.partial"):
        Agent(FakeProvider().openai().chat.completions.create)
    with pytest.raises(TypeError, match=r"Agent\(tools=...\) must be a list of tools"):
        Agent(model, tools=add)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"Agent\(tools=...\) takes tools .* got int"):
        Agent(model, tools=[1])
    with pytest.raises(ValueError, match="two tools are named 'add'"):
        Agent(model, tools=[add, add])
    with pytest.raises(TypeError, match=r"max_iterations=...\) expects an int >= 1 \(got bool"):
        Agent(model, max_iterations=True)
    with pytest.raises(ValueError, match=r"max_iterations=...\) expects an int >= 1 \(got 0\)"):
        Agent(model, max_iterations=0)
    with pytest.raises(TypeError, match=r"instructions=...\) must be a str \(got list"):
        Agent(model, instructions=["be brief"])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"store=...\) expects a hookwrap.stores store"):
        Agent(model, store={})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"the class MemoryStore; make one, as in MemoryStore\("):
        Agent(model, store=MemoryStore)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="use= got"):
        Agent(model, use=[print])


def test_bad_run_input_and_async_hooks_in_a_sync_run_are_clear_errors() -> None:
    @hw.on_iteration
    async def slow(info: hw.IterationInfo) -> None:
        pass

    with pytest.raises(TypeError, match=r"agent input must be a str .* got int"):
        Agent(Script("x")).run(5)
    with pytest.raises(TypeError, match=r"is async: run this agent with `await agent\.arun"):
        Agent(Script("x"), use=[slow]).run("x")
    assert asyncio.run(Agent(Script("fine"), use=[slow]).arun("x")).text == "fine"


def test_an_async_model_in_a_sync_run_is_refused_before_the_run_starts() -> None:
    seen: list[str] = []

    @hw.on_start
    def started() -> None:
        seen.append("on_start")

    @hw.on_error
    def failed(info: hw.FinishInfo) -> None:
        seen.append("on_error")

    async def answer(request: hw.ModelRequest) -> str:
        return "async"

    agent = Agent(answer, use=[started, failed])
    for run in (agent.run, lambda text: next(iter(agent.stream(text)))):
        with pytest.raises(TypeError, match=r"answer is async: run this agent with `await agent"):
            run("x")
    assert seen == []  # no run was started, so none ended
    assert asyncio.run(agent.arun("x")).text == "async"


def test_an_async_tool_in_a_sync_run_is_a_clear_error() -> None:
    @hw.tool
    async def later() -> str:
        """Async."""
        return "later"

    with pytest.raises(TypeError, match=r"tool 'later' is async: run this agent with `await"):
        Agent(Script(calls(("c1", "later", {}))), tools=[later]).run("x")


def test_tool_calls_without_ids_get_one() -> None:
    model = Script(calls(("", "add", {"a": 1, "b": 1}), ("", "add", {"a": 2, "b": 2})), "ok")
    result = Agent(model, tools=[add]).run("x")
    assert [c.id for c in result.messages[1].tool_calls] == ["call_1_0", "call_1_1"]
    assert tool_texts(result) == {"call_1_0": "2", "call_1_1": "4"}


def test_leaving_an_async_stream_early_ends_the_run_as_closed() -> None:
    reasons: list[str | None] = []

    @hw.on_abort
    def on_abort(info: hw.FinishInfo) -> None:
        reasons.append(info.reason)

    async def main() -> None:
        model = Script(calls(("c1", "add", {"a": 1, "b": 1})), "two")
        stream = Agent(model, tools=[add], use=[on_abort]).astream("x")
        assert (await anext(stream)).kind == "tool_call"
        await stream.aclose()  # type: ignore[attr-defined]

    asyncio.run(main())
    assert reasons == ["closed by consumer"]


def test_the_default_store_lets_a_fresh_agent_resume(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # where a default SQLiteStore puts its file
    paused = Agent(interrupting_model(), tools=[add, delete]).run("x")
    assert paused.status == "interrupted"
    done = Agent(interrupting_model(), tools=[add, delete]).resume(paused.run_id, {"c2": False})
    assert done.status == "finished"


def test_resuming_with_the_default_store_makes_no_file(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, is_async: bool
) -> None:
    monkeypatch.chdir(tmp_path)
    agent = Agent(interrupting_model(), tools=[add, delete])
    message = r"no checkpoint of an interrupted run 'nope' in SQLiteStore\('hookwrap-checkpoints"
    with pytest.raises(LookupError, match=message):
        resume(agent, "nope", {}, is_async)
    assert list(tmp_path.iterdir()) == []  # the store is made when a checkpoint is saved


@dataclasses.dataclass(frozen=True)
class Prefs:
    language: str
    sizes: tuple[int, ...] = ()


class Colour(enum.Enum):
    RED = "red"


def test_state_that_cattrs_brings_back_survives_a_checkpoint(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = MemoryStore()
    values: dict[str, Any] = {
        "json": {"n": 1, "typed": True},
        "dataclass": Prefs("fr", (1, 2)),
        "tuple": (1, "a"),
        "set": {3, 4},
        "enum": Colour.RED,
        "message": hw.Message.user("hi"),
    }
    lost = {"object": object(), "int keys": {1: "a"}, "local": type("Local", (), {})()}

    @hw.tool
    def ask(ctx: hw.RunContext) -> str:
        """Ask once, then report the state."""
        if "json" not in ctx.state:
            for key, value in {**values, **lost}.items():
                ctx.state.set(key, value)
        answer = interrupt("ok?")
        assert {key: ctx.state.get(key) for key in values} == values
        assert [key for key in lost if key in ctx.state] == []
        return f"{answer} {ctx.decisions['c0']}"

    model = Script(calls(("c1", "ask", {})), lambda request: request.messages[-1].text)
    with caplog.at_level(logging.WARNING, logger="hookwrap"):
        paused = Agent(model, tools=[ask], store=store).run("x")
    assert paused.status == "interrupted"
    left_out = sorted(r.getMessage().split(")")[0] for r in caplog.records)
    assert left_out == [
        "ctx.state['int keys'] (of type dict",
        "ctx.state['local'] (of type Local",
        "ctx.state['object'] (of type object",
    ]
    assert "does not come back equal" in caplog.text  # the int keys
    assert "its type Local cannot be found by its name" in caplog.text
    fresh = Agent(model, tools=[ask], store=store)
    done = fresh.resume(paused.run_id, {"c1": "yes", "c0": Prefs("de")})
    assert done.text == "yes Prefs(language='de', sizes=())"


def test_the_interrupt_event_carries_the_payload_as_it_was() -> None:
    payload = ("approve", Prefs("fr"))

    @hw.before_model
    def confirm(request: hw.ModelRequest) -> None:
        interrupt(payload)

    agent = Agent(lambda request: "hi", use=[confirm], store=MemoryStore())
    events = list(agent.stream("x"))
    assert [(e.kind, e.value) for e in events[:-1]] == [("interrupt", payload)]
    result = events[-1].result
    assert result is not None
    assert result.interrupt == payload


def test_tool_arguments_of_a_paused_turn_are_kept_as_the_history_keeps_them() -> None:
    seen: list[Any] = []

    @hw.tool
    def pick(xs: tuple[int, ...]) -> str:
        """Pick after a decision."""
        seen.append(xs)
        return str(interrupt("which?"))

    model = Script(calls(("c1", "pick", {"xs": (1, 2)})), lambda request: request.messages[-1].text)
    agent = Agent(model, tools=[pick], store=MemoryStore())
    paused = agent.run("x")
    assert paused.status == "interrupted"
    assert agent.resume(paused.run_id, {"c1": 2}).text == "2"
    assert seen == [(1, 2), (1, 2)]


def test_an_abort_in_one_async_tool_cancels_the_others_of_its_turn() -> None:
    cancelled: list[str] = []

    @hw.tool
    async def slow(x: int) -> int:
        """Waits for ever."""
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.append("slow")
            raise
        return x  # pragma: no cover

    @hw.tool
    async def stop(x: int) -> int:
        """Aborts the run."""
        await asyncio.sleep(0)
        hw.current().abort("enough")
        return x  # pragma: no cover

    model = Script(calls(("c1", "slow", {"x": 1}), ("c2", "stop", {"x": 2})), "never")
    agent = Agent(model, tools=[slow, stop], store=MemoryStore())

    async def main() -> tuple[hw.RunResult, list[str]]:
        result = await asyncio.wait_for(agent.arun("go"), 5)
        return result, list(cancelled)  # before asyncio.run cancels what is left

    result, cancelled_by_then = asyncio.run(main())
    assert result.status == "aborted"
    assert cancelled_by_then == ["slow"]
    cut = "Error: the run was aborted before this call returned (enough)"
    assert tool_texts(result) == {"c1": cut, "c2": cut}


def test_calls_of_one_turn_failing_together_leave_no_unseen_task_error() -> None:
    """Two calls of a turn abort at the same step: the run is aborted, and asyncio has no
    "Task exception was never retrieved" to report of the other one."""

    @hw.tool
    async def stop(x: int) -> int:
        """Aborts the run."""
        await asyncio.sleep(0)
        hw.current().abort(f"stop {x}")
        return x  # pragma: no cover

    model = Script(calls(("c1", "stop", {"x": 1}), ("c2", "stop", {"x": 2})), "never")
    reported: list[str] = []

    async def main() -> hw.RunResult:
        loop = asyncio.get_running_loop()
        loop.set_exception_handler(lambda loop, context: reported.append(context["message"]))
        result = await Agent(model, tools=[stop], store=MemoryStore()).arun("go")
        gc.collect()  # an unseen task error is reported when its task is freed
        await asyncio.sleep(0)
        return result

    assert asyncio.run(main()).status == "aborted"
    assert reported == []


@pytest.mark.parametrize("sdk", ["openai", "anthropic"])
def test_a_create_method_with_its_model_bound_stands_for_its_client(
    sdk: str, is_async: bool
) -> None:
    pytest.importorskip(sdk)
    import functools

    provider = FakeProvider(["From the SDK."])
    if sdk == "openai":
        client: Any = provider.openai(is_async)
        create = client.chat.completions.create
    else:
        client = provider.anthropic(is_async)
        create = client.messages.create
    agent = Agent(functools.partial(create, model="bound-model"), store=MemoryStore())
    result = go(agent, "hi", is_async)
    assert result.text == "From the SDK."
    assert provider.requests[-1].body["model"] == "bound-model"


@pytest.mark.parametrize("is_async", [False, True], ids=["run", "arun"])
def test_after_agent_runs_in_the_finished_phase(is_async: bool) -> None:
    """The loop is over when `after_agent` runs: its phase is "finished", as the terminal
    hooks' after it, not the "init" of the hooks before the loop."""
    seen: list[tuple[str, str]] = []

    @hw.before_agent
    def before(agent: hw.AgentSetup, ctx: hw.RunContext[Any]) -> None:
        seen.append(("before_agent", ctx.phase))

    @hw.after_agent
    def after(result: hw.RunResult, ctx: hw.RunContext[Any]) -> None:
        seen.append(("after_agent", ctx.phase))

    def model(request: hw.ModelRequest) -> str:
        return "done"

    agent = hw.Agent(model, use=[before, after])
    result = asyncio.run(agent.arun("go")) if is_async else agent.run("go")
    assert result.text == "done"
    assert seen == [("before_agent", "init"), ("after_agent", "finished")]
