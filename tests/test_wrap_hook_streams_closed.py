"""Every stream the model opens in a call is closed when the call ends (SPEC §4), also one a
wrap_model hook opened and did not pass on: the hook answered in its place, called the model
again, or failed. The real SDKs against the fake provider, whose `closed` counts the HTTP
bodies closed before their end (a body no one reads, never closed, holds its connection)."""

# google-genai's signatures name `PIL.Image.Image`; without Pillow installed pyright sees
# Unknown in every `generate_content`, so only that report is off here.
# pyright: reportUnknownMemberType=false

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Generator, Iterator
from typing import Any

import pytest

import hookwrap as hw
from hookwrap.testing import FakeProvider

pytestmark = pytest.mark.usefixtures("no_gc")  # "at once": not the collector's doing

USER: Any = [{"role": "user", "content": "hi"}]


@hw.wrap_model
def whole_instead(request: hw.ModelRequest) -> Any:
    yield request  # opens the model's stream...
    return "canned answer"  # ...and answers on its own


@hw.wrap_model
def chunks_instead(request: hw.ModelRequest) -> Any:
    yield request
    return iter([hw.Chunk("text", "canned answer")])


@hw.wrap_model
async def achunks_instead(request: hw.ModelRequest, call_next: Any) -> Any:
    await call_next(request)

    async def mine() -> AsyncIterator[hw.Chunk]:
        yield hw.Chunk("text", "canned answer")

    return mine()


@hw.wrap_model
def call_twice(request: hw.ModelRequest) -> Generator[hw.ModelRequest, Any, Any]:
    yield request  # a hand-written retry: the first stream is dropped unread
    return (yield request)


@hw.wrap_model
def fail_after(request: hw.ModelRequest) -> Any:
    yield request
    raise RuntimeError("policy says no")


def _stream(provider: FakeProvider, api: str, hooks: list[Any]) -> Iterator[Any]:
    if api == "openai":
        wrapped = hw.wrap(provider.openai(), use=hooks)
        return wrapped.chat.completions.create(model="m", messages=USER, stream=True)
    wrapped_a = hw.wrap(provider.anthropic(), use=hooks)
    return wrapped_a.messages.create(model="m", max_tokens=5, messages=USER, stream=True)


async def _astream(provider: FakeProvider, api: str, hooks: list[Any]) -> AsyncIterator[Any]:
    if api == "openai":
        wrapped = hw.wrap(provider.openai(True), use=hooks)
        return await wrapped.chat.completions.create(model="m", messages=USER, stream=True)
    if api == "anthropic":
        wrapped_a = hw.wrap(provider.anthropic(True), use=hooks)
        return await wrapped_a.messages.create(model="m", max_tokens=5, messages=USER, stream=True)
    pytest.importorskip("google.genai")
    wrapped_g = hw.wrap(provider.genai(), use=hooks)
    return await wrapped_g.aio.models.generate_content_stream(model="m", contents="hi")


SYNC_APIS = ["openai", "anthropic"]  # a sync Gemini stream sends its request when first read
ASYNC_APIS = ["openai", "anthropic", "gemini"]


@pytest.mark.parametrize("api", SYNC_APIS)
@pytest.mark.parametrize("hook", [whole_instead, chunks_instead])
def test_a_stream_answered_in_place_of_is_closed(api: str, hook: Any) -> None:
    provider = FakeProvider(["hello there general kenobi"])
    assert len(list(_stream(provider, api, [hook]))) > 0
    assert len(provider.requests) == 1
    assert provider.closed == 1


@pytest.mark.parametrize("api", ASYNC_APIS)
@pytest.mark.parametrize("hook", [whole_instead, achunks_instead])
def test_a_stream_answered_in_place_of_is_closed_async(api: str, hook: Any) -> None:
    provider = FakeProvider(["hello there general kenobi"])

    async def main() -> None:
        got = [item async for item in await _astream(provider, api, [hook])]
        assert got
        assert len(provider.requests) == 1
        assert provider.closed == 1  # at once: no event loop step in between

    asyncio.run(main())


