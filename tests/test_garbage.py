"""A hooked call that is over leaves nothing for the garbage collector: its views, its
native answer and (for an SDK) its HTTP response are freed at once by reference counting.

A reference cycle per call would not leak, but it makes the collector run over and over
on the program's whole heap, which in a process holding an SDK costs more than the hooks.
"""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.testing import FakeProvider

USER = [{"role": "user", "content": "hi"}]


@hw.before_model
def noted(request: hw.ModelRequest, ctx: hw.RunContext[Any]) -> None:
    ctx.call_state["seen"] = request


@hw.wrap_model
def passed(request: hw.ModelRequest) -> Any:
    response = yield request
    return response


@hw.on_chunk
def upper(chunk: hw.Chunk) -> hw.Chunk:
    return chunk.replace(text=chunk.text.upper())


@hw.after_model
def observed(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
    return None


HOOKS = [noted, passed, upper, observed]


def cycles_left(call: Callable[[], Any], times: int = 5) -> int:
    """How many objects the collector finds unreachable after `times` calls."""
    call()  # first-call caches are not garbage
    while gc.collect():  # what earlier tests left (finalizers may leave more behind)
        pass
    gc.disable()
    try:
        for _ in range(times):
            call()
        return gc.collect()
    finally:
        gc.enable()


def answer(prompt: str) -> str:
    return prompt


async def aanswer(prompt: str) -> str:
    return prompt


def words(prompt: str) -> Iterator[str]:
    yield from prompt.split()


async def awords(prompt: str) -> AsyncIterator[str]:
    for word in prompt.split():
        yield word


def returns_iterator(prompt: str) -> Iterator[str]:  # a stream decided per call
    return iter(prompt.split())


def test_plain_calls_of_every_shape_leave_no_cycles() -> None:
    sync = hw.model(answer, use=HOOKS)
    asynchronous = hw.model(aanswer, use=HOOKS)
    stream = hw.model(words, use=HOOKS)
    astream = hw.model(awords, use=HOOKS)
    per_call = hw.model(returns_iterator, use=HOOKS)

    async def read_async() -> None:
        await asynchronous("a b")
        assert [c async for c in astream("a b")] == ["A", "B"]

    assert cycles_left(lambda: sync("a b")) == 0
    assert cycles_left(lambda: list(stream("a b"))) == 0
    assert cycles_left(lambda: list(per_call("a b"))) == 0
    assert cycles_left(lambda: asyncio.run(read_async())) == cycles_left(
        lambda: asyncio.run(aanswer("a b"))
    )


def test_a_stream_closed_early_or_dropped_leaves_no_cycles() -> None:
    per_call = hw.model(returns_iterator, use=HOOKS)

    def stop_early() -> None:
        for _ in per_call("a b c"):
            break

    def dropped_after_one() -> None:
        next(iter(per_call("a b c")))

    assert cycles_left(stop_early) == 0
    assert cycles_left(dropped_after_one) == 0
    assert cycles_left(lambda: per_call("a b c")) == 0  # never pulled


def test_a_respond_and_a_run_leave_no_cycles() -> None:
    @hw.before_model
    def cached(request: hw.ModelRequest) -> hw.Respond:
        return hw.Respond("from cache")

    short = hw.model(answer, use=[cached, observed])
    sync = hw.model(answer, use=HOOKS)

    def in_a_run() -> None:
        with hw.run(use=[hw.on_finish(lambda info: None)]):
            sync("a")
            sync("b")

    assert cycles_left(lambda: short("a")) == 0
    assert cycles_left(in_a_run) == 0


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
def test_sdk_calls_leave_no_more_cycles_than_the_sdk_alone(streamed: bool) -> None:
    pytest.importorskip("openai")
    pytest.importorskip("anthropic")
    pytest.importorskip("google.genai")
    provider = FakeProvider(["hello there"], chunk_size=4)
    clients = {
        "openai": provider.openai(),
        "anthropic": provider.anthropic(),
        "google": provider.genai(),
    }

    def call(name: str, client: Any) -> Callable[[], Any]:
        def once() -> Any:
            if name == "openai":
                made = client.chat.completions.create(model="m", messages=USER, stream=streamed)
            elif name == "anthropic":
                made = client.messages.create(
                    model="m", max_tokens=10, messages=USER, stream=streamed
                )
            elif streamed:
                made = client.models.generate_content_stream(model="m", contents="hi")
            else:
                made = client.models.generate_content(model="m", contents="hi")
            return list(made) if streamed else made

        return once

    for name, client in clients.items():
        alone = cycles_left(call(name, client))
        hooked = cycles_left(call(name, hw.wrap(client, use=HOOKS)))
        assert hooked <= alone, f"{name}: {hooked} objects in cycles, the SDK alone {alone}"


class Refused(Exception):
    """A hook's error."""


@hw.before_model
def refusing(request: hw.ModelRequest) -> None:
    raise Refused("no")


@hw.before_model
def aborting(request: hw.ModelRequest) -> Any:
    return hw.Abort("stop")


@hw.on_chunk
def failing_chunk(chunk: hw.Chunk) -> None:
    raise Refused("bad chunk")


def _failing(call: Callable[[], Any]) -> Callable[[], None]:
    def run() -> None:
        try:
            call()
        except (Refused, hw.Aborted):
            pass

    return run


@pytest.mark.parametrize("hook", [refusing, aborting], ids=["raises", "aborts"])
def test_a_call_a_hook_ended_leaves_no_cycles(hook: Any) -> None:
    ask = hw.model(lambda prompt: prompt, use=[hook])
    assert cycles_left(_failing(lambda: ask("hi"))) == 0


def test_an_sdk_stream_a_hook_ended_leaves_no_cycles() -> None:
    client = hw.wrap(FakeProvider("one two three").openai(), use=[failing_chunk])

    def streamed() -> None:
        for _ in client.chat.completions.create(model="m", messages=USER, stream=True):  # type: ignore[arg-type]
            pass

    assert cycles_left(_failing(streamed)) == 0


@pytest.mark.parametrize("alternative", ["function", "model name"])
def test_a_fallback_that_answered_after_a_failure_leaves_no_cycles(
    alternative: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first model's error (holding its HTTP response) is kept while the alternatives
    are tried; its traceback holds the frame that keeps it."""
    from hookwrap.middleware import Fallback

    # (a captured log record of the failure would keep it reachable, hiding a cycle)
    monkeypatch.setattr(logging.getLogger("hookwrap"), "disabled", True)

    provider = FakeProvider()
    spare: Any = (lambda messages: "b") if alternative == "function" else "gpt-4o-mini"
    client = hw.wrap(provider.openai(max_retries=0), use=[Fallback(models=[spare])])

    def fell_back() -> None:
        provider.fail(503)
        client.chat.completions.create(model="m", messages=USER)
        provider.requests.clear()

    assert cycles_left(fell_back) == 0


@pytest.mark.parametrize("is_async", [False, True])
def test_an_agent_run_aborted_or_told_of_a_tool_error_leaves_no_cycles(is_async: bool) -> None:
    from hookwrap.middleware import CallLimit

    @hw.tool
    def broken(x: int) -> int:
        """Fails."""
        raise ValueError("no")

    def model(request: hw.ModelRequest) -> hw.Message:
        if any(m.role == "tool" for m in request.messages):
            return hw.Message.assistant("done")
        return hw.Message.assistant("", [hw.ToolCall("c1", "broken", {"x": 1})])

    @hw.wrap_tool
    def refused(call: hw.ToolCall, call_next: Any) -> Any:
        return hw.Abort("not this one")

    told = hw.Agent(model, tools=[broken])
    limited = hw.Agent(model, tools=[broken], use=[CallLimit(model_calls=1)])
    no_tools = hw.Agent(model, tools=[broken], use=[CallLimit(tool_calls=0)])
    stopped = hw.Agent(model, tools=[broken], use=[refused])
    for agent in (told, limited, no_tools, stopped):
        run = (
            (lambda a=agent: asyncio.run(a.arun("go")))
            if is_async
            else (lambda a=agent: a.run("go"))
        )
        assert cycles_left(run) == 0, agent


def test_a_generator_form_hook_around_a_recovered_failure_leaves_no_cycles(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from hookwrap.middleware import Fallback

    monkeypatch.setattr(logging.getLogger("hookwrap"), "disabled", True)

    @hw.wrap_model
    def passes(request: hw.ModelRequest) -> Any:
        response = yield request
        return response

    def down(messages: Any) -> str:
        raise ConnectionError("down")

    recovered = hw.model(down, use=[Fallback(models=[lambda messages: "b"]), passes])
    assert cycles_left(lambda: recovered(USER)) == 0
