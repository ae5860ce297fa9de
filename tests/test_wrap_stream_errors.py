"""A stream a `wrap_model` hook makes runs the hook's code as the caller reads it, after its
layer returned. An error that code raises is the hook's all the same: it propagates with
the note naming the hook, and a fail-open hook's is logged and the hook left out, the
stream going on with what the inner call gives. An error of the model's, read through the
hook's stream, passes as it came (no note, never forgiven)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.testing import FakeProvider

USER = [{"role": "user", "content": "hi"}]
WORDS = ["one ", "two ", "three"]


def words(messages: Any) -> Iterator[str]:
    yield from WORDS


async def awords(messages: Any) -> AsyncIterator[str]:
    for word in WORDS:
        yield word


def broken(messages: Any) -> Iterator[str]:
    yield "one "
    raise ConnectionError("model went away")


async def abroken(messages: Any) -> AsyncIterator[str]:
    yield "one "
    raise ConnectionError("model went away")


def hooks(fail_open: bool) -> dict[str, list[Any]]:
    """Stream hooks raising at each point, by shape: (sync hooks, async hooks)."""

    @hw.wrap_model(fail_open=fail_open)
    def before(request: hw.ModelRequest, call_next: Any) -> Iterator[hw.Chunk]:
        raise RuntimeError("before")
        yield from call_next(request)

    @hw.wrap_model(fail_open=fail_open)
    def midway(request: hw.ModelRequest, call_next: Any) -> Iterator[hw.Chunk]:
        for chunk in call_next(request):
            yield chunk
            raise RuntimeError("midway")

    @hw.wrap_model(fail_open=fail_open)
    def after(request: hw.ModelRequest, call_next: Any) -> Iterator[hw.Chunk]:
        yield from call_next(request)
        raise RuntimeError("after")

    @hw.wrap_model(fail_open=fail_open)
    def generator_form(request: hw.ModelRequest) -> Any:
        stream = yield request

        def counted() -> Iterator[hw.Chunk]:
            yield from stream
            raise RuntimeError("generator_form")

        return counted()

    @hw.wrap_model(fail_open=fail_open)
    def agenerator_form(request: hw.ModelRequest) -> Any:
        stream = yield request

        async def counted() -> AsyncIterator[hw.Chunk]:
            async for chunk in stream:
                yield chunk
            raise RuntimeError("agenerator_form")

        return counted()

    @hw.wrap_model(fail_open=fail_open)
    async def abefore(request: hw.ModelRequest, call_next: Any) -> AsyncIterator[hw.Chunk]:
        raise RuntimeError("abefore")
        yield

    @hw.wrap_model(fail_open=fail_open)
    async def amidway(request: hw.ModelRequest, call_next: Any) -> AsyncIterator[hw.Chunk]:
        async for chunk in await call_next(request):
            yield chunk
            raise RuntimeError("amidway")

    @hw.wrap_model(fail_open=fail_open)
    async def aafter(request: hw.ModelRequest, call_next: Any) -> AsyncIterator[hw.Chunk]:
        async for chunk in await call_next(request):
            yield chunk
        raise RuntimeError("aafter")

    return {
        "sync": [before, midway, after, generator_form],
        "async": [abefore, amidway, aafter, agenerator_form],
    }


def read(target: Any, hook: Any, is_async: bool) -> list[str]:
    stream = hw.model(target, use=[hook])(USER)
    if not is_async:
        return list(stream)

    async def pull() -> list[str]:
        return [item async for item in stream]

    return asyncio.run(pull())


def _name(hook: Any) -> str:
    return hook.__hookwrap__.name.rsplit(".", 1)[-1]


@pytest.mark.parametrize("is_async", [False, True])
def test_an_error_a_hooks_stream_raises_is_noted_as_that_hooks(is_async: bool) -> None:
    for hook in hooks(fail_open=False)["async" if is_async else "sync"]:
        with pytest.raises(RuntimeError) as caught:
            read(awords if is_async else words, hook, is_async)
        name = _name(hook)
        assert str(caught.value) == name
        notes = getattr(caught.value, "__notes__", [])
        assert len(notes) == 1
        assert f"wrap_model hook '{hook.__hookwrap__.name}'" in notes[0]


@pytest.mark.parametrize("is_async", [False, True])
def test_a_fail_open_hooks_stream_that_fails_is_left_out_and_the_stream_goes_on(
    is_async: bool, caplog: pytest.LogCaptureFixture
) -> None:
    for hook in hooks(fail_open=True)["async" if is_async else "sync"]:
        caplog.clear()
        with caplog.at_level(logging.ERROR, logger="hookwrap"):
            assert read(awords if is_async else words, hook, is_async) == WORDS, hook
        assert [r.getMessage() for r in caplog.records] == [
            f"fail-open wrap_model hook '{hook.__hookwrap__.name}' (priority 0) failed; skipped"
        ]


@pytest.mark.parametrize("fail_open", [False, True])
@pytest.mark.parametrize("is_async", [False, True])
def test_the_models_error_read_through_a_hooks_stream_passes_as_it_came(
    is_async: bool, fail_open: bool
) -> None:
    ended: list[str] = []

    @hw.wrap_model(fail_open=fail_open)
    def passes(request: hw.ModelRequest, call_next: Any) -> Iterator[hw.Chunk]:
        yield from call_next(request)

    @hw.wrap_model(fail_open=fail_open)
    async def apasses(request: hw.ModelRequest, call_next: Any) -> AsyncIterator[hw.Chunk]:
        async for chunk in await call_next(request):
            yield chunk

    @hw.on_error
    def failed(info: hw.ErrorInfo) -> None:
        ended.append(type(info.error).__name__)

    got: list[str] = []
    stream = hw.model(
        abroken if is_async else broken, use=[apasses if is_async else passes, failed]
    )

    async def pull() -> None:
        async for item in stream(USER):
            got.append(item)

    with pytest.raises(ConnectionError, match="model went away") as caught:
        if is_async:
            asyncio.run(pull())
        else:
            got.extend(stream(USER))
    assert got == ["one "]
    assert not getattr(caught.value, "__notes__", None)
    assert ended == ["ConnectionError"]


@pytest.mark.parametrize("is_async", [False, True])
def test_a_hooks_stream_left_early_is_closed_at_once(is_async: bool) -> None:
    closed: list[str] = []

    @hw.wrap_model(fail_open=True)
    def watched(request: hw.ModelRequest, call_next: Any) -> Iterator[hw.Chunk]:
        try:
            yield from call_next(request)
        finally:
            closed.append("hook")

    @hw.wrap_model(fail_open=True)
    async def awatched(request: hw.ModelRequest, call_next: Any) -> AsyncIterator[hw.Chunk]:
        try:
            async for chunk in await call_next(request):
                yield chunk
        finally:
            closed.append("hook")

    if is_async:

        async def first() -> str:
            stream = hw.model(awords, use=[awatched])(USER)
            async for item in stream:
                await stream.aclose()  # type: ignore[attr-defined]
                return str(item)
            return ""

        assert asyncio.run(first()) == "one "
    else:
        stream = hw.model(words, use=[watched])(USER)
        assert next(stream) == "one "
        stream.close()  # type: ignore[attr-defined]
    assert closed == ["hook"]


def test_a_fail_open_stream_hook_that_fails_through_an_sdk_leaves_the_answer_whole(
    caplog: pytest.LogCaptureFixture,
) -> None:
    pytest.importorskip("openai")
    ended: list[str] = []

    @hw.wrap_model(fail_open=True)
    def audit(request: hw.ModelRequest, call_next: Any) -> Iterator[hw.Chunk]:
        yield from call_next(request)
        raise RuntimeError("audit store down")

    @hw.on_finish
    def finished(info: hw.FinishInfo) -> None:
        ended.append("on_finish")

    client = hw.wrap(FakeProvider("Hello there").openai(), use=[audit, finished])
    with caplog.at_level(logging.ERROR, logger="hookwrap"):
        stream = client.chat.completions.create(model="m", messages=USER, stream=True)
        text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    assert text == "Hello there"
    assert ended == ["on_finish"]
    assert "audit store down" in caplog.text


@pytest.mark.parametrize("is_async", [False, True])
def test_a_fail_open_hooks_error_after_the_models_leaves_the_models_error(is_async: bool) -> None:
    """A hook whose own clean-up fails while the model's error passes through it is
    forgiven, but the stream it cut short is no whole answer: the model's error comes out."""

    @hw.wrap_model(fail_open=True)
    def audit(request: hw.ModelRequest, call_next: Any) -> Iterator[hw.Chunk]:
        try:
            yield from call_next(request)
        finally:
            raise RuntimeError("audit store down")

    @hw.wrap_model(fail_open=True)
    async def aaudit(request: hw.ModelRequest, call_next: Any) -> AsyncIterator[hw.Chunk]:
        try:
            async for chunk in await call_next(request):
                yield chunk
        finally:
            raise RuntimeError("audit store down")

    with pytest.raises(ConnectionError, match="model went away") as caught:
        read(abroken if is_async else broken, aaudit if is_async else audit, is_async)
    assert not getattr(caught.value, "__notes__", None)


