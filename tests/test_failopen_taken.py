"""A fail-open `wrap_model` hook that fails while streaming is left out, and the caller gets
the rest of the stream its `call_next` gave, from where the hook left it: the chunk it was
handling when it failed (the last it took, if it gave nothing out since) goes on first, so
a forgiven hook does not make that text vanish. Chunks it took before are its own: one it
dropped (a filter) or held back stays out. A hook that fails in its own body, before its
stream is read, is left out as a whole: every chunk it read goes on."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from test_wrap_stream_errors import USER, WORDS, awords, read, words

import hookwrap as hw
from hookwrap.testing import FakeProvider


def upper(chunk: hw.Chunk) -> hw.Chunk:
    if chunk.text == "two ":
        raise RuntimeError("hook bug")
    return chunk.replace(text=chunk.text.upper())


def failing_on_two() -> dict[str, list[Any]]:
    """Hooks that upper-case the chunks and fail on the second, one per form and shape."""

    @hw.wrap_model(fail_open=True)
    def call_next_form(request: hw.ModelRequest, call_next: Any) -> Iterator[hw.Chunk]:
        for chunk in call_next(request):
            yield upper(chunk)

    @hw.wrap_model(fail_open=True)
    def generator_form(request: hw.ModelRequest) -> Any:
        stream = yield request
        return (upper(chunk) for chunk in stream)

    @hw.wrap_model(fail_open=True)
    def async_generator_form(request: hw.ModelRequest) -> Any:
        stream = yield request

        async def made() -> AsyncIterator[hw.Chunk]:
            async for chunk in stream:
                yield upper(chunk)

        return made()

    @hw.wrap_model(fail_open=True)
    async def acall_next_form(request: hw.ModelRequest, call_next: Any) -> AsyncIterator[hw.Chunk]:
        async for chunk in await call_next(request):
            yield upper(chunk)

    @hw.wrap_model(fail_open=True)
    async def agenerator_form(request: hw.ModelRequest) -> Any:
        stream = yield request

        async def made() -> AsyncIterator[hw.Chunk]:
            async for chunk in stream:
                yield upper(chunk)

        yield hw.Respond(made())

    return {
        "sync": [call_next_form, generator_form],
        "async": [acall_next_form, async_generator_form, agenerator_form],
    }


@pytest.mark.parametrize("is_async", [False, True])
def test_the_chunk_a_fail_open_hook_failed_on_goes_on_as_it_came(
    is_async: bool, caplog: pytest.LogCaptureFixture
) -> None:
    for hook in failing_on_two()["async" if is_async else "sync"]:
        caplog.clear()
        with caplog.at_level(logging.ERROR, logger="hookwrap"):
            got = read(awords if is_async else words, hook, is_async)
        assert got == ["ONE ", "two ", "three"], hook
        assert "hook bug" in caplog.text


@pytest.mark.parametrize("is_async", [False, True])
def test_of_the_chunks_a_fail_open_hook_held_back_the_one_it_handled_goes_on(
    is_async: bool,
) -> None:
    """A hook that takes chunks ahead (a look-ahead window, say) and fails: the chunk it
    was handling goes on, the ones it held before stay its own."""

    @hw.wrap_model(fail_open=True)
    def ahead(request: hw.ModelRequest, call_next: Any) -> Iterator[hw.Chunk]:
        stream = call_next(request)
        next(stream)
        next(stream)
        raise RuntimeError("window broke")
        yield  # a generator

    @hw.wrap_model(fail_open=True)
    async def aahead(request: hw.ModelRequest, call_next: Any) -> AsyncIterator[hw.Chunk]:
        stream = await call_next(request)
        await stream.__anext__()
        await stream.__anext__()
        raise RuntimeError("window broke")
        yield  # a generator

    got = read(awords if is_async else words, aahead if is_async else ahead, is_async)
    assert got == ["two ", "three"]


@pytest.mark.parametrize("is_async", [False, True])
def test_a_chunk_the_hook_answered_for_is_not_sent_twice(is_async: bool) -> None:
    """A chunk the hook gave something out for (here an expansion) is its: failing before
    taking the next leaves nothing to repeat. (This held before chunks taken were handed
    on too; it guards that they are not handed on twice.)"""

    @hw.wrap_model(fail_open=True)
    def split(request: hw.ModelRequest, call_next: Any) -> Iterator[hw.Chunk]:
        for chunk in call_next(request):
            yield chunk.replace(text="1a ")
            yield chunk.replace(text="1b ")
            raise RuntimeError("after the first")

    @hw.wrap_model(fail_open=True)
    async def asplit(request: hw.ModelRequest, call_next: Any) -> AsyncIterator[hw.Chunk]:
        async for chunk in await call_next(request):
            yield chunk.replace(text="1a ")
            yield chunk.replace(text="1b ")
            raise RuntimeError("after the first")

    got = read(awords if is_async else words, asplit if is_async else split, is_async)
    assert got == ["1a ", "1b ", "two ", "three"]


@pytest.mark.parametrize("is_async", [False, True])
def test_chunks_taken_before_the_hooks_layer_failed_all_go_on(is_async: bool) -> None:
    """A hook that reads chunks in its own body (two, or the whole stream), then fails
    before returning a stream, gave none out: the whole stream goes on, in order, as SPEC
    says of a fail-open hook failing after call_next returned."""

    def peeks(n: int | None) -> Any:
        @hw.wrap_model(fail_open=True)
        def peek(request: hw.ModelRequest, call_next: Any) -> Any:
            stream = call_next(request)
            for _ in range(n) if n is not None else iter(int, 1):
                if next(stream, None) is None:
                    break
            raise RuntimeError("peeked")

        @hw.wrap_model(fail_open=True)
        async def apeek(request: hw.ModelRequest, call_next: Any) -> Any:
            stream = await call_next(request)
            for _ in range(n) if n is not None else iter(int, 1):
                if await anext(stream, None) is None:
                    break
            raise RuntimeError("peeked")

        return apeek if is_async else peek

    @hw.wrap_model(fail_open=True)
    def buffers(request: hw.ModelRequest) -> Any:
        stream = yield request
        list(stream)
        raise RuntimeError("buffered")

    for hook in (peeks(1), peeks(2), peeks(None), buffers):
        assert read(awords if is_async else words, hook, is_async) == WORDS, hook


@pytest.mark.parametrize("is_async", [False, True])
def test_closing_early_after_the_hook_failed_closes_the_model_at_once(is_async: bool) -> None:
    closed: list[str] = []

    def model(messages: Any) -> Iterator[str]:
        try:
            yield from WORDS
        finally:
            closed.append("model")

    async def amodel(messages: Any) -> AsyncIterator[str]:
        try:
            for word in WORDS:
                yield word
        finally:
            closed.append("model")

    hook = failing_on_two()["async" if is_async else "sync"][0]
    stream = hw.model(amodel if is_async else model, use=[hook])(USER)
    if is_async:

        async def two() -> list[str]:
            got = [await stream.__anext__(), await stream.__anext__()]
            await stream.aclose()
            return got

        assert asyncio.run(two()) == ["ONE ", "two "]
    else:
        assert [next(stream), next(stream)] == ["ONE ", "two "]
        stream.close()
    assert closed == ["model"]


def test_an_sdk_stream_keeps_the_chunk_a_fail_open_hook_failed_on() -> None:
    @hw.wrap_model(fail_open=True)
    def shout(request: hw.ModelRequest, call_next: Any) -> Iterator[hw.Chunk]:
        for n, chunk in enumerate(call_next(request)):
            if chunk.kind == "text" and n == 2:
                raise RuntimeError("hook bug")
            yield chunk

    client = hw.wrap(FakeProvider(["Hello there"], chunk_size=2).openai(), use=[shout])
    stream = client.chat.completions.create(model="m", messages=USER, stream=True)
    text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    assert text == "Hello there"


@pytest.mark.parametrize("is_async", [False, True])
def test_a_chunk_a_failing_filter_dropped_stays_out(is_async: bool) -> None:
    """A redactor that drops a chunk, then fails on the next: the dropped chunk was its
    answer, and is not let out; the one it failed on goes on."""

    def redact(stream: Any) -> Any:
        for chunk in stream:
            if chunk.text == "two ":
                continue  # dropped on purpose
            if chunk.text == "three":
                raise RuntimeError("redactor bug")
            yield chunk

    @hw.wrap_model(fail_open=True)
    def redactor(request: hw.ModelRequest, call_next: Any) -> Iterator[hw.Chunk]:
        return redact(call_next(request))

    @hw.wrap_model(fail_open=True)
    async def aredactor(request: hw.ModelRequest, call_next: Any) -> AsyncIterator[hw.Chunk]:
        async for chunk in await call_next(request):
            if chunk.text == "two ":
                continue
            if chunk.text == "three":
                raise RuntimeError("redactor bug")
            yield chunk

    got = read(awords if is_async else words, aredactor if is_async else redactor, is_async)
    assert got == ["one ", "three"]


@pytest.mark.parametrize("is_async", [False, True])
def test_a_hook_that_fails_after_reading_the_whole_stream_lets_nothing_out_again(
    is_async: bool,
) -> None:
    """A hook that trims the last chunk and fails once the stream ended was handling no
    chunk: nothing is sent twice, and what it trimmed stays out."""

    @hw.wrap_model(fail_open=True)
    def trims(request: hw.ModelRequest, call_next: Any) -> Iterator[hw.Chunk]:
        for chunk in call_next(request):
            if chunk.text != "three":
                yield chunk
        raise RuntimeError("after the stream")

    @hw.wrap_model(fail_open=True)
    async def atrims(request: hw.ModelRequest, call_next: Any) -> AsyncIterator[hw.Chunk]:
        async for chunk in await call_next(request):
            if chunk.text != "three":
                yield chunk
        raise RuntimeError("after the stream")

    got = read(awords if is_async else words, atrims if is_async else trims, is_async)
    assert got == ["one ", "two "]


@pytest.mark.parametrize("is_async", [False, True])
def test_a_refused_answer_after_reading_in_the_body_leaves_the_whole_stream(
    is_async: bool,
) -> None:
    """A hook whose body reads its call_next stream, then answers with what is refused (a
    list, no answer at all): it is skipped, and every chunk it read goes on."""

    @hw.wrap_model(fail_open=True)
    def listed(request: hw.ModelRequest, call_next: Any) -> Any:
        return list(call_next(request))

    @hw.wrap_model(fail_open=True)
    def nothing(request: hw.ModelRequest, call_next: Any) -> Any:
        stream = call_next(request)
        next(stream)
        next(stream)

    @hw.wrap_model(fail_open=True)
    async def alisted(request: hw.ModelRequest, call_next: Any) -> Any:
        return [chunk async for chunk in await call_next(request)]

    for hook in (alisted,) if is_async else (listed, nothing):
        assert read(awords if is_async else words, hook, is_async) == WORDS, hook
