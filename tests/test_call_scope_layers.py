"""`call_id` and `call_state` across layers of one call (SPEC §5: "a dict scoped to the
current model or tool call"): the hooks of a target wrapped again, of an SDK client's
layers, of an agent around a wrapped client or a tool with hooks of its own, all run for
the same call, so they share its id and state. A call made inside the model (a judge) is
a call of its own."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.middleware import Fallback
from hookwrap.testing import FakeProvider

USER = [{"role": "user", "content": "hi"}]


def _pair() -> tuple[list[Any], Any, Any]:
    """An outer `before_model` that leaves a mark, and an inner `after_model` that reads it."""
    seen: list[Any] = []

    @hw.before_model
    def mark(request: hw.ModelRequest, ctx: hw.RunContext) -> None:
        ctx.call_state["mark"] = "outer"
        seen.append(("outer", ctx.call_id))

    @hw.after_model
    def read(request: hw.ModelRequest, response: hw.ModelResponse, ctx: hw.RunContext) -> None:
        seen.append(("inner", ctx.call_id, ctx.call_state.get("mark")))

    return seen, mark, read


def test_a_model_wrapped_twice_is_one_call() -> None:
    seen, mark, read = _pair()

    def llm(messages: list[dict[str, Any]]) -> str:
        return "ok"

    ask = hw.model(hw.model(llm, use=[read]), use=[mark])
    assert ask(USER) == "ok"
    (_, outer_id), (_, inner_id, mark_seen) = seen
    assert inner_id == outer_id
    assert mark_seen == "outer"


def test_a_streamed_model_wrapped_twice_is_one_call() -> None:
    seen: list[Any] = []

    @hw.before_model
    def mark(request: hw.ModelRequest, ctx: hw.RunContext) -> None:
        ctx.call_state["mark"] = ctx.call_id

    @hw.on_chunk
    def read(chunk: hw.Chunk, ctx: hw.RunContext) -> None:
        seen.append(ctx.call_state.get("mark") == ctx.call_id)

    def llm(messages: list[dict[str, Any]]) -> Iterator[str]:
        yield "a"
        yield "b"

    ask = hw.model(hw.model(llm, use=[read]), use=[mark])
    assert list(ask(USER)) == ["a", "b"]
    assert seen == [True, True]


@pytest.mark.parametrize("layer", [False, True], ids=["plain", "inside a layer without hooks"])
def test_a_model_called_inside_the_model_is_a_call_of_its_own(layer: bool) -> None:
    ids: list[tuple[str, Any]] = []

    @hw.before_model
    def note(request: hw.ModelRequest, ctx: hw.RunContext) -> None:
        ids.append((ctx.call_id, dict(ctx.call_state)))
        ctx.call_state["seen"] = True

    judge = hw.model(lambda messages: "fine", use=[note])

    def llm(messages: list[dict[str, Any]]) -> str:
        return "answer, " + judge(messages)

    # wrapped with no hooks, a layer is called directly: it opens no call of its own
    target = hw.model(llm) if layer else llm
    assert hw.model(target, use=[note])(USER) == "answer, fine"
    (outer, outer_state), (inner, inner_state) = ids
    assert inner != outer
    assert outer_state == {}
    assert inner_state == {}


def test_the_layers_of_a_wrapped_client_are_one_call() -> None:
    seen, mark, read = _pair()
    client = hw.wrap(hw.wrap(FakeProvider("hello").openai(), use=[read]), use=[mark])
    completion = client.chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]
    assert completion.choices[0].message.content == "hello"
    (_, outer_id), (_, inner_id, mark_seen) = seen
    assert (inner_id, mark_seen) == (outer_id, "outer")


def test_the_layers_of_an_async_client_are_one_call() -> None:
    seen, mark, read = _pair()
    client = hw.wrap(hw.wrap(FakeProvider("hello").anthropic(True), use=[read]), use=[mark])

    async def main() -> str:
        message = await client.messages.create(model="m", max_tokens=10, messages=USER)  # type: ignore[arg-type]
        return message.content[0].text  # type: ignore[union-attr]

    assert asyncio.run(main()) == "hello"
    (_, outer_id), (_, inner_id, mark_seen) = seen
    assert (inner_id, mark_seen) == (outer_id, "outer")


def test_an_agent_sees_which_model_a_fallback_on_its_client_chose() -> None:
    provider = FakeProvider()
    provider.fail(400)  # not retried: the client's own Fallback answers
    answered: list[Any] = []

    @hw.after_model
    def who(request: hw.ModelRequest, response: hw.ModelResponse, ctx: hw.RunContext) -> None:
        answered.append(ctx.call_state.get("fallback", "<missing>"))

    def backup(messages: list[dict[str, Any]]) -> str:
        return "backup answers"

    client = hw.wrap(provider.openai(max_retries=0), use=[Fallback(models=[backup])])
    agent = hw.Agent((client.chat.completions.create, "m"), use=[who])
    result = agent.run("hi")
    assert result.text == "backup answers"
    assert answered == ["backup"]


def test_a_tool_with_hooks_of_its_own_shares_the_agents_tool_call() -> None:
    seen: list[Any] = []

    @hw.before_tool
    def who(call: hw.ToolCall, ctx: hw.RunContext) -> None:
        ctx.call_state["user"] = "ada"

    @hw.before_tool
    def own(call: hw.ToolCall, ctx: hw.RunContext) -> None:
        seen.append(("own hook", ctx.call_id, ctx.call_state.get("user")))

    @hw.tool(use=[own])
    def lookup(city: str) -> str:
        """Look a city up."""
        ctx = hw.current()
        seen.append(("tool", ctx.call_id, ctx.call_state.get("user")))
        return city.upper()

    replies = [
        hw.Message.assistant("", tool_calls=(hw.ToolCall("c1", "lookup", {"city": "paris"}),)),
        "done",
    ]
    provider = FakeProvider(replies)
    agent = hw.Agent((provider.openai(), "m"), tools=[lookup], use=[who])
    assert agent.run("go").text == "done"
    assert seen == [("own hook", "c1", "ada"), ("tool", "c1", "ada")]


def test_a_tool_called_inside_a_tool_is_a_call_of_its_own() -> None:
    states: list[Any] = []

    @hw.before_tool
    def note(call: hw.ToolCall, ctx: hw.RunContext) -> None:
        states.append(dict(ctx.call_state))
        ctx.call_state["here"] = call.name

    @hw.tool(use=[note])
    def inner(x: int) -> int:
        """Inner."""
        return x + 1

    @hw.tool(use=[note])
    def outer(x: int) -> int:
        """Outer."""
        return inner(x) * 2

    assert outer(1) == 4
    assert states == [{}, {}]


def test_a_judge_asked_beside_the_model_is_a_call_of_its_own() -> None:
    """An async wrap hook asks a judge in a task beside the model's call, while the model's
    HTTP request is under way."""
    seen: list[Any] = []

    @hw.before_model
    def judge_note(request: hw.ModelRequest, ctx: hw.RunContext) -> None:
        seen.append((ctx.call_id, dict(ctx.call_state)))

    async def verdict(messages: list[dict[str, Any]]) -> str:
        return "safe"

    judge = hw.model(verdict, use=[judge_note])

    @hw.wrap_model
    async def moderate(request: hw.ModelRequest, call_next: Any, ctx: hw.RunContext) -> Any:
        ctx.call_state["secret"] = ctx.call_id
        response, _ = await asyncio.gather(call_next(request), judge(USER))
        return response

    provider = FakeProvider("hello")

    async def main() -> str:
        with provider.serve() as url:  # a real socket: the request waits for its answer
            client = hw.wrap(provider.openai(True, url=url), use=[moderate])
            try:
                answer = await client.chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]
            finally:
                await client.close()
            return str(answer.choices[0].message.content)

    assert asyncio.run(main()) == "hello"
    [(judge_id, judge_state)] = seen
    assert judge_state == {}
    assert not judge_id.startswith("x")  # an id of its own was made
