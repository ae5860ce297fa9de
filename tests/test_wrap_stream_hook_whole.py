"""A `wrap_model` hook that is a generator function taking `call_next` answers a stream,
always (SPEC §1). When its `call_next` gives a whole answer: in a streamed call (an inner
hook answered whole) the answer is given to it as a stream; in a call that does not stream,
it is the hook's `TypeError`, said clearly (it was Python's "'ModelResponse' object is not
iterable"); a fail-open one, which never breaks the call, is given it as a stream (its
stream was empty, the answer lost)."""

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


def _says_it(message: str, hook: Any) -> None:
    assert f"wrap_model hook '{hook.__hookwrap__.name}'" in message
    assert "is a generator function" in message
    assert "this call does not stream" in message


def test_a_stream_hook_given_a_whole_answer_says_so() -> None:
    stream = hw.model(whole, use=[passes_on])(USER)
    with pytest.raises(TypeError) as caught:
        list(stream)
    _says_it(str(caught.value), passes_on)


def test_an_async_stream_hook_given_a_whole_answer_says_so() -> None:
    async def main() -> None:
        stream = await hw.model(awhole, use=[apasses_on])(USER)
        with pytest.raises(TypeError) as caught:
            [chunk async for chunk in stream]
        _says_it(str(caught.value), apasses_on)

    asyncio.run(main())


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
