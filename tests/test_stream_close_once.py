"""Closing a model's stream: exactly once, and exactly one terminal hook when closing it
fails; no error left to the event loop when a hook's own stream passes it on."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import hookwrap as hw

USER = [{"role": "user", "content": "hi"}]


def _terminal(events: list[Any]) -> list[Any]:
    @hw.on_finish
    def finished(info: Any) -> None:
        events.append("on_finish")

    @hw.on_error
    def failed(info: Any) -> None:
        events.append(("on_error", repr(info.error)))

    @hw.on_abort
    def aborted(info: Any) -> None:
        events.append(("on_abort", info.reason))

    return [finished, failed, aborted]


def _wrap_passing_on() -> Any:
    @hw.wrap_model
    def passing_on(request: hw.ModelRequest) -> Any:
        return (yield request)

    return passing_on


@pytest.mark.parametrize("wrapped", [False, True], ids=["plain", "wrap hook"])
def test_a_failing_cleanup_on_an_early_close_ends_the_run_with_its_error(wrapped: bool) -> None:
    events: list[Any] = []

    def model(messages: Any) -> Any:
        try:
            yield "a"
            yield "b"
        finally:
            raise ValueError("cleanup failed")

    def later() -> None:
        events.append("deferred")

    @hw.before_model
    def defer(request: hw.ModelRequest, ctx: hw.RunContext) -> None:
        ctx.defer(later)

    hooks = [*_terminal(events), defer, *([_wrap_passing_on()] if wrapped else [])]
    stream = hw.model(model, use=hooks)(USER)
    assert next(stream) == "a"
    with pytest.raises(ValueError, match="cleanup failed"):
        stream.close()
    assert events == [("on_error", "ValueError('cleanup failed')"), "deferred"]


def test_a_failing_cleanup_on_an_early_aclose_ends_the_run_with_its_error() -> None:
    events: list[Any] = []

    async def model(messages: Any) -> Any:
        try:
            yield "a"
            yield "b"
        finally:
            raise ValueError("cleanup failed")

    async def main() -> None:
        stream = hw.model(model, use=_terminal(events))(USER)
        assert await stream.__anext__() == "a"
        with pytest.raises(ValueError, match="cleanup failed"):
            await stream.aclose()

    asyncio.run(main())
    assert events == [("on_error", "ValueError('cleanup failed')")]


def _own_async_stream() -> Any:
    """A wrap hook handing on the model's chunks through an async generator of its own."""

    @hw.wrap_model
    async def own(request: hw.ModelRequest, call_next: Any) -> Any:
        stream = await call_next(request)

        async def chunks() -> Any:
            async for chunk in stream:
                yield chunk

        return chunks()

    return own


class Body:
    """An iterator over a connection, as an HTTP body is: close() gives it back, so a
    second close() would give back a connection another call holds by then."""

    def __init__(self, closes: list[str]) -> None:
        self.closes = closes
        self.left = ["1", "2", "3"]

    def __iter__(self) -> Body:
        return self

    def __next__(self) -> str:
        if not self.left:
            raise StopIteration
        return self.left.pop(0)

    def close(self) -> None:
        self.closes.append("close")


class AsyncBody:
    def __init__(self, closes: list[str]) -> None:
        self.closes = closes
        self.left = ["1", "2", "3"]

    def __aiter__(self) -> AsyncBody:
        return self

    async def __anext__(self) -> str:
        if not self.left:
            raise StopAsyncIteration
        return self.left.pop(0)

    async def aclose(self) -> None:
        self.closes.append("close")


@pytest.mark.parametrize("hooks", ["terminal", "on_chunk", "wrap"])
@pytest.mark.parametrize("early", [True, False], ids=["closed early", "read to its end"])
def test_the_model_stream_is_closed_once(hooks: str, early: bool) -> None:
    closes: list[str] = []
    use: list[Any] = {
        "terminal": _terminal([]),
        "on_chunk": [hw.on_chunk(lambda chunk: None)],
        "wrap": [_wrap_passing_on()],
    }[hooks]
    stream = hw.model(lambda messages: Body(closes), use=use)(USER)
    if early:
        next(stream)
        stream.close()
    else:
        assert list(stream) == ["1", "2", "3"]
    assert closes == ["close"]


