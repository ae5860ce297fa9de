"""A `wrap_model` hook that is a generator function taking `call_next` answers a stream,
always (SPEC §1), so its `call_next` gives a stream, always: an inner whole answer (a
cache's, or the model's in a call whose shape only the model decides) comes as the stream
of its chunks. It was Python's "'ModelResponse' object is not iterable" (a fail-open such
hook left an empty stream). A caller that waits for a whole answer refuses the hook's
stream at the call, and an agent (or a `Fallback`) reads it whole, also from the hooks of
a model wrapped on its own."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.testing import FakeProvider

USER = [{"role": "user", "content": "hi"}]


@hw.wrap_model
def passes_on(request: hw.ModelRequest, call_next: Any) -> Iterator[hw.Chunk]:
    yield from call_next(request)


@hw.wrap_model
async def apasses_on(request: hw.ModelRequest, call_next: Any) -> AsyncIterator[hw.Chunk]:
    async for chunk in await call_next(request):
        yield chunk


@hw.wrap_model
def cache(request: hw.ModelRequest, call_next: Any) -> hw.ModelResponse:
    return hw.ModelResponse(hw.Message.assistant("cached"))


@hw.wrap_model
async def acache(request: hw.ModelRequest, call_next: Any) -> hw.ModelResponse:
    return hw.ModelResponse(hw.Message.assistant("cached"))


def whole(messages):  # type: ignore[no-untyped-def]
    return "answer"  # (no annotation: only its answer tells the call's shape)


async def awhole(messages):  # type: ignore[no-untyped-def]
    return "answer"


def test_a_stream_hook_given_a_whole_answer_streams_it() -> None:
    """The model answered whole, in a call whose shape only it decides: the hook, which
    answers a stream, is given the answer as one, and the call streams."""
    assert list(hw.model(whole, use=[passes_on])(USER)) == ["answer"]


def test_an_async_stream_hook_given_a_whole_answer_streams_it() -> None:
    async def main() -> list[str]:
        return [text async for text in await hw.model(awhole, use=[apasses_on])(USER)]

    assert asyncio.run(main()) == ["answer"]


def test_a_fail_open_stream_hook_given_a_whole_answer_passes_it_on() -> None:
    """It never breaks the call: the answer reaches the caller, who holds the hook's stream,
    as a stream (it was an empty one: the answer was lost)."""

    @hw.wrap_model(fail_open=True)
    def audit(request: hw.ModelRequest, call_next: Any) -> Iterator[hw.Chunk]:
        yield from call_next(request)

    assert list(hw.model(whole, use=[audit])(USER)) == ["answer"]


def test_an_async_fail_open_stream_hook_given_a_whole_answer_passes_it_on() -> None:
    @hw.wrap_model(fail_open=True)
    async def audit(request: hw.ModelRequest, call_next: Any) -> AsyncIterator[hw.Chunk]:
        async for chunk in await call_next(request):
            yield chunk

    async def main() -> list[str]:
        return [text async for text in await hw.model(awhole, use=[audit])(USER)]

    assert asyncio.run(main()) == ["answer"]


def test_a_fail_open_stream_hook_is_left_out_of_a_call_that_waits_whole() -> None:
    """Refused when its layer returns its stream (the caller waits for a whole answer),
    it is left out: the whole answer, as if it were not there."""

    @hw.wrap_model(fail_open=True)
    def audit(request: hw.ModelRequest, call_next: Any) -> Iterator[hw.Chunk]:
        yield from call_next(request)

    assert hw.model(answer, use=[audit])(USER) == "whole"
    client = hw.wrap(FakeProvider(["hello"]).openai(), use=[audit])
    completion = client.chat.completions.create(model="m", messages=USER)
    assert completion.choices[0].message.content == "hello"


@hw.wrap_model
def upper(request: hw.ModelRequest, call_next: Any) -> Iterator[hw.Chunk]:
    for chunk in call_next(request):
        yield chunk.replace(text=chunk.text.upper())


@hw.wrap_model
async def aupper(request: hw.ModelRequest, call_next: Any) -> AsyncIterator[hw.Chunk]:
    async for chunk in await call_next(request):
        yield chunk.replace(text=chunk.text.upper())


def answer(messages: Any) -> str:
    return "whole"


async def aanswer(messages: Any) -> str:
    return "whole"


def _needs(sdk: str) -> None:
    if sdk.startswith("google"):  # (not installed on every Python this runs on)
        pytest.importorskip("google.genai")


@pytest.mark.parametrize("sdk", ["function", "openai", "anthropic", "google"])
def test_an_agent_reads_a_stream_hooks_answer_for_a_whole_call(sdk: str) -> None:
    provider = FakeProvider(["hello", "hello"])  # one for each agent
    models = {
        "function": lambda: answer,
        "openai": lambda: (provider.openai(), "m"),
        "anthropic": lambda: (provider.anthropic(), "m"),
        "google": lambda: (provider.genai(), "m"),
    }
    _needs(sdk)
    model = models[sdk]()
    expected = "WHOLE" if sdk == "function" else "HELLO"
    assert hw.Agent(model, use=[upper]).run("hi").text == expected
    events = list(hw.Agent(model, use=[upper]).stream("hi"))
    assert events[-1].result is not None
    assert events[-1].result.text == expected


def test_an_async_agent_reads_a_stream_hooks_answer_for_a_whole_call() -> None:
    assert asyncio.run(hw.Agent(aanswer, use=[aupper]).arun("hi")).text == "WHOLE"


@pytest.mark.parametrize("sdk", ["function", "openai", "anthropic", "google"])
def test_an_agent_reads_the_stream_of_a_model_wrapped_with_a_replay_of_its_own(sdk: str) -> None:
    """The model's own hooks run inside the agent's call, whose caller reads either."""

    @hw.wrap_model
    def replay(request: hw.ModelRequest, call_next: Any) -> Any:
        return iter([hw.Chunk("text", "cached "), hw.Chunk("text", "answer")])

    provider = FakeProvider(["hello"])
    models = {
        "function": lambda: hw.model(answer, use=[replay]),
        "openai": lambda: (hw.wrap(provider.openai(), use=[replay]), "m"),
        "anthropic": lambda: (hw.wrap(provider.anthropic(), use=[replay]), "m"),
        "google": lambda: (hw.wrap(provider.genai(), use=[replay]), "m"),
    }
    _needs(sdk)
    assert hw.Agent(models[sdk]()).run("hi").text == "cached answer"


def test_a_fallback_alternative_wrapped_with_a_stream_hook_of_its_own_answers() -> None:
    from hookwrap.middleware import Fallback

    def down(messages: Any) -> str:
        raise ConnectionError("down")

    alternative = hw.model(answer, use=[upper])
    assert hw.model(down, use=[Fallback(models=[alternative])])(USER) == "WHOLE"


def test_a_stream_hook_on_a_function_annotated_whole_is_refused_at_the_call() -> None:
    """(Refused since the caller's wait for a whole answer is known: passes before.)"""

    def annotated(messages: Any) -> str:
        return "answer"

    with pytest.raises(TypeError, match="this call does not stream"):
        hw.model(annotated, use=[passes_on])(USER)


def test_an_inner_whole_answer_in_a_streamed_call_reaches_a_stream_hook_as_a_stream() -> None:
    def model(messages: Any) -> Iterator[str]:
        yield "never asked"

    assert list(hw.model(model, use=[passes_on, cache])(USER)) == ["cached"]


def test_an_inner_whole_answer_in_an_async_streamed_call_reaches_a_stream_hook() -> None:
    async def model(messages: Any) -> AsyncIterator[str]:
        yield "never asked"

    async def main() -> list[str]:
        return [text async for text in hw.model(model, use=[apasses_on, acache])(USER)]

    assert asyncio.run(main()) == ["cached"]


def test_an_inner_whole_answer_reaches_a_stream_hook_of_an_sdk_stream() -> None:
    provider = FakeProvider(["from the model"])
    client = hw.wrap(provider.openai(), use=[passes_on, cache])
    stream = client.chat.completions.create(model="m", messages=USER, stream=True)
    text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    assert text == "cached"
    assert provider.requests == []


def test_a_fail_open_stream_hook_failing_at_once_leaves_the_inner_whole_answer_streamed() -> None:
    @hw.wrap_model(fail_open=True)
    def flaky(request: hw.ModelRequest, call_next: Any) -> Iterator[hw.Chunk]:
        raise RuntimeError("audit down")
        yield  # (a generator function)

    def model(messages: Any) -> Iterator[str]:
        yield "never asked"

    assert list(hw.model(model, use=[flaky, cache])(USER)) == ["cached"]
    client = hw.wrap(FakeProvider(["from the model"]).openai(), use=[flaky, cache])
    stream = client.chat.completions.create(model="m", messages=USER, stream=True)
    assert "".join(c.choices[0].delta.content or "" for c in stream if c.choices) == "cached"


def test_an_agent_read_through_a_stream_hook_names_the_model_that_answered() -> None:
    seen: list[str | None] = []

    @hw.after_model
    def record(request: hw.ModelRequest, response: hw.ModelResponse) -> None:
        seen.append(response.model)

    def model(messages: Any) -> hw.ModelResponse:
        return hw.ModelResponse(hw.Message.assistant("hi"), model="m-2024-01")

    hw.Agent(model, use=[passes_on, record]).run("hi")
    assert seen == ["m-2024-01"]


def test_an_agent_reaches_a_models_own_hooks_through_a_wrapper_with_none() -> None:
    @hw.wrap_model
    def replay(request: hw.ModelRequest, call_next: Any) -> Any:
        return iter([hw.Chunk("text", "cached "), hw.Chunk("text", "answer")])

    inner = hw.model(answer, use=[replay])
    assert hw.Agent(hw.model(inner)).run("hi").text == "cached answer"


def test_retry_outside_a_stream_hook_keeps_the_call_as_it_is_without_it() -> None:
    """Retry reads the first chunk before it answers: by then the model answered whole,
    which the stream hook gave on as a stream; the call streams, as without Retry."""
    from hookwrap.middleware import Retry

    assert list(hw.model(whole, use=[Retry(initial_delay=0), upper])(USER)) == ["ANSWER"]