@pytest.mark.parametrize("fail_open_outer", [False, True])
@pytest.mark.parametrize("is_async", [False, True])
def test_a_stream_a_generator_form_hook_responds_with_is_that_hooks(
    is_async: bool, fail_open_outer: bool
) -> None:
    @hw.wrap_model
    def responds(request: hw.ModelRequest) -> Any:
        stream = yield request

        def mine() -> Iterator[hw.Chunk]:
            yield from stream
            raise RuntimeError("its own stream failed")

        async def amine() -> AsyncIterator[hw.Chunk]:
            async for chunk in stream:
                yield chunk
            raise RuntimeError("its own stream failed")

        yield hw.Respond(amine() if is_async else mine())

    @hw.wrap_model(fail_open=fail_open_outer)
    def outer(request: hw.ModelRequest, call_next: Any) -> Any:
        return call_next(request)

    @hw.wrap_model(fail_open=fail_open_outer)
    async def aouter(request: hw.ModelRequest, call_next: Any) -> Any:
        return await call_next(request)

    stream = hw.model(awords if is_async else words, use=[aouter if is_async else outer, responds])

    async def pull() -> list[str]:
        return [item async for item in stream(USER)]

    with pytest.raises(RuntimeError, match="its own stream failed") as caught:
        asyncio.run(pull()) if is_async else list(stream(USER))
    notes = getattr(caught.value, "__notes__", [])
    assert len(notes) == 1
    assert "wrap_model hook 'test_a_stream_a_generator_form_hook" in notes[0]
    assert "responds'" in notes[0]


def test_a_fail_open_hook_that_swallowed_the_models_error_and_then_failed_leaves_that_error() -> (
    None
):
    @hw.wrap_model(fail_open=True)
    def apologises(request: hw.ModelRequest) -> Any:
        try:
            yield request
        except ConnectionError:

            def sorry() -> Iterator[hw.Chunk]:
                yield hw.Chunk("text", "sorry, ")
                raise RuntimeError("its own stream failed")

            return sorry()
        return None

    def down(messages: Any, stream: bool = False) -> str:
        raise ConnectionError("model down")  # as it opens its stream

    got: list[str] = []
    with pytest.raises(ConnectionError, match="model down"):
        got.extend(hw.model(down, use=[apologises])(USER, stream=True))
    assert got == ["sorry, "]