@pytest.mark.parametrize("api", SYNC_APIS)
def test_a_retry_closes_the_stream_it_dropped(api: str) -> None:
    provider = FakeProvider(["hello there general kenobi"] * 2)
    list(_stream(provider, api, [call_twice]))
    assert len(provider.requests) == 2
    assert provider.closed == 1  # the first; the second was read to its end


@pytest.mark.parametrize("api", ASYNC_APIS)
def test_a_retry_closes_the_stream_it_dropped_async(api: str) -> None:
    provider = FakeProvider(["hello there general kenobi"] * 2)

    async def main() -> None:
        [item async for item in await _astream(provider, api, [call_twice])]
        assert len(provider.requests) == 2
        assert provider.closed == 1

    asyncio.run(main())


@pytest.mark.parametrize("api", ASYNC_APIS)
def test_a_hook_failing_after_the_model_answered_closes_its_stream_async(api: str) -> None:
    """Gemini's async stream is the SDK's generator, holding the HTTP response from the start:
    closed before its first pull, it closes nothing; hookwrap closes the response itself."""
    provider = FakeProvider(["hello there general kenobi"])

    async def main() -> None:
        with pytest.raises(RuntimeError, match="policy says no"):
            [item async for item in await _astream(provider, api, [fail_after])]
        assert len(provider.requests) == 1
        assert provider.closed == 1

    asyncio.run(main())


class _Native:
    """A target's stream with a `close` of its own (no generator: nothing closes it on drop)."""

    def __init__(self, closed: list[str]) -> None:
        self.items = iter(["a", "b"])
        self.closed = closed

    def __iter__(self) -> Iterator[str]:
        return self

    def __next__(self) -> str:
        return next(self.items)

    def __aiter__(self) -> AsyncIterator[str]:
        return self

    async def __anext__(self) -> str:
        for item in self.items:
            return item
        raise StopAsyncIteration

    def close(self) -> None:
        self.closed.append("close")

    async def aclose(self) -> None:
        self.closed.append("aclose")


def test_a_stream_answered_as_a_whole_is_closed() -> None:
    """A call that returns a whole answer closes the stream a hook opened in it too."""
    closed: list[str] = []

    def model(messages: list[dict[str, str]]) -> Any:
        return _Native(closed)

    async def amodel(messages: list[dict[str, str]]) -> Any:
        return _Native(closed)

    assert hw.wrap(model, use=[whole_instead])(messages=USER) == "canned answer"
    assert closed == ["close"]
    answer = asyncio.run(hw.wrap(amodel, use=[whole_instead])(messages=USER))
    assert answer == "canned answer"
    assert closed == ["close", "aclose"]


def test_a_stream_a_hook_still_reads_in_a_task_of_its_own_ends_the_call_cleanly() -> None:
    """Closing the model's stream at the call's end leaves one another task is reading to
    that task, rather than failing the caller's finished stream."""
    finished: list[Any] = []

    @hw.on_finish
    def done(info: hw.FinishInfo) -> None:
        finished.append(info.error)

    @hw.wrap_model
    async def first_sentence(request: hw.ModelRequest, call_next: Any) -> Any:
        stream = await call_next(request)
        queue: asyncio.Queue[Any] = asyncio.Queue()

        async def pump() -> None:
            async for chunk in stream:
                await queue.put(chunk)
            await queue.put(None)

        task = asyncio.create_task(pump())

        async def mine() -> Any:
            while (chunk := await queue.get()) is not None:
                yield chunk
                if chunk.text.endswith("."):
                    task.cancel()
                    return

        return mine()

    async def llm(messages: list[Any]) -> Any:
        for piece in ["Hi there.", " more", " text"]:
            await asyncio.sleep(0.01)
            yield piece

    ask = hw.model(llm, use=[first_sentence, done])

    async def main() -> list[str]:
        return [piece async for piece in ask([{"role": "user", "content": "hi"}])]

    assert asyncio.run(main()) == ["Hi there."]
    assert finished == [None]
