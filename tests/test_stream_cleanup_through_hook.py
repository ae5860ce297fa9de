"""A stream closed early whose model cleanup fails, read through a wrap hook's own stream:
the cleanup error reaches the caller closing it and ends the one-call run with `on_error`
(as without the hook), instead of being lost in a finalizer while the run saw `on_abort`."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

import hookwrap as hw

USER = [{"role": "user", "content": "hi"}]


class CleanupFailed(Exception):
    pass


@pytest.fixture
def unraisable(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    caught: list[Any] = []
    monkeypatch.setattr(sys, "unraisablehook", caught.append)
    return caught


def _ends(events: list[tuple[str, Any]]) -> Any:
    @hw.on_finish
    def finished(info: Any) -> None:
        events.append(("finish", None))

    @hw.on_error
    def failed(info: Any) -> None:
        events.append(("error", info.error))

    @hw.on_abort
    def aborted(info: Any) -> None:
        events.append(("abort", info.reason))

    return [finished, failed, aborted]


@hw.wrap_model
def passes_on(request: hw.ModelRequest, call_next: Any) -> Iterator[hw.Chunk]:
    # (a loop, not `yield from`: closing this generator does not close the one it reads)
    for chunk in call_next(request):  # noqa: UP028
        yield chunk


@hw.wrap_model
def passes_on_yielding(request: hw.ModelRequest) -> Any:
    stream = yield request
    return (chunk.replace(text=chunk.text.upper()) for chunk in stream)


@hw.wrap_model
async def apasses_on(request: hw.ModelRequest, call_next: Any) -> AsyncIterator[hw.Chunk]:
    async for chunk in await call_next(request):
        yield chunk


def model(messages: Any) -> Iterator[str]:
    try:
        yield "a"
        yield "b"
    finally:
        raise CleanupFailed


async def amodel(messages: Any) -> AsyncIterator[str]:
    try:
        yield "a"
        yield "b"
    finally:
        raise CleanupFailed


@pytest.mark.parametrize("hook", [passes_on, passes_on_yielding])
def test_a_failing_cleanup_reaches_the_caller_through_a_hooks_stream(
    hook: Any, unraisable: list[Any]
) -> None:
    events: list[tuple[str, Any]] = []
    stream = hw.model(model, use=[hook, *_ends(events)])(USER)
    assert next(stream).lower() == "a"
    with pytest.raises(CleanupFailed):
        stream.close()
    assert [kind for kind, _ in events] == ["error"]
    assert isinstance(events[0][1], CleanupFailed)
    assert unraisable == []


def test_a_failing_async_cleanup_reaches_the_caller_through_a_hooks_stream(
    unraisable: list[Any],
) -> None:
    """(Passes before the change too: the async twin, kept from regressing.)"""
    events: list[tuple[str, Any]] = []

    async def main() -> None:
        stream = hw.model(amodel, use=[apasses_on, *_ends(events)])(USER)
        assert await stream.__anext__() == "a"
        with pytest.raises(CleanupFailed):
            await stream.aclose()

    asyncio.run(main())
    assert [kind for kind, _ in events] == ["error"]
    assert unraisable == []


def test_a_stream_read_to_its_end_through_a_hook_still_finishes() -> None:
    """(Passes before the change too.)"""
    events: list[tuple[str, Any]] = []

    def fine(messages: Any) -> Iterator[str]:
        yield from ["a", "b"]

    assert list(hw.model(fine, use=[passes_on, *_ends(events)])(USER)) == ["a", "b"]
    assert events == [("finish", None)]