@pytest.mark.parametrize("hooks", ["terminal", "on_chunk"])
@pytest.mark.parametrize("early", [True, False], ids=["closed early", "read to its end"])
def test_the_model_async_stream_is_closed_once(hooks: str, early: bool) -> None:
    closes: list[str] = []
    use: list[Any] = _terminal([]) if hooks == "terminal" else [hw.on_chunk(lambda chunk: None)]

    async def model(messages: Any) -> Any:
        return AsyncBody(closes)

    async def main() -> None:
        stream = await hw.model(model, use=use)(USER)
        if early:
            await stream.__anext__()
            await stream.aclose()
        else:
            assert [item async for item in stream] == ["1", "2", "3"]

    asyncio.run(main())
    assert closes == ["close"]


@pytest.mark.parametrize("terminal", [False, True])
def test_an_async_early_close_through_a_hooks_stream_leaves_the_loop_no_error(
    terminal: bool,
) -> None:
    cleaned: list[str] = []

    async def model(messages: Any) -> Any:
        try:
            yield "a"
            yield "b"
        finally:
            await asyncio.sleep(0.001)  # an HTTP body's cleanup awaits
            cleaned.append("model")

    passing_on = _own_async_stream()

    events: list[Any] = []
    errors: list[Any] = []

    async def main() -> None:
        asyncio.get_running_loop().set_exception_handler(lambda loop, c: errors.append(c))
        use = [passing_on, *(_terminal(events) if terminal else [])]
        stream = hw.model(model, use=use)(USER)
        assert await stream.__anext__() == "a"
        await stream.aclose()
        for _ in range(5):  # let the loop run what a finalizer scheduled
            await asyncio.sleep(0.002)

    asyncio.run(main())
    assert errors == []
    assert cleaned == ["model"]
    assert events == ([("on_abort", "closed by consumer")] if terminal else [])


def test_the_model_stream_is_closed_once_through_a_hooks_own_stream() -> None:
    kept: list[Any] = []

    @hw.wrap_model
    def own(request: hw.ModelRequest, call_next: Any) -> Any:
        stream = call_next(request)
        kept.append(stream)  # kept for a later look (a log, a cache): not freed at once
        return (chunk for chunk in stream)

    closes: list[str] = []
    stream = hw.model(lambda messages: Body(closes), use=[own])(USER)
    next(stream)
    stream.close()
    assert closes == ["close"]


def test_the_model_async_stream_is_closed_once_through_a_hooks_own_stream() -> None:
    own = _own_async_stream()
    closes: list[str] = []

    async def model(messages: Any) -> Any:
        return AsyncBody(closes)

    async def main() -> None:
        stream = await hw.model(model, use=[own])(USER)
        await stream.__anext__()
        await stream.aclose()

    asyncio.run(main())
    assert closes == ["close"]


@pytest.mark.parametrize("wrapped", [False, True], ids=["plain", "wrap hook"])
def test_an_async_cleanups_own_runtime_error_is_raised(wrapped: bool) -> None:
    """Only "already running" (another task closes it) is let be; a cleanup's own
    `RuntimeError` is the caller's, as in a sync stream."""
    events: list[Any] = []

    async def model(messages: Any) -> Any:
        try:
            yield "a"
            yield "b"
        finally:
            raise RuntimeError("connection pool corrupted")

    async def main() -> None:
        use = [*_terminal(events), *([_wrap_passing_on()] if wrapped else [])]
        stream = hw.model(model, use=use)(USER)
        assert await stream.__anext__() == "a"
        with pytest.raises(RuntimeError, match="connection pool corrupted"):
            await stream.aclose()

    asyncio.run(main())
    assert events == [("on_error", "RuntimeError('connection pool corrupted')")]
